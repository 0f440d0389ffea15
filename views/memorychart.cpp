#include "memorychart.h"

#include "base/units.h"
#include "chartstyle.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace meshplan::views {

namespace {

/// A bar's name on two lines, broken at the space nearest its middle ("first pipeline" /
/// "stage"), so that neighbouring names stay clear of each other in a narrow chart.
QString twoLines(const QString &name)
{
    const int middle = static_cast<int>(name.size()) / 2;
    int best = -1;
    for (int i = 0; i < name.size(); ++i)
        if (name[i] == QLatin1Char(' ') && (best < 0 || std::abs(i - middle) < std::abs(best - middle)))
            best = i;
    if (best < 0)
        return name;
    QString broken = name;
    broken[best] = QLatin1Char('\n');
    return broken;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

double layerOf(const model::MemoryBreakdown &m, int layer)
{
    switch (layer) {
    case 0: return m.params;
    case 1: return m.grads;
    case 2: return m.optimizer;
    case 3: return m.activations;
    case 4: return m.kvCache;
    }
    return 0;
}

const char *layerName(int layer)
{
    static const char *names[] = {"parameters", "gradients", "optimizer state", "activations", "KV cache"};
    return names[layer];
}

const QColor kLayerColors[] = {QColor(0x00, 0x72, 0xB2), QColor(0x56, 0xB4, 0xE9), QColor(0x00, 0x9E, 0x73),
                               QColor(0xE6, 0x9F, 0x00), QColor(0xCC, 0x79, 0xA7)};

} // namespace

MemoryChart::MemoryChart(QWidget *parent)
    : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("memoryChart"));
    setMouseTracking(true);
    yAxis->setLabel(tr("GiB per chip"));
    legend->setVisible(true);
    putLegendBeside(this); // inside, it covered the HBM line
    applyChartStyle(this, palette());
}

void MemoryChart::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyChartStyle(this, palette());
        rebuild();
    }
}

void MemoryChart::setChipKinds(const std::vector<model::ChipKind> &kinds)
{
    m_kinds = kinds;
    rebuild();
}

void MemoryChart::setMessage(const QString &message)
{
    m_kinds.clear();
    m_stack.clear();
    showChartMessage(this, message);
}

void MemoryChart::setScaleBytes(double bytes)
{
    if (bytes == m_scaleBytes)
        return;
    m_scaleBytes = bytes;
    if (!m_kinds.empty())
        rebuild();
}

double MemoryChart::capacityBytes() const
{
    return m_kinds.empty() ? 0 : m_kinds.front().memory.capacity;
}

double MemoryChart::layerBytes(int bar, int layer) const
{
    if (bar < 0 || bar >= static_cast<int>(m_kinds.size()) || layer < 0 || layer >= kLayers)
        return 0;
    return layerOf(m_kinds[static_cast<std::size_t>(bar)].memory, layer);
}

bool MemoryChart::overCapacity(int bar) const
{
    if (bar < 0 || bar >= static_cast<int>(m_kinds.size()))
        return false;
    const auto &m = m_kinds[static_cast<std::size_t>(bar)].memory;
    return !m.fits || m.total > m.capacity;
}

