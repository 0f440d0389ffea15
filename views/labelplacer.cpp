#include "labelplacer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace meshplan::views {

namespace {

// Weights: a label on a label (or a tick label) is as bad as leaving the plot; a point hidden
// under text costs more than any number of lines crossed.
constexpr double kOutside = 1e6;
constexpr double kObstacle = 1e4;
constexpr double kPoint = 100;
constexpr double kLine = 1;

/// Whether segment `line` passes through `box` (Liang-Barsky clipping).
bool crosses(const QLineF &line, const QRectF &box)
{
    double t0 = 0;
    double t1 = 1;
    const double dx = line.dx();
    const double dy = line.dy();
    const double p[] = {-dx, dx, -dy, dy};
    const double q[] = {line.x1() - box.left(), box.right() - line.x1(), line.y1() - box.top(), box.bottom() - line.y1()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return false;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1)
            return false;
    }
    return true;
}

} // namespace

LabelPlacer::LabelPlacer(const QRectF &bounds) : m_bounds(bounds) {}

void LabelPlacer::addObstacle(const QRectF &box)
{
    m_obstacles.push_back(box);
}

void LabelPlacer::addPoint(const QPointF &centre, double radius)
{
    m_points.emplace_back(centre, radius);
}

int LabelPlacer::addLine(const QLineF &line)
{
    m_lines.push_back(line);
    return static_cast<int>(m_lines.size()) - 1;
}

double LabelPlacer::cost(const Shape &shape, int ownLine) const
{
    double total = 0;
    for (const QRectF &box : shape) {
        if (!m_bounds.contains(box))
            total += kOutside;
        for (const QRectF &o : m_obstacles)
            total += kObstacle * box.intersects(o);
        for (const Shape &other : m_placed)
            for (const QRectF &o : other)
                total += kObstacle * box.intersects(o);
        for (const auto &[centre, radius] : m_points)
            total += kPoint * box.adjusted(-radius, -radius, radius, radius).contains(centre);
        for (std::size_t i = 0; i < m_lines.size(); ++i)
            total += kLine * (static_cast<int>(i) != ownLine && crosses(m_lines[i], box));
    }
    return total;
}

std::size_t LabelPlacer::place(const std::vector<Shape> &candidates, int ownLine)
{
    std::size_t best = 0;
    double bestCost = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const double c = cost(candidates[i], ownLine);
        if (c < bestCost) {
            bestCost = c;
            best = i;
        }
        if (c == 0)
            break;
    }
    if (!candidates.empty())
        m_placed.push_back(candidates[best]);
    return best;
}

} // namespace meshplan::views
