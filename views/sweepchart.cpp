#include "sweepchart.h"

#include "base/units.h"
#include "chartstyle.h"
#include "labelplacer.h"

#include <QFontMetricsF>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace meshplan::views {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString num(double v)
{
    return qs(model::formatNumber(v));
}

const QColor kMfu(0x00, 0x72, 0xB2);
const QColor kStep(0xD5, 0x5E, 0x00);
const QColor kCross(0xD0, 0x21, 0x2A);
/// How far outside the sampled x range (a factor) a marker still widens the axis to be drawn.
constexpr double kMarkerReach = 8;

} // namespace

SweepChart::SweepChart(QWidget *parent)
    : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("sweepChart"));
    setMouseTracking(true);
    legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    legend->setFont(small);
    // Beside the plot: inside, in either bottom corner, it covered the points of one sweep or
    // the other (the step times rise to the right, the chip-count MFU falls there).
    putLegendBeside(this);
    connect(this, &QCustomPlot::afterLayout, this, &SweepChart::layoutLabels);
    reset();
}

void SweepChart::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyChartStyle(this, palette());
        replot(QCustomPlot::rpQueuedReplot);
    }
}

void SweepChart::reset()
{
    // Plottables, not graphs: the serving curve is a QCPCurve, which clearGraphs() leaves behind.
    clearPlottables();
    clearItems();
    m_main = m_second = nullptr;
    m_crossover = m_book = m_target = 0;
    m_message.clear();
    m_limitNotes.clear();
    m_markLabels.clear();
    m_pointLabels.clear();
    if (m_caption) {
        plotLayout()->remove(m_caption);
        plotLayout()->simplify();
        m_caption = nullptr;
    }
    m_hover.clear();
    yAxis2->setVisible(false);
    showChartAxes(this);
    setLogAxis(xAxis, LogLabels::Counts); // 2k tokens per chip, 8k chips, 50k tokens/s
    applyChartStyle(this, palette());
}

void SweepChart::setMessage(const QString &message)
{
    reset();
    m_message = message;
    showChartMessage(this, message);
}

