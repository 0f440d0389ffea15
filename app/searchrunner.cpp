#include "searchrunner.h"

#include <QMetaObject>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <exception>
#include <utility>

namespace meshplan::app {

SearchRunner::SearchRunner(QObject *parent)
    : QObject(parent)
{
    setSearchFunction({});
}

void SearchRunner::setSearchFunction(SearchFunction search)
{
    m_search = std::move(search);
    if (!m_search)
        m_search = [](const model::Plan &plan, const model::SearchOptions &options,
                      const model::SearchProgress &progress, const std::atomic<bool> *cancel) {
            return model::searchPlans(plan, options, progress, cancel);
        };
}

SearchRunner::~SearchRunner()
{
    // Closing the window mid-search: stop it and wait, so the thread never outlives what it reads.
    cancel();
    join();
}

void SearchRunner::cancel()
{
    m_cancel = true;
}

void SearchRunner::join()
{
    if (m_thread.joinable())
        m_thread.join();
}

void SearchRunner::start(const model::Plan &plan, const model::SearchOptions &options)
{
    cancel();
    join();
    m_cancel = false;
    m_lastPostNs = 0;
    m_running = true;
    m_plan = plan;
    const std::uint64_t generation = ++m_generation;
    const auto started = std::chrono::steady_clock::now();
    m_thread = std::thread([this, plan, options, generation, started] {
#ifdef __linux__
        // The search takes every core; at a lower priority it yields them to the window's
        // thread, which then repaints within a frame. Threads the search starts inherit it.
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
        const auto elapsed = [started] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        };
        // Called from the search's threads: one of them posts, at most every kProgressInterval;
        // the rest return at once, so a fast search is not slowed by the window.
        const model::SearchProgress progress = [this, generation, elapsed](std::int64_t considered, std::int64_t total) {
            const double now = elapsed();
            const auto nowNs = static_cast<std::int64_t>(now * 1e9);
            std::int64_t last = m_lastPostNs.load(std::memory_order_relaxed);
            if (nowNs - last < std::chrono::nanoseconds(kProgressInterval).count()
                || !m_lastPostNs.compare_exchange_strong(last, nowNs))
                return;
            QMetaObject::invokeMethod(
                this,
                [this, generation, considered, total, now] {
                    if (generation == m_generation && m_running)
                        emit progressed(considered, total, now);
                },
                Qt::QueuedConnection);
        };
        auto result = std::make_shared<model::Expected<model::SearchOutcome>>(model::Error{"search", "not run"});
        std::string crash;
        try {
            *result = m_search(plan, options, progress, &m_cancel);
        } catch (const std::exception &e) {
            crash = e.what();
        }
        QMetaObject::invokeMethod(
            this,
            [this, generation, result, crash] {
                if (generation != m_generation)
                    return; // a newer search replaced this one
                join(); // the thread has posted its last word and is returning
                m_running = false;
                if (!crash.empty())
                    emit failed(tr("internal error: %1").arg(QString::fromStdString(crash)));
                else if (*result)
                    emit finished(**result);
                else
                    emit failed(QString::fromStdString(result->error().toString()));
            },
            Qt::QueuedConnection);
    });
}

} // namespace meshplan::app
