// How long the planner window takes to follow an edit: the "live" target is one frame
// (16 ms) for LLaMA-3 405B on 16,384 H100s. Each iteration applies an undoable edit, which
// re-evaluates the plan and updates the canvas, the inspector and the status bar, then paints
// the window. Run offscreen: build/tests/bench/meshplan_bench_window
#include "chartfeed.h"
#include "mainwindow.h"
#include "memorychart.h"
#include "meshcanvas.h"
#include "plancomparer.h"
#include "plandocument.h"
#include "rooflinechart.h"
#include "sweepchart.h"
#include "timelinechart.h"

#include <benchmark/benchmark.h>

#include <QApplication>
#include <QDockWidget>
#include <QFile>

namespace {

meshplan::app::MainWindow *window405b()
{
    static meshplan::app::MainWindow *window = [] {
        auto *w = new meshplan::app::MainWindow;
        w->setInteractive(false);
        w->resize(1600, 1000);
        w->show();
        if (!w->openFile(QStringLiteral(MESHPLAN_BENCH_PLAN)))
            qFatal("cannot open the benchmark plan: %s", qPrintable(w->lastError()));
        QApplication::processEvents();
        return w;
    }();
    return window;
}

// 2048 and 4096 sequences both evaluate (16 microbatches of 1 or 2 sequences per replica);
// 1024 would be refused (8 sequences for 16 microbatches) and time the cheap refusal path.
std::int64_t nextBatch(std::int64_t batch)
{
    return batch == 2048 ? 4096 : 2048;
}

void BM_EditAndUpdate405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    std::int64_t batch = 2048;
    for (auto _ : state) {
        batch = nextBatch(batch);
        if (!w->editField(QStringLiteral("Set global batch"), "/workload/global_batch", batch, 1))
            state.SkipWithError(qPrintable(w->lastError()));
    }
    state.SetLabel("edit -> evaluate -> canvas + inspector + status");
}
BENCHMARK(BM_EditAndUpdate405bOn16kH100)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_EditUpdateAndPaint405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    std::int64_t batch = 2048;
    for (auto _ : state) {
        batch = nextBatch(batch);
        if (!w->editField(QStringLiteral("Set global batch"), "/workload/global_batch", batch, 1))
            state.SkipWithError(qPrintable(w->lastError()));
        w->repaint(); // paints every widget now, as the next frame would
    }
    state.SetLabel("... + a full repaint of the window");
}
BENCHMARK(BM_EditUpdateAndPaint405bOn16kH100)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_HoverChip405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    std::int64_t chip = 0;
    for (auto _ : state) {
        chip = (chip + 1237) % 16384;
        w->canvas()->setHoveredChip(chip);
        w->canvas()->viewport()->repaint();
    }
    state.SetLabel("hover highlight of a chip's groups + canvas repaint");
}
BENCHMARK(BM_HoverChip405bOn16kH100)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

// Each chart on its own: ask the model for its data, hand it to the view and replot, as the
// window does for the chart on screen after an edit (the others wait until they are shown).
void BM_FeedAndReplotChart405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    const auto &plan = w->document()->plan();
    if (!w->document()->evaluation()) {
        state.SkipWithError("the benchmark plan does not evaluate");
        return;
    }
    const auto &evaluation = *w->document()->evaluation();
    const int chart = static_cast<int>(state.range(0));
    for (auto _ : state) {
        switch (chart) {
        case 0: meshplan::app::feedRoofline(w->rooflineChart(), plan, evaluation); w->rooflineChart()->replot(); break;
        case 1: meshplan::app::feedMemory(w->memoryChart(), evaluation); w->memoryChart()->replot(); break;
        case 2: meshplan::app::feedTimeline(w->timelineChart(), plan, evaluation); w->timelineChart()->replot(); break;
        default: meshplan::app::feedSweep(w->sweepChart(), plan, evaluation, chart == 4); w->sweepChart()->replot(); break;
        }
    }
    static const char *names[] = {"roofline", "memory bars", "step timeline", "batch sweep", "chip-count sweep"};
    state.SetLabel(names[chart]);
}
BENCHMARK(BM_FeedAndReplotChart405bOn16kH100)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

// The whole frame after an edit with the chart dock open: evaluate, canvas, inspector, the
// visible chart (the roofline, the first tab) and a repaint of the window.
void BM_EditWithChartsAndPaint405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    std::int64_t batch = 2048;
    for (auto _ : state) {
        batch = nextBatch(batch);
        if (!w->editField(QStringLiteral("Set global batch"), "/workload/global_batch", batch, 1))
            state.SkipWithError(qPrintable(w->lastError()));
        w->updateCharts(false);
        w->repaint();
    }
    state.SetLabel("edit + visible chart + full repaint");
}
BENCHMARK(BM_EditWithChartsAndPaint405bOn16kH100)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

// The Compare tab open with a pinned baseline: after an edit the table and the open plan's three
// charts are rebuilt (the baseline's stay), then the window repaints.
void BM_EditWithCompareAndPaint405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    if (!w->pinBaseline()) {
        state.SkipWithError(qPrintable(w->lastError()));
        return;
    }
    std::int64_t batch = 2048;
    for (auto _ : state) {
        batch = nextBatch(batch);
        if (!w->editField(QStringLiteral("Set global batch"), "/workload/global_batch", batch, 1))
            state.SkipWithError(qPrintable(w->lastError()));
        w->comparer()->update();
        w->repaint();
    }
    w->clearBaseline();
    w->chartDocks().front()->raise();
    state.SetLabel("edit + compare table and charts + full repaint");
}
BENCHMARK(BM_EditWithCompareAndPaint405bOn16kH100)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
