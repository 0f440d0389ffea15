// The charts' data as drawn: points, bars, stacks, markers, axis types and ranges; log axes
// never receive a non-positive value; export to PNG, PDF and SVG; palettes light and dark.
#include "chartstyle.h"
#include "memorychart.h"
#include "rooflinechart.h"
#include "sweepchart.h"
#include "timelinechart.h"

#include <QFontMetricsF>
#include <QTemporaryDir>
#include <QtTest>

#include <limits>

using namespace meshplan;

namespace {

model::ChipKind kind(const std::string &name, double params, double grads, double optimizer, double activations,
                     double capacity)
{
    model::ChipKind k;
    k.name = name;
    k.count = 64;
    k.memory = {params, grads, optimizer, activations, 0, params + grads + optimizer + activations, capacity,
                params + grads + optimizer + activations <= capacity};
    return k;
}

model::RooflinePoint point(const std::string &op, const std::string &kind, double flops, double bytes, double intensity,
                           double timeS, double rate, const std::string &bound, int collective, int count)
{
    model::RooflinePoint p;
    p.op = op;
    p.kind = kind;
    p.flops = flops;
    p.bytes = bytes;
    p.intensity = intensity;
    p.timeS = timeS;
    p.achievedFlopsPerS = rate;
    p.bound = bound;
    p.collective = collective;
    p.countPerStep = count;
    return p;
}

bool allPositive(const QCPGraph *graph)
{
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        if (!(it->key > 0) || !(it->value > 0) || !std::isfinite(it->key) || !std::isfinite(it->value))
            return false;
    return true;
}

/// A compute-bound sweep at `xs` with a flat `mfu`, step time x / 1024 s, the plan at
/// `current`; points at or above `fitsBelow` do not fit.
model::ScalingSweep computeBoundSweep(std::initializer_list<double> xs, double mfu, double current,
                                      double fitsBelow = std::numeric_limits<double>::infinity())
{
    model::ScalingSweep sweep;
    for (double x : xs) {
        model::ScalingPoint p;
        p.x = x;
        p.mfu = mfu;
        p.stepTimeS = x / 1024;
        p.bound = "compute";
        p.fits = x < fitsBelow;
        p.current = x == current;
        sweep.points.push_back(p);
    }
    return sweep;
}


/// A label's footprint in pixels, rotated with it.
QPolygonF labelShape(const QCPItemText *label)
{
    return QPolygonF({label->topLeft->pixelPosition(), label->topRight->pixelPosition(),
                      label->bottomRight->pixelPosition(), label->bottomLeft->pixelPosition()});
}

/// An H100-like roofline: three peaks (fp8 twice bf16, the roof), three slopes, matmuls under
/// the roof and two once-per-step collectives far right of everything (both clipped).
model::OpRoofline crowdedRoofline()
{
    model::OpRoofline data;
    data.ceilings = {{"fp8 peak", 1979e12, false}, {"bf16 peak", 989e12, false}, {"fp32 peak", 67e12, false},
                     {"HBM", 3.35e12, true}, {"NVLink (per GPU)", 4.5e11, true}, {"scale-out (per GPU)", 5e10, true}};
    data.criticalIntensity = 989e12 / 3.35e12;
    data.computeDtype = "bf16";
    data.computePeak = 989e12;
    data.points = {point("mlp up+gate", "matmul", 1e12, 1e9, 1500, 3e-3, 6.0e14, "compute", -1, 80),
                   point("mlp down", "matmul", 1e12, 1e9, 1700, 3e-3, 6.1e14, "compute", -1, 80),
                   point("attention", "attention", 1e12, 1e9, 3900, 3e-3, 6.0e14, "compute", -1, 80),
                   point("norms", "elementwise", 1e9, 2e9, 0.5, 1e-3, 1.4e12, "hbm", -1, 160),
                   point("tensor activations", "collective", 9e11, 4e8, 1200, 3e-3, 5.2e14, "compute", 0, 160),
                   point("pipeline sends", "collective", 9e11, 4e8, 6500, 3e-3, 3.3e14, "compute", 1, 32),
                   point("gradients", "collective", 1.5e14, 3e7, 1.6e6, 0.46, 4.9e14, "compute", 2, 1),
                   point("fsdp gradients", "collective", 1.5e14, 3e7, 390169, 0.46, 4.85e14, "compute", 3, 1)};
    return data;
}
} // namespace

