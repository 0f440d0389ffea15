#pragma once
// Scaling sweeps: MFU and step time against the per-chip batch or the chip count, with the
// point where communication starts to bind and the book's critical batch; for serving,
// latency against throughput across batch sizes with the latency target.

#include "explore/scalingsweep.h"
#include "explore/servingsearch.h"

#include <qcustomplot.h>

#include <QPointer>

#include <vector>

namespace meshplan::views {

class SweepChart : public QCustomPlot
{
    Q_OBJECT

public:
    enum class Axis {
        TokensPerChip,
        Chips,
    };

    explicit SweepChart(QWidget *parent = nullptr);

    void setScaling(const model::ScalingSweep &sweep, Axis axis);
    /// `current`: the plan's batch (marked); `latencyTargetS` 0 for none.
    void setServing(const std::vector<model::ServingPoint> &points, std::int64_t current, double latencyTargetS);
    /// Shows why there is nothing to draw.
    void setMessage(const QString &message);

    bool isServing() const { return m_serving; }
    /// The sentence shown instead of a sweep (setMessage), empty while a sweep is drawn.
    QString message() const { return m_message; }
    /// The MFU graph (training) or the latency graph (serving), as plotted.
    QCPGraph *mainGraph() const { return m_main; }
    /// The step-time graph (training), on the right log axis.
    QCPGraph *secondGraph() const { return m_second; }
    /// x of the markers: the crossover and the book's critical value (0 if absent); drawn as
    /// vertical lines when within the axis range, else named at the edge they lie beyond.
    double crossoverMarker() const { return m_crossover; }
    double bookMarker() const { return m_book; }
    double targetMarker() const { return m_target; }
    /// The notes saying why the sweep stops next to the plan ("smaller batches: ..."), as drawn.
    QStringList limitNotes() const { return m_limitNotes; }

protected:
    void mouseMoveEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void reset();
    void vertical(double x, const QString &text, const QColor &color, Qt::PenStyle style, double labelY);
    /// Names a marker that lies beyond the left (or right) end of the x axis, at that edge.
    void edgeNote(bool left, const QString &text, const QColor &color, double labelY);

    bool m_serving = false;
    QCPGraph *m_main = nullptr;
    QCPGraph *m_second = nullptr;
    double m_crossover = 0;
    double m_book = 0;
    double m_target = 0;
    struct HoverPoint {
        double x = 0;
        double y = 0;
        bool rightAxis = false; ///< a step-time marker, on yAxis2
        QString html;
    };
    std::vector<HoverPoint> m_hover; ///< every marker a pointer can rest on
    QString m_message;
    QStringList m_limitNotes;
    QCPTextElement *m_caption = nullptr; ///< the limit notes, in a row under the plot
    /// A marker's name: beside its vertical line at `x`, or at the left (-1) or right (+1) edge.
    struct MarkLabel {
        QPointer<QCPItemText> item;
        double x = 0;
        int edge = 0;
    };
    std::vector<MarkLabel> m_markLabels;
    /// A serving point's batch size, placed next to its point (x, y in plot coordinates).
    struct PointLabel {
        QPointer<QCPItemText> item;
        double x = 0;
        double y = 0;
    };
    std::vector<PointLabel> m_pointLabels;
    /// Places the markers' names (LabelPlacer) clear of the points, the other text and each other.
    void layoutLabels();

public:
    /// The markers' names and the serving points' batch sizes as laid out.
    std::vector<QCPItemText *> markLabels() const;
};

} // namespace meshplan::views
