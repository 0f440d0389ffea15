#include "rooflinechart.h"

#include "base/units.h"
#include "chartstyle.h"
#include "labelplacer.h"

#include <QFontMetricsF>
#include <QLineF>
#include <QToolTip>
#include <QtMath>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace meshplan::views {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

struct KindStyle {
    const char *kind;
    const char *label;
    QCPScatterStyle::ScatterShape shape;
    QColor color;
};

const KindStyle kKinds[] = {
    {"matmul", "matmuls", QCPScatterStyle::ssDisc, QColor(0x00, 0x72, 0xB2)},
    {"attention", "attention", QCPScatterStyle::ssDiamond, QColor(0xD5, 0x5E, 0x00)},
    {"elementwise", "elementwise", QCPScatterStyle::ssSquare, QColor(0x99, 0x99, 0x99)},
    {"collective", "collectives", QCPScatterStyle::ssTriangle, QColor(0xCC, 0x79, 0xA7)},
};

} // namespace

RooflineChart::RooflineChart(QWidget *parent)
    : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("rooflineChart"));
    setMouseTracking(true);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setLogAxis(xAxis);
    setLogAxis(yAxis);
    xAxis->setLabel(tr("arithmetic intensity (FLOPs per byte)"));
    yAxis->setLabel(tr("FLOPs/s per chip"));
    legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    legend->setFont(small);
    // Inside, on a short dock, the legend covered either the ceiling labels or the memory-bound
    // points, wherever it was put.
    putLegendBeside(this);
    applyChartStyle(this, palette());
    connect(this, &QCustomPlot::afterLayout, this, &RooflineChart::layoutLabels);
}

void RooflineChart::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyChartStyle(this, palette());
        rebuild();
    }
}

void RooflineChart::setRoofline(const model::OpRoofline &roofline)
{
    m_data = roofline;
    m_selected = indexOf(m_selectedOp, m_selectedKind);
    rebuild();
}

void RooflineChart::setMessage(const QString &message)
{
    m_data = {};
    m_selected = -1;
    m_selection = nullptr;
    showChartMessage(this, message);
}