class TestCharts : public QObject
{
    Q_OBJECT

private slots:
    void memoryBarsStackAgainstCapacity()
    {
        views::MemoryChart chart;
        const double GiB = 1024.0 * 1024 * 1024;
        chart.setChipKinds({kind("first pipeline stage", 10 * GiB, 10 * GiB, 40 * GiB, 30 * GiB, 80 * GiB),
                            kind("last pipeline stage", 5 * GiB, 5 * GiB, 20 * GiB, 10 * GiB, 80 * GiB)});
        QCOMPARE(chart.plottableCount(), views::MemoryChart::kLayers);
        QCOMPARE(chart.layerBytes(0, 2), 40 * GiB);
        QCOMPARE(chart.layerBytes(1, 3), 10 * GiB);
        QVERIFY(chart.overCapacity(0));  // 90 GiB on an 80 GiB chip
        QVERIFY(!chart.overCapacity(1)); // 40 GiB
        // Stacks: each layer sits on the one below, the values in GiB.
        auto *optimizer = qobject_cast<QCPBars *>(chart.plottable(2));
        QVERIFY(optimizer);
        QCOMPARE(optimizer->barBelow(), qobject_cast<QCPBars *>(chart.plottable(1)));
        QCOMPARE(optimizer->data()->at(0)->value, 40.0);
        QCOMPARE(chart.yAxis->scaleType(), QCPAxis::stLinear);
        QVERIFY(chart.yAxis->range().upper >= 90.0);
        QVERIFY(!chart.capacityOffScale());

        // 3.1 GiB of 95 GiB (the default plan): drawn at its own scale, the capacity named above.
        views::MemoryChart light;
        light.setChipKinds({kind("every chip", 0.03 * GiB, 0.03 * GiB, 0.2 * GiB, 2.84 * GiB, 95 * GiB)});
        QVERIFY(light.capacityOffScale());
        QVERIFY(light.yAxis->range().upper < 5.0 && light.yAxis->range().upper > 3.1);
        bool named = false;
        for (int i = 0; i < light.itemCount(); ++i)
            if (auto *t = qobject_cast<QCPItemText *>(light.item(i)))
                named = named || t->text().contains(QStringLiteral("off this scale: the busiest chip uses 3.3%"));
        QVERIFY(named);
        QCOMPARE(chart.capacityBytes(), 80 * GiB);
        // The capacity line, a red frame around the bar over capacity, and a total per bar.
        int lines = 0, frames = 0;
        for (int i = 0; i < chart.itemCount(); ++i) {
            lines += qobject_cast<QCPItemStraightLine *>(chart.item(i)) != nullptr;
            frames += qobject_cast<QCPItemRect *>(chart.item(i)) != nullptr;
        }
        QCOMPARE(lines, 1);
        QCOMPARE(frames, 1);
        chart.resize(600, 400);
        chart.replot();
        const QString hover = chart.describeAt(QPointF(chart.xAxis->coordToPixel(0), chart.yAxis->coordToPixel(10)));
        QVERIFY2(hover.contains(QStringLiteral("42,949,672,960")) || hover.contains(QStringLiteral("42949672960")),
                 qPrintable(hover)); // the optimizer's exact bytes (40 GiB)
    }

