#pragma once
// Places a chart's labels one after another where they cover least: another label or a tick
// label never, a point hardly ever, a line if nothing else is free; always inside the plot.

#include <QLineF>
#include <QRectF>

#include <vector>

namespace meshplan::views {

class LabelPlacer
{
public:
    /// A label's footprint in pixels: one box, or (text along a slope) a run of small boxes.
    using Shape = std::vector<QRectF>;

    /// Labels stay inside `bounds` (pixels).
    explicit LabelPlacer(const QRectF &bounds);

    /// Something no label may cover: a tick label, a label placed by other means.
    void addObstacle(const QRectF &box);
    /// A data point drawn with `radius` pixels around its centre.
    void addPoint(const QPointF &centre, double radius);
    /// A line a label may cross when nothing else is free; returns its id for place().
    int addLine(const QLineF &line);

    /// Of `candidates`, in order of preference, the first that covers nothing, else the one
    /// that covers least; it is kept as an obstacle for the labels placed after it. `ownLine`
    /// is a line the label belongs to (a slope's name runs along it) and does not count.
    std::size_t place(const std::vector<Shape> &candidates, int ownLine = -1);
    /// What `shape` covers, weighted: 0 when it is clear.
    double cost(const Shape &shape, int ownLine = -1) const;
    /// The shapes placed so far, in order.
    const std::vector<Shape> &placed() const { return m_placed; }

private:
    QRectF m_bounds;
    std::vector<QRectF> m_obstacles;
    std::vector<std::pair<QPointF, double>> m_points;
    std::vector<QLineF> m_lines;
    std::vector<Shape> m_placed;
};

} // namespace meshplan::views