void RooflineChart::rebuild()
{
    clearGraphs();
    clearItems();
    m_selection = nullptr;
    m_slopeLabels.clear();
    m_ceilingLabels.clear();
    m_clipNotes.clear();
    m_ridgeLabel = nullptr;
    showChartAxes(this);
    const QColor text = palette().color(QPalette::Text);

    // The range: every point, the ridge, and a decade around.
    double xLo = 1;
    double xHi = std::max(1e3, 10 * m_data.criticalIntensity);
    double peak = 0; // the highest listed peak: the y range reaches it
    double yLo = 1e18;
    for (const auto &c : m_data.ceilings)
        if (!c.slope && loggable(c.value))
            peak = std::max(peak, c.value);
    if (loggable(m_data.computePeak))
        peak = std::max(peak, m_data.computePeak);
    // A point far right of everything on the chip (the once-per-step gradient all-reduce, whose
    // window is the whole backward) would squeeze the matmuls and the ridge into a corner: the
    // axis ends a decade past the furthest on-chip op (or the ridge), and points beyond it are
    // drawn at the edge with an arrow and a note.
    double onChip = m_data.criticalIntensity;
    for (const auto &p : m_data.points)
        if (p.kind != "collective" && loggable(p.intensity) && loggable(p.achievedFlopsPerS))
            onChip = std::max(onChip, p.intensity);
    const double cap = loggable(onChip) ? 10 * onChip : std::numeric_limits<double>::infinity();
    bool clipped = false;
    for (const auto &p : m_data.points) {
        if (!loggable(p.intensity) || !loggable(p.achievedFlopsPerS))
            continue;
        xLo = std::min(xLo, p.intensity);
        clipped = clipped || p.intensity > cap;
        xHi = std::max(xHi, std::min(p.intensity, cap));
        yLo = std::min(yLo, p.achievedFlopsPerS);
    }
    if (!loggable(peak))
        peak = 1e15;
    m_topPeak = peak;
    // The roof is the plan's compute dtype; other dtypes' peaks are faint references.
    const double roof = loggable(m_data.computePeak) ? m_data.computePeak : peak;
    yLo = std::min(yLo, peak / 1e4);
    setLogRange(xAxis, xLo, xHi, 0.08);
    setLogRange(yAxis, yLo, peak, 0.08);
    // Room above the highest peak for its label, which the top of the plot clipped on a short dock.
    yAxis->setRangeUpper(std::min(std::max(yAxis->range().upper, peak * 2.5), QCPRange::maxRange / 10));
    m_autoUpper = yAxis->range().upper;
    ensureHeadroom(); // at the last layout's size; updateLayout() follows a new one
    const double x0 = xAxis->range().lower;
    const double x1 = xAxis->range().upper;
    // Clipped points sit 3% of the axis's decades inside its right end.
    m_clipAt = clipped ? x1 : std::numeric_limits<double>::infinity();
    m_clipDrawnAt = x1 / std::pow(x1 / x0, 0.03);

    // Ceilings: flat compute peaks, and bandwidth slopes (rate = bandwidth x intensity) up to the peak.
    int slopeIndex = 0;
    const QColor slopeColors[] = {QColor(0x00, 0x9E, 0x73), QColor(0xE6, 0x9F, 0x00), QColor(0x56, 0xB4, 0xE9),
                                  QColor(0xCC, 0x79, 0xA7), QColor(0x88, 0x88, 0x88)};
    // Dtypes that share a peak (fp8 and int8 on most chips) share one line and one label.
    std::vector<model::RooflineCeiling> ceilings;
    for (const auto &c : m_data.ceilings) {
        auto same = std::find_if(ceilings.begin(), ceilings.end(), [&](const model::RooflineCeiling &o) {
            return !c.slope && !o.slope && std::abs(o.value - c.value) <= 1e-9 * c.value;
        });
        if (same == ceilings.end()) {
            ceilings.push_back(c);
        } else {
            const auto space = same->name.find(' ');
            const auto cSpace = c.name.find(' ');
            same->name = same->name.substr(0, space) + "/" + c.name.substr(0, cSpace)
                         + (space == std::string::npos ? "" : same->name.substr(space));
        }
    }
    // A compute dtype the chip lists no peak for runs at a wider format's (or a quarter of
    // bf16 for fp32): its roof still gets a line.
    if (std::none_of(ceilings.begin(), ceilings.end(), [&](const model::RooflineCeiling &c) {
            return !c.slope && std::abs(c.value - roof) <= 1e-9 * roof;
        }))
        ceilings.push_back({m_data.computeDtype.empty() ? std::string("peak") : m_data.computeDtype + " peak", roof, false});
    for (const auto &c : ceilings) {
        if (!loggable(c.value))
            continue;
        QCPGraph *g = addGraph();
        g->setName(qs(c.name));
        // Each ceiling carries its own label on the line; the legend keeps to the operations so
        // it stays small enough not to cover the ceilings on a short chart.
        g->removeFromLegend();
        if (c.slope) {
            const double ridge = roof / c.value; // where the slope meets the compute dtype's peak
            const double a = x0;
            const double b = std::min(x1, ridge);
            if (!loggable(a * c.value) || b <= a)
                continue;
            g->setData({a, b}, {a * c.value, b * c.value}, true);
            g->setPen(QPen(slopeColors[slopeIndex++ % 5], 2));
            // Labelled at the middle of its visible part (it may enter above the x axis), its
            // angle set from pixels once the layout is known (placeSlopeLabels).
            const double from = std::max(a, yAxis->range().lower / c.value);
            const double at = from < b ? std::sqrt(from * b) : std::sqrt(a * b);
            auto *label = new QCPItemText(this);
            label->position->setCoords(at, at * c.value);
            label->setText(qs(c.name));
            label->setColor(g->pen().color());
            label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
            label->setPadding(QMargins(0, 0, 0, 3));
            m_slopeLabels.push_back({label, c.value});
        } else {
            const bool isRoof = std::abs(c.value - roof) <= 1e-9 * roof;
            g->setData({x0, x1}, {c.value, c.value}, true);
            QColor color = text;
            color.setAlpha(isRoof ? 230 : 90);
            g->setPen(isRoof ? QPen(color, 2.5) : QPen(color, 1, Qt::DashLine));
            // Placed along its line by layoutLabels.
            auto *label = new QCPItemText(this);
            label->position->setCoords(x0, c.value);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            label->setPadding(QMargins(2, 0, 2, 0));
            m_ceilingLabels.push_back({label, c.value});
            label->setText(qs(c.name) + QStringLiteral(" ") + qs(model::formatFlopsPerSecond(c.value)));
            label->setColor(color);
        }
    }
    if (loggable(m_data.criticalIntensity)) {
        auto *ridge = new QCPItemStraightLine(this);
        ridge->point1->setCoords(m_data.criticalIntensity, 1);
        ridge->point2->setCoords(m_data.criticalIntensity, 10);
        QColor color = text;
        color.setAlpha(70);
        ridge->setPen(QPen(color, 1, Qt::DotLine));
        auto *label = new QCPItemText(this);
        label->position->setCoords(m_data.criticalIntensity, yAxis->range().lower);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->setPadding(QMargins(2, 0, 2, 0));
        label->setText(tr("ridge %1 FLOPs/B").arg(qs(model::formatNumber(m_data.criticalIntensity))));
        label->setColor(text);
        m_ridgeLabel = label;
    }

    // Points, one graph per kind of operation.
    for (const auto &kind : kKinds) {
        std::vector<std::pair<double, double>> xy;
        for (const auto &p : m_data.points)
            if (p.kind == kind.kind && loggable(p.intensity) && loggable(p.achievedFlopsPerS))
                xy.emplace_back(drawnIntensity(p), p.achievedFlopsPerS);
        if (xy.empty())
            continue;
        std::sort(xy.begin(), xy.end());
        QVector<double> keys;
        QVector<double> values;
        for (const auto &[x, y] : xy) {
            keys << x;
            values << y;
        }
        QCPGraph *g = addGraph();
        g->setName(tr(kind.label));
        g->setLineStyle(QCPGraph::lsNone);
        const QColor colour = seriesColor(kind.color, palette());
        g->setScatterStyle(QCPScatterStyle(kind.shape, colour.darker(130), colour, 10));
        g->setData(keys, values, true);
    }
    for (const auto &p : m_data.points) {
        if (!loggable(p.intensity) || !loggable(p.achievedFlopsPerS) || !(p.intensity > m_clipAt))
            continue;
        auto *arrow = new QCPItemLine(this);
        arrow->start->setCoords(m_clipDrawnAt * std::pow(x1 / x0, 0.005), p.achievedFlopsPerS);
        arrow->end->setCoords(x1, p.achievedFlopsPerS);
        arrow->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 8, 10));
        arrow->setPen(QPen(text, 1.5));
        auto *note = new QCPItemText(this);
        note->position->setCoords(m_clipDrawnAt, p.achievedFlopsPerS);
        note->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        note->setPadding(QMargins(2, 0, 2, 0));
        note->setText(tr("%1 at %2 FLOPs/B").arg(qs(p.op), qs(model::formatNumber(p.intensity))));
        note->setColor(text);
        m_clipNotes.push_back({note, p.achievedFlopsPerS});
    }
    m_selection = addGraph();
    m_selection->removeFromLegend();
    m_selection->setLineStyle(QCPGraph::lsNone);
    m_selection->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(text, 2), Qt::NoBrush, 20));
    if (m_selected >= 0) {
        const auto &p = m_data.points[static_cast<std::size_t>(m_selected)];
        m_selection->setData({drawnIntensity(p)}, {p.achievedFlopsPerS}, true);
    }
    replot(QCustomPlot::rpQueuedReplot);
}

