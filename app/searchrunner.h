#pragma once
// Runs a plan search off the GUI thread: progress comes back as queued signals, at most every
// kProgressInterval so that the window repaints within a frame; cancel stops it; the outcome
// comes back as a signal on the GUI thread. Destroying the runner cancels and joins the search.

#include "explore/plansearch.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

namespace meshplan::app {

class SearchRunner : public QObject
{
    Q_OBJECT

public:
    /// The search itself: model::searchPlans, or a stand-in (tests time a cancel with one).
    using SearchFunction = std::function<model::Expected<model::SearchOutcome>(
        const model::Plan &, const model::SearchOptions &, const model::SearchProgress &, const std::atomic<bool> *)>;

    static constexpr std::chrono::milliseconds kProgressInterval{50};

    explicit SearchRunner(QObject *parent = nullptr);
    ~SearchRunner() override;

    /// Starts searching `plan` (a copy: later edits do not reach the search). A search still
    /// running is cancelled and waited for first; its outcome is never reported.
    void start(const model::Plan &plan, const model::SearchOptions &options);
    /// Asks the running search to stop; it reports what it found so far (cancelled: true).
    void cancel();
    bool isRunning() const { return m_running; }
    /// The plan last started (the outcome's results are its parallelizations).
    const model::Plan &searchedPlan() const { return m_plan; }
    bool searchesTraining() const { return m_plan.kind == model::WorkloadKind::Training; }
    /// Replaces the search function (tests: a stand-in that runs until cancelled); an empty one
    /// brings model::searchPlans back.
    void setSearchFunction(SearchFunction search);

signals:
    /// `considered` of about `total` candidates after `elapsedS` seconds.
    void progressed(qint64 considered, qint64 total, double elapsedS);
    /// The search ended, or stopped after cancel() with cancelled set.
    void finished(const meshplan::model::SearchOutcome &outcome);
    /// The search could not run; `message` says why.
    void failed(const QString &message);

private:
    void join();

    SearchFunction m_search;
    std::thread m_thread;
    /// Shared with the search thread, which may outlive nothing but reads these until joined.
    std::atomic<bool> m_cancel{false};
    std::atomic<std::int64_t> m_lastPostNs{0};
    std::uint64_t m_generation = 0;
    bool m_running = false;
    model::Plan m_plan;
};

} // namespace meshplan::app