void SweepChart::vertical(double x, const QString &text, const QColor &color, Qt::PenStyle style, double labelY)
{
    if (!loggable(x))
        return;
    auto *line = new QCPItemStraightLine(this);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(color, 1.5, style));
    auto *label = new QCPItemText(this);
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(x, labelY);
    // Near the right end the label reads leftwards from its line, so it is not cut off.
    const QCPRange range = xAxis->range();
    const bool nearRight = std::log(x / range.lower) > 0.7 * std::log(range.upper / range.lower);
    label->setPositionAlignment((nearRight ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    label->setText(nearRight ? text + QStringLiteral(" ") : QStringLiteral(" ") + text);
    label->setColor(color);
    m_markLabels.push_back({label, x, 0});
}

void SweepChart::edgeNote(bool left, const QString &text, const QColor &color, double labelY)
{
    auto *label = new QCPItemText(this);
    label->position->setType(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(left ? 0.01 : 0.99, labelY);
    label->setPositionAlignment((left ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignTop);
    label->setText(left ? QStringLiteral("\u25C0 ") + text : text + QStringLiteral(" \u25B6"));
    label->setColor(color);
    m_markLabels.push_back({label, 0, left ? -1 : 1});
}

void SweepChart::layoutLabels()
{
    if (m_markLabels.empty() && m_pointLabels.empty())
        return;
    const QRectF plot = axisRect()->rect();
    LabelPlacer placer(plot.adjusted(xAxis->tickLengthIn() + 2, 2, -(xAxis->tickLengthIn() + 2), -(xAxis->tickLengthIn() + 3)));
    for (const auto &h : m_hover)
        placer.addPoint(QPointF(xAxis->coordToPixel(h.x), (h.rightAxis ? yAxis2 : yAxis)->coordToPixel(h.y)), 6);
    // The curves: a name may cross one only where nothing else is free.
    for (int g = 0; g < graphCount(); ++g) {
        const QCPGraph *graph = this->graph(g);
        if (graph->lineStyle() == QCPGraph::lsNone)
            continue;
        QPointF last;
        bool first = true;
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
            const QPointF at(graph->keyAxis()->coordToPixel(it->key), graph->valueAxis()->coordToPixel(it->value));
            if (!first)
                placer.addLine(QLineF(last, at));
            last = at;
            first = false;
        }
    }
    if (m_serving && loggable(m_target)) {
        const double y = yAxis->coordToPixel(m_target);
        placer.addLine(QLineF(plot.left(), y, plot.right(), y));
    }
    for (const auto &m : m_markLabels)
        if (m.edge == 0) {
            const double x = xAxis->coordToPixel(m.x);
            placer.addLine(QLineF(x, plot.top(), x, plot.bottom()));
        }
    // Other text on the plot (the latency target's name) keeps its place.
    for (int i = 0; i < itemCount(); ++i) {
        auto *text = qobject_cast<QCPItemText *>(item(i));
        if (!text || std::any_of(m_markLabels.begin(), m_markLabels.end(), [&](const MarkLabel &m) { return m.item == text; })
            || std::any_of(m_pointLabels.begin(), m_pointLabels.end(), [&](const PointLabel &m) { return m.item == text; }))
            continue;
        placer.addObstacle(QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).normalized());
    }
    for (const auto &m : m_markLabels) {
        if (!m.item)
            continue;
        const QFontMetricsF metrics(m.item->font());
        const QSizeF size(metrics.horizontalAdvance(m.item->text()) + 1, metrics.height());
        const double lineX = m.edge < 0 ? plot.left() + xAxis->tickLengthIn() + 2
                             : m.edge > 0 ? plot.right() - xAxis->tickLengthIn() - 2
                                          : xAxis->coordToPixel(m.x);
        std::vector<LabelPlacer::Shape> candidates;
        for (double y = plot.top() + 4; y + size.height() <= plot.bottom() - 4; y += size.height() / 2) {
            if (m.edge >= 0)
                candidates.push_back({QRectF(QPointF(lineX - (m.edge > 0 ? 0 : 2) - size.width(), y), size)});
            if (m.edge <= 0)
                candidates.push_back({QRectF(QPointF(lineX + (m.edge < 0 ? 0 : 2), y), size)});
        }
        if (candidates.empty())
            continue;
        // Lines right of the middle read leftwards first, as before, so the name is not cut off.
        if (m.edge == 0 && lineX > plot.center().x())
            for (std::size_t i = 0; i + 1 < candidates.size(); i += 2)
                std::swap(candidates[i], candidates[i + 1]);
        const QRectF box = candidates[placer.place(candidates)].front();
        m.item->position->setType(QCPItemPosition::ptAbsolute);
        m.item->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        m.item->position->setCoords(box.topLeft());
    }
    // Batch sizes: by their point, up left first (the curve rises to the right), else another
    // corner, else a little further off; 128 and 256 printed over each other near the knee.
    for (const auto &m : m_pointLabels) {
        if (!m.item)
            continue;
        const QFontMetricsF metrics(m.item->font());
        const QSizeF size(metrics.horizontalAdvance(m.item->text().trimmed()) + 2, metrics.height());
        const QPointF at(xAxis->coordToPixel(m.x), yAxis->coordToPixel(m.y));
        std::vector<LabelPlacer::Shape> candidates;
        for (const double off : {5.0, 9.0, 14.0})
            for (const QPointF dir : {QPointF(-1, -1), QPointF(1, -1), QPointF(-1, 1), QPointF(1, 1), QPointF(0, -1), QPointF(0, 1)}) {
                const double x = dir.x() < 0 ? at.x() - off - size.width() : dir.x() > 0 ? at.x() + off : at.x() - size.width() / 2;
                const double y = dir.y() < 0 ? at.y() - off - size.height() : at.y() + off;
                candidates.push_back({QRectF(QPointF(x, y), size)});
            }
        const QRectF box = candidates[placer.place(candidates)].front();
        m.item->setText(m.item->text().trimmed());
        m.item->position->setType(QCPItemPosition::ptAbsolute);
        m.item->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        m.item->setPadding(QMargins(1, 0, 1, 0));
        m.item->position->setCoords(box.topLeft());
    }
}

std::vector<QCPItemText *> SweepChart::markLabels() const
{
    std::vector<QCPItemText *> out;
    for (const auto &m : m_markLabels)
        if (m.item)
            out.push_back(m.item);
    for (const auto &m : m_pointLabels)
        if (m.item)
            out.push_back(m.item);
    return out;
}

void SweepChart::setScaling(const model::ScalingSweep &sweep, Axis axis)
{
    reset();
    m_serving = false;
    const QColor text = palette().color(QPalette::Text);
    xAxis->setLabel(axis == Axis::Chips ? tr("chips (global batch fixed)") : tr("tokens per chip per microbatch (the book's per-chip batch)"));
    yAxis->setLabel(tr("MFU (%)"));
    yAxis->setScaleType(QCPAxis::stLinear);
    yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    yAxis->setNumberFormat(QStringLiteral("g"));
    yAxis->setNumberPrecision(3);
    yAxis2->setVisible(true);
    yAxis2->setLabel(tr("step time"));
    setLogAxis(yAxis2, LogLabels::Seconds);
    applyChartStyle(this, palette());

    m_main = addGraph();
    m_main->setName(tr("MFU"));
    const QColor mfuColour = seriesColor(kMfu, palette());
    m_main->setPen(QPen(mfuColour, 2));
    m_main->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, mfuColour, mfuColour, 7));
    m_second = addGraph(xAxis, yAxis2);
    m_second->setName(tr("step time"));
    m_second->setPen(QPen(kStep, 2, Qt::DashLine));
    m_second->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, kStep, kStep, 6));
    auto *noFit = addGraph();
    noFit->setName(tr("does not fit in HBM"));
    noFit->setLineStyle(QCPGraph::lsNone);
    noFit->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kCross, 2), Qt::NoBrush, 9));
    // A step time the chips cannot run is marked, not joined to the line of those they can.
    auto *noFitStep = addGraph(xAxis, yAxis2);
    noFitStep->setName(tr("step time, does not fit"));
    noFitStep->setLineStyle(QCPGraph::lsNone);
    noFitStep->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kStep, 1.5), Qt::NoBrush, 7));
    auto *current = addGraph();
    current->setName(tr("this plan"));
    current->setLineStyle(QCPGraph::lsNone);
    current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(text, 2), Qt::NoBrush, 16));

    double xLo = 1e300, xHi = 0, mfuHi = 0, tLo = 1e300, tHi = 0;
    for (const auto &p : sweep.points) {
        if (!loggable(p.x))
            continue;
        xLo = std::min(xLo, p.x);
        xHi = std::max(xHi, p.x);
        const double mfu = std::isfinite(p.mfu) ? 100.0 * p.mfu : 0.0;
        // Every marker drawn sets the range, those that do not fit and the plan's own included.
        mfuHi = std::max(mfuHi, mfu);
        (p.fits ? m_main : noFit)->addData(p.x, mfu);
        if (loggable(p.stepTimeS)) {
            (p.fits ? m_second : noFitStep)->addData(p.x, p.stepTimeS);
            tLo = std::min(tLo, p.stepTimeS);
            tHi = std::max(tHi, p.stepTimeS);
        }
        if (p.current)
            current->addData(p.x, mfu);
        const QString html =
            tr("<b>%1 %2</b><br>global batch %3, %4 chips, %5 microbatches<br>MFU %6%, step %7, %8 tokens/s<br>"
               "exposed communication %9, pipeline bubble %10<br>bound by %11%12")
                .arg(num(p.x), axis == Axis::Chips ? tr("chips") : tr("tokens/chip per microbatch"))
                .arg(p.globalBatch)
                .arg(p.chips)
                .arg(p.microbatches)
                .arg(num(mfu), qs(model::formatSeconds(p.stepTimeS)), num(p.tokensPerS),
                     qs(model::formatSeconds(p.exposedCommunicationS)), qs(model::formatSeconds(p.bubbleS)), qs(p.bound),
                     p.fits ? QString() : tr("<br><b>does not fit in HBM</b>"));
        // Both markers of a point answer a hover: the MFU disc and the step-time square.
        m_hover.push_back({p.x, mfu, false, html});
        if (loggable(p.stepTimeS))
            m_hover.push_back({p.x, p.stepTimeS, true, html});
    }
    if (xHi <= 0) {
        setMessage(tr("No point of the sweep could be evaluated."));
        return;
    }
    m_crossover = sweep.crossoverX;
    m_book = sweep.bookCriticalX;
    // A marker near the sampled range widens it, so the line is seen where it falls; one far
    // outside is named at the edge it lies beyond (a clipped line would leave a stray number).
    const double dataLo = xLo, dataHi = xHi;
    for (double mark : {m_crossover, m_book})
        if (loggable(mark) && mark >= dataLo / kMarkerReach && mark <= dataHi * kMarkerReach) {
            xLo = std::min(xLo, mark);
            xHi = std::max(xHi, mark);
        }
    setLogRange(xAxis, xLo, xHi, 0.06);
    yAxis->setRange(0, std::max(10.0, mfuHi * 1.25));
    setLogRange(yAxis2, tLo, tHi, 0.1);
    const auto mark = [&](double x, const QString &text, const QColor &color, Qt::PenStyle style, double labelY) {
        if (!loggable(x))
            return;
        if (x >= xLo && x <= xHi)
            vertical(x, text, color, style, labelY);
        else
            edgeNote(x < xLo, text + tr(" (off the sweep)"), color, labelY);
    };
    // Two thresholds, both named with their basis: the model's (achievable rates, where exposed
    // communication outweighs compute) and the book's (datasheet C/W, where it starts to show).
    const QString unitShort = axis == Axis::Chips ? tr(" chips") : tr(" tokens/chip");
    mark(m_crossover,
         tr("model: communication binds %1 %2").arg(axis == Axis::Chips ? tr("beyond") : tr("below"), num(m_crossover) + unitShort),
         kCross, Qt::SolidLine, 0.02);
    mark(m_book, tr("book's critical value %1 (C/W)").arg(num(m_book) + unitShort), text, Qt::DashLine, 0.12);
    // Where the sweep stops short next to the plan, say why: a reader otherwise takes the end
    // of the line for the end of what the plan could do.
    const auto limit = [&](const std::string &why, bool left) {
        if (why.empty())
            return;
        QString reason = qs(why);
        if (reason.size() > 110)
            reason = reason.left(108) + QStringLiteral("…");
        const QString side = axis == Axis::Chips ? (left ? tr("fewer chips") : tr("more chips"))
                                                 : (left ? tr("smaller batches") : tr("larger batches"));
        m_limitNotes << (left ? QStringLiteral("\u25C0 ") : QStringLiteral("\u25B6 ")) + side + QStringLiteral(": ") + reason;
    };
    const bool currentFirst = !sweep.points.empty() && sweep.points.front().current;
    const bool currentLast = !sweep.points.empty() && sweep.points.back().current;
    limit(currentFirst ? sweep.belowLimit : std::string(), true);
    limit(currentLast ? sweep.aboveLimit : std::string(), false);
    // Under the plot, in a row of their own: inside it they covered the points next to the plan.
    if (!m_limitNotes.isEmpty()) {
        m_caption = new QCPTextElement(this, m_limitNotes.join(QLatin1Char('\n')));
        m_caption->setTextColor(text);
        QFont small = font();
        small.setPointSizeF(small.pointSizeF() * 0.9);
        m_caption->setFont(small);
        plotLayout()->addElement(1, 0, m_caption);
    }
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::setServing(const std::vector<model::ServingPoint> &points, std::int64_t currentBatch,
                            double latencyTargetS)
{
    reset();
    m_serving = true;
    const QColor text = palette().color(QPalette::Text);
    xAxis->setLabel(tr("throughput (tokens/s, whole deployment)"));
    yAxis->setLabel(tr("latency per token"));
    setLogAxis(yAxis, LogLabels::Seconds);
    applyChartStyle(this, palette());

    m_main = addGraph();
    m_main->setName(tr("decode step at each batch size"));
    const QColor mfuColour = seriesColor(kMfu, palette());
    m_main->setPen(QPen(mfuColour, 2));
    m_main->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, mfuColour, mfuColour, 7));
    // Throughput rises with batch, so the curve is drawn in batch order (not sorted by x).
    auto *curve = new QCPCurve(xAxis, yAxis);
    curve->removeFromLegend();
    curve->setPen(QPen(mfuColour, 2));
    m_main->setLineStyle(QCPGraph::lsNone);
    auto *noFit = addGraph();
    noFit->setName(tr("does not fit in HBM"));
    noFit->setLineStyle(QCPGraph::lsNone);
    noFit->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kCross, 2), Qt::NoBrush, 9));
    auto *current = addGraph();
    current->setName(tr("this plan"));
    current->setLineStyle(QCPGraph::lsNone);
    current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(text, 2), Qt::NoBrush, 16));

    double xLo = 1e300, xHi = 0, yLo = 1e300, yHi = 0;
    for (const auto &p : points) {
        if (!loggable(p.tokensPerS) || !loggable(p.decodeStepS))
            continue;
        xLo = std::min(xLo, p.tokensPerS);
        xHi = std::max(xHi, p.tokensPerS);
        yLo = std::min(yLo, p.decodeStepS);
        yHi = std::max(yHi, p.decodeStepS);
        if (p.fits) {
            m_main->addData(p.tokensPerS, p.decodeStepS);
            curve->addData(p.tokensPerS, p.decodeStepS);
        } else {
            noFit->addData(p.tokensPerS, p.decodeStepS);
        }
        if (p.batch == currentBatch)
            current->addData(p.tokensPerS, p.decodeStepS);
        auto *label = new QCPItemText(this);
        label->position->setCoords(p.tokensPerS, p.decodeStepS);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        label->setText(QString::number(p.batch) + QStringLiteral(" "));
        label->setColor(p.fits ? text : kCross);
        QFont f = font();
        f.setPointSizeF(f.pointSizeF() * 0.8);
        label->setFont(f);
        m_pointLabels.push_back({label, p.tokensPerS, p.decodeStepS});
        m_hover.push_back({p.tokensPerS, p.decodeStepS, false,
                           tr("<b>batch %1</b><br>%2 per token, first token %3<br>%4 tokens/s (%5 per chip)%6%7")
                               .arg(p.batch)
                               .arg(qs(model::formatSeconds(p.decodeStepS)), qs(model::formatSeconds(p.timeToFirstTokenS)),
                                    num(p.tokensPerS), num(p.tokensPerSPerChip),
                                    p.costPerMillionTokens > 0
                                        ? tr("<br>$%1 per million tokens").arg(num(p.costPerMillionTokens))
                                        : QString(),
                                    p.fits ? QString() : tr("<br><b>does not fit in HBM</b>"))});
    }
    if (xHi <= 0) {
        setMessage(tr("No batch size of this plan could be evaluated."));
        return;
    }
    if (loggable(latencyTargetS)) {
        m_target = latencyTargetS;
        yLo = std::min(yLo, latencyTargetS);
        yHi = std::max(yHi, latencyTargetS);
        auto *line = new QCPItemStraightLine(this);
        line->point1->setCoords(1, latencyTargetS);
        line->point2->setCoords(10, latencyTargetS);
        line->setPen(QPen(kCross, 2, Qt::DashLine));
        auto *label = new QCPItemText(this);
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        label->position->setTypeY(QCPItemPosition::ptPlotCoords);
        label->position->setCoords(0.01, latencyTargetS);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setText(tr("latency target %1").arg(qs(model::formatSeconds(latencyTargetS))));
        label->setColor(kCross);
    }
    setLogRange(xAxis, xLo, xHi, 0.08);
    setLogRange(yAxis, yLo, yHi, 0.12);
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    const HoverPoint *best = nullptr;
    double bestD = 100; // within 10 pixels
    for (const auto &h : m_hover) {
        const double dx = xAxis->coordToPixel(h.x) - event->position().x();
        const double dy = (h.rightAxis ? yAxis2 : yAxis)->coordToPixel(h.y) - event->position().y();
        if (dx * dx + dy * dy < bestD) {
            bestD = dx * dx + dy * dy;
            best = &h;
        }
    }
    if (best)
        QToolTip::showText(event->globalPosition().toPoint(), best->html, this);
    else
        QToolTip::hideText();
}

} // namespace meshplan::views