int RooflineChart::pointAt(QPointF pixel, double radius) const
{
    int best = -1;
    double bestDistance = radius * radius;
    for (std::size_t i = 0; i < m_data.points.size(); ++i) {
        const auto &p = m_data.points[i];
        if (!loggable(p.intensity) || !loggable(p.achievedFlopsPerS))
            continue;
        // Where it is drawn, and, for a point clipped at the edge, also at its own coordinates
        // off the plot (which a caller computes from the data).
        for (const double x : {drawnIntensity(p), p.intensity}) {
            const double dx = xAxis->coordToPixel(x) - pixel.x();
            const double dy = yAxis->coordToPixel(p.achievedFlopsPerS) - pixel.y();
            const double d = dx * dx + dy * dy;
            if (d <= bestDistance) {
                bestDistance = d;
                best = static_cast<int>(i);
            }
        }
    }
    return best;
}

QString RooflineChart::describePoint(int index) const
{
    if (index < 0 || index >= static_cast<int>(m_data.points.size()))
        return {};
    return describe(m_data.points[static_cast<std::size_t>(index)]);
}

QString RooflineChart::describe(const model::RooflinePoint &p)
{
    QString text = QStringLiteral("<b>%1</b> (%2)<br>").arg(qs(p.op).toHtmlEscaped(), qs(p.kind));
    const auto seconds = [](double s) { return qs(model::formatSeconds(s)); };
    if (p.kind == "collective") {
        QStringList axes;
        for (const auto &axis : p.axes)
            axes << qs(axis);
        text += tr("%1 over %2 (%3), %4 per step")
                    .arg(qs(p.collectiveOp), axes.join(QStringLiteral(", ")), qs(p.link))
                    .arg(p.countPerStep);
        text += QStringLiteral("<br>") + tr("each: sends %1 per chip in %2")
                                              .arg(qs(model::formatBytes(p.bytes)), seconds(p.commS));
        text += p.exposedS > 0 ? tr(", %1 of it exposed").arg(seconds(p.exposedS)) : tr(", hidden");
        text += QStringLiteral("<br>") + tr("overlaps %1 of compute taking %2")
                                              .arg(qs(model::formatFlops(p.flops)), seconds(p.overlapS));
        text += QStringLiteral("<br>") + tr("together %1 each, %2 of that compute")
                                              .arg(seconds(p.timeS), qs(model::formatFlopsPerSecond(p.achievedFlopsPerS)));
        text += QStringLiteral("<br>")
                + tr("effective intensity %1 FLOPs/byte: its FLOPs over what the %2 slope (%3) moves in %4, "
                     "the time its link holds it")
                      .arg(qs(model::formatNumber(p.intensity)), qs(p.linkCeiling).toHtmlEscaped(),
                           qs(model::formatBytesPerSecond(p.linkBandwidth)), seconds(p.effectiveBytes / p.linkBandwidth));
        text += QStringLiteral("<br>") + tr("bound by <b>%1</b>").arg(qs(p.bound));
        return text;
    }
    text += tr("%1 and %2 per chip, %3 per step").arg(qs(model::formatFlops(p.flops)), qs(model::formatBytes(p.bytes)))
                .arg(p.countPerStep);
    text += QStringLiteral("<br>") + tr("intensity %1 FLOPs/byte, %2 each, %3 achieved")
                                          .arg(qs(model::formatNumber(p.intensity)), seconds(p.timeS),
                                               qs(model::formatFlopsPerSecond(p.achievedFlopsPerS)));
    text += QStringLiteral("<br>") + tr("bound by <b>%1</b>").arg(qs(p.bound));
    return text;
}

