// Attention kernel curves: reading them and reading a share off them.
#include "hardware/attentionkernel.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

namespace jf = json_fields;
using nlohmann::json;

double AttentionKernelCurve::shareAt(const std::vector<std::pair<double, double>> &points, double seqLen)
{
    if (points.empty())
        return 0.0;
    if (seqLen <= points.front().first)
        return points.front().second;
    if (seqLen >= points.back().first)
        return points.back().second;
    const auto upper = std::lower_bound(points.begin(), points.end(), seqLen,
                                        [](const auto &point, double t) { return point.first < t; });
    const auto lower = upper - 1;
    // Kernel benchmarks double the length from point to point: interpolate in log T.
    const double f = std::log(seqLen / lower->first) / std::log(upper->first / lower->first);
    return lower->second + f * (upper->second - lower->second);
}

namespace {

std::vector<std::pair<double, double>> readPoints(const json &object, const char *key, const std::string &path)
{
    const std::string p = jf::join(path, key);
    const json &array = jf::require(object, key, path);
    if (!array.is_array() || array.empty())
        throw FieldError(p, "must be a non-empty list of [sequence length, share of peak] pairs");
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < array.size(); ++i) {
        const json &pair = array[i];
        const std::string ip = p + "[" + std::to_string(i) + "]";
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number())
            throw FieldError(ip, "must be [sequence length, share of peak], got " + jf::describe(pair));
        const double t = pair[0].get<double>();
        const double share = pair[1].get<double>();
        if (!(t >= 1.0 && t <= 1e8))
            throw FieldError(ip, "sequence length must be in [1, 1e8], got " + jf::describe(pair[0]));
        if (!(share > 0.0 && share <= 1.0))
            throw FieldError(ip, "share of peak must be in (0, 1], got " + jf::describe(pair[1]));
        if (!points.empty() && t <= points.back().first)
            throw FieldError(ip, "sequence lengths must ascend");
        points.emplace_back(t, share);
    }
    return points;
}

json writePoints(const std::vector<std::pair<double, double>> &points)
{
    json array = json::array();
    for (const auto &[t, share] : points)
        array.push_back({t, share});
    return array;
}

} // namespace

AttentionKernelCurve attentionKernelCurveFromJson(const json &object, const std::string &path)
{
    if (!object.is_object())
        throw FieldError(path, "must be an object with forward and backward curves");
    AttentionKernelCurve curve;
    curve.forward = readPoints(object, "forward", path);
    curve.backward = readPoints(object, "backward", path);
    curve.source = jf::stringOr(object, "source", path, "");
    return curve;
}

json attentionKernelCurveToJson(const AttentionKernelCurve &curve)
{
    json o = {{"forward", writePoints(curve.forward)}, {"backward", writePoints(curve.backward)}};
    if (!curve.source.empty())
        o["source"] = curve.source;
    return o;
}

} // namespace meshplan::model
