#include "paretochart.h"

#include "chartstyle.h"
#include "searchresultsmodel.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace meshplan::views {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const QColor kResults(0x00, 0x72, 0xB2); // Okabe-Ito blue
const QColor kFront(0xE6, 0x9F, 0x00);   // orange
const QColor kCurrent(0xD5, 0x5E, 0x00); // vermillion

/// Sets a linear axis to [lo, hi] with some room around, from zero when the data are near it.
void setLinearRange(QCPAxis *axis, double lo, double hi)
{
    if (!(hi > lo)) {
        const double mid = hi > 0 ? hi : 1;
        lo = mid * 0.5;
        hi = mid * 1.5;
    }
    const double pad = 0.08 * (hi - lo);
    axis->setRange(lo - pad < 0 || lo < 0.3 * hi ? 0 : lo - pad, hi + pad);
}

} // namespace

ParetoChart::ParetoChart(QWidget *parent)
    : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("paretoChart"));
    setMouseTracking(true);
    setMinimumHeight(100);
    // Beside the plot, as on the memory chart: inside, it hid the plans it sat on (the open
    // plan is often a slow one, top right), and a row above took height the table needs.
    legend->setVisible(true);
    putLegendBeside(this);
    applyChartStyle(this, palette());
    setMessage(tr("Run a search to see the best plans\nand the trade-off between them."));
}

void ParetoChart::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyChartStyle(this, palette());
        if (m_hasData)
            rebuild();
        else
            setMessage(m_message);
    }
}

void ParetoChart::setMessage(const QString &message)
{
    m_message = message;
    m_hasData = false;
    m_candidates.clear();
    m_front.clear();
    m_ranked = 0;
    m_current.reset();
    m_selected = -1;
    showChartMessage(this, message);
}

void ParetoChart::setCandidates(const std::vector<model::SearchCandidate> &candidates, int ranked,
                                const std::vector<int> &frontIndices, const model::Evaluation *current, bool training)
{
    m_candidates = candidates;
    m_ranked = std::clamp(ranked, 0, static_cast<int>(candidates.size()));
    m_front = frontIndices;
    m_training = training;
    m_hasData = true;
    m_selected = -1;
    m_current.reset();
    m_currentText.clear();
    if (current) {
        const QPointF p = place(*current);
        if (std::isfinite(p.x()) && std::isfinite(p.y()) && p.x() > 0 && p.y() > 0) {
            m_current = p;
            model::SearchCandidate open;
            open.evaluation = *current;
            m_currentText = tr("<b>The open plan</b><br>%1").arg(SearchResultsModel::describe(open, training, 0));
        }
    }
    rebuild();
}

QPointF ParetoChart::place(const model::Evaluation &e) const
{
    const double time = SearchResultsModel::timeOf(e, m_training);
    if (m_training)
        return {time, e.memory.total / kGiB};
    return {e.inference ? e.inference->tokensPerSPerChip : 0.0, time * 1e3}; // latency in ms: "29.3", not "0.0293"
}

QPointF ParetoChart::pointOf(int index) const
{
    if (index < 0 || index >= static_cast<int>(m_candidates.size()))
        return {};
    return place(m_candidates[static_cast<std::size_t>(index)].evaluation);
}

QPointF ParetoChart::pixelOf(int index) const
{
    const QPointF p = pointOf(index);
    return {xAxis->coordToPixel(p.x()), yAxis->coordToPixel(p.y())};
}

int ParetoChart::candidateAt(QPointF pixel, double radius) const
{
    int best = -1;
    double bestD = radius * radius;
    for (int i = 0; i < static_cast<int>(m_candidates.size()); ++i) {
        const QPointF d = pixelOf(i) - pixel;
        const double dd = d.x() * d.x() + d.y() * d.y();
        if (dd <= bestD) {
            bestD = dd;
            best = i;
        }
    }
    return best;
}

void ParetoChart::setSelected(int index)
{
    m_selected = index >= 0 && index < static_cast<int>(m_candidates.size()) ? index : -1;
    if (!m_selection)
        return;
    m_selection->data()->clear();
    if (m_selected >= 0)
        m_selection->addData(pointOf(m_selected).x(), pointOf(m_selected).y());
    replot(rpQueuedReplot);
}

