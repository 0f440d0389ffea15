#include "timelinechart.h"

#include "base/units.h"
#include "chartstyle.h"

#include <QToolTip>

#include <algorithm>
#include <set>

namespace meshplan::views {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString kindLabel(const std::string &kind)
{
    if (kind == "compute") return QCoreApplication::translate("Timeline", "compute");
    if (kind == "recompute") return QCoreApplication::translate("Timeline", "recompute");
    if (kind == "hidden") return QCoreApplication::translate("Timeline", "communication, hidden");
    if (kind == "exposed") return QCoreApplication::translate("Timeline", "communication, exposed");
    if (kind == "bubble") return QCoreApplication::translate("Timeline", "pipeline bubble");
    if (kind == "optimizer") return QCoreApplication::translate("Timeline", "optimizer");
    if (kind == "interference") return QCoreApplication::translate("Timeline", "compute slowed by hidden collectives");
    if (kind == "prefill") return QCoreApplication::translate("Timeline", "prefill");
    if (kind == "decode") return QCoreApplication::translate("Timeline", "decode");
    return qs(kind);
}

} // namespace

QColor timelineKindColor(const std::string &kind)
{
    if (kind == "compute") return QColor(0x00, 0x72, 0xB2);
    if (kind == "recompute") return QColor(0x56, 0xB4, 0xE9);
    if (kind == "hidden") return QColor(0xB8, 0xD8, 0xBE);
    if (kind == "exposed") return QColor(0xD5, 0x5E, 0x00);
    if (kind == "bubble") return QColor(0xAA, 0xAA, 0xAA);
    if (kind == "optimizer") return QColor(0x00, 0x9E, 0x73);
    if (kind == "interference") return QColor(0xCC, 0x79, 0xA7);
    if (kind == "prefill") return QColor(0x00, 0x72, 0xB2);
    if (kind == "decode") return QColor(0xE6, 0x9F, 0x00);
    return QColor(0xCC, 0x79, 0xA7);
}

TimelineChart::TimelineChart(QWidget *parent)
    : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("timelineChart"));
    setMouseTracking(true);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    yAxis->setRangeReversed(true);
    legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    legend->setFont(small);
    // The legend sits in a row under the lanes, where it never covers a segment.
    auto *row = new QCPLayoutGrid;
    plotLayout()->addElement(1, 0, row);
    row->setMargins(QMargins(0, 0, 0, 4));
    axisRect()->insetLayout()->take(legend);
    row->addElement(0, 0, legend);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setWrap(4);
    row->setRowStretchFactor(0, 0.001);
    plotLayout()->setRowStretchFactor(1, 0.001);
    applyChartStyle(this, palette());
}

void TimelineChart::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyChartStyle(this, palette());
        rebuild();
    }
}

void TimelineChart::setTimeline(const model::StepTimeline &timeline)
{
    m_data = timeline;
    // Ranges are set for new data only: a highlight or a palette change keeps the user's zoom.
    const double total = m_data.totalS > 0 ? m_data.totalS : 1;
    rebuild();
    xAxis->setRange(0, total / m_unit * 1.04);
    yAxis->setRange(-0.6, static_cast<double>(std::max<std::size_t>(1, m_data.lanes.size())) - 0.4);
}

void TimelineChart::setMessage(const QString &message)
{
    m_data = {};
    m_rects.clear();
    showChartMessage(this, message);
}

