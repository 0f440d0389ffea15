// Decode attention curves: reading them and reading a share off them.
#include "hardware/decodeattention.h"
#include "hardware/curvepoints.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>

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

} // namespace

double DecodeAttentionCurve::blendedShare(double bytes, double sequences, double bandwidth) const
{
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
