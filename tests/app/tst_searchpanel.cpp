// The search panel in the window (issue 17), driven as a user would: Search and Cancel clicked,
// the table sorted by its headers, rows and points picked (a preview that leaves the document
// alone), Apply as one undo step, the window closed mid-search. A stand-in search that runs until
// cancelled makes the cancel and close cases deterministic; the rest run the real search.
#include "compareview.h"
#include "mainwindow.h"
#include "memorychart.h"
#include "meshcanvas.h"
#include "paretochart.h"
#include "plancomparer.h"
#include "plandocument.h"
#include "searchpanel.h"
#include "searchresultsmodel.h"
#include "searchrunner.h"
#include "windowdriver.h"

#include "cost/evaluation.h"
#include "explore/plancomparison.h"

#include <QAction>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLabel>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest>
#include <QUndoStack>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

using meshplan::app::MainWindow;
using meshplan::app::SearchRunner;
using meshplan::views::SearchResultsModel;
using namespace meshplan;
using namespace meshplan::testing;

namespace {

const QString kPlan = QStringLiteral(MESHPLAN_TEST_DATA "/search/llama-3-8b-h100-pipeline.meshplan");

/// A search that reports progress until cancelled (or `limit` passes), then returns an outcome
/// holding `results` with cancelled set. `sawCancel` says whether it saw the request.
SearchRunner::SearchFunction untilCancelled(std::shared_ptr<std::atomic<bool>> sawCancel,
                                            std::vector<model::SearchCandidate> results = {},
                                            std::chrono::milliseconds limit = std::chrono::seconds(30))
{
    return [sawCancel, results, limit](const model::Plan &, const model::SearchOptions &,
                                       const model::SearchProgress &progress, const std::atomic<bool> *cancel) {
        const auto start = std::chrono::steady_clock::now();
        model::SearchOutcome outcome;
        std::int64_t considered = 0;
        while (std::chrono::steady_clock::now() - start < limit) {
            if (cancel && *cancel) {
                *sawCancel = true;
                outcome.cancelled = true;
                break;
            }
            considered += 1000;
            progress(considered, 1'000'000'000);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        outcome.space.size = considered;
        outcome.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        outcome.results = results;
        return model::Expected<model::SearchOutcome>(outcome);
    };
}

double relDiff(double a, double b)
{
    return std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

} // namespace

class TestSearchPanel : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_autosave;
    std::unique_ptr<MainWindow> m_window;

    MainWindow &window() { return *m_window; }
    app::PlanDocument &doc() { return *m_window->document(); }
    views::SearchPanel &panel() { return *m_window->searchPanel(); }
    /// Clicks Search and waits for the outcome; false if it never came.
    bool runSearch(int timeoutMs = 120000)
    {
        QSignalSpy done(window().searchRunner(), &SearchRunner::finished);
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        return done.wait(timeoutMs) || done.count() > 0;
    }

private slots:
    void init()
    {
        m_window = showTestWindow(m_autosave.path());
        QVERIFY(m_window);
        QVERIFY(window().openFile(kPlan));
        window().showSearch();
        QApplication::processEvents();
    }
    void cleanup() { m_window.reset(); }

    void menuOpensThePanel()
    {
        window().searchDock()->hide();
        auto *action = window().findChild<QAction *>(QStringLiteral("searchAction"));
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_F));
        action->trigger();
        QApplication::processEvents();
        QVERIFY(window().searchDock()->isVisible());
        QVERIFY(!window().searchDock()->visibleRegion().isEmpty());
        // Training offers the shortest step first; the cheapest step only where the chip has a
        // price (the H100's catalog price here).
        QVERIFY(doc().plan().pricePerChipHour > 0);
        QCOMPARE(panel().objectiveBox()->count(), 2);
        QCOMPARE(panel().options().objective, model::SearchObjective::StepTime);
        panel().objectiveBox()->setCurrentIndex(1);
        QCOMPARE(panel().options().objective, model::SearchObjective::Cost);
        model::Plan unpriced = doc().plan();
        unpriced.pricePerChipHour = 0;
        panel().setOpenPlan(unpriced, nullptr);
        QCOMPARE(panel().objectiveBox()->count(), 1);
        QCOMPARE(panel().options().objective, model::SearchObjective::StepTime);
        // Serving ranks by tokens/s per chip under a latency target (the plan's, in ms).
        model::Plan serving = doc().plan();
        serving.kind = model::WorkloadKind::Inference;
        serving.inference.latencyTargetS = 0.05;
        panel().setOpenPlan(serving, nullptr);
        QCOMPARE(panel().options().objective, model::SearchObjective::TokensPerChip);
        QCOMPARE(panel().objectiveBox()->count(), 2);
        QCOMPARE(panel().options().latencyTargetS, 0.05);
        // The user's target stays across edits; another target in the plan replaces it.
        panel().findChild<QDoubleSpinBox *>(QStringLiteral("searchLatency"))->setValue(80);
        panel().setOpenPlan(serving, nullptr);
        QCOMPARE(panel().options().latencyTargetS, 0.08);
        serving.inference.latencyTargetS = 0.02;
        panel().setOpenPlan(serving, nullptr);
        QCOMPARE(panel().options().latencyTargetS, 0.02);
    }

