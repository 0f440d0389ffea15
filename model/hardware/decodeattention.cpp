// Decode attention curves: reading them and reading a share off them.
#include "hardware/decodeattention.h"
#include "hardware/curvepoints.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace meshplan::model {

namespace jf = json_fields;
using nlohmann::json;

namespace {

const CurveLimits kKilobytes{"kilobytes", 1e-3, 1e9, 1.0};

// Between the points as measured; below the smallest the call takes that point's time: a kernel
// does not get faster than its floor, so the share falls in proportion to the bytes.
double shareOn(const CurvePoints &points, double kb)
{
    if (!points.empty() && kb > 0 && kb < points.front().first)
        return points.front().second * kb / points.front().first;
    return logInterpolate(points, kb);
}

// One request: the time is interpolated log-log between the measured points' times, each held to
// no more than any larger read's. The figure's shares rise faster than the bytes between some
// points (H100: 0.07 at 4,194 kB, 0.15 at 8,389 kB), and a share interpolated as is sags between
// them, either way making a longer context decode faster; a call reading more takes no less.
// Past the largest point the share stays; below the smallest the call takes the floor's time.
// On a chip of `ratio` times the measured bandwidth a point's time is its bytes at the top share
// plus the time the measured call lost to filling the chip, which does not scale; the hold is
// taken on those times. Times are in kB per unit share of the chip's own bandwidth.
double singleShareOn(const CurvePoints &points, double kb, double ratio)
{
    if (points.empty())
        return 0.0;
    const double top = points.back().second;
    if (!(kb > 0) || kb >= points.back().first)
        return kb >= points.back().first ? top : points.front().second;
    const auto pointTime = [&](std::size_t j) {
        const auto &[x, share] = points[j];
        return x / top + ratio * std::max(0.0, x / share - x / top);
    };
    const auto heldTime = [&](std::size_t from) {
        double t = std::numeric_limits<double>::infinity();
        for (std::size_t j = from; j < points.size(); ++j)
            t = std::min(t, pointTime(j));
        return t;
    };
    if (kb <= points.front().first)
        return kb / heldTime(0);
    const auto upper = std::lower_bound(points.begin(), points.end(), kb,
                                        [](const auto &point, double value) { return point.first < value; });
    const std::size_t i = static_cast<std::size_t>(upper - points.begin());
    const double t1 = heldTime(i);
    const double t0 = std::min(pointTime(i - 1), t1);
    const double f = std::log(kb / points[i - 1].first) / std::log(points[i].first / points[i - 1].first);
    return kb / std::exp(std::log(t0) + f * std::log(t1 / t0));
}

} // namespace

double DecodeAttentionCurve::blendedShare(double bytes, double sequences, double bandwidth) const
{
    const double kb = bytes / 1e3;
    const double many = shareOn(batched, kb);
    if (sequences >= kBatchedFrom)
        return many;
    // A single request's call is bound by filling the chip, not by its bandwidth: read so, the
    // H100 panel gives A100's single-request points within 0.055 (rms 0.027), against 0.10 (rms
    // 0.062) with the shares carried over. The batched calls scale with the bandwidth (shares
    // carried over: within 0.05, rms 0.027) and are left as read.
    const bool scaled = measuredBandwidth > 0 && bandwidth > 0 && bandwidth != measuredBandwidth;
    const double one = singleShareOn(single, kb, scaled ? bandwidth / measuredBandwidth : 1.0);
    if (!(sequences > 1.0))
        return one;
    return one + std::log(sequences) / std::log(kBatchedFrom) * (many - one);
}

double DecodeAttentionCurve::share(double bytes, double sequences, double bandwidth) const
{
    if (batched.empty() || single.empty())
        return 1.0; // no curve: nothing is lost to filling the chip
    double best = blendedShare(bytes, sequences, bandwidth);
    if (!(sequences > 1.0) || sequences >= kBatchedFrom || !(bytes > 0))
        return best;
    // More sequences at the same context read more and take no less: the blend with the slower
    // single-request kernel, read below the batched curve's floor, would otherwise make 8
    // sequences decode slower than 16 (or 4 than 6). So a batched call takes no longer than any
    // larger whole count up to kBatchedFrom takes at the same context. One request runs another
    // kernel (split over the cache to fill the chip), measured as it is.
    for (double more = std::floor(sequences) + 1.0; more <= kBatchedFrom; more += 1.0) {
        const double fuller = bytes * more / sequences;
        best = std::max(best, blendedShare(fuller, more, bandwidth) * bytes / fuller);
    }
    return best;
}

DecodeAttentionCurve decodeAttentionCurveFromJson(const json &object, const std::string &path)
{
    if (!object.is_object())
        throw FieldError(path, "must be an object with batched and single curves");
    DecodeAttentionCurve curve;
    curve.batched = readCurvePoints(object, "batched", path, kKilobytes);
    curve.single = readCurvePoints(object, "single", path, kKilobytes);
    if (jf::has(object, "measured_bandwidth"))
        curve.measuredBandwidth = jf::positiveNumber(object, "measured_bandwidth", path);
    curve.source = jf::stringOr(object, "source", path, "");
    return curve;
}

json decodeAttentionCurveToJson(const DecodeAttentionCurve &curve)
{
    json o = {{"batched", writeCurvePoints(curve.batched)}, {"single", writeCurvePoints(curve.single)}};
    if (curve.measuredBandwidth > 0)
        o["measured_bandwidth"] = curve.measuredBandwidth;
    if (!curve.source.empty())
        o["source"] = curve.source;
    return o;
}

} // namespace meshplan::model
