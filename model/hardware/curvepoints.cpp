// Measured curves: reading, writing and interpolating [x, share] points.
#include "hardware/curvepoints.h"
#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

namespace jf = json_fields;
using nlohmann::json;

CurvePoints readCurvePoints(const json &object, const char *key, const std::string &path, const CurveLimits &limits,
                            bool optional)
{
    if (optional && !object.contains(key))
        return {};
    const std::string p = jf::join(path, key);
    const json &array = jf::require(object, key, path);
    if (!array.is_array() || array.empty())
        throw FieldError(p, "must be a non-empty list of [" + limits.what + ", share] pairs");
    CurvePoints points;
    for (std::size_t i = 0; i < array.size(); ++i) {
        const json &pair = array[i];
        const std::string ip = p + "[" + std::to_string(i) + "]";
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number())
            throw FieldError(ip, "must be [" + limits.what + ", share], got " + jf::describe(pair));
        const double x = pair[0].get<double>();
        const double share = pair[1].get<double>();
        if (!(x >= limits.minX && x <= limits.maxX))
            throw FieldError(ip, limits.what + " must be in [" + jf::describe(json(limits.minX)) + ", "
                                     + jf::describe(json(limits.maxX)) + "], got " + jf::describe(pair[0]));
        if (!(share > 0.0 && share <= limits.maxShare))
            throw FieldError(ip, "share must be in (0, " + jf::describe(json(limits.maxShare)) + "], got "
                                     + jf::describe(pair[1]));
        if (!points.empty() && x <= points.back().first)
            throw FieldError(ip, limits.what + "s must ascend");
        points.emplace_back(x, share);
    }
    return points;
}

json writeCurvePoints(const CurvePoints &points)
{
    json array = json::array();
    for (const auto &[x, share] : points)
        array.push_back({x, share});
    return array;
}

double logInterpolate(const CurvePoints &points, double x)
{
    if (points.empty())
        return 0.0;
    if (!(x > points.front().first))
        return points.front().second;
    if (x >= points.back().first)
        return points.back().second;
    const std::size_t i = segmentEnd(points, x);
    return logInterpolateInSegment(points, i, x, std::log(points[i].first / points[i - 1].first));
}

double logInterpolateInSegment(const CurvePoints &points, std::size_t i, double x, double logWidth)
{
    const auto &[x0, share0] = points[i - 1];
    const double f = std::log(x / x0) / logWidth;
    return share0 + f * (points[i].second - share0);
}

std::size_t segmentEnd(const CurvePoints &points, double x)
{
    const auto it = std::lower_bound(points.begin(), points.end(), x,
                                     [](const auto &point, double value) { return point.first < value; });
    return static_cast<std::size_t>(it - points.begin());
}

} // namespace meshplan::model
