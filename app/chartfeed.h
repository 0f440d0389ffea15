#pragma once
// Feeds the charts: asks the model for each chart's data (roofline points, timeline, sweeps)
// for a plan and its evaluation, and hands it to the view. The window and `meshplan-cli render`
// both draw through here.

#include "cost/evaluation.h"
#include "plan/plan.h"

#include <QSize>
#include <QString>

#include <memory>
#include <optional>
#include <string>

class QCustomPlot;

namespace meshplan::views {
class MemoryChart;
class RooflineChart;
class SweepChart;
class TimelineChart;
}

namespace meshplan::app {

void feedRoofline(views::RooflineChart *chart, const model::Plan &plan, const model::Evaluation &evaluation);
void feedMemory(views::MemoryChart *chart, const model::Evaluation &evaluation);
void feedTimeline(views::TimelineChart *chart, const model::Plan &plan, const model::Evaluation &evaluation);
/// Training: the per-chip batch sweep (or, with `byChips`, the chip-count sweep); inference:
/// latency against throughput up to the largest batch that fits (and a little beyond).
void feedSweep(views::SweepChart *chart, const model::Plan &plan, const model::Evaluation &evaluation, bool byChips);

/// The chart names `render` accepts.
/// "sweep" varies the per-chip batch (serving: the batch), "sweep-chips" the chip count.
inline constexpr const char *kChartNames[] = {"roofline", "memory", "timeline", "sweep", "sweep-chips"};

/// Chart `chart` (one of kChartNames) of `plan`, fed and styled (dark palette or light), not yet
/// sized; null with `error` set where the plan has no such chart.
std::unique_ptr<QCustomPlot> buildChart(const model::Plan &plan, const model::Evaluation &evaluation,
                                        const std::string &chart, bool dark, QString *error = nullptr);

/// Renders chart `chart` of `plan` to `path` (.png, .pdf or .svg) at `size`; a message on failure.
/// Needs a QApplication (any platform, offscreen included).
/// `dark`: drawn in the dark palette (for dark slides), else the light one; `titled`: the
/// plan's exportTitle above the chart.
std::optional<QString> renderChart(const model::Plan &plan, const std::string &chart, const QString &path, QSize size,
                                   bool dark = false, bool titled = true);

/// What an exported chart says it shows: "LLaMA-3 70B training · 8192 x TPU v5p (16x16x32) · bf16",
/// with the plan's own title first when it has one.
QString exportTitle(const model::Plan &plan);

} // namespace meshplan::app
