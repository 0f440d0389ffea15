#pragma once
// The step timeline: one training step (or one request: prefill, then the decode steps) as
// lanes — compute, each collective's hidden and exposed parts, the bubble, the optimizer.

#include "cost/steptimeline.h"

#include <qcustomplot.h>

namespace meshplan::views {

class TimelineChart : public QCustomPlot
{
    Q_OBJECT

public:
    explicit TimelineChart(QWidget *parent = nullptr);

    void setTimeline(const model::StepTimeline &timeline);
    /// No data (the plan does not evaluate): `message` alone.
    void setMessage(const QString &message);
    const model::StepTimeline &timeline() const { return m_data; }
    /// The seconds per unit of the time axis (1e-3 when it reads in ms).
    double timeUnit() const { return m_unit; }
    /// The segment under `pixel`, or -1.
    int segmentAt(QPointF pixel) const;
    QString describeSegment(int index) const;
    /// Outlines the segments of collective `collective` (-1: none).
    void highlightCollective(int collective);
    int highlightedCollective() const { return m_highlight; }
    /// Outlines the on-chip work (compute and recompute; serving: prefill and the decode steps),
    /// where a selected matmul, attention or elementwise op runs; clears a collective's highlight.
    /// highlightCollective clears this one.
    void highlightCompute(bool on);
    bool computeHighlighted() const { return m_computeHighlight; }

signals:
    void segmentSelected(int index);

protected:
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void rebuild();

    model::StepTimeline m_data;
    std::vector<QCPItemRect *> m_rects;
    double m_unit = 1;
    int m_highlight = -1;
    bool m_computeHighlight = false;
};

/// The colour of a segment kind (compute, hidden, exposed, bubble, ...).
QColor timelineKindColor(const std::string &kind);

} // namespace meshplan::views
