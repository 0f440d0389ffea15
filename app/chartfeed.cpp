#include "chartfeed.h"

#include "chartstyle.h"
#include "cost/oproofline.h"
#include "cost/steptimeline.h"
#include "explore/scalingsweep.h"
#include "explore/servingsearch.h"
#include "plan/plantitle.h"
#include "memorychart.h"
#include "rooflinechart.h"
#include "sweepchart.h"
#include "timelinechart.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>
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
        const auto batches = model::servingChartBatches(plan.inference.batch, evaluation.serving.maxBatch);
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

QString exportTitle(const model::Plan &plan)
{
    const bool training = plan.kind == model::WorkloadKind::Training;
    const model::DType dtype = training ? plan.training.computeDtype : plan.inference.computeDtype;
    const QString dtypeText = QString::fromStdString(std::string(model::dtypeName(dtype)));
    // A generated title already names the model, the chips and the layout.
    if (model::titleFollowsPlan(plan))
        return QString::fromStdString(model::generatedTitle(plan)) + QStringLiteral(" · ") + dtypeText;
    return QString::fromStdString(plan.title) + QStringLiteral(" · ")
           + tr("%1 x %2 (%3)").arg(plan.topology.chipCount()).arg(QString::fromStdString(plan.topology.chip().name),
                                                                   QString::fromStdString(plan.topology.describe()))
           + QStringLiteral(" · ") + dtypeText;
}

std::unique_ptr<QCustomPlot> buildChart(const model::Plan &plan, const model::Evaluation &evaluation,
                                        const std::string &chart, bool dark, QString *error)
{
    const auto failed = [&](const QString &message) {
        if (error)
            *error = message;
        return std::unique_ptr<QCustomPlot>();
    };
    if (chart == "sweep-chips" && plan.kind == model::WorkloadKind::Inference)
        return failed(tr("--chart sweep-chips: a serving plan is swept over batch sizes; use --chart sweep"));
    // The palette comes first: feeding picks colours from it.
    const auto styled = [dark](QCustomPlot *plot) {
        if (dark)
            plot->setPalette(views::darkPalette(plot->palette()));
        return plot;
    };
    std::unique_ptr<QCustomPlot> plot;
    if (chart == "roofline") {
        auto *c = new views::RooflineChart;
        plot.reset(styled(c));
        feedRoofline(c, plan, evaluation);
    } else if (chart == "memory") {
        auto *c = new views::MemoryChart;
        plot.reset(styled(c));
        feedMemory(c, evaluation);
    } else if (chart == "timeline") {
        auto *c = new views::TimelineChart;
        plot.reset(styled(c));
        feedTimeline(c, plan, evaluation);
    } else if (chart == "sweep" || chart == "sweep-chips") {
        auto *c = new views::SweepChart;
        plot.reset(styled(c));
        feedSweep(c, plan, evaluation, chart == "sweep-chips");
        // A file holding only "cannot sweep" would pass for a chart in a build script.
        if (!c->message().isEmpty())
            return failed(tr("%1: %2; nothing was written").arg(QString::fromStdString(chart), c->message()));
    } else {
        return failed(tr("--chart: expected roofline, memory, timeline, sweep or sweep-chips, got \"%1\"")
                          .arg(QString::fromStdString(chart)));
    }
    return plot;
}

std::optional<QString> renderChart(const model::Plan &plan, const std::string &chart, const QString &path, QSize size,
                                   bool dark, bool titled)
{
    auto evaluation = model::evaluate(plan);
    if (!evaluation)
        return QString::fromStdString(evaluation.error().toString());
    QString error;
    std::unique_ptr<QCustomPlot> plot = buildChart(plan, *evaluation, chart, dark, &error);
    if (!plot)
        return error;
    // Laid out at the presentation scale's share of the size, so text grows with a slide.
    const double scale = views::presentationScale(size);
    const QSize layout(static_cast<int>(std::lround(size.width() / scale)), static_cast<int>(std::lround(size.height() / scale)));
    plot->resize(layout);
    plot->replot();
    return views::exportChart(plot.get(), path, layout.width(), layout.height(), scale,
                              titled ? exportTitle(plan) : QString());
}

} // namespace meshplan::app