    void closedPanelLeavesTheLayoutAlone()
    {
        // Closed again, the panel stays in the inspector's tab group; its minimum width must not
        // widen that column and squeeze the palettes.
        auto *inspector = window().findChild<QDockWidget *>(QStringLiteral("inspectorDock"));
        QVERIFY(window().tabifiedDockWidgets(inspector).contains(window().searchDock()));
        QVERIFY(window().searchDock()->widget()->minimumSizeHint().width()
                <= inspector->widget()->minimumSizeHint().width());
        QVERIFY(window().searchDock()->minimumSizeHint().width() <= inspector->minimumSizeHint().width());
        // Closed and opened again from the View menu, it comes back to its tab, raised.
        window().searchDock()->close();
        window().searchDock()->toggleViewAction()->trigger();
        QApplication::processEvents();
        QVERIFY(window().searchDock()->isVisible());
        QVERIFY(window().tabifiedDockWidgets(inspector).contains(window().searchDock()));
        QVERIFY(!window().searchDock()->visibleRegion().isEmpty());
    }

    void searchFillsTheTableAndPlot()
    {
        const double before = doc().evaluation()->step.time;
        QVERIFY(runSearch());
        QVERIFY(!panel().isRunning());
        QVERIFY(panel().searchButton()->isEnabled());
        QCOMPARE(panel().progressBar()->value(), panel().progressBar()->maximum());
        const int rows = panel().sortedResults()->rowCount();
        QVERIFY2(rows > 0, qPrintable(panel().statusLabel()->text()));
        QVERIFY(rows <= panel().options().top);
        QCOMPARE(rows, panel().rankedCount());
        QVERIFY(panel().statusLabel()->text().contains(QStringLiteral("do not fit")));
        // Ranked by step time: each row's time is what its plan evaluates to, none shorter above.
        double previous = 0;
        for (int row = 0; row < rows; ++row) {
            const auto &c = panel().candidate(row);
            const double time = panel().sortedResults()->index(row, SearchResultsModel::Time).data(SearchResultsModel::SortRole).toDouble();
            QCOMPARE(time, c.evaluation.step.time);
            QVERIFY(time >= previous * (1 - 1e-12));
            previous = time;
            QCOMPARE(panel().sortedResults()->index(row, SearchResultsModel::Rank).data().toInt(), row + 1);
            const auto again = model::evaluate(c.plan);
            QVERIFY(again);
            QVERIFY(relDiff(again->step.time, time) < 1e-9);
            QVERIFY(c.evaluation.memory.fits);
        }
        // GPipe over 8 stages with 8 microbatches wastes (8-1)/(8+8-1) of the step: the best is faster.
        QVERIFY2(panel().candidate(0).evaluation.step.time < before,
                 qPrintable(QStringLiteral("best %1 s, plan %2 s").arg(panel().candidate(0).evaluation.step.time).arg(before)));
        // The plot: a point per candidate where the table says, the front joined, the plan marked.
        auto *plot = panel().paretoChart();
        QVERIFY(plot->frontSize() > 0);
        QVERIFY(plot->currentPoint());
        QCOMPARE(plot->currentPoint()->x(), before);
        plot->replot();
        for (int i = 0; i < panel().candidateCount(); ++i) {
            QCOMPARE(plot->pointOf(i).x(), panel().candidate(i).evaluation.step.time);
            QCOMPARE(plot->pointOf(i).y(), panel().candidate(i).evaluation.memory.total / (1024.0 * 1024.0 * 1024.0));
            QVERIFY(plot->rect().contains(plot->pixelOf(i).toPoint()));
        }
    }