void TimelineChart::rebuild()
{
    clearItems();
    clearPlottables();
    m_rects.clear();
    showChartAxes(this);
    const QColor text = palette().color(QPalette::Text);

    // Read the axis in the unit that suits the step: s, ms or µs.
    const double total = m_data.totalS > 0 ? m_data.totalS : 1;
    m_unit = total >= 1 ? 1 : total >= 1e-3 ? 1e-3 : 1e-6;
    const QString unit = m_unit == 1 ? tr("s") : m_unit == 1e-3 ? tr("ms") : tr("µs");
    xAxis->setLabel(tr("time (%1)").arg(unit));

    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t i = 0; i < m_data.lanes.size(); ++i)
        ticker->addTick(static_cast<double>(i), qs(m_data.lanes[i]));
    yAxis->setTicker(ticker);
    yAxis->setSubTicks(false);
    yAxis->grid()->setVisible(false);

    std::set<std::string> kinds;
    for (const auto &s : m_data.segments) {
        if (!(s.durationS > 0))
            continue;
        auto *rect = new QCPItemRect(this);
        const double lane = s.lane;
        rect->topLeft->setCoords(s.startS / m_unit, lane - 0.36);
        rect->bottomRight->setCoords((s.startS + s.durationS) / m_unit, lane + 0.36);
        const QColor color = seriesColor(timelineKindColor(s.kind), palette());
        rect->setBrush(color);
        const bool lit = (m_highlight >= 0 && s.collective == m_highlight)
                         || (m_computeHighlight && s.collective < 0
                             && (s.kind == "compute" || s.kind == "recompute" || s.kind == "prefill" || s.kind == "decode"));
        rect->setPen(lit ? QPen(text, 3) : QPen(color.darker(130), 1));
        rect->setSelectable(false);
        m_rects.push_back(rect);
        kinds.insert(s.kind);
    }
    for (const auto &kind : kinds) {
        // Empty bars only to give the legend one swatch per kind.
        auto *swatch = new QCPBars(xAxis, yAxis);
        swatch->setName(kindLabel(kind));
        const QColor swatchColor = seriesColor(timelineKindColor(kind), palette());
        swatch->setBrush(swatchColor);
        swatch->setPen(QPen(swatchColor.darker(130)));
    }
    auto *end = new QCPItemStraightLine(this);
    end->point1->setCoords(total / m_unit, 0);
    end->point2->setCoords(total / m_unit, 1);
    end->setPen(QPen(text, 1.5, Qt::DashLine));
    auto *label = new QCPItemText(this);
    label->position->setType(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(total / m_unit, -0.6);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    label->setText(tr("%1 ").arg(qs(model::formatSeconds(m_data.totalS))));
    label->setColor(text);
    replot(QCustomPlot::rpQueuedReplot);
}

int TimelineChart::segmentAt(QPointF pixel) const
{
    const double t = xAxis->pixelToCoord(pixel.x()) * m_unit;
    const double lane = yAxis->pixelToCoord(pixel.y());
    for (std::size_t i = 0; i < m_data.segments.size(); ++i) {
        const auto &s = m_data.segments[i];
        if (std::abs(lane - s.lane) <= 0.36 && t >= s.startS && t <= s.startS + s.durationS)
            return static_cast<int>(i);
    }
    return -1;
}

QString TimelineChart::describeSegment(int index) const
{
    if (index < 0 || index >= static_cast<int>(m_data.segments.size()))
        return {};
    const auto &s = m_data.segments[static_cast<std::size_t>(index)];
    return QStringLiteral("<b>%1</b><br>%2: %3, from %4 to %5")
        .arg(qs(s.label).toHtmlEscaped(), kindLabel(s.kind), qs(model::formatSeconds(s.durationS)),
             qs(model::formatSeconds(s.startS)), qs(model::formatSeconds(s.startS + s.durationS)));
}

void TimelineChart::highlightCollective(int collective)
{
    if (collective == m_highlight && !(collective >= 0 && m_computeHighlight))
        return;
    m_highlight = collective;
    if (collective >= 0)
        m_computeHighlight = false;
    rebuild();
}

void TimelineChart::highlightCompute(bool on)
{
    if (on == m_computeHighlight && (!on || m_highlight < 0))
        return;
    m_computeHighlight = on;
    if (on)
        m_highlight = -1;
    rebuild();
}

void TimelineChart::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    const int index = segmentAt(event->position());
    if (index >= 0)
        QToolTip::showText(event->globalPosition().toPoint(),
                           describeSegment(index) + QStringLiteral("<br><i>%1</i>").arg(tr("Click to explain (F1)")), this);
    else
        QToolTip::hideText();
}

void TimelineChart::mousePressEvent(QMouseEvent *event)
{
    const int index = segmentAt(event->position());
    if (index >= 0 && event->button() == Qt::LeftButton) {
        highlightCollective(m_data.segments[static_cast<std::size_t>(index)].collective);
        emit segmentSelected(index);
    }
    QCustomPlot::mousePressEvent(event);
}

} // namespace meshplan::views
