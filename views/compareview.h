#pragma once
// Two plans side by side: every summary number of the baseline and the other plan with the
// difference and the ratio (green where the other plan is better, red where worse), what changed
// between them, and the memory bars, step timelines and roofline points of both.

#include "explore/plancomparison.h"

#include <QWidget>

class QLabel;
class QStackedWidget;
class QTableWidget;
class QTabWidget;
class QToolButton;

namespace meshplan::views {

class MemoryChart;
class RooflineChart;
class TimelineChart;

class CompareView : public QWidget
{
    Q_OBJECT

public:
    enum class Side { Baseline, Candidate };
    /// The table's columns.
    enum Column { Quantity, Baseline, Candidate, Difference, Ratio, ColumnCount };

    explicit CompareView(QWidget *parent = nullptr);

    /// Shows `comparison`; `baselineName` and `candidateName` head the columns and the charts
    /// ("Baseline", "Open plan"), with each plan's title beside them in the header. The charts
    /// are fed by the caller (views draw, they do not evaluate), then alignCharts().
    void setComparison(const model::PlanComparison &comparison, const QString &baselineName,
                       const QString &baselineTitle, const QString &candidateName, const QString &candidateTitle);
    /// Nothing to compare (a plan that does not evaluate): `message` alone; empty, how to pin a
    /// baseline.
    void setMessage(const QString &message);
    bool showsComparison() const;
    QString headerText() const;

    MemoryChart *memoryChart(Side side) const;
    TimelineChart *timelineChart(Side side) const;
    RooflineChart *rooflineChart(Side side) const;
    /// Notes the range the chart of `side` on `page` (0 memory, 1 timeline, 2 roofline) chose
    /// for itself; call after feeding it, before alignCharts.
    void chartFed(Side side, int page);
    /// Puts both memory charts on one GiB scale and both timelines on one time scale (the larger
    /// of the two sides' own), so that bars and lanes compare by eye.
    void alignCharts();

    /// The chart page on screen: 0 memory, 1 timeline, 2 roofline.
    int currentChart() const;
    void setCurrentChart(int page);

    QTableWidget *table() const { return m_table; }
    /// The row of a summary number ("step.time_s") or a change ("change:parallelism.tensor"),
    /// or -1.
    int rowOf(const QString &key) const;
    /// The text of `column` in the row of `key`; empty when there is no such row.
    QString cellText(const QString &key, int column) const;
    /// +1 where the candidate is drawn as better, -1 as worse, 0 neither, for the row of `key`.
    int verdictOf(const QString &key) const;

signals:
    /// The user asked to pin the open plan as the baseline, or to clear it (the window decides).
    void pinRequested();
    void clearRequested();
    /// Chart page `page` came on screen (its charts may need feeding).
    void chartShown(int page);

protected:
    void changeEvent(QEvent *event) override;

private:
    void recolour();

    QLabel *m_header;
    QToolButton *m_pin;
    QToolButton *m_clear;
    QStackedWidget *m_stack;
    QLabel *m_message;
    QTableWidget *m_table;
    QTabWidget *m_charts;
    QLabel *m_captions[6] = {};
    MemoryChart *m_memory[2] = {};
    TimelineChart *m_timeline[2] = {};
    RooflineChart *m_roofline[2] = {};
    double m_timelineSeconds[2] = {}; ///< each timeline's own span, seconds
};

} // namespace meshplan::views