QString RooflineChart::summarize(const model::RooflinePoint &p)
{
    return tr("%1 (%2): %3 each, bound by %4").arg(qs(p.op), qs(p.kind), qs(model::formatSeconds(p.timeS)), qs(p.bound));
}

void RooflineChart::selectPoint(int index)
{
    m_selected = index >= 0 && index < static_cast<int>(m_data.points.size()) ? index : -1;
    m_selectedOp = m_selected >= 0 ? m_data.points[static_cast<std::size_t>(m_selected)].op : std::string();
    m_selectedKind = m_selected >= 0 ? m_data.points[static_cast<std::size_t>(m_selected)].kind : std::string();
    if (m_selection) {
        if (m_selected >= 0) {
            const auto &p = m_data.points[static_cast<std::size_t>(m_selected)];
            m_selection->setData({drawnIntensity(p)}, {p.achievedFlopsPerS}, true);
        } else {
            m_selection->data()->clear();
        }
        replot(QCustomPlot::rpQueuedReplot);
    }
}

void RooflineChart::updateLayout()
{
    QCustomPlot::updateLayout();
    if (ensureHeadroom())
        QCustomPlot::updateLayout(); // again, for the new ticks
}

bool RooflineChart::ensureHeadroom()
{
    // The highest peak's label needs a text line above it. On a short dock the 2.5x headroom of
    // rebuild() is less than that (the fp8 peak's label had no room and was left out): the top
    // of the y axis rises until it is.
    const QRectF plot = axisRect()->rect();
    const double need = QFontMetricsF(font()).height() + 10;
    const double lo = std::log10(yAxis->range().lower);
    const double hi = std::log10(yAxis->range().upper);
    const double top = std::log10(m_topPeak);
    if (yAxis->range().upper != m_autoUpper || !loggable(m_topPeak) || plot.height() <= 2 * need || !(top < hi)
        || !(lo < top))
        return false;
    if ((hi - top) * plot.height() >= need * (hi - lo) - 0.5)
        return false;
    // (u - top) H = need (u - lo), solved for the new upper decade u.
    const double u = (top * plot.height() - need * lo) / (plot.height() - need);
    yAxis->setRangeUpper(std::min(std::pow(10.0, u), QCPRange::maxRange / 10));
    m_autoUpper = yAxis->range().upper;
    return true;
}