    void rooflineDropsPointsALogAxisCannotShow()
    {
        model::OpRoofline data;
        data.ceilings = {{"bf16 peak", 459e12, false}, {"int8 peak", 918e12, false}, {"HBM", 2.765e12, true},
                         {"ICI (x)", 9e10, true}};
        data.criticalIntensity = 459e12 / 2.765e12;
        data.computeDtype = "bf16";
        data.computePeak = 459e12;
        const auto good = point("mlp up+gate", "matmul", 1e12, 1e9, 1000, 3e-3, 3.3e14, "compute", -1, 80);
        const auto slow = point("attention core", "attention", 1e10, 1e9, 10, 1e-3, 1e13, "hbm", -1, 80);
        const auto zero = point("nothing", "elementwise", 0, 1e9, 0, 1e-3, 0, "hbm", -1, 80);
        const auto nan = point("broken", "collective", 1e9, 0, std::nan(""), 1e-3, 1e12, "ici", 0, 2);
        data.points = {good, slow, zero, nan};
        views::RooflineChart chart;
        chart.setRoofline(data);
        QCOMPARE(chart.xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(chart.yAxis->scaleType(), QCPAxis::stLogarithmic);
        int scatterPoints = 0;
        for (int i = 0; i < chart.graphCount(); ++i) {
            QVERIFY2(allPositive(chart.graph(i)), qPrintable(chart.graph(i)->name()));
            if (chart.graph(i)->lineStyle() == QCPGraph::lsNone)
                scatterPoints += chart.graph(i)->dataCount();
        }
        QCOMPARE(scatterPoints, 2); // the zero and NaN points are not plotted
        // Ranges hold every plotted point and the highest ceiling.
        QVERIFY(chart.xAxis->range().lower <= 10 && chart.xAxis->range().upper >= 1000);
        QVERIFY(chart.yAxis->range().upper >= 918e12);
        QVERIFY(chart.xAxis->range().lower > 0 && chart.yAxis->range().lower > 0);
        // The HBM slope ends where it meets the plan's (bf16) peak, 459e12 / 2.765e12 = 166
        // FLOPs/B, not the int8 one above it; bf16 is drawn solid and bold, int8 thin and dashed.
        const auto graph = [&](const QString &name) -> const QCPGraph * {
            for (int i = 0; i < chart.graphCount(); ++i)
                if (chart.graph(i)->name() == name)
                    return chart.graph(i);
            return nullptr;
        };
        const QCPGraph *hbm = graph(QStringLiteral("HBM"));
        QVERIFY(hbm);
        QCOMPARE(hbm->dataCount(), 2);
        QVERIFY(qAbs(hbm->data()->at(1)->key - 459e12 / 2.765e12) < 1e-6 * 166);
        QVERIFY(qAbs(hbm->data()->at(1)->value - 459e12) < 1e-6 * 459e12);
        const QCPGraph *bf16 = graph(QStringLiteral("bf16 peak"));
        const QCPGraph *int8 = graph(QStringLiteral("int8 peak"));
        QVERIFY(bf16 && int8);
        QCOMPARE(bf16->pen().style(), Qt::SolidLine);
        QCOMPARE(int8->pen().style(), Qt::DashLine);
        QVERIFY(bf16->pen().widthF() > int8->pen().widthF());
        QVERIFY(bf16->pen().color().alpha() > int8->pen().color().alpha());
        // Hover and selection find the point under the mouse.
        chart.resize(700, 450);
        chart.replot();
        const QPointF at(chart.xAxis->coordToPixel(1000), chart.yAxis->coordToPixel(3.3e14));
        QCOMPARE(chart.pointAt(at), 0);
        QVERIFY(chart.describePoint(0).contains(QStringLiteral("mlp up+gate")));
        QVERIFY(chart.describePoint(0).contains(QStringLiteral("compute")));
        QSignalSpy selected(&chart, &views::RooflineChart::pointSelected);
        QTest::mouseClick(&chart, Qt::LeftButton, {}, at.toPoint());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(chart.selectedPoint(), 0);
    }

    // A collective's hover names its op, axes and link, the time and bytes of one occurrence,
    // and, apart, the compute it overlaps: 1.2 GFLOP taking 4 ms beside a 3 ms all-gather that
    // adds 1 ms.
    void rooflineHoverDescribesACollective()
    {
        auto c = point("fsdp weights", "collective", 1.2e12, 4e8, 0, 5e-3, 1.2e12 / 5e-3, "ici", 3, 160);
        c.collectiveOp = "all-gather";
        c.axes = {"x", "y", "z"};
        c.link = "ici";
        c.commS = 3e-3;
        c.overlapS = 4e-3;
        c.exposedS = 1e-3;
        c.linkCeiling = "ICI (per axis)";
        c.linkBandwidth = 1.8e11;
        c.effectiveBytes = 1.8e11 * 5e-3;
        c.intensity = 1.2e12 / c.effectiveBytes;
        const QString text = views::RooflineChart::describe(c);
        for (const char *part : {"fsdp weights", "all-gather over x, y, z (ici), 160 per step",
                                 "sends 400 MB per chip in 3.00 ms, 1.00 ms of it exposed",
                                 "overlaps 1.20 TFLOP of compute taking 4.00 ms", "together 5.00 ms each, 240 TFLOP/s",
                                 "intensity 1333 FLOPs/byte", "ICI (per axis) slope (180 GB/s) moves in 5.00 ms",
                                 "bound by <b>ici</b>"})
            QVERIFY2(text.contains(QLatin1String(part)), qPrintable(part + QStringLiteral(" in ") + text));
    }

    // Two collectives of one purpose, the same size and window (sequence parallelism's all-gather
    // and reduce-scatter): drawn on the same spot, selected by their own names, both in the
    // hover, and clicks on the spot take turns.
    void rooflineTellsCoincidentCollectivesApart()
    {
        model::OpRoofline data;
        data.ceilings = {{"bf16 peak", 989e12, false}, {"HBM", 3.35e12, true}, {"NVLink (per GPU)", 4.5e11, true}};
        data.criticalIntensity = 989e12 / 3.35e12;
        auto gather = point("tensor activations (sequence parallel) all-gather", "collective", 8.4e11, 1.7e7, 2e3,
                            1.7e-3, 4.9e14, "nvlink", 0, 1536);
        gather.collectiveOp = "all-gather";
        auto scatter = gather;
        scatter.op = "tensor activations (sequence parallel) reduce-scatter";
        scatter.collectiveOp = "reduce-scatter";
        scatter.collective = 1;
        data.points = {gather, scatter};
        views::RooflineChart chart;
        chart.resize(700, 450);
        chart.setRoofline(data);
        chart.replot();
        chart.selectOperation(scatter.op, "collective");
        QCOMPARE(chart.selectedPoint(), 1);
        chart.setRoofline(data); // new data (an edit) keeps the same one
        QCOMPARE(chart.selectedPoint(), 1);
        chart.replot();
        const QPoint at(qRound(chart.xAxis->coordToPixel(2e3)), qRound(chart.yAxis->coordToPixel(4.9e14)));
        QCOMPARE(chart.pointsAt(at), (std::vector<int>{0, 1}));
        QVERIFY(chart.describePoint(0) != chart.describePoint(1));
        QSignalSpy selected(&chart, &views::RooflineChart::pointSelected);
        QTest::mouseClick(&chart, Qt::LeftButton, {}, at);
        QCOMPARE(chart.selectedPoint(), 0);
        QTest::mouseClick(&chart, Qt::LeftButton, {}, at);
        QCOMPARE(chart.selectedPoint(), 1);
        QCOMPARE(selected.count(), 2);
        QCOMPARE(selected.at(1).at(0).toInt(), 1);
    }

    // Labels: each slope's label is turned to the slope as drawn, so its own line runs along the
    // text's foot rather than through it. On log-log axes y = W x climbs one y decade per x
    // decade: atan(pixels per y decade / pixels per x decade) above the horizontal, which changes
    // with the widget's shape. Peak labels sit against their line, clear of the compute-bound
    // points under the roof.
    void rooflineLabelsFollowTheLines()
    {
        model::OpRoofline data;
        data.ceilings = {{"bf16 peak", 459e12, false}, {"int8 peak", 918e12, false}, {"HBM", 2.765e12, true},
                         {"ICI (per axis)", 1.8e11, true}};
        data.criticalIntensity = 459e12 / 2.765e12;
        data.computeDtype = "bf16";
        data.computePeak = 459e12;
        data.points = {point("mlp up+gate", "matmul", 1e12, 1e9, 1000, 3e-3, 3.3e14, "compute", -1, 80),
                       point("mlp down", "matmul", 1e12, 1e9, 1500, 3e-3, 3.4e14, "compute", -1, 80)};
        views::RooflineChart chart;
        chart.setRoofline(data);
        for (const QSize size : {QSize(1200, 750), QSize(600, 400), QSize(900, 300)}) {
            chart.resize(size);
            chart.replot();
            const QRect r = chart.axisRect()->rect();
            const double xDecades = std::log10(chart.xAxis->range().upper / chart.xAxis->range().lower);
            const double yDecades = std::log10(chart.yAxis->range().upper / chart.yAxis->range().lower);
            const double want = -qRadiansToDegrees(std::atan((r.height() / yDecades) / (r.width() / xDecades)));
            QVERIFY2(std::fabs(chart.slopeLabelRotation(QStringLiteral("HBM")) - want) < 0.01,
                     qPrintable(QStringLiteral("%1 vs %2").arg(chart.slopeLabelRotation(QStringLiteral("HBM"))).arg(want)));
            QVERIFY(std::fabs(chart.slopeLabelRotation(QStringLiteral("ICI (per axis)")) - want) < 0.01);
            for (int i = 0; i < chart.itemCount(); ++i) {
                auto *label = qobject_cast<QCPItemText *>(chart.item(i));
                if (!label || !label->text().startsWith(QLatin1String("bf16 peak")))
                    continue;
                // Against its line, above or under it (where the int8 peak leaves no room above).
                const double y = chart.yAxis->coordToPixel(459e12);
                const double bottom = label->bottom->pixelPosition().y();
                const double top = label->top->pixelPosition().y();
                QVERIFY2((bottom <= y + 0.5 && bottom >= y - 3) || (top >= y - 0.5 && top <= y + 4),
                         qPrintable(QStringLiteral("%1..%2 vs %3").arg(top).arg(bottom).arg(y)));
                const QRectF box(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
                for (double x : {1000.0, 1500.0})
                    QVERIFY(!box.adjusted(-6, -6, 6, 6)
                                 .contains(QPointF(chart.xAxis->coordToPixel(x), chart.yAxis->coordToPixel(3.3e14))));
            }
        }
    }

    // A once-per-step collective at 4e6 FLOPs/B does not stretch the axis: it ends a decade past
    // the furthest on-chip op (1500 FLOPs/B; the ridge is 166), 1.5e4 and the margin, and the
    // outlier is drawn at the right end with an arrow and a note giving its intensity.
    void rooflineClipsAnOutlierAtTheEdge()
    {
        model::OpRoofline data;
        data.ceilings = {{"bf16 peak", 459e12, false}, {"HBM", 2.765e12, true}, {"ICI (per axis)", 1.8e11, true}};
        data.criticalIntensity = 459e12 / 2.765e12;
        data.computeDtype = "bf16";
        data.computePeak = 459e12;
        data.points = {point("mlp up+gate", "matmul", 1e12, 1e9, 1500, 3e-3, 3.3e14, "compute", -1, 80),
                       point("fsdp weights", "collective", 9e11, 4e8, 2100, 3e-3, 3.2e14, "compute", 3, 160),
                       point("gradients", "collective", 1.5e14, 3e7, 4e6, 0.46, 3.1e14, "compute", 5, 1)};
        views::RooflineChart chart;
        chart.resize(1200, 750);
        chart.setRoofline(data);
        chart.replot();
        // [1, 1.5e4] widened by 8% of its decades at each end.
        const double upper = 1.5e4 * std::pow(10.0, 0.08 * std::log10(1.5e4));
        QVERIFY2(std::fabs(chart.xAxis->range().upper - upper) < 1e-9 * upper, qPrintable(QString::number(chart.xAxis->range().upper)));
        QVERIFY(!chart.isClipped(0) && !chart.isClipped(1));
        QVERIFY(chart.isClipped(2));
        int arrows = 0;
        bool noted = false;
        for (int i = 0; i < chart.itemCount(); ++i) {
            arrows += qobject_cast<QCPItemLine *>(chart.item(i)) != nullptr;
            if (auto *text = qobject_cast<QCPItemText *>(chart.item(i)))
                noted = noted || text->text() == QStringLiteral("gradients at 4000000 FLOPs/B");
        }
        QCOMPARE(arrows, 1);
        QVERIFY(noted);
        // Drawn inside the right end, where the mouse finds it.
        double drawnAt = 0;
        for (int i = 0; i < chart.graphCount(); ++i)
            if (chart.graph(i)->name() == QStringLiteral("collectives"))
                drawnAt = (chart.graph(i)->data()->constEnd() - 1)->key;
        QVERIFY(drawnAt < chart.xAxis->range().upper && drawnAt > chart.xAxis->range().upper / 2);
        const QPoint edge(qRound(chart.xAxis->coordToPixel(drawnAt)), qRound(chart.yAxis->coordToPixel(3.1e14)));
        QCOMPARE(chart.pointAt(edge, 2), 2);
        QVERIFY(chart.rect().contains(edge));
    }

    // A selected on-chip op outlines the compute lane's work (compute and recompute), nothing
    // else; a collective's highlight replaces it.
    void timelineHighlightsTheComputeLane()
    {
        model::StepTimeline t;
        t.lanes = {"compute", "fsdp weights"};
        t.segments = {{0, "forward + backward", "compute", 0, 0.7, -1},
                      {0, "recompute", "recompute", 0.7, 0.2, -1},
                      {1, "fsdp weights (hidden)", "hidden", 0, 0.5, 0},
                      {0, "optimizer", "optimizer", 0.9, 0.1, -1}};
        t.totalS = 1.0;
        views::TimelineChart chart;
        chart.setTimeline(t);
        const auto outlined = [&] {
            QStringList out;
            int rect = 0;
            for (int i = 0; i < chart.itemCount(); ++i)
                if (auto *r = qobject_cast<QCPItemRect *>(chart.item(i))) {
                    if (r->pen().widthF() >= 3)
                        out << QString::fromStdString(t.segments[std::size_t(rect)].label);
                    ++rect;
                }
            return out;
        };
        QVERIFY(outlined().isEmpty());
        chart.highlightCompute(true);
        QVERIFY(chart.computeHighlighted());
        QCOMPARE(outlined(), (QStringList{"forward + backward", "recompute"}));
        chart.highlightCollective(0);
        QVERIFY(!chart.computeHighlighted());
        QCOMPARE(outlined(), QStringList{"fsdp weights (hidden)"});
        chart.highlightCompute(true);
        QCOMPARE(chart.highlightedCollective(), -1);
        chart.highlightCompute(false);
        QVERIFY(outlined().isEmpty());
    }

    void timelineDrawsEachSegmentInItsLane()
    {
        model::StepTimeline t;
        t.lanes = {"compute", "fsdp weights", "bubble"};
        t.segments = {{0, "forward + backward", "compute", 0, 0.8, -1},
                      {1, "fsdp weights (hidden)", "hidden", 0, 0.5, 0},
                      {1, "fsdp weights (exposed)", "exposed", 0.8, 0.1, 0},
                      {2, "bubble", "bubble", 0.9, 0.1, -1}};
        t.totalS = 1.0;
        views::TimelineChart chart;
        chart.setTimeline(t);
        int rects = 0;
        for (int i = 0; i < chart.itemCount(); ++i)
            rects += qobject_cast<QCPItemRect *>(chart.item(i)) != nullptr;
        QCOMPARE(rects, 4);
        QCOMPARE(chart.timeUnit(), 1.0);
        QVERIFY(chart.xAxis->range().upper >= 1.0);
        chart.resize(700, 300);
        chart.replot();
        const QPointF exposed(chart.xAxis->coordToPixel(0.85), chart.yAxis->coordToPixel(1));
        QCOMPARE(chart.segmentAt(exposed), 2);
        QVERIFY(chart.describeSegment(2).contains(QStringLiteral("exposed")));
        // A highlight keeps the user's zoom; new data brings the chart's own range back.
        chart.xAxis->setRange(0.2, 0.4);
        chart.highlightCollective(0);
        QCOMPARE(chart.highlightedCollective(), 0);
        QCOMPARE(chart.xAxis->range().lower, 0.2);
        QCOMPARE(chart.xAxis->range().upper, 0.4);
        chart.setTimeline(t);
        QCOMPARE(chart.xAxis->range().upper, 1.04);
        // A 30 ms step reads in ms.
        t.totalS = 0.03;
        for (auto &s : t.segments) {
            s.startS *= 0.03;
            s.durationS *= 0.03;
        }
        chart.setTimeline(t);
        QCOMPARE(chart.timeUnit(), 1e-3);
        QVERIFY(chart.xAxis->label().contains(QStringLiteral("ms")));
    }

    void sweepMarksTheCrossoverAndTheBooksValue()
    {
        model::ScalingSweep sweep;
        for (double x : {128.0, 256.0, 512.0, 1024.0, 2048.0}) {
            model::ScalingPoint p;
            p.x = x;
            p.mfu = x < 800 ? 0.2 * x / 800 : 0.45;
            p.stepTimeS = 4.0 * x / 1024;
            p.fits = x < 2000;
            p.bound = x < 800 ? "ici" : "compute";
            p.current = x == 1024;
            sweep.points.push_back(p);
        }
        sweep.crossoverX = 790;
        sweep.bookCriticalX = 850;
        views::SweepChart chart;
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        QVERIFY(!chart.isServing());
        QCOMPARE(chart.mainGraph()->dataCount(), 4); // the point that does not fit is drawn apart
        QCOMPARE(chart.secondGraph()->valueAxis(), chart.yAxis2);
        QCOMPARE(chart.yAxis2->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(chart.xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(chart.crossoverMarker(), 790.0);
        QCOMPARE(chart.bookMarker(), 850.0);
        QCOMPARE(chart.mainGraph()->data()->at(3)->value, 45.0); // MFU in percent

        std::vector<model::ServingPoint> serving;
        for (std::int64_t b : {1, 2, 4, 8, 16, 32}) {
            model::ServingPoint p;
            p.batch = b;
            p.decodeStepS = 0.01 + 0.0005 * static_cast<double>(b);
            p.tokensPerS = static_cast<double>(b) / p.decodeStepS;
            p.fits = b <= 16;
            serving.push_back(p);
        }
        serving.push_back({64, 0, 0, 0, 0, 0, false}); // nothing a log axis can show
        chart.setServing(serving, 8, 0.02);
        QVERIFY(chart.isServing());
        QCOMPARE(chart.mainGraph()->dataCount(), 5);
        QCOMPARE(chart.targetMarker(), 0.02);
        QCOMPARE(chart.yAxis->scaleType(), QCPAxis::stLogarithmic);
        for (int i = 0; i < chart.graphCount(); ++i)
            QVERIFY(allPositive(chart.graph(i)));

        // Redrawing replaces every plottable, the serving curve (a QCPCurve, not a graph) too.
        const int plottables = chart.plottableCount();
        chart.setServing(serving, 8, 0.02);
        QCOMPARE(chart.plottableCount(), plottables);
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        for (int i = 0; i < chart.plottableCount(); ++i)
            QVERIFY(qobject_cast<QCPCurve *>(chart.plottable(i)) == nullptr);
        chart.setMessage(QStringLiteral("nothing to sweep"));
        QCOMPARE(chart.plottableCount(), 0);
        QVERIFY(!chart.xAxis->visible());
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        QVERIFY(chart.xAxis->visible() && chart.legend->visible());
    }

    // The sampled batches run 2048..8192; a critical value at 942 (within a factor 8) widens the
    // axis to show its line, one at 100 (a factor 20 away) is named at the left edge instead, so
    // no clipped line leaves a stray number behind.
    void sweepMarkersOutsideTheSamples()
    {
        model::ScalingSweep sweep = computeBoundSweep({2048.0, 4096.0, 8192.0}, 0.4, 2048.0);
        const auto lines = [](views::SweepChart &chart) {
            int n = 0;
            for (int i = 0; i < chart.itemCount(); ++i)
                n += qobject_cast<QCPItemStraightLine *>(chart.item(i)) != nullptr;
            return n;
        };
        const auto texts = [](views::SweepChart &chart) {
            QStringList all;
            for (int i = 0; i < chart.itemCount(); ++i)
                if (auto *t = qobject_cast<QCPItemText *>(chart.item(i)))
                    all << t->text();
            return all.join(QLatin1Char('|'));
        };
        views::SweepChart chart;
        sweep.bookCriticalX = 942;
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        QVERIFY(chart.xAxis->range().lower < 942 && chart.xAxis->range().upper > 8192);
        QCOMPARE(lines(chart), 1);
        QVERIFY(texts(chart).contains(QStringLiteral("book's critical value 942")));

        sweep.bookCriticalX = 100;
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        QVERIFY(chart.xAxis->range().lower > 1000);
        QCOMPARE(lines(chart), 0);
        QVERIFY(chart.limitNotes().isEmpty());
        // The plan is the first point and a smaller batch was refused: the chart says why.
        sweep.belowLimit = "512 sequences cannot be split over 1024 replicas";
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        QCOMPARE(chart.limitNotes().size(), 1);
        QVERIFY(chart.limitNotes().front().contains(QStringLiteral("smaller batches: 512 sequences")));
        QVERIFY2(texts(chart).contains(QStringLiteral("book's critical value 100 tokens/chip (C/W) (off the sweep)")),
                 qPrintable(texts(chart)));
    }

    // No point fits (58% MFU on paper): the MFU axis still reaches the markers, and the step
    // times are crosses apart from the line, which joins only plans the chips can hold.
    void sweepShowsPointsThatDoNotFit()
    {
        const model::ScalingSweep sweep = computeBoundSweep({1024.0, 2048.0, 4096.0}, 0.58, 4096.0, 2000.0);
        views::SweepChart chart;
        chart.setScaling(sweep, views::SweepChart::Axis::TokensPerChip);
        QVERIFY(chart.yAxis->range().upper >= 58.0 * 1.2);
        QCOMPARE(chart.mainGraph()->dataCount(), 1);
        QCOMPARE(chart.secondGraph()->dataCount(), 1);
        int stepCrosses = 0;
        for (int i = 0; i < chart.graphCount(); ++i)
            if (chart.graph(i) != chart.secondGraph() && chart.graph(i)->valueAxis() == chart.yAxis2)
                stepCrosses += chart.graph(i)->dataCount();
        QCOMPARE(stepCrosses, 2);
    }

    void exportsPngPdfAndSvg()
    {
        QTemporaryDir dir;
        views::MemoryChart chart;
        const double GiB = 1024.0 * 1024 * 1024;
        chart.setChipKinds({kind("every chip", 10 * GiB, 10 * GiB, 40 * GiB, 30 * GiB, 80 * GiB)});
        for (const char *ext : {"png", "pdf", "svg"}) {
            const QString path = dir.filePath(QStringLiteral("memory.") + QLatin1String(ext));
            QVERIFY2(!views::exportChart(&chart, path, 800, 500), ext);
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray head = file.read(64);
            QVERIFY2(file.size() > 1000, ext);
            if (QLatin1String(ext) == QLatin1String("png"))
                QVERIFY(head.startsWith("\x89PNG"));
            else if (QLatin1String(ext) == QLatin1String("pdf"))
                QVERIFY(head.startsWith("%PDF"));
            else
                QVERIFY(head.contains("<?xml") || head.contains("<svg"));
        }
        QVERIFY(views::exportChart(&chart, dir.filePath(QStringLiteral("memory.gif")), 800, 500));
        QVERIFY(views::exportChart(&chart, QStringLiteral("/nonexistent-dir/x.png"), 800, 500));
        QVERIFY(views::exportChart(&chart, dir.filePath(QStringLiteral(".png")), 800, 500)); // no name

        // Scaled: the layout of 800x500 drawn twice as large, text included.
        const QString big = dir.filePath(QStringLiteral("big.png"));
        QVERIFY(!views::exportChart(&chart, big, 800, 500, 2.0));
        QCOMPARE(QImage(big).size(), QSize(1600, 1000));
        const QString svg = dir.filePath(QStringLiteral("big.svg"));
        QVERIFY(!views::exportChart(&chart, svg, 800, 500, 2.0));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY2(text.contains("viewBox=\"0 0 800 500\""), text.left(400).constData());
        QVERIFY2(text.contains(", sans-serif\""), "every font-family ends in a generic family");
        // 1600 px at 96 dpi is 423.33 mm: the size in the file matches the PNG's pixels.
        QVERIFY2(text.contains("width=\"423.33mm\"") || text.contains("width=\"423.333mm\""), text.left(400).constData());

        // A title is drawn in the file only: the chart on screen keeps its layout.
        const int elements = chart.plotLayout()->elementCount();
        const QString plain = dir.filePath(QStringLiteral("plain.png"));
        const QString titled = dir.filePath(QStringLiteral("titled.png"));
        QVERIFY(!views::exportChart(&chart, plain, 800, 500));
        QVERIFY(!views::exportChart(&chart, titled, 800, 500, 1.0, QStringLiteral("LLaMA-3 70B · 8192 x TPU v5p")));
        QCOMPARE(chart.plotLayout()->elementCount(), elements);
        const QImage a(plain), b(titled);
        QCOMPARE(a.size(), b.size());
        int darkTop = 0; // text pixels in the top 20 rows
        for (int y = 0; y < 20; ++y)
            for (int x = 0; x < b.width(); ++x)
                darkTop += QColor(b.pixel(x, y)).lightness() < 100;
        QVERIFY2(darkTop > 50, qPrintable(QString::number(darkTop)));
        QVERIFY(a != b);

        QCOMPARE(views::presentationScale(QSize(1200, 750)), 1.0);
        QCOMPARE(views::presentationScale(QSize(600, 400)), 1.0);
        QCOMPARE(views::presentationScale(QSize(1920, 1080)), 1.44); // min(1.6, 1.44)
    }

    void rooflineLabelsKeepClear_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("dark");
        // The chart as docked in windows of 1024x700, 1600x1000 and 1920x1080, and exported.
        for (const bool dark : {false, true})
            for (const QSize size : {QSize(1000, 230), QSize(1580, 330), QSize(1900, 380), QSize(1024, 700), QSize(1600, 1000),
                                     QSize(1920, 1080)})
                QTest::addRow("%dx%d%s", size.width(), size.height(), dark ? " dark" : "") << size << dark;
    }

    // Issue item 10: the notes of two clipped points printed on top of each other, peak labels
    // sat on the y tick labels, the ridge's on the x axis, the fp8 peak had no label. Every
    // label is now inside the plot, clear of each other, of the points and of the ticks.
    void rooflineLabelsKeepClear()
    {
        QFETCH(QSize, size);
        QFETCH(bool, dark);
        views::RooflineChart chart;
        if (dark)
            chart.setPalette(views::darkPalette(QPalette()));
        chart.resize(size);
        chart.setRoofline(crowdedRoofline());
        chart.replot();
        QVERIFY(chart.isClipped(6) && chart.isClipped(7));
        const QRectF plot = chart.axisRect()->rect();
        const auto labels = chart.labels();
        QStringList texts;
        for (const QCPItemText *label : labels)
            texts << label->text();
        for (const QString &want : {QStringLiteral("fp8 peak 1.98 PFLOP/s"), QStringLiteral("bf16 peak 989 TFLOP/s"),
                                    QStringLiteral("fp32 peak 67.0 TFLOP/s"), QStringLiteral("gradients at 1600000 FLOPs/B"),
                                    QStringLiteral("fsdp gradients at 390169 FLOPs/B"), QStringLiteral("HBM")})
            QVERIFY2(texts.contains(want), qPrintable(texts.join(QLatin1Char('|'))));
        QVERIFY2(std::any_of(texts.begin(), texts.end(), [](const QString &t) { return t.trimmed().startsWith(QStringLiteral("ridge ")); }),
                 qPrintable(texts.join(QLatin1Char('|'))));
        const double tickRow = QFontMetricsF(chart.yAxis->tickLabelFont()).height();
        for (std::size_t i = 0; i < labels.size(); ++i) {
            const QPolygonF shape = labelShape(labels[i]);
            const QRectF box = shape.boundingRect();
            const QString name = labels[i]->text();
            QVERIFY2(plot.contains(box), qPrintable(name));
            for (std::size_t j = 0; j < i; ++j)
                QVERIFY2(!shape.intersects(labelShape(labels[j])), qPrintable(name + QStringLiteral(" on ") + labels[j]->text()));
            for (const auto &p : chart.roofline().points) {
                const QPointF at(chart.xAxis->coordToPixel(chart.isClipped(static_cast<int>(&p - chart.roofline().points.data()))
                                                               ? chart.xAxis->range().upper / std::pow(chart.xAxis->range().upper / chart.xAxis->range().lower, 0.03)
                                                               : p.intensity),
                                 chart.yAxis->coordToPixel(p.achievedFlopsPerS));
                const bool covers = labels[i]->rotation() != 0 ? shape.containsPoint(at, Qt::OddEvenFill)
                                                               : box.adjusted(-4, -4, 4, 4).contains(at);
                QVERIFY2(!covers, qPrintable(name + QStringLiteral(" covers ") + QString::fromStdString(p.op)));
            }
            if (labels[i]->rotation() != 0)
                continue;
            // Off the axes' inward ticks, and off the axis on a tick label's row.
            QVERIFY2(box.bottom() <= plot.bottom() - chart.xAxis->tickLengthIn() - 1, qPrintable(name));
            QVERIFY2(box.left() >= plot.left() + chart.yAxis->tickLengthIn(), qPrintable(name));
            for (const double tick : chart.yAxis->tickVector()) {
                const double y = chart.yAxis->coordToPixel(tick);
                if (box.bottom() > y - tickRow / 2 && box.top() < y + tickRow / 2)
                    QVERIFY2(box.left() >= plot.left() + 16, qPrintable(name + QStringLiteral(" on tick ") + QString::number(tick)));
            }
        }
    }

    // Issue item 10: the sweep's legend sat inside the plot, over the points in its corner; the
    // serving batch sizes printed over each other. The legend is beside the plot, and the names
    // of markers and points keep clear of each other and of the points.
    void sweepLabelsKeepClear()
    {
        model::ScalingSweep sweep;
        for (double x : {512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
            model::ScalingPoint p;
            p.x = x;
            p.mfu = 0.40 - 0.02 * std::log2(x / 512);
            p.stepTimeS = 20 * 512 / x;
            p.fits = true;
            p.bound = "compute";
            p.current = x == 8192;
            sweep.points.push_back(p);
        }
        sweep.bookCriticalX = 12000; // its name ran over the MFU line and the plan's circle
        std::vector<model::ServingPoint> serving;
        for (std::int64_t b : {2, 4, 8, 16, 32, 64, 128, 156, 256, 512}) {
            model::ServingPoint p;
            p.batch = b;
            p.decodeStepS = 0.013 + 0.00009 * static_cast<double>(b) * (b > 100 ? 2.5 : 1.0);
            p.tokensPerS = static_cast<double>(b) / p.decodeStepS;
            p.fits = b <= 156;
            serving.push_back(p);
        }
        for (const QSize size : {QSize(1000, 230), QSize(1580, 330), QSize(1900, 380)}) {
            for (int kind = 0; kind < 2; ++kind) {
                views::SweepChart chart;
                chart.resize(size);
                if (kind == 0)
                    chart.setScaling(sweep, views::SweepChart::Axis::Chips);
                else
                    chart.setServing(serving, 64, 0.05);
                chart.replot();
                const QRectF plot = chart.axisRect()->rect();
                QVERIFY(!chart.legend->outerRect().intersects(plot.toRect()));
                std::vector<QPointF> marks;
                for (int g = 0; g < chart.graphCount(); ++g)
                    for (auto it = chart.graph(g)->data()->constBegin(); it != chart.graph(g)->data()->constEnd(); ++it)
                        marks.emplace_back(chart.graph(g)->keyAxis()->coordToPixel(it->key),
                                           chart.graph(g)->valueAxis()->coordToPixel(it->value));
                const auto labels = chart.markLabels();
                QVERIFY(!labels.empty());
                for (std::size_t i = 0; i < labels.size(); ++i) {
                    const QRectF box = labelShape(labels[i]).boundingRect();
                    QVERIFY2(plot.contains(box), qPrintable(labels[i]->text()));
                    for (std::size_t j = 0; j < i; ++j)
                        QVERIFY2(!box.intersects(labelShape(labels[j]).boundingRect()),
                                 qPrintable(labels[i]->text() + QStringLiteral(" on ") + labels[j]->text()));
                    for (const QPointF &m : marks)
                        QVERIFY2(!box.adjusted(-3, -3, 3, 3).contains(m), qPrintable(labels[i]->text()));
                }
            }
        }
    }

    void followsADarkPalette()
    {
        views::RooflineChart chart;
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(30, 30, 30));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        dark.setColor(QPalette::Base, QColor(20, 20, 20));
        dark.setColor(QPalette::Text, QColor(230, 230, 230));
        chart.setPalette(dark);
        QVERIFY(views::isDark(chart.palette()));
        QCOMPARE(chart.xAxis->tickLabelColor(), QColor(230, 230, 230));
        QCOMPARE(chart.axisRect()->backgroundBrush().color(), QColor(20, 20, 20));

        // Series colours: unchanged on light backgrounds; on dark ones lifted until their luma
        // (0.2126 R + 0.7152 G + 0.0722 B) reaches 130. The blue #0072B2 has luma 94.4, about
        // 3:1 on #1e1f22; amber #E69F00 has 162.6 and stays as it is.
        const auto luma = [](const QColor &c) { return 0.2126 * c.red() + 0.7152 * c.green() + 0.0722 * c.blue(); };
        const QColor blue(0x00, 0x72, 0xB2);
        QCOMPARE(views::seriesColor(blue, QPalette(Qt::white)), blue);
        const QColor lifted = views::seriesColor(blue, views::darkPalette(QPalette()));
        QVERIFY2(luma(lifted) >= 130 && luma(lifted) < 145, qPrintable(QString::number(luma(lifted))));
        QVERIFY(std::abs(lifted.toHsl().hslHue() - blue.toHsl().hslHue()) <= 2);
        const QColor amber(0xE6, 0x9F, 0x00);
        QCOMPARE(views::seriesColor(amber, views::darkPalette(QPalette())).rgb(), amber.rgb());
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
