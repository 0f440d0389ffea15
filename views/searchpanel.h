#pragma once
// The search panel: the objective (and for serving the latency target), Search and Cancel, a
// progress bar with plans/s, the ranked results as a sortable table and the Pareto plot. It
// draws what the search found and says what the user picked; it never evaluates a plan.

#include "explore/plansearch.h"

#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace meshplan::views {

class ParetoChart;
class SearchResultsModel;

class SearchPanel : public QWidget
{
    Q_OBJECT

public:
    /// Ranked results listed (the Pareto front's plans are plotted besides).
    static constexpr int kRanked = 20;

    explicit SearchPanel(QWidget *parent = nullptr);

    /// The open plan: which objectives apply (training or serving, a price or not) and the
    /// point the Pareto plot marks. `evaluation` may be null (the plan does not evaluate).
    void setOpenPlan(const model::Plan &plan, const model::Evaluation *evaluation);
    /// The options the controls ask for (objective, latency target; kRanked results kept).
    model::SearchOptions options() const;

    /// A search began: Search is disabled, Cancel enabled, the bar at zero.
    void searchStarted();
    /// Candidates considered so far of `total` (an estimate while running), after `elapsedS`.
    void setProgress(std::int64_t considered, std::int64_t total, double elapsedS);
    /// The search ended (or was cancelled): the table and the plot show what it found.
    void setOutcome(const model::SearchOutcome &outcome, bool training);
    /// The search could not run (the plan does not evaluate, ...): `message` says why.
    void setFailed(const QString &message);
    bool isRunning() const { return m_running; }
    /// The open plan's model, chip or workload is no longer the one searched: the results say so.
    void setStale(bool stale);
    bool isStale() const;

    /// The panel's list: the ranked results (best first), then the front's plans not ranked.
    int candidateCount() const { return static_cast<int>(m_candidates.size()); }
    int rankedCount() const { return m_ranked; }
    const model::SearchCandidate &candidate(int index) const { return m_candidates[static_cast<std::size_t>(index)]; }
    /// Picks candidate `index` (-1: none) in the table and the plot, as a click would, and says so.
    void pickCandidate(int index);
    int pickedCandidate() const { return m_picked; }

    QTableView *table() const { return m_table; }
    QSortFilterProxyModel *sortedResults() const { return m_sorted; }
    SearchResultsModel *results() const { return m_results; }
    ParetoChart *paretoChart() const { return m_pareto; }
    QProgressBar *progressBar() const { return m_progress; }
    QLabel *statusLabel() const { return m_status; }
    QComboBox *objectiveBox() const { return m_objective; }
    QPushButton *searchButton() const { return m_search; }
    QPushButton *cancelButton() const { return m_cancel; }
    QPushButton *applyButton() const { return m_apply; }
    QPushButton *compareButton() const { return m_compare; }

signals:
    void searchRequested(const meshplan::model::SearchOptions &options);
    void cancelRequested();
    /// The user picked a candidate: show it on the mesh and the charts without changing the plan.
    void previewRequested(int index);
    /// Put candidate `index` into the plan (one undo step).
    void applyRequested(int index);
    /// Compare candidate `index` with candidate `baseline` side by side, or with the open plan
    /// when `baseline` is -1 (the Compare tab).
    void compareRequested(int index, int baseline);

private:
    void fillObjectives(bool training, bool priced);
    void tableSelectionChanged();
    void updateButtons();
    void showTableMenu(const QPoint &position);

    QComboBox *m_objective = nullptr;
    QLabel *m_latencyLabel = nullptr;
    QDoubleSpinBox *m_latency = nullptr;
    QPushButton *m_search = nullptr;
    QPushButton *m_cancel = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_stale = nullptr;
    QTableView *m_table = nullptr;
    SearchResultsModel *m_results = nullptr;
    QSortFilterProxyModel *m_sorted = nullptr;
    ParetoChart *m_pareto = nullptr;
    QPushButton *m_apply = nullptr;
    QPushButton *m_compare = nullptr;

    std::vector<model::SearchCandidate> m_candidates;
    int m_ranked = 0;
    std::vector<int> m_front; ///< the Pareto front's plans, as indices into m_candidates
    int m_picked = -1;
    bool m_running = false;
    bool m_training = true;         ///< the open plan's kind
    bool m_resultsTraining = true;  ///< the kind the results are of
    bool m_priced = false;
    double m_planLatencyS = -1; ///< the open plan's latency target when last seen (-1: training)
    bool m_picking = false; ///< set while the panel itself moves the table's selection
    std::optional<model::Evaluation> m_openEvaluation;
};

} // namespace meshplan::views