void RooflineChart::layoutLabels()
{
    const double lo = xAxis->range().lower;
    const double hi = xAxis->range().upper;
    const QRectF plot = axisRect()->rect();
    // Inside the plot and clear of the ticks, which point inwards from the left and bottom axes.
    LabelPlacer placer(plot.adjusted(xAxis->tickLengthIn() + 2, 2, -2, -(xAxis->tickLengthIn() + 3)));
    // The y tick labels: a label on a tick's row keeps well off the axis, where it read as part
    // of the tick label ("10^15 fp16/bf16 peak").
    const double rowH = QFontMetricsF(yAxis->tickLabelFont()).height();
    for (const double tick : yAxis->tickVector()) {
        const double y = yAxis->coordToPixel(tick);
        if (y >= plot.top() && y <= plot.bottom())
            placer.addObstacle(QRectF(plot.left() - 80, y - rowH / 2, 80 + 24, rowH));
    }
    for (const auto &p : m_data.points)
        if (loggable(p.intensity) && loggable(p.achievedFlopsPerS))
            placer.addPoint(pixelOf(p), 6);
    for (const auto &note : m_clipNotes)
        if (note.item) {
            const double y = yAxis->coordToPixel(note.rate);
            placer.addLine(QLineF(xAxis->coordToPixel(m_clipDrawnAt), y, plot.right(), y));
        }
    // Lines: the slopes, each peak and the ridge. A label crosses one only when nothing is free.
    std::vector<int> slopeLines;
    for (const auto &[label, bandwidth] : m_slopeLabels)
        slopeLines.push_back(placer.addLine(QLineF(QPointF(xAxis->coordToPixel(lo), yAxis->coordToPixel(lo * bandwidth)),
                                                   QPointF(xAxis->coordToPixel(hi), yAxis->coordToPixel(hi * bandwidth)))));
    std::vector<int> peakLines;
    for (const auto &[label, value] : m_ceilingLabels) {
        const double y = yAxis->coordToPixel(value);
        peakLines.push_back(placer.addLine(QLineF(plot.left(), y, plot.right(), y)));
    }
    if (m_ridgeLabel) {
        const double x = xAxis->coordToPixel(m_data.criticalIntensity);
        placer.addLine(QLineF(x, plot.top(), x, plot.bottom()));
    }
    const auto textSize = [](const QCPItemText *label) {
        const QFontMetricsF metrics(label->font());
        const QMargins pad = label->padding();
        return QSizeF(metrics.horizontalAdvance(label->text()) + pad.left() + pad.right() + 1,
                      metrics.height() + pad.top() + pad.bottom());
    };
    // Put a label's top left at `pixel` (every label but the slopes' is aligned top left).
    const auto putAt = [this](QCPItemText *label, QPointF pixel) {
        label->position->setCoords(xAxis->pixelToCoord(pixel.x()), yAxis->pixelToCoord(pixel.y()));
    };

    // Slope names run along their slope, the text's foot on the line; where along the visible
    // part (the middle first) is chosen clear of points and other labels.
    for (std::size_t i = 0; i < m_slopeLabels.size(); ++i) {
        QCPItemText *label = m_slopeLabels[i].item;
        const double bandwidth = m_slopeLabels[i].bandwidth;
        if (!label)
            continue;
        const QPointF a(xAxis->coordToPixel(lo), yAxis->coordToPixel(lo * bandwidth));
        const QPointF b(xAxis->coordToPixel(hi), yAxis->coordToPixel(hi * bandwidth));
        if (a == b)
            continue;
        const double angle = std::atan2(b.y() - a.y(), b.x() - a.x());
        label->setRotation(qRadiansToDegrees(angle));
        // The part of the slope inside the plot and below the roof.
        const double roofY = yAxis->coordToPixel(m_data.computePeak > 0 ? m_data.computePeak : m_topPeak);
        const auto yToX = [&](double y) { return a.x() + (y - a.y()) * (b.x() - a.x()) / (b.y() - a.y()); };
        const double from = std::max(plot.left(), yToX(plot.bottom()));
        const double to = std::min(plot.right(), yToX(roofY));
        if (!(to > from))
            continue;
        const QSizeF size = textSize(label);
        const QPointF u(std::cos(angle), std::sin(angle));
        const QPointF n(u.y(), -u.x()); // up from the line on screen
        const int squares = std::max(2, static_cast<int>(std::ceil(size.width() / size.height())));
        std::vector<LabelPlacer::Shape> candidates;
        std::vector<QPointF> anchors;
        for (const double t : {0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82, 0.1, 0.9}) {
            const double x = from + t * (to - from);
            const QPointF at(x, a.y() + (x - a.x()) * (b.y() - a.y()) / (b.x() - a.x()));
            LabelPlacer::Shape shape;
            for (int k = 0; k < squares; ++k) {
                const double along = -size.width() / 2 + size.height() / 2
                                     + k * (size.width() - size.height()) / (squares - 1);
                const QPointF c = at + u * along + n * (3 + size.height() / 2);
                shape.emplace_back(c.x() - 0.4 * size.height(), c.y() - 0.4 * size.height(), 0.8 * size.height(),
                                   0.8 * size.height());
            }
            candidates.push_back(shape);
            anchors.push_back(at);
        }
        const QPointF at = anchors[placer.place(candidates, slopeLines[i])];
        label->position->setCoords(xAxis->pixelToCoord(at.x()), yAxis->pixelToCoord(at.y()));
    }

    // Peaks: the roof first, then from the top. Above the line near its left end, else further
    // right, else under it; every peak keeps its label (the fp8 one was dropped when it clashed).
    std::vector<std::size_t> order(m_ceilingLabels.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const bool xr = m_ceilingLabels[x].value == m_data.computePeak;
        const bool yr = m_ceilingLabels[y].value == m_data.computePeak;
        return xr != yr ? xr : m_ceilingLabels[x].value > m_ceilingLabels[y].value;
    });
    for (const std::size_t i : order) {
        QCPItemText *label = m_ceilingLabels[i].item;
        if (!label)
            continue;
        label->setVisible(true);
        const QSizeF size = textSize(label);
        const double y = yAxis->coordToPixel(m_ceilingLabels[i].value);
        std::vector<LabelPlacer::Shape> candidates;
        for (const bool above : {true, false})
            for (double x = plot.left() + xAxis->tickLengthIn() + 2; x + size.width() <= plot.right() - 2; x += 6)
                candidates.push_back({QRectF(QPointF(x, above ? y - size.height() - 1 : y + 2), size)});
        if (candidates.empty())
            continue;
        const QRectF box = candidates[placer.place(candidates, peakLines[i])].front();
        putAt(label, box.topLeft());
    }

    // The ridge's name: beside its dotted line, low down but off the x axis and its ticks.
    if (m_ridgeLabel) {
        const QSizeF size = textSize(m_ridgeLabel);
        const double x = xAxis->coordToPixel(m_data.criticalIntensity);
        const double bottom = plot.bottom() - xAxis->tickLengthIn() - 3;
        std::vector<LabelPlacer::Shape> candidates;
        for (double y = bottom - size.height(); y >= plot.top() + 2; y -= size.height() / 2) {
            candidates.push_back({QRectF(QPointF(x + 3, y), size)});
            candidates.push_back({QRectF(QPointF(x - 3 - size.width(), y), size)});
        }
        if (!candidates.empty())
            putAt(m_ridgeLabel, candidates[placer.place(candidates)].front().topLeft());
    }

    // A clipped point's note: by its arrow, under or over it, moved further off (and leftwards)
    // where another note or a point is there; two notes used to print on top of each other.
    const double noteRight = xAxis->coordToPixel(m_clipDrawnAt) - 2;
    for (const auto &note : m_clipNotes) {
        if (!note.item)
            continue;
        const QSizeF size = textSize(note.item);
        const double y = yAxis->coordToPixel(note.rate);
        std::vector<LabelPlacer::Shape> candidates;
        for (double shift = 0; shift < 6 * size.height(); shift += size.height() / 2)
            for (double left = 0; left <= 60; left += 20)
                for (const bool below : {true, false})
                    candidates.push_back({QRectF(QPointF(noteRight - left - size.width(),
                                                         below ? y + 6 + shift : y - 6 - shift - size.height()),
                                                 size)});
        putAt(note.item, candidates[placer.place(candidates)].front().topLeft());
    }
}

