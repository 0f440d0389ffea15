#include "chartfeed.h"

#include "chartstyle.h"
#include "memorychart.h"
#include "oproofline.h"
#include "rooflinechart.h"
#include "scalingsweep.h"
#include "servingsearch.h"
#include "steptimeline.h"
#include "sweepchart.h"
#include "timelinechart.h"

#include <QCoreApplication>

#include <algorithm>
#include <memory>
#include <optional>

namespace meshplan::app {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("ChartFeed", text);
}

} // namespace

void feedRoofline(views::RooflineChart *chart, const model::Plan &plan, const model::Evaluation &evaluation)
{
    chart->setRoofline(model::opRoofline(plan, evaluation));
}

void feedMemory(views::MemoryChart *chart, const model::Evaluation &evaluation)
{
    chart->setChipKinds(evaluation.perChip);
}

void feedTimeline(views::TimelineChart *chart, const model::Plan &plan, const model::Evaluation &evaluation)
{
    chart->setTimeline(model::stepTimeline(plan, evaluation));
}

void feedSweep(views::SweepChart *chart, const model::Plan &plan, const model::Evaluation &evaluation, bool byChips)
{
    if (plan.kind == model::WorkloadKind::Inference) {
        // Up to twice the largest batch that fits, so the chart shows where memory ends.
        const auto limit = std::max<std::int64_t>({plan.inference.batch, 2 * static_cast<std::int64_t>(evaluation.serving.maxBatch), 8});
        auto batches = model::batchLadder(std::min<std::int64_t>(limit, 1 << 20));
        if (std::find(batches.begin(), batches.end(), plan.inference.batch) == batches.end()) {
            batches.push_back(plan.inference.batch);
            std::sort(batches.begin(), batches.end());
        }
        const auto points = model::latencyThroughputSweep(plan, batches);
        if (!points)
            chart->setMessage(QString::fromStdString(points.error().toString()));
        else
            chart->setServing(*points, plan.inference.batch, plan.inference.latencyTargetS);
        return;
    }
    auto sweep = byChips ? model::sweepChipCount(plan) : model::sweepPerChipBatch(plan);
    if (!sweep)
        chart->setMessage(QString::fromStdString(sweep.error().toString()));
    else
        chart->setScaling(*sweep, byChips ? views::SweepChart::Axis::Chips : views::SweepChart::Axis::TokensPerChip);
}

std::optional<QString> renderChart(const model::Plan &plan, const std::string &chart, const QString &path, QSize size)
{
    auto evaluation = model::evaluate(plan);
    if (!evaluation)
        return QString::fromStdString(evaluation.error().toString());
    std::unique_ptr<QCustomPlot> plot;
    if (chart == "roofline") {
        auto *c = new views::RooflineChart;
        plot.reset(c);
        feedRoofline(c, plan, *evaluation);
    } else if (chart == "memory") {
        auto *c = new views::MemoryChart;
        plot.reset(c);
        feedMemory(c, *evaluation);
    } else if (chart == "timeline") {
        auto *c = new views::TimelineChart;
        plot.reset(c);
        feedTimeline(c, plan, *evaluation);
    } else if (chart == "sweep" || chart == "sweep-chips") {
        auto *c = new views::SweepChart;
        plot.reset(c);
        feedSweep(c, plan, *evaluation, chart == "sweep-chips");
        // A file holding only "cannot sweep" would pass for a chart in a build script.
        if (!c->message().isEmpty())
            return tr("%1: %2; nothing was written").arg(QString::fromStdString(chart), c->message());
    } else {
        return tr("--chart: expected roofline, memory, timeline, sweep or sweep-chips, got \"%1\"").arg(QString::fromStdString(chart));
    }
    plot->resize(size);
    plot->replot();
    return views::exportChart(plot.get(), path, size.width(), size.height());
}

} // namespace meshplan::app
