#pragma once
// The non-dominated points of two quantities that are both minimized (per-chip memory and step
// time; serving: latency and the negated tokens/s per chip), kept as a staircase. Equal points
// are told apart by a key: the smaller key wins the tie.

#include <array>
#include <cstdint>
#include <vector>

namespace meshplan::model {

class ParetoFront
{
public:
    using Key = std::array<std::int64_t, 3>;

    /// Adds a point; no-op when a point already there is at least as good in both (and, when
    /// equal, has the smaller key).
    void insert(double x, double y, const Key &key = {});
    /// Whether every point (x', y') with x' >= x and y' >= y and a key of at least `key` loses to
    /// a point already here: one no worse in both and better in one than (x, y), or equal to it
    /// with a smaller key.
    bool dominates(double x, double y, const Key &key = {}) const;
    bool empty() const { return m_points.empty(); }

private:
    struct Point {
        double x;
        double y;
        Key key;
    };
    std::vector<Point> m_points; ///< x ascending, y strictly descending
};

} // namespace meshplan::model
