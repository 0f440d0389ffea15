#pragma once
// Memory per chip: a stacked bar per kind of chip (parameters, gradients, optimizer state,
// activations, KV cache) against the HBM capacity line; bars over capacity drawn in red.

#include "cost/evaluation.h"

#include <qcustomplot.h>

#include <utility>
#include <vector>

namespace meshplan::views {

class MemoryChart : public QCustomPlot
{
    Q_OBJECT

public:
    /// The stack, bottom to top.
    static constexpr int kLayers = 5;

    explicit MemoryChart(QWidget *parent = nullptr);

    void setChipKinds(const std::vector<model::ChipKind> &kinds);
    /// No data (the plan does not evaluate): `message` alone.
    void setMessage(const QString &message);
    const std::vector<model::ChipKind> &chipKinds() const { return m_kinds; }
    /// Bytes per chip the y axis reaches at least (0: only this chart's own busiest chip): two
    /// charts side by side share one scale, and agree on whether the capacity is on it.
    void setScaleBytes(double bytes);

    /// Bytes of layer `layer` (0 params .. 4 KV cache) in bar `bar`, as drawn.
    double layerBytes(int bar, int layer) const;
    /// Whether bar `bar` is drawn over capacity (in red).
    bool overCapacity(int bar) const;
    double capacityBytes() const;
    /// Whether the y axis stops short of the HBM capacity (all chips below kZoomBelow of it).
    bool capacityOffScale() const { return m_capacityOffScale; }
    static constexpr double kZoomBelow = 0.25;
    /// Hover text of the bar under `pixel` (empty off the bars).
    QString describeAt(QPointF pixel) const;
    /// The bar and the layer of its stack (0 params .. 4 KV cache) under `pixel`; {-1, -1} off
    /// the drawn segments.
    std::pair<int, int> segmentAt(QPointF pixel) const;

signals:
    /// The user clicked layer `layer` of bar `bar` (as segmentAt gives them).
    void segmentClicked(int bar, int layer);

protected:
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void rebuild();

    std::vector<model::ChipKind> m_kinds;
    std::vector<QCPBars *> m_stack;
    bool m_capacityOffScale = false;
    double m_scaleBytes = 0;
};

} // namespace meshplan::views