void ParetoChart::rebuild()
{
    clearPlottables();
    clearItems();
    showChartAxes(this);
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::Text);
    if (m_training) {
        xAxis->setLabel(tr("Step time"));
        yAxis->setLabel(tr("GiB per chip"));
    } else {
        xAxis->setLabel(tr("Tokens/s per chip"));
        yAxis->setLabel(tr("ms per token"));
    }

    double xLo = std::numeric_limits<double>::infinity();
    double xHi = 0;
    double yHi = 0;
    const auto extend = [&](QPointF p) {
        if (!std::isfinite(p.x()) || !std::isfinite(p.y()) || p.x() <= 0)
            return;
        xLo = std::min(xLo, p.x());
        xHi = std::max(xHi, p.x());
        yHi = std::max(yHi, p.y());
    };
    for (int i = 0; i < static_cast<int>(m_candidates.size()); ++i)
        extend(pointOf(i));
    if (m_current)
        extend(*m_current);

    // Times (and rates) spread over decades read on a log axis; a narrow spread reads linear.
    const bool logX = xHi > 0 && xHi / xLo > 5;
    if (logX) {
        setLogAxis(xAxis, m_training ? LogLabels::Seconds : LogLabels::Counts);
        setLogRange(xAxis, xLo, xHi, 0.08);
    } else {
        xAxis->setScaleType(QCPAxis::stLinear);
        xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        xAxis->setNumberFormat(QStringLiteral("gb"));
        xAxis->setNumberPrecision(3);
        setLinearRange(xAxis, xLo, xHi);
        if (m_training)
            xAxis->setLabel(tr("Step time (s)"));
    }
    yAxis->setScaleType(QCPAxis::stLinear);
    setLinearRange(yAxis, 0, yHi);
    if (!m_training)
        yAxis->setLabel(tr("ms per token"));

    auto *results = addGraph();
    results->setName(tr("results"));
    results->setLineStyle(QCPGraph::lsNone);
    const QColor dot = seriesColor(kResults, pal);
    results->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(dot, 1.2), QBrush(dot), 6));
    auto *others = addGraph();
    others->setName(tr("front only"));
    others->setLineStyle(QCPGraph::lsNone);
    others->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(dot, 1.2), Qt::NoBrush, 6));
    // The ranked results are the first points (the panel's list order); the rest are the
    // front's plans that did not make the ranking.
    for (int i = 0; i < static_cast<int>(m_candidates.size()); ++i) {
        const QPointF p = pointOf(i);
        (i < m_ranked ? results : others)->addData(p.x(), p.y());
    }

    // The front as a line through its plans in the order of x (it falls as x grows for training).
    auto *front = new QCPCurve(xAxis, yAxis);
    front->setName(tr("Pareto front"));
    const QColor frontColour = seriesColor(kFront, pal);
    front->setPen(QPen(frontColour, 2));
    front->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(frontColour, 1.5), Qt::NoBrush, 9));
    std::vector<QPointF> frontPoints;
    for (int index : m_front)
        frontPoints.push_back(pointOf(index));
    std::sort(frontPoints.begin(), frontPoints.end(),
              [](QPointF a, QPointF b) { return a.x() < b.x() || (a.x() == b.x() && a.y() < b.y()); });
    for (std::size_t i = 0; i < frontPoints.size(); ++i)
        front->addData(static_cast<double>(i), frontPoints[i].x(), frontPoints[i].y());

    if (m_current) {
        auto *open = addGraph();
        open->setName(tr("open plan"));
        open->setLineStyle(QCPGraph::lsNone);
        const QColor c = seriesColor(kCurrent, pal);
        open->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(c, 2), Qt::NoBrush, 13));
        open->addData(m_current->x(), m_current->y());
    }

    // The best three carry their rank, so the plot and the table's first rows read together.
    for (int i = 0; i < std::min(3, m_ranked); ++i) {
        auto *label = new QCPItemText(this);
        label->position->setCoords(pointOf(i));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(5, 0, 0, 2));
        label->setText(QString::number(i + 1));
        label->setColor(text);
        label->setClipToAxisRect(true);
    }

    m_selection = addGraph();
    m_selection->setName(tr("picked"));
    m_selection->setLineStyle(QCPGraph::lsNone);
    m_selection->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(text, 2), Qt::NoBrush, 15));
    m_selection->removeFromLegend();
    others->removeFromLegend();
    setSelected(m_selected);
    replot(rpQueuedReplot);
}

void ParetoChart::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    const QPointF at = event->position();
    const int index = candidateAt(at);
    if (index >= 0) {
        const bool ranked = index < m_ranked;
        QToolTip::showText(event->globalPosition().toPoint(),
                           SearchResultsModel::describe(m_candidates[static_cast<std::size_t>(index)], m_training,
                                                        ranked ? index + 1 : 0),
                           this);
        return;
    }
    if (m_current) {
        const QPointF d = QPointF(xAxis->coordToPixel(m_current->x()), yAxis->coordToPixel(m_current->y())) - at;
        if (d.x() * d.x() + d.y() * d.y() <= 64) {
            QToolTip::showText(event->globalPosition().toPoint(), m_currentText, this);
            return;
        }
    }
    QToolTip::hideText();
}

void ParetoChart::mousePressEvent(QMouseEvent *event)
{
    QCustomPlot::mousePressEvent(event);
    if (event->button() != Qt::LeftButton)
        return;
    const int index = candidateAt(event->position());
    if (index >= 0) {
        setSelected(index);
        emit candidateClicked(index);
    }
}

} // namespace meshplan::views