std::vector<QCPItemText *> RooflineChart::labels() const
{
    std::vector<QCPItemText *> out;
    for (const auto &l : m_ceilingLabels)
        if (l.item && l.item->visible())
            out.push_back(l.item);
    for (const auto &l : m_slopeLabels)
        if (l.item && l.item->visible())
            out.push_back(l.item);
    if (m_ridgeLabel)
        out.push_back(m_ridgeLabel);
    for (const auto &n : m_clipNotes)
        if (n.item)
            out.push_back(n.item);
    return out;
}

double RooflineChart::slopeLabelRotation(const QString &name) const
{
    for (const auto &[label, bandwidth] : m_slopeLabels)
        if (label && label->text() == name)
            return label->rotation();
    return std::nan("");
}

int RooflineChart::indexOf(const std::string &op, const std::string &kind) const
{
    // Names are unique (oproofline.h), so the first match is the only one.
    for (std::size_t i = 0; i < m_data.points.size() && !op.empty(); ++i)
        if (m_data.points[i].op == op && m_data.points[i].kind == kind)
            return static_cast<int>(i);
    return -1;
}

std::vector<int> RooflineChart::pointsAt(QPointF pixel, double radius) const
{
    std::vector<int> out;
    const int best = pointAt(pixel, radius);
    if (best < 0)
        return out;
    // Points drawn where `best` is (two collectives of the same size and window).
    const QPointF at = pixelOf(m_data.points[static_cast<std::size_t>(best)]);
    for (std::size_t i = 0; i < m_data.points.size(); ++i) {
        const auto &p = m_data.points[i];
        if (loggable(p.intensity) && loggable(p.achievedFlopsPerS) && QLineF(pixelOf(p), at).length() <= 1.5)
            out.push_back(static_cast<int>(i));
    }
    return out;
}

