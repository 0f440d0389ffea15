#pragma once
// A measured curve as [x, share] points (kernel benchmarks by sequence length, head dim or bytes):
// reading it from JSON, writing it back, and reading a value between its points.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace meshplan::model {

using CurvePoints = std::vector<std::pair<double, double>>;

/// What a curve's x is and the values it may take: x in [minX, maxX], share in (0, maxShare].
struct CurveLimits {
    std::string what;  ///< "sequence length", "head dim", "kilobytes": named in errors
    double minX = 1.0;
    double maxX = 1e8;
    double maxShare = 1.0;
};

/// Reads `key` of `object` as [[x, share], ...] with x ascending; throws FieldError naming the
/// offending entry. An absent key gives no points when `optional`, an error otherwise.
CurvePoints readCurvePoints(const nlohmann::json &object, const char *key, const std::string &path,
                            const CurveLimits &limits, bool optional = false);
nlohmann::json writeCurvePoints(const CurvePoints &points);

/// Log-linear in x between the points around `x` (benchmarks double x from point to point), the
/// end points' shares outside them; 0 for no points.
double logInterpolate(const CurvePoints &points, double x);
/// logInterpolate inside the segment from points[i - 1] to points[i] (0 < i < size), given the
/// log of its width, log(x_i / x_{i-1}): for a reader that comes back to one segment many times.
double logInterpolateInSegment(const CurvePoints &points, std::size_t i, double x, double logWidth);
/// The index of the first point at or past `x` (points.size() when none is).
std::size_t segmentEnd(const CurvePoints &points, double x);

} // namespace meshplan::model
