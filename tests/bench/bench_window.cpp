// How long the planner window takes to follow an edit: the "live" target is one frame
// (16 ms) for LLaMA-3 405B on 16,384 H100s. Each iteration applies an undoable edit, which
// re-evaluates the plan and updates the canvas, the inspector and the status bar, then paints
// the window. Run offscreen: build/tests/bench/meshplan_bench_window
#include "mainwindow.h"
#include "meshcanvas.h"
#include "plandocument.h"

#include <benchmark/benchmark.h>

#include <QApplication>
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

void BM_EditAndUpdate405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    std::int64_t batch = 2048;
    for (auto _ : state) {
        batch = batch == 2048 ? 1024 : 2048;
        w->editField(QStringLiteral("Set global batch"), "/workload/global_batch", batch, 1);
    }
    state.SetLabel("edit -> evaluate -> canvas + inspector + status");
}
BENCHMARK(BM_EditAndUpdate405bOn16kH100)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_EditUpdateAndPaint405bOn16kH100(benchmark::State &state)
{
    auto *w = window405b();
    std::int64_t batch = 2048;
    for (auto _ : state) {
        batch = batch == 2048 ? 1024 : 2048;
        w->editField(QStringLiteral("Set global batch"), "/workload/global_batch", batch, 1);
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
