#include "explore/paretofront.h"

#include <algorithm>

namespace meshplan::model {

void ParetoFront::insert(double x, double y, const Key &key)
{
    if (dominates(x, y, key))
        return;
    // The new point replaces those it is at least as good as in both (an equal one has the larger key).
    auto first = std::lower_bound(m_points.begin(), m_points.end(), x, [](const Point &p, double v) { return p.x < v; });
    auto last = first;
    while (last != m_points.end() && last->y >= y)
        ++last;
    first = m_points.erase(first, last);
    m_points.insert(first, Point{x, y, key});
}

bool ParetoFront::dominates(double x, double y, const Key &key) const
{
    // The last point with x' <= x has the smallest y among them (y falls as x grows).
    auto after = std::upper_bound(m_points.begin(), m_points.end(), x, [](double v, const Point &p) { return v < p.x; });
    if (after == m_points.begin())
        return false;
    const Point &best = *std::prev(after);
    if (best.y != y)
        return best.y < y;
    return best.x < x || best.key < key;
}

} // namespace meshplan::model
