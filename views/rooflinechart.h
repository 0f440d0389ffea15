#pragma once
// The roofline chart (book ch. 1): the chip's compute ceilings and bandwidth slopes on log-log
// axes, and a point per operation of the plan at its intensity and achieved rate.

#include "cost/oproofline.h"

#include <qcustomplot.h>

#include <QPointer>

#include <limits>
#include <string>
#include <vector>

namespace meshplan::views {

class RooflineChart : public QCustomPlot
{
    Q_OBJECT

public:
    explicit RooflineChart(QWidget *parent = nullptr);

    void setRoofline(const model::OpRoofline &roofline);
    /// No data (the plan does not evaluate): `message` alone. A selection by name is kept.
    void setMessage(const QString &message);
    const model::OpRoofline &roofline() const { return m_data; }

    /// The operation drawn nearest to `pixel` within `radius` pixels, or -1.
    int pointAt(QPointF pixel, double radius = 10) const;
    /// Every operation drawn where the nearest one is (coincident points), in data order; empty
    /// when none is within `radius`. The hover lists them all, and clicks on
    /// the spot select each in turn.
    std::vector<int> pointsAt(QPointF pixel, double radius = 10) const;
    /// The hover text of point `index`: op, FLOPs, bytes, intensity, time, bound. A collective's
    /// names its op, axes and link, its time and bytes per occurrence, then the compute it
    /// overlaps and how its effective intensity is taken.
    QString describePoint(int index) const;
    /// The same text for any point (the window describes a fresh point the chart has not drawn yet).
    static QString describe(const model::RooflinePoint &point);
    /// One short plain line for the status bar: the op, its time and its bound.
    static QString summarize(const model::RooflinePoint &point);
    void selectPoint(int index);
    int selectedPoint() const { return m_selected; }
    /// Selects the operation named `op` of `kind` (none for an empty name); names are unique
    /// (oproofline.h), so two collectives of one purpose are told apart. The selection is kept
    /// by name, so new data (after an edit) selects the same operation wherever it now sits.
    void selectOperation(const std::string &op, const std::string &kind);

    /// The rotation (degrees, clockwise on screen) of the label of the slope named `name`, as
    /// last laid out; NaN when there is none.
    double slopeLabelRotation(const QString &name) const;
    /// Whether point `index` lies beyond the x axis (a decade past the furthest on-chip op or
    /// the ridge) and is drawn at its right end with an arrow and a note.
    bool isClipped(int index) const;

    /// The labels on the plot as laid out (ceilings, slopes, the ridge, clipped points' notes).
    std::vector<QCPItemText *> labels() const;

signals:
    void pointSelected(int index);

protected:
    /// Lays the plot out, with room above the highest peak for its label where the plot is short.
    void updateLayout() override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void rebuild();
    /// Places every label (LabelPlacer) clear of the others, the tick labels and the points.
    void layoutLabels();
    /// Raises the y axis's top (unless the user moved it) so the highest peak's label fits above
    /// it in the plot as last laid out; whether it changed.
    bool ensureHeadroom();
    int indexOf(const std::string &op, const std::string &kind) const;
    QPointF pixelOf(const model::RooflinePoint &point) const;
    double drawnIntensity(const model::RooflinePoint &point) const;

    model::OpRoofline m_data;
    QPointer<QCPGraph> m_selection; // owned by the plot, which deletes it on clear
    int m_selected = -1;
    std::string m_selectedOp;
    std::string m_selectedKind;
    struct SlopeLabel {
        QPointer<QCPItemText> item;
        double bandwidth = 0;
    };
    std::vector<SlopeLabel> m_slopeLabels;
    struct CeilingLabel {
        QPointer<QCPItemText> item;
        double value = 0;
    };
    std::vector<CeilingLabel> m_ceilingLabels;
    struct ClipNote {
        QPointer<QCPItemText> item;
        double rate = 0; ///< the clipped point's FLOPs/s: its arrow's height
    };
    std::vector<ClipNote> m_clipNotes;
    QPointer<QCPItemText> m_ridgeLabel;
    double m_topPeak = 0; ///< the highest peak drawn: its label needs room above it
    double m_autoUpper = 0; ///< the y axis's top as last set here (a drag or zoom leaves it be)
    double m_clipAt = std::numeric_limits<double>::infinity(); ///< points right of this are clipped
    double m_clipDrawnAt = 0;                                  ///< ... and drawn here
};

} // namespace meshplan::views
