#include "rooflinechart.h"

#include "base/units.h"
#include "chartstyle.h"

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
    connect(this, &QCustomPlot::afterLayout, this, &RooflineChart::placeSlopeLabels);
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
    // The roof is the plan's compute dtype; other dtypes' peaks are faint references.
    const double roof = loggable(m_data.computePeak) ? m_data.computePeak : peak;
    yLo = std::min(yLo, peak / 1e4);
    setLogRange(xAxis, xLo, xHi, 0.08);
    setLogRange(yAxis, yLo, peak, 0.08);
    // Room above the highest peak for its label, which the top of the plot clipped on a short dock.
    yAxis->setRangeUpper(std::min(std::max(yAxis->range().upper, peak * 2.5), QCPRange::maxRange / 10));
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
            // Labelled above its line at the left end, where the slopes are still far below the
            // peaks and no point reaches (the compute-bound points crowd the right, under the roof).
            auto *label = new QCPItemText(this);
            label->position->setCoords(x0, c.value);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
            label->setPadding(QMargins(4, 0, 4, 1));
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
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setText(tr(" ridge %1 FLOPs/B").arg(qs(model::formatNumber(m_data.criticalIntensity))));
        label->setColor(text);
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
        note->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        note->setPadding(QMargins(0, 8, 2, 0));
        note->setText(tr("%1 at %2 FLOPs/B").arg(qs(p.op), qs(model::formatNumber(p.intensity))));
        note->setColor(text);
        m_clipNotes.push_back(note);
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

void RooflineChart::placeSlopeLabels()
{
    // Along the slope as drawn: the angle of two of its points in pixels (the axes' aspect
    // changes with the widget's size), the text's bottom on the line, so the line runs under it.
    const double lo = xAxis->range().lower;
    const double hi = xAxis->range().upper;
    for (const auto &[label, bandwidth] : m_slopeLabels) {
        if (!label)
            continue;
        const QPointF a(xAxis->coordToPixel(lo), yAxis->coordToPixel(lo * bandwidth));
        const QPointF b(xAxis->coordToPixel(hi), yAxis->coordToPixel(hi * bandwidth));
        if (a == b)
            continue;
        label->setRotation(qRadiansToDegrees(std::atan2(b.y() - a.y(), b.x() - a.x())));
    }

    // Peak labels sit above their line at the left end, or, where a slope or a point is in the
    // way there, at the first place to the right that is clear (else the least covered).
    std::vector<QLineF> slopes;
    for (const auto &[label, bandwidth] : m_slopeLabels)
        slopes.emplace_back(QPointF(xAxis->coordToPixel(lo), yAxis->coordToPixel(lo * bandwidth)),
                            QPointF(xAxis->coordToPixel(hi), yAxis->coordToPixel(hi * bandwidth)));
    std::vector<QPointF> marks;
    for (const auto &p : m_data.points)
        if (loggable(p.intensity) && loggable(p.achievedFlopsPerS))
            marks.push_back(pixelOf(p));
    const QRectF plot = axisRect()->rect();
    // On a short plot two peaks a factor 2 apart are one text line apart or less: the roof keeps
    // its label and a reference peak whose label would overlap a kept one goes without.
    std::vector<double> keptY;
    const auto roofFirst = [&](const auto &a, const auto &b) {
        return (a.value == m_data.computePeak) > (b.value == m_data.computePeak);
    };
    auto order = m_ceilingLabels;
    std::stable_sort(order.begin(), order.end(), roofFirst);
    for (const auto &[label, value] : order) {
        if (!label)
            continue;
        const double y = yAxis->coordToPixel(value);
        const double h = QFontMetricsF(label->font()).height() + 2;
        const bool clash = std::any_of(keptY.begin(), keptY.end(), [&](double k) { return std::abs(k - y) < h; })
                           || y - h < plot.top();
        const bool keep = value == m_data.computePeak || !clash;
        label->setVisible(keep);
        if (keep)
            keptY.push_back(y);
    }
    for (const auto &[label, value] : m_ceilingLabels) {
        if (!label || !label->visible())
            continue;
        const QFontMetricsF metrics(label->font());
        const QSizeF size(metrics.horizontalAdvance(label->text()) + 8, metrics.height() + 1);
        const double y = yAxis->coordToPixel(value);
        // What a box at `left` covers: points count double, slopes once.
        const auto covered = [&](double left) {
            const QRectF box(QPointF(left, y - size.height()), size);
            int n = 0;
            for (const QPointF &m : marks)
                n += 2 * box.adjusted(-6, -6, 6, 6).contains(m);
            for (const QLineF &line : slopes) {
                // The slope's height (pixels) at the box's left and right: it crosses the box when
                // they straddle or enter its rows.
                const auto at = [&](double x) {
                    return line.p1().y() + (line.p2().y() - line.p1().y()) * (x - line.p1().x()) / (line.p2().x() - line.p1().x());
                };
                const double top = std::min(at(box.left()), at(box.right()));
                const double bottom = std::max(at(box.left()), at(box.right()));
                n += bottom >= box.top() && top <= box.bottom();
            }
            return n;
        };
        // From the left end rightwards in steps; the first clear place, else the least covered.
        double left = plot.left();
        int best = covered(left);
        for (double x = plot.left(); best > 0 && x + size.width() <= plot.right(); x += 8)
            if (const int n = covered(x); n < best) {
                best = n;
                left = x;
            }
        label->position->setCoords(xAxis->pixelToCoord(left), value);
    }

    // A clipped point's note goes under its arrow, or over it where that covers fewer points.
    for (const auto &note : m_clipNotes) {
        if (!note)
            continue;
        const QFontMetricsF metrics(note->font());
        const QSizeF size(metrics.horizontalAdvance(note->text()) + 2, metrics.height() + 8);
        const QPointF anchor = note->position->pixelPosition();
        const auto covered = [&](bool below) {
            const QRectF box(QPointF(anchor.x() - size.width(), below ? anchor.y() : anchor.y() - size.height()), size);
            return std::count_if(marks.begin(), marks.end(), [&](const QPointF &m) { return box.adjusted(-6, -6, 6, 6).contains(m); });
        };
        const bool below = covered(true) <= covered(false);
        note->setPositionAlignment(Qt::AlignRight | (below ? Qt::AlignTop : Qt::AlignBottom));
        note->setPadding(below ? QMargins(0, 8, 2, 0) : QMargins(0, 0, 2, 8));
    }
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
        QToolTip::showText(event->globalPosition().toPoint(), texts.join(QStringLiteral("<hr>")), this);
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