void MemoryChart::rebuild()
{
    clearPlottables();
    clearItems();
    m_stack.clear();
    showChartAxes(this);
    const QColor text = palette().color(QPalette::Text);
    const QColor red(0xD0, 0x21, 0x2A);

    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const double capacity = capacityBytes() / kGiB;
    double used = 0;
    for (std::size_t i = 0; i < m_kinds.size(); ++i) {
        const auto &k = m_kinds[i];
        ticker->addTick(static_cast<double>(i), twoLines(qs(k.name)) + QStringLiteral("\n×") + QString::number(k.count));
        used = std::max(used, k.memory.total / kGiB);
    }
    // A chip using under a quarter of its HBM is drawn at its own scale, or its parameters and
    // optimizer state would be a sliver; the capacity is then named at the top, off the scale.
    // Beside another chart (the Compare tab) the scale reaches that chart's busiest chip too, so
    // both decide the same way whether the capacity is on the scale.
    const double reach = std::max(used, m_scaleBytes / kGiB);
    m_capacityOffScale = capacity > 0 && reach > 0 && reach < kZoomBelow * capacity;
    const double top = m_capacityOffScale ? reach : std::max(capacity, reach);
    xAxis->setTicker(ticker);
    xAxis->setSubTicks(false);
    xAxis->setTickLength(0, 4);
    xAxis->grid()->setVisible(false);
    xAxis->setRange(-0.6, static_cast<double>(m_kinds.size()) - 0.4);
    yAxis->setRange(0, std::max(1.0, top * 1.15));

    QCPBars *below = nullptr;
    for (int layer = 0; layer < kLayers; ++layer) {
        auto *bars = new QCPBars(xAxis, yAxis);
        bars->setName(tr(layerName(layer)));
        bars->setWidth(m_kinds.size() > 4 ? 0.6 : 0.45);
        const QColor colour = seriesColor(kLayerColors[layer], palette());
        bars->setPen(QPen(colour.darker(120), 1));
        bars->setBrush(colour);
        bars->setStackingGap(0);
        bool any = false;
        for (std::size_t i = 0; i < m_kinds.size(); ++i) {
            const double v = layerOf(m_kinds[i].memory, layer);
            any = any || v > 0;
            bars->addData(static_cast<double>(i), std::max(0.0, v) / kGiB);
        }
        if (!any)
            bars->removeFromLegend();
        if (below)
            bars->moveAbove(below);
        below = bars;
        m_stack.push_back(bars);
    }

    if (m_capacityOffScale) {
        auto *label = new QCPItemText(this);
        label->position->setType(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(0.01, 0.01);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->setText(tr("\u25B2 HBM capacity %1, off this scale: the busiest chip uses %2%")
                           .arg(qs(model::formatBytes(capacityBytes(), true)))
                           .arg(QString::number(100.0 * used / capacity, 'f', used / capacity < 0.1 ? 1 : 0)));
        label->setColor(red);
    } else if (capacityBytes() > 0) {
        auto *line = new QCPItemStraightLine(this);
        line->point1->setCoords(0, capacityBytes() / kGiB);
        line->point2->setCoords(1, capacityBytes() / kGiB);
        line->setPen(QPen(red, 2, Qt::DashLine));
        auto *label = new QCPItemText(this);
        label->position->setType(QCPItemPosition::ptAxisRectRatio);
        label->position->setAxes(xAxis, yAxis);
        label->position->setTypeY(QCPItemPosition::ptPlotCoords);
        label->position->setCoords(0.01, capacityBytes() / kGiB);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setText(tr("HBM capacity %1").arg(qs(model::formatBytes(capacityBytes(), true))));
        label->setColor(red);
    }
    // Over capacity: the whole stack framed in red, with the excess stated.
    for (std::size_t i = 0; i < m_kinds.size(); ++i) {
        const auto &m = m_kinds[i].memory;
        const double total = m.total / kGiB;
        auto *value = new QCPItemText(this);
        value->position->setCoords(static_cast<double>(i), total);
        value->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        value->setText(qs(model::formatBytes(m.total, true)));
        value->setColor(overCapacity(static_cast<int>(i)) ? red : text);
        if (!overCapacity(static_cast<int>(i)))
            continue;
        const double half = m_stack.front()->width() / 2 + 0.03;
        auto *frame = new QCPItemRect(this);
        frame->topLeft->setCoords(static_cast<double>(i) - half, total);
        frame->bottomRight->setCoords(static_cast<double>(i) + half, 0);
        frame->setPen(QPen(red, 3));
        QColor wash = red;
        wash.setAlpha(40);
        frame->setBrush(wash);
        value->setText(tr("%1: %2 over").arg(qs(model::formatBytes(m.total, true)),
                                            qs(model::formatBytes(m.total - m.capacity, true))));
    }
    replot(QCustomPlot::rpQueuedReplot);
}

QString MemoryChart::describeAt(QPointF pixel) const
{
    const double key = xAxis->pixelToCoord(pixel.x());
    const int bar = static_cast<int>(std::lround(key));
    if (bar < 0 || bar >= static_cast<int>(m_kinds.size()) || std::abs(key - bar) > 0.35)
        return {};
    const auto &k = m_kinds[static_cast<std::size_t>(bar)];
    QString text = QStringLiteral("<b>%1</b> (%2 chips)<table>").arg(qs(k.name).toHtmlEscaped()).arg(k.count);
    for (int layer = 0; layer < kLayers; ++layer) {
        const double v = layerOf(k.memory, layer);
        if (v > 0)
            text += QStringLiteral("<tr><td>%1</td><td align=right>%2</td><td align=right>%3 B</td></tr>")
                        .arg(tr(layerName(layer)), qs(model::formatBytes(v, true)),
                             QLocale().toString(static_cast<qlonglong>(std::llround(v))));
    }
    text += QStringLiteral("<tr><td><b>%1</b></td><td align=right><b>%2</b></td><td align=right>%3 B</td></tr></table>")
                .arg(tr("total"), qs(model::formatBytes(k.memory.total, true)),
                     QLocale().toString(static_cast<qlonglong>(std::llround(k.memory.total))));
    text += tr("of %1 HBM").arg(qs(model::formatBytes(k.memory.capacity, true)));
    return text;
}

std::pair<int, int> MemoryChart::segmentAt(QPointF pixel) const
{
    if (m_stack.empty())
        return {-1, -1};
    const double key = xAxis->pixelToCoord(pixel.x());
    const int bar = static_cast<int>(std::lround(key));
    if (bar < 0 || bar >= static_cast<int>(m_kinds.size()) || std::abs(key - bar) > m_stack.front()->width() / 2)
        return {-1, -1};
    // The stack as drawn: each layer from the top of the one below.
    const double value = yAxis->pixelToCoord(pixel.y()) * kGiB;
    double bottom = 0;
    for (int layer = 0; layer < kLayers; ++layer) {
        const double bytes = std::max(0.0, layerBytes(bar, layer));
        if (bytes > 0 && value >= bottom && value < bottom + bytes)
            return {bar, layer};
        bottom += bytes;
    }
    return {-1, -1};
}

void MemoryChart::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        const auto [bar, layer] = segmentAt(event->position());
        if (bar >= 0) {
            emit segmentClicked(bar, layer);
            event->accept();
            return;
        }
    }
    QCustomPlot::mousePressEvent(event);
}

void MemoryChart::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    QString text = describeAt(event->position());
    if (!text.isEmpty() && segmentAt(event->position()).first >= 0)
        text += QStringLiteral("<br><i>%1</i>").arg(tr("Click a segment to explain it (F1)"));
    if (!text.isEmpty())
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
    else
        QToolTip::hideText();
}

} // namespace meshplan::views
