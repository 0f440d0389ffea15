#pragma once
// The window's comparison: a pinned baseline compared with the open plan as it is edited, or two
// given plans (two search results, a result and the open plan), evaluated and shown in the
// CompareView with the charts of both.

#include "cost/evaluation.h"
#include "explore/plancomparison.h"
#include "plan/plan.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <optional>

namespace meshplan::views {
class CompareView;
}

namespace meshplan::app {

class PlanDocument;

class PlanComparer : public QObject
{
    Q_OBJECT

public:
    PlanComparer(PlanDocument *document, views::CompareView *view, QObject *parent = nullptr);

    /// Pins `baseline` (by default the open plan as it is now); the view then compares the open
    /// plan with it after every edit. A message, and nothing pinned, when it cannot be evaluated.
    std::optional<QString> pin(const std::optional<model::Plan> &baseline = std::nullopt);
    /// Compares `candidate` with `baseline`, both fixed: the view stops following the open plan
    /// until a baseline is pinned again or cleared. A message when either cannot be evaluated.
    std::optional<QString> compare(const model::Plan &baseline, const model::Plan &candidate);
    /// Nothing to compare: the view says how to pin a baseline.
    void clear();

    bool hasBaseline() const { return m_baseline.has_value(); }
    /// Whether the candidate is the open plan (a pinned baseline), not a fixed plan.
    bool followsDocument() const { return m_baseline && !m_candidate; }
    const std::optional<model::Plan> &baseline() const { return m_baseline; }
    /// The comparison as last shown (none without a baseline or when a side does not evaluate).
    const std::optional<model::PlanComparison> &comparison() const { return m_comparison; }

    /// Brings the view up to date now: the table, and the charts of both sides.
    void update();
    /// Updates on the next turn of the event loop, if the view is on screen (else when it is
    /// shown: call this again then).
    void scheduleUpdate();

private:
    /// Feeds the open (or fixed) candidate's chart of `page` (CompareView::currentChart) unless
    /// it is up to date; only the page on screen is fed after an edit.
    void feedCandidate(int page);

signals:
    /// A baseline was pinned or cleared (the window enables its actions).
    void baselineChanged(bool pinned);

private:
    PlanDocument *m_document;
    views::CompareView *m_view;
    std::optional<model::Plan> m_baseline;
    std::optional<model::Evaluation> m_baselineEvaluation;
    std::optional<model::Plan> m_candidate; ///< none: the open plan
    std::optional<model::Evaluation> m_candidateEvaluation;
    std::optional<model::PlanComparison> m_comparison;
    bool m_stale = true;
    bool m_baselineFed = false; ///< the baseline's charts drawn (they change only with the baseline)
    bool m_candidateFed[3] = {}; ///< per chart page, the candidate's chart drawn since the last update
    QTimer m_timer;
};

} // namespace meshplan::app
