// Attention kernel curves: reading them and reading a share off them.
#include "hardware/attentionkernel.h"
#include "hardware/curvepoints.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

namespace jf = json_fields;
using nlohmann::json;

double AttentionKernelCurve::shareAt(const std::vector<std::pair<double, double>> &points, double seqLen)
{
    return logInterpolate(points, seqLen);
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

const CurveLimits kSequenceLengths{"sequence length", 1.0, 1e8, 1.0};
const CurveLimits kHeadDims{"head dim", 1.0, 1e8, 2.0};

} // namespace

AttentionKernelCurve attentionKernelCurveFromJson(const json &object, const std::string &path)
{
    if (!object.is_object())
        throw FieldError(path, "must be an object with forward and backward curves");
    AttentionKernelCurve curve;
    curve.forward = readCurvePoints(object, "forward", path, kSequenceLengths);
    curve.backward = readCurvePoints(object, "backward", path, kSequenceLengths);
    curve.source = jf::stringOr(object, "source", path, "");
    if (object.contains("head_dims")) {
        const std::string hp = jf::join(path, "head_dims");
        const json &h = object.at("head_dims");
        if (!h.is_object())
            throw FieldError(hp, "must be an object with compiled head dims and forward/backward relative rates");
        curve.headDims.forward = readCurvePoints(h, "forward", hp, kHeadDims);
        curve.headDims.backward = readCurvePoints(h, "backward", hp, kHeadDims, true);
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
    json o = {{"forward", writeCurvePoints(curve.forward)}, {"backward", writeCurvePoints(curve.backward)}};
    if (!curve.source.empty())
        o["source"] = curve.source;
    if (!curve.headDims.forward.empty()) {
        json h = {{"forward", writeCurvePoints(curve.headDims.forward)}};
        if (!curve.headDims.backward.empty())
            h["backward"] = writeCurvePoints(curve.headDims.backward);
        if (!curve.headDims.compiled.empty())
            h["compiled"] = curve.headDims.compiled;
        if (!curve.headDims.source.empty())
            h["source"] = curve.headDims.source;
        o["head_dims"] = h;
    }
    return o;
}

} // namespace meshplan::model
