// Decode attention curves: reading them and reading a share off them.
#include "hardware/decodeattention.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

namespace jf = json_fields;
using nlohmann::json;

namespace {

double shareOn(const std::vector<std::pair<double, double>> &points, double kb)
{
    if (points.empty() || !(kb > 0))
        return points.empty() ? 0.0 : points.front().second;
    if (kb <= points.front().first) // the smallest point's time: a kernel does not get faster
        return points.front().second * kb / points.front().first;
    if (kb >= points.back().first)
        return points.back().second;
    const auto upper = std::lower_bound(points.begin(), points.end(), kb,
                                        [](const auto &point, double x) { return point.first < x; });
    const auto lower = upper - 1;
    // The benchmark doubles the context from point to point: interpolate in log bytes.
    const double f = std::log(kb / lower->first) / std::log(upper->first / lower->first);
    return lower->second + f * (upper->second - lower->second);
}

std::vector<std::pair<double, double>> readCurve(const json &object, const char *key, const std::string &path)
{
    const std::string p = jf::join(path, key);
    const json &array = jf::require(object, key, path);
    if (!array.is_array() || array.empty())
        throw FieldError(p, "must be a non-empty list of [kilobytes, share] pairs");
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < array.size(); ++i) {
        const json &pair = array[i];
        const std::string ip = p + "[" + std::to_string(i) + "]";
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number())
            throw FieldError(ip, "must be [kilobytes, share], got " + jf::describe(pair));
        const double kb = pair[0].get<double>();
        const double share = pair[1].get<double>();
        if (!(kb > 0.0 && kb <= 1e9))
            throw FieldError(ip, "kilobytes must be in (0, 1e9], got " + jf::describe(pair[0]));
        if (!(share > 0.0 && share <= 1.0))
            throw FieldError(ip, "share must be in (0, 1], got " + jf::describe(pair[1]));
        if (!points.empty() && kb <= points.back().first)
            throw FieldError(ip, "kilobytes must ascend");
        points.emplace_back(kb, share);
    }
    return points;
}

json writeCurve(const std::vector<std::pair<double, double>> &points)
{
    json array = json::array();
    for (const auto &[kb, share] : points)
        array.push_back({kb, share});
    return array;
}

} // namespace

double DecodeAttentionCurve::share(double bytes, double sequences, double bandwidth) const
{
    if (batched.empty() || single.empty())
        return 1.0; // no curve: nothing is lost to filling the chip
    const double kb = bytes / 1e3;
    const double many = shareOn(batched, kb);
    if (sequences >= kBatchedFrom)
        return many;
    double one = shareOn(single, kb);
    if (measuredBandwidth > 0 && bandwidth > 0 && bandwidth != measuredBandwidth && kb > 0) {
        // A single request's call is bound by filling the chip, not by its bandwidth: its time is
        // its bytes at the curve's top share plus the time the measured call lost, which does not
        // scale. Read so, the H100 panel gives A100's single-request points within 0.055 (rms
        // 0.027), against 0.10 (rms 0.062) with the shares carried over. The batched calls scale
        // with the bandwidth (shares carried over: within 0.05, rms 0.027) and are left as read.
        const double top = single.back().second;
        const double lost = std::max(0.0, bytes / (measuredBandwidth * one) - bytes / (measuredBandwidth * top));
        one = bytes / (bandwidth * (bytes / (bandwidth * top) + lost));
    }
    if (!(sequences > 1.0))
        return one;
    return one + std::log(sequences) / std::log(kBatchedFrom) * (many - one);
}

DecodeAttentionCurve decodeAttentionCurveFromJson(const json &object, const std::string &path)
{
    if (!object.is_object())
        throw FieldError(path, "must be an object with batched and single curves");
    DecodeAttentionCurve curve;
    curve.batched = readCurve(object, "batched", path);
    curve.single = readCurve(object, "single", path);
    if (jf::has(object, "measured_bandwidth"))
        curve.measuredBandwidth = jf::positiveNumber(object, "measured_bandwidth", path);
    curve.source = jf::stringOr(object, "source", path, "");
    return curve;
}

json decodeAttentionCurveToJson(const DecodeAttentionCurve &curve)
{
    json o = {{"batched", writeCurve(curve.batched)}, {"single", writeCurve(curve.single)}};
    if (curve.measuredBandwidth > 0)
        o["measured_bandwidth"] = curve.measuredBandwidth;
    if (!curve.source.empty())
        o["source"] = curve.source;
    return o;
}

} // namespace meshplan::model