QPointF RooflineChart::pixelOf(const model::RooflinePoint &p) const
{
    return {xAxis->coordToPixel(drawnIntensity(p)), yAxis->coordToPixel(p.achievedFlopsPerS)};
}

double RooflineChart::drawnIntensity(const model::RooflinePoint &p) const
{
    return p.intensity > m_clipAt ? m_clipDrawnAt : p.intensity;
}

bool RooflineChart::isClipped(int index) const
{
    return index >= 0 && index < static_cast<int>(m_data.points.size())
           && m_data.points[static_cast<std::size_t>(index)].intensity > m_clipAt;
}

void RooflineChart::selectOperation(const std::string &op, const std::string &kind)
{
    selectPoint(indexOf(op, kind));
    // Data not yet drawn (the chart is on a hidden tab) picks the name up when it arrives.
    m_selectedOp = op;
    m_selectedKind = op.empty() ? std::string() : kind;
}

void RooflineChart::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    const std::vector<int> under = pointsAt(event->position());
    QStringList texts;
    for (int index : under)
        texts << describePoint(index);
    if (!texts.isEmpty())
        QToolTip::showText(event->globalPosition().toPoint(),
                           texts.join(QStringLiteral("<hr>")) + QStringLiteral("<br><i>%1</i>").arg(tr("Click to explain (F1)")),
                           this);
    else
        QToolTip::hideText();
}

void RooflineChart::mousePressEvent(QMouseEvent *event)
{
    const std::vector<int> under = pointsAt(event->position());
    if (!under.empty() && event->button() == Qt::LeftButton) {
        // Points drawn on top of each other take turns: a click on the selected one selects the next.
        auto it = std::find(under.begin(), under.end(), m_selected);
        const int index = it == under.end() || std::next(it) == under.end() ? under.front() : *std::next(it);
        selectPoint(index);
        emit pointSelected(index);
        event->accept();
        return;
    }
    QCustomPlot::mousePressEvent(event);
}

} // namespace meshplan::views