    void tableSorts()
    {
        QVERIFY(runSearch());
        auto *sorted = panel().sortedResults();
        const int rows = sorted->rowCount();
        QVERIFY(rows >= 2);
        QHeaderView *header = panel().table()->horizontalHeader();
        const auto column = [&](int c) {
            QList<double> values;
            for (int row = 0; row < rows; ++row)
                values << sorted->index(row, c).data(SearchResultsModel::SortRole).toDouble();
            return values;
        };
        // A click on Memory/chip sorts by it (ascending), a second click reverses it.
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {},
                          QPoint(header->sectionViewportPosition(SearchResultsModel::Memory) + 5, header->height() / 2));
        QList<double> memory = column(SearchResultsModel::Memory);
        QVERIFY(std::is_sorted(memory.begin(), memory.end()));
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {},
                          QPoint(header->sectionViewportPosition(SearchResultsModel::Memory) + 5, header->height() / 2));
        memory = column(SearchResultsModel::Memory);
        QVERIFY(std::is_sorted(memory.rbegin(), memory.rend()));
        QVERIFY(memory.front() > memory.back() || memory.front() == memory.back());
        // The rank stays with its plan whatever the order.
        for (int row = 0; row < rows; ++row) {
            const int rank = sorted->index(row, SearchResultsModel::Rank).data().toInt();
            QCOMPARE(sorted->index(row, SearchResultsModel::Memory).data(SearchResultsModel::SortRole).toDouble(),
                     panel().candidate(rank - 1).evaluation.memory.total);
        }
        // Picking a row in the sorted table picks its plan, not the plan of that row number.
        panel().table()->selectRow(0);
        const int rank = sorted->index(0, SearchResultsModel::Rank).data().toInt();
        QCOMPARE(panel().pickedCandidate(), rank - 1);
        panel().table()->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
        QList<double> ranks = column(SearchResultsModel::Rank);
        for (int row = 0; row < rows; ++row)
            QCOMPARE(ranks[row], double(row + 1));
    }

    void previewLeavesTheDocumentAlone()
    {
        QVERIFY(runSearch());
        const std::string json = doc().json().dump();
        const int commands = doc().undoStack()->count();
        const QString title = window().canvas()->titleText();
        window().chartDocks()[1]->raise(); // the memory chart
        // A click on a point of the plot previews that plan on the mesh and the charts.
        auto *plot = panel().paretoChart();
        plot->replot();
        const int pick = std::min(1, panel().candidateCount() - 1);
        QTest::mouseClick(plot, Qt::LeftButton, {}, plot->pixelOf(pick).toPoint());
        QCOMPARE(panel().pickedCandidate(), plot->candidateAt(plot->pixelOf(pick)));
        const auto &picked = panel().candidate(panel().pickedCandidate());
        QVERIFY(window().isPreviewing());
        QVERIFY(window().canvas()->titleText().startsWith(QStringLiteral("Preview of")));
        window().updateCharts(true);
        QCOMPARE(window().memoryChart()->chipKinds().size(), picked.evaluation.perChip.size());
        QCOMPARE(window().memoryChart()->chipKinds().front().memory.total, picked.evaluation.perChip.front().memory.total);
        QCOMPARE(doc().json().dump(), json);
        QCOMPARE(doc().undoStack()->count(), commands);
        QVERIFY(panel().applyButton()->isEnabled());
        // Esc goes back to the plan.
        window().activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window()));
        QTest::keyClick(&window(), Qt::Key_Escape);
        QVERIFY(!window().isPreviewing());
        QCOMPARE(window().canvas()->titleText(), title);
        window().updateCharts(true);
        QCOMPARE(window().memoryChart()->chipKinds().front().memory.total,
                 doc().evaluation()->perChip.front().memory.total);
        // Any edit ends a preview too.
        panel().pickCandidate(0);
        QVERIFY(window().isPreviewing());
        QVERIFY(window().editField(QStringLiteral("Set microbatches"), "/parallelism/microbatches", 16));
        QVERIFY(!window().isPreviewing());
    }

    void previewRedrawsTheBoxesOfALargeCluster()
    {
        // 16,384 H100s are drawn as boxes cut where the node axis's roles change: 16 pipeline
        // stages in the plan; a result without a pipeline must not keep the stage boxes.
        QVERIFY(window().openFile(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-405b-h100-16k.meshplan")));
        QVERIFY(window().canvas()->boxNames().front().startsWith(QStringLiteral("stage 0")));
        model::SearchOutcome outcome;
        model::SearchCandidate flat{doc().plan(), {}, "no pipeline"};
        flat.plan.parallelism.degrees = {256, 8, 2, 1, 1, 4};
        flat.plan.parallelism.placement.clear();
        flat.plan.parallelism.microbatches = 1;
        const auto evaluation = model::evaluate(flat.plan);
        QVERIFY2(evaluation, evaluation ? "" : evaluation.error().toString().c_str());
        flat.evaluation = *evaluation;
        outcome.results = {flat};
        panel().setOutcome(outcome, true);
        panel().pickCandidate(0);
        QVERIFY(window().isPreviewing());
        QVERIFY(window().canvas()->boxCount() > 0);
        for (const QString &name : window().canvas()->boxNames())
            QVERIFY2(!name.startsWith(QStringLiteral("stage")), qPrintable(name));
        window().endPreview();
        QVERIFY(window().canvas()->boxNames().front().startsWith(QStringLiteral("stage 0")));
    }

    void applyIsOneUndoStep()
    {
        QVERIFY(runSearch());
        const nlohmann::json before = doc().json();
        const int commands = doc().undoStack()->count();
        panel().pickCandidate(0);
        const auto best = panel().candidate(0);
        QTest::mouseClick(panel().applyButton(), Qt::LeftButton);
        QCOMPARE(doc().undoStack()->count(), commands + 1);
        QVERIFY(doc().undoStack()->undoText().startsWith(QStringLiteral("Apply search result #1")));
        QVERIFY(!window().isPreviewing());
        // The document now holds the result: the same layout, evaluated to the same numbers.
        QCOMPARE(doc().plan().parallelism.degrees, best.plan.parallelism.degrees);
        QCOMPARE(doc().plan().parallelism.microbatches, best.plan.parallelism.microbatches);
        QVERIFY(doc().evaluation());
        QVERIFY(relDiff(doc().evaluation()->step.time, best.evaluation.step.time) < 1e-9);
        QVERIFY(relDiff(doc().evaluation()->memory.total, best.evaluation.memory.total) < 1e-9);
        QCOMPARE(doc().json().at("model"), before.at("model"));
        // The plot's mark of the open plan moves onto the applied point.
        QCOMPARE(panel().paretoChart()->currentPoint()->x(), doc().evaluation()->step.time);
        // One undo restores the plan exactly; redo applies it again.
        doc().undoStack()->undo();
        QCOMPARE(doc().json().dump(), before.dump());
        QCOMPARE(doc().undoStack()->index(), commands);
        doc().undoStack()->redo();
        QCOMPARE(doc().plan().parallelism.degrees, best.plan.parallelism.degrees);
    }

    // Compare puts the picked result beside the open plan in the Compare tab, and a result beside
    // the best one; neither touches the document.
    void compareShowsAResultBesideThePlan()
    {
        QVERIFY(runSearch());
        QVERIFY(panel().candidateCount() > 1);
        const nlohmann::json before = doc().json();
        const int commands = doc().undoStack()->count();
        panel().pickCandidate(1);
        QVERIFY(panel().compareButton()->isEnabled());
        QTest::mouseClick(panel().compareButton(), Qt::LeftButton);
        QVERIFY(window().compareView()->showsComparison());
        QVERIFY(window().compareDock()->isVisible());
        QVERIFY(window().comparer()->comparison());
        const model::NumberComparison *time = window().comparer()->comparison()->number("step.time_s");
        QVERIFY(time && time->baseline && time->candidate);
        QVERIFY(relDiff(*time->baseline, doc().evaluation()->step.time) < 1e-9);
        QVERIFY(relDiff(*time->candidate, panel().candidate(1).evaluation.step.time) < 1e-9);
        // Two results: #2 against #1.
        QVERIFY(window().compareSearchResult(1, 0));
        time = window().comparer()->comparison()->number("step.time_s");
        QVERIFY(relDiff(*time->baseline, panel().candidate(0).evaluation.step.time) < 1e-9);
        QVERIFY(relDiff(*time->candidate, panel().candidate(1).evaluation.step.time) < 1e-9);
        QCOMPARE(doc().json().dump(), before.dump());
        QCOMPARE(doc().undoStack()->count(), commands);
    }

    void resultsOfAnotherModelSaySo()
    {
        QVERIFY(runSearch());
        QVERIFY(!panel().isStale());
        const nlohmann::json searchedModel = doc().json().at("model");
        QVERIFY(window().dropModel("llama-3-70b"));
        QVERIFY(panel().isStale());
        // Apply brings the searched plan back with the result's layout, so it evaluates as listed.
        const auto best = panel().candidate(0);
        QVERIFY(window().applySearchResult(0));
        QCOMPARE(doc().json().at("model"), searchedModel);
        QVERIFY(relDiff(doc().evaluation()->step.time, best.evaluation.step.time) < 1e-9);
        QVERIFY(!panel().isStale());
        // An edit made while the search runs is noticed when the results arrive.
        auto saw = std::make_shared<std::atomic<bool>>(false);
        window().searchRunner()->setSearchFunction(untilCancelled(saw, {best}, std::chrono::milliseconds(300)));
        QSignalSpy done(window().searchRunner(), &SearchRunner::finished);
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QVERIFY(window().dropModel("llama-3-70b"));
        QVERIFY(done.wait(10000));
        QVERIFY(panel().isStale());
    }

    void cancelLeavesTheDocumentUntouched()
    {
        const std::string json = doc().json().dump();
        const std::string planJson = model::planToJson(doc().plan()).dump();
        const int commands = doc().undoStack()->count();
        const int index = doc().undoStack()->index();
        const bool modified = doc().isModified();
        auto saw = std::make_shared<std::atomic<bool>>(false);
        window().searchRunner()->setSearchFunction(untilCancelled(saw));
        QSignalSpy progressed(window().searchRunner(), &SearchRunner::progressed);
        QSignalSpy done(window().searchRunner(), &SearchRunner::finished);
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QVERIFY(panel().isRunning());
        QVERIFY(!panel().searchButton()->isEnabled());
        QVERIFY(panel().cancelButton()->isEnabled());
        QVERIFY(progressed.wait(5000));
        QVERIFY2(panel().progressBar()->text().contains(QStringLiteral("plans/s")), qPrintable(panel().progressBar()->text()));
        QTest::mouseClick(panel().cancelButton(), Qt::LeftButton);
        QVERIFY(done.wait(5000));
        QVERIFY(*saw);
        QVERIFY(!panel().isRunning());
        QVERIFY(panel().progressBar()->text().startsWith(QStringLiteral("Cancelled")));
        QCOMPARE(doc().json().dump(), json);
        QCOMPARE(model::planToJson(doc().plan()).dump(), planJson);
        QCOMPARE(doc().undoStack()->count(), commands);
        QCOMPARE(doc().undoStack()->index(), index);
        QCOMPARE(doc().isModified(), modified);
        QVERIFY(!window().isPreviewing());

        // The real search, cancelled at once, leaves it as untouched.
        window().searchRunner()->setSearchFunction({});
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QTest::mouseClick(panel().cancelButton(), Qt::LeftButton);
        QVERIFY(done.wait(120000));
        QCOMPARE(doc().json().dump(), json);
        QCOMPARE(doc().undoStack()->count(), commands);
    }

    void progressIsThrottled()
    {
        // A search reporting every 200 µs for 600 ms reaches the window at most every 50 ms.
        auto saw = std::make_shared<std::atomic<bool>>(false);
        window().searchRunner()->setSearchFunction(untilCancelled(saw, {}, std::chrono::milliseconds(600)));
        QSignalSpy progressed(window().searchRunner(), &SearchRunner::progressed);
        QSignalSpy done(window().searchRunner(), &SearchRunner::finished);
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QVERIFY(done.wait(10000));
        QVERIFY(!*saw);
        QVERIFY2(progressed.count() >= 3 && progressed.count() <= 600 / 50 + 1,
                 qPrintable(QString::number(progressed.count())));
        for (int i = 1; i < progressed.count(); ++i)
            QVERIFY(progressed[i][2].toDouble() - progressed[i - 1][2].toDouble() >= 0.05 - 1e-9);
    }

    void windowStaysResponsive()
    {
        // A stand-in search keeping both cores busy (as the real one does) while the window
        // handles its progress and repaints. The times are reported, not asserted: a timed test
        // fails on a loaded machine (or under ASan); the 16 ms frame is a figure of the
        // README (about 2 ms here; 20 ms before the runner lowered the search's priority).
        window().searchRunner()->setSearchFunction([](const model::Plan &, const model::SearchOptions &,
                                                      const model::SearchProgress &progress,
                                                      const std::atomic<bool> *cancel) {
            std::atomic<std::int64_t> considered{0};
            const auto start = std::chrono::steady_clock::now();
            const auto spin = [&] {
                while (!*cancel && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(800)) {
                    volatile double x = 1;
                    for (int i = 0; i < 20000; ++i)
                        x = x * 1.0000001;
                    progress(considered += 100, 1'000'000);
                }
            };
            std::thread other(spin);
            spin();
            other.join();
            model::SearchOutcome outcome;
            outcome.space.size = considered;
            return model::Expected<model::SearchOutcome>(outcome);
        });
        QList<qint64> panelNs;
        QList<qint64> windowNs;
        QSignalSpy done(window().searchRunner(), &SearchRunner::finished);
        connect(window().searchRunner(), &SearchRunner::progressed, this, [&] {
            QElapsedTimer clock;
            clock.start();
            panel().repaint();
            panelNs << clock.nsecsElapsed();
            clock.restart();
            window().repaint();
            windowNs << clock.nsecsElapsed();
        });
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QVERIFY(done.wait(10000));
        QVERIFY(panelNs.size() >= 5);
        std::sort(panelNs.begin(), panelNs.end());
        std::sort(windowNs.begin(), windowNs.end());
        qInfo("repaint during a search, median (max) over %d updates: panel %.2f ms (%.2f), whole window %.2f ms (%.2f)",
              int(panelNs.size()), panelNs[panelNs.size() / 2] / 1e6, panelNs.back() / 1e6,
              windowNs[windowNs.size() / 2] / 1e6, windowNs.back() / 1e6);
    }

    void realSearchOfALargePlanStaysResponsive()
    {
        // LLaMA-3 405B on 16,384 H100s: tens of millions of candidates over a few seconds. The
        // window hears of them at most every 50 ms and repaints meanwhile (the time reported);
        // the best found is at least as fast as the published layout it starts from.
        QVERIFY(window().openFile(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-405b-h100-16k.meshplan")));
        const double published = doc().evaluation()->step.time;
        QList<qint64> windowNs;
        QSignalSpy done(window().searchRunner(), &SearchRunner::finished);
        connect(window().searchRunner(), &SearchRunner::progressed, this, [&] {
            QElapsedTimer clock;
            clock.start();
            window().repaint();
            windowNs << clock.nsecsElapsed();
        });
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QVERIFY(done.wait(300000));
        QVERIFY(panel().rankedCount() > 0);
        QVERIFY(panel().candidate(0).evaluation.step.time <= published * (1 + 1e-12));
        QVERIFY2(windowNs.size() >= 3, qPrintable(panel().progressBar()->text())); // seconds of search: updates came
        std::sort(windowNs.begin(), windowNs.end());
        qInfo("%s; window repaint during it, median (max) over %d updates: %.2f ms (%.2f)",
              qPrintable(panel().progressBar()->text()), int(windowNs.size()), windowNs[windowNs.size() / 2] / 1e6,
              windowNs.back() / 1e6);
    }

    void hoveringAPointDescribesItsPlan()
    {
        QVERIFY(runSearch());
        auto *plot = panel().paretoChart();
        plot->replot();
        const int last = panel().candidateCount() - 1;
        const int at = plot->candidateAt(plot->pixelOf(last));
        QTest::mouseMove(plot, plot->pixelOf(last).toPoint());
        QVERIFY(QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000));
        const QString expected = views::SearchResultsModel::degreesText(panel().candidate(at).plan);
        QVERIFY2(QToolTip::text().contains(expected.toHtmlEscaped()), qPrintable(QToolTip::text()));
        QVERIFY(QToolTip::text().contains(QStringLiteral("Step time")));
        QTest::mouseMove(plot, QPoint(2, 2));
        QVERIFY(QTest::qWaitFor([] { return !QToolTip::isVisible(); }, 2000));
    }

    void closingDuringASearchCancelsIt()
    {
        auto saw = std::make_shared<std::atomic<bool>>(false);
        window().searchRunner()->setSearchFunction(untilCancelled(saw));
        QSignalSpy progressed(window().searchRunner(), &SearchRunner::progressed);
        QTest::mouseClick(panel().searchButton(), Qt::LeftButton);
        QVERIFY(progressed.wait(5000));
        const auto start = std::chrono::steady_clock::now();
        window().close();
        m_window.reset(); // joins the search thread
        QVERIFY(*saw);
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }

    void textsNameTheLayout()
    {
        model::Plan plan = doc().plan();
        plan.parallelism.degrees = {1, 256, 8, 8, 1, 1};
        QCOMPARE(SearchResultsModel::degreesText(plan), QStringLiteral("fsdp 256 × tensor 8 × pipeline 8"));
        plan.parallelism.degrees = {1, 1, 1, 1, 1, 1};
        QCOMPARE(SearchResultsModel::degreesText(plan), QStringLiteral("one chip"));
        model::Evaluation e;
        e.placement = {{"fsdp", {"y", "z"}}, {"tensor", {"x"}}};
        QCOMPARE(SearchResultsModel::placementText(e), QStringLiteral("tensor x · fsdp y,z"));
    }

    void screenshotWithSearch_data()
    {
        QTest::addColumn<QString>("size");
        QTest::addColumn<bool>("dark");
        QTest::addColumn<QString>("plan");
        QTest::newRow("1024x700") << QStringLiteral("1024x700") << false << kPlan;
        QTest::newRow("1920x1080 dark") << QStringLiteral("1920x1080") << true << kPlan;
        // A 2,048-node cluster previewed at 1024x700: the mesh's scroll bars once came and went
        // for ever as it refitted, and the window never drew.
        QTest::newRow("405B 1024x700") << QStringLiteral("1024x700") << false
                                       << QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-405b-h100-16k.meshplan");
    }
    void screenshotWithSearch()
    {
        QFETCH(QString, size);
        QFETCH(bool, dark);
        QFETCH(QString, plan);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("shot.png"));
        QStringList args{QStringLiteral("--screenshot"), out, QStringLiteral("--size"), size, QStringLiteral("--search")};
        if (dark)
            args << QStringLiteral("--dark");
        args << plan;
        QProcess gui;
        gui.start(QStringLiteral(MESHPLAN_GUI_PATH), args);
        QVERIFY(gui.waitForFinished(180000));
        QCOMPARE(gui.exitStatus(), QProcess::NormalExit);
        QCOMPARE(gui.exitCode(), 0);
        QImage image(out);
        QCOMPARE(image.size(), QSize(size.section(QLatin1Char('x'), 0, 0).toInt(), size.section(QLatin1Char('x'), 1).toInt()));
    }
};

QTEST_MAIN(TestSearchPanel)
#include "tst_searchpanel.moc"
