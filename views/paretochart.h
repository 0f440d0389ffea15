#pragma once
// The Pareto plot of a search: training, memory per chip against step time; serving, per-token
// latency against tokens/s per chip. The front is a line, the ranked results points, the open
// plan a marked point; hovering a point describes its plan, clicking one picks it.

#include "explore/plansearch.h"

#include <qcustomplot.h>

#include <QPointer>

#include <optional>
#include <vector>

namespace meshplan::views {

class ParetoChart : public QCustomPlot
{
    Q_OBJECT

public:
    explicit ParetoChart(QWidget *parent = nullptr);

    /// Draws `candidates` (the panel's list: the first `ranked` are the ranked results, best
    /// first, the rest the front's other plans), those at `frontIndices` joined as the front, and
    /// `current` (the open plan, may be null).
    void setCandidates(const std::vector<model::SearchCandidate> &candidates, int ranked,
                       const std::vector<int> &frontIndices, const model::Evaluation *current, bool training);
    /// Nothing to show (before a search): `message` alone.
    void setMessage(const QString &message);
    /// Rings candidate `index` (-1: none).
    void setSelected(int index);
    int selected() const { return m_selected; }

    /// The point a candidate is drawn at: (x, y) in axis units (training: seconds, GiB;
    /// serving: tokens/s per chip, milliseconds).
    QPointF pointOf(int index) const;
    /// The pixel a candidate is drawn at, as last laid out.
    QPointF pixelOf(int index) const;
    /// The candidate drawn nearest to `pixel` within `radius` pixels, or -1.
    int candidateAt(QPointF pixel, double radius = 8) const;
    /// Whether the open plan is drawn, and where (axis units).
    std::optional<QPointF> currentPoint() const { return m_current; }
    int frontSize() const { return static_cast<int>(m_front.size()); }

signals:
    void candidateClicked(int index);

protected:
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void rebuild();
    QPointF place(const model::Evaluation &evaluation) const;

    std::vector<model::SearchCandidate> m_candidates;
    int m_ranked = 0;
    std::vector<int> m_front;
    std::optional<QPointF> m_current;
    QString m_currentText; ///< the open plan's hover text
    bool m_training = true;
    bool m_hasData = false;
    QString m_message;
    int m_selected = -1;
    QPointer<QCPGraph> m_selection;
};

} // namespace meshplan::views
