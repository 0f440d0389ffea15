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

double HeadDimScaling::paddedHeadDim(double headDim) const
{
    for (int size : compiled)
        if (headDim <= size)
            return size;
    return headDim; // past the largest kernel nothing pads (and nothing was measured)
}

double HeadDimScaling::factor(double headDim, bool backwardPass) const
{
    if (!(headDim > 0))
        return 1.0;
    const double padded = paddedHeadDim(headDim);
    const auto &points = backwardPass && !backward.empty() ? backward : forward;
    const double relative = points.empty() ? 1.0 : AttentionKernelCurve::shareAt(points, padded);
    return relative * headDim / padded;
}

namespace {

// [[x, share], ...] with x ascending: x is a sequence length or a head dim (`what`).
std::vector<std::pair<double, double>> readPoints(const json &object, const char *key, const std::string &path,
                                                  const std::string &what = "sequence length", double maxShare = 1.0,
                                                  bool optional = false)
{
    if (optional && !object.contains(key))
        return {};
    const std::string p = jf::join(path, key);
    const json &array = jf::require(object, key, path);
    if (!array.is_array() || array.empty())
        throw FieldError(p, "must be a non-empty list of [" + what + ", share] pairs");
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < array.size(); ++i) {
        const json &pair = array[i];
        const std::string ip = p + "[" + std::to_string(i) + "]";
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number())
            throw FieldError(ip, "must be [" + what + ", share], got " + jf::describe(pair));
        const double t = pair[0].get<double>();
        const double share = pair[1].get<double>();
        if (!(t >= 1.0 && t <= 1e8))
            throw FieldError(ip, what + " must be in [1, 1e8], got " + jf::describe(pair[0]));
        if (!(share > 0.0 && share <= maxShare))
            throw FieldError(ip, "share must be in (0, " + jf::describe(json(maxShare)) + "], got " + jf::describe(pair[1]));
        if (!points.empty() && t <= points.back().first)
            throw FieldError(ip, what + "s must ascend");
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
    if (object.contains("head_dims")) {
        const std::string hp = jf::join(path, "head_dims");
        const json &h = object.at("head_dims");
        if (!h.is_object())
            throw FieldError(hp, "must be an object with compiled head dims and forward/backward relative rates");
        curve.headDims.forward = readPoints(h, "forward", hp, "head dim", 2.0);
        curve.headDims.backward = readPoints(h, "backward", hp, "head dim", 2.0, true);
        curve.headDims.source = jf::stringOr(h, "source", hp, "");
        if (h.contains("compiled")) {
            const std::string cp = jf::join(hp, "compiled");
            const json &list = h.at("compiled");
            if (!list.is_array())
                throw FieldError(cp, "must be a list of head dims");
            for (const json &size : list) {
                if (!size.is_number_integer() || size.get<long long>() < 1 || size.get<long long>() > 4096
                    || (!curve.headDims.compiled.empty() && size.get<int>() <= curve.headDims.compiled.back()))
                    throw FieldError(cp, "must list ascending head dims in [1, 4096], got " + jf::describe(size));
                curve.headDims.compiled.push_back(size.get<int>());
            }
        }
    }
    return curve;
}

json attentionKernelCurveToJson(const AttentionKernelCurve &curve)
{
    json o = {{"forward", writePoints(curve.forward)}, {"backward", writePoints(curve.backward)}};
    if (!curve.source.empty())
        o["source"] = curve.source;
    if (!curve.headDims.forward.empty()) {
        json h = {{"forward", writePoints(curve.headDims.forward)}};
        if (!curve.headDims.backward.empty())
            h["backward"] = writePoints(curve.headDims.backward);
        if (!curve.headDims.compiled.empty())
            h["compiled"] = curve.headDims.compiled;
        if (!curve.headDims.source.empty())
            h["source"] = curve.headDims.source;
        o["head_dims"] = h;
    }
    return o;
}

} // namespace meshplan::model
