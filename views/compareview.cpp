#include "compareview.h"

#include "chartstyle.h"
#include "memorychart.h"
#include "rooflinechart.h"
#include "timelinechart.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace meshplan::views {

namespace {

constexpr int kKeyRole = Qt::UserRole;
constexpr int kVerdictRole = Qt::UserRole + 1;

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

/// A chart under a caption naming its side.
QWidget *captioned(QLabel *caption, QWidget *chart, QWidget *parent)
{
    auto *box = new QWidget(parent);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    caption->setTextFormat(Qt::PlainText);
    caption->setAlignment(Qt::AlignLeft | Qt::AlignVCenter); // a long title is cut at its end, its side named first
    // A long title must not widen its side: the two charts share the page equally.
    caption->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    layout->addWidget(caption);
    layout->addWidget(chart, 1);
    return box;
}

} // namespace

CompareView::CompareView(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("compareView"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);

    auto *bar = new QHBoxLayout;
    m_header = new QLabel(this);
    m_header->setTextFormat(Qt::PlainText);
    m_header->setWordWrap(true);
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addWidget(m_header, 1);
    m_pin = new QToolButton(this);
    m_pin->setText(tr("Pin open plan"));
    m_pin->setToolTip(tr("Pin the open plan as the baseline; later edits are compared with it"));
    connect(m_pin, &QToolButton::clicked, this, &CompareView::pinRequested);
    bar->addWidget(m_pin);
    m_clear = new QToolButton(this);
    m_clear->setText(tr("Clear"));
    m_clear->setToolTip(tr("Clear the baseline"));
    connect(m_clear, &QToolButton::clicked, this, &CompareView::clearRequested);
    bar->addWidget(m_clear);
    layout->addLayout(bar);

    m_stack = new QStackedWidget(this);
    m_message = new QLabel(m_stack);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_stack->addWidget(m_message);

    auto *split = new QSplitter(Qt::Horizontal, m_stack);
    m_table = new QTableWidget(0, ColumnCount, split);
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setHorizontalHeaderLabels({tr("Quantity"), tr("Baseline"), tr("Candidate"), tr("Difference"), tr("Ratio")});
    m_table->verticalHeader()->setVisible(false);
    // Rows as tall as a line of text: the dock is short and the table long.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setMinimumSectionSize(24);
    split->addWidget(m_table);

    m_charts = new QTabWidget(split);
    for (int i = 0; i < 2; ++i) {
        m_memory[i] = new MemoryChart(m_charts);
        m_timeline[i] = new TimelineChart(m_charts);
        m_roofline[i] = new RooflineChart(m_charts);
        // Two charts share a page beside the table: let them shrink with the dock.
        for (QCustomPlot *plot : {static_cast<QCustomPlot *>(m_memory[i]), static_cast<QCustomPlot *>(m_timeline[i]),
                                  static_cast<QCustomPlot *>(m_roofline[i])})
            plot->setMinimumSize(140, 60);
    }
    for (auto &caption : m_captions)
        caption = new QLabel(m_charts);
    const auto pair = [this](Qt::Orientation orientation, QLabel *a, QWidget *chartA, QLabel *b, QWidget *chartB) {
        auto *page = new QSplitter(orientation, m_charts);
        page->addWidget(captioned(a, chartA, page));
        page->addWidget(captioned(b, chartB, page));
        page->setChildrenCollapsible(false);
        page->setStretchFactor(0, 1);
        page->setStretchFactor(1, 1);
        return page;
    };
    m_charts->addTab(pair(Qt::Horizontal, m_captions[0], m_memory[0], m_captions[1], m_memory[1]), tr("Memory"));
    // Side by side too: a dock is short, and each timeline needs the height for its lanes.
    m_charts->addTab(pair(Qt::Horizontal, m_captions[2], m_timeline[0], m_captions[3], m_timeline[1]), tr("Timeline"));
    m_charts->addTab(pair(Qt::Horizontal, m_captions[4], m_roofline[0], m_captions[5], m_roofline[1]), tr("Roofline"));
    connect(m_charts, &QTabWidget::currentChanged, this, &CompareView::chartShown);
    split->addWidget(m_charts);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 6);
    split->setChildrenCollapsible(false);
    m_stack->addWidget(split);
    layout->addWidget(m_stack, 1);

    setMessage({});
}

void CompareView::setMessage(const QString &message)
{
    m_message->setText(!message.isEmpty() ? message
                                          : tr("No baseline. Pin the open plan (Compare ▸ Pin as baseline, Ctrl+B), "
                                               "then edit it: every number is compared with the pinned one."));
    m_header->setText(tr("Compare two plans"));
    m_clear->setEnabled(false);
    m_stack->setCurrentIndex(0);
}

bool CompareView::showsComparison() const
{
    return m_stack->currentIndex() == 1;
}

QString CompareView::headerText() const
{
    return m_header->text();
}

void CompareView::setComparison(const model::PlanComparison &comparison, const QString &baselineName,
                                const QString &baselineTitle, const QString &candidateName,
                                const QString &candidateTitle)
{
    m_header->setText(tr("%1: %2\n%3: %4").arg(baselineName, baselineTitle, candidateName, candidateTitle));
    m_header->setToolTip(m_header->text());
    m_clear->setEnabled(true);
    m_table->setHorizontalHeaderLabels({tr("Quantity"), baselineName, candidateName, tr("Difference"), tr("Ratio")});
    const QString sides[2] = {baselineName + QStringLiteral(": ") + baselineTitle,
                              candidateName + QStringLiteral(": ") + candidateTitle};
    for (int i = 0; i < 6; ++i) {
        m_captions[i]->setText(sides[i % 2]);
        m_captions[i]->setToolTip(sides[i % 2]);
        m_captions[i]->setMinimumWidth(1); // a long title is cut, not the chart widened
    }

    m_table->setUpdatesEnabled(false);
    m_table->clearSpans();
    m_table->setRowCount(0);
    const auto addRow = [this](const QString &key, const QStringList &cells, int verdict, const QString &tip) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        for (int c = 0; c < ColumnCount; ++c) {
            auto *item = new QTableWidgetItem(cells.value(c));
            if (c != Quantity)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            item->setData(kKeyRole, key);
            item->setData(kVerdictRole, verdict);
            if (!tip.isEmpty())
                item->setToolTip(tip);
            m_table->setItem(row, c, item);
        }
    };
    const auto section = [this](const QString &title) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto *item = new QTableWidgetItem(title);
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
        m_table->setItem(row, 0, item);
        m_table->setSpan(row, 0, 1, ColumnCount);
    };

    for (const model::PlanChange &v : comparison.verdicts) {
        const bool fits = v.path == "memory_per_chip.fits";
        int verdict = 0;
        if (fits && v.baseline != v.candidate)
            verdict = v.candidate.get<bool>() ? 1 : -1;
        addRow(qs(v.path),
               {fits ? tr("fits") : tr("bound by"), qs(model::changeValueText(v.baseline)),
                qs(model::changeValueText(v.candidate)), QString(), QString()},
               verdict, qs(v.path));
    }
    for (const model::NumberComparison &n : comparison.numbers) {
        const QString none = QStringLiteral("—");
        addRow(qs(n.path),
               {qs(n.label), n.baseline ? qs(model::formatCompared(*n.baseline, n.unit)) : none,
                n.candidate ? qs(model::formatCompared(*n.candidate, n.unit)) : none,
                n.difference ? qs(model::formatDifference(*n.difference, n.unit)) : none,
                n.ratio ? qs(model::formatRatio(*n.ratio)) : none},
               n.verdict(), qs(n.path));
    }
    section(tr("What changed"));
    if (comparison.changes.empty())
        addRow(QStringLiteral("change:"), {tr("nothing: the plans are the same")}, 0, QString());
    for (const model::PlanChange &c : comparison.changes) {
        const QString from = qs(model::changeValueText(c.baseline));
        const QString to = qs(model::changeValueText(c.candidate));
        addRow(QStringLiteral("change:") + qs(c.path), {qs(c.path), from, to, QString(), QString()}, 0,
               tr("%1: %2 → %3").arg(qs(c.path), from, to));
    }
    recolour();
    // Every column readable: the table keeps its contents' width and the charts take the rest.
    m_table->resizeColumnsToContents();
    int width = 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < ColumnCount; ++c) {
        // A long change ("gpus_per_node 72, nodes 1", a title) is cut, whole in its tooltip.
        const int cap = (c == Quantity ? 28 : 14) * m_table->fontMetrics().averageCharWidth() + 16;
        m_table->setColumnWidth(c, std::min(m_table->columnWidth(c), cap));
        width += m_table->columnWidth(c);
    }
    m_table->setMinimumWidth(width);
    m_table->setUpdatesEnabled(true);
    m_stack->setCurrentIndex(1);
}

void CompareView::recolour()
{
    const QColor better = seriesColor(QColor(0x1e, 0x84, 0x49), palette());
    const QColor worse = seriesColor(QColor(0xc0, 0x39, 0x2b), palette());
    for (int row = 0; row < m_table->rowCount(); ++row)
        for (int c = Candidate; c < ColumnCount; ++c)
            if (QTableWidgetItem *item = m_table->item(row, c)) {
                const int verdict = item->data(kVerdictRole).toInt();
                if (verdict == 0)
                    item->setData(Qt::ForegroundRole, QVariant());
                else
                    item->setForeground(verdict > 0 ? better : worse);
            }
}

void CompareView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        recolour();
        // The charts rebuild on their own palette change, back to their own ranges.
        QTimer::singleShot(0, this, [this] {
            for (Side side : {Side::Baseline, Side::Candidate})
                for (int page = 0; page < 2; ++page)
                    chartFed(side, page);
            alignCharts();
        });
    }
}

int CompareView::currentChart() const
{
    return m_charts->currentIndex();
}

void CompareView::setCurrentChart(int page)
{
    m_charts->setCurrentIndex(page);
}

MemoryChart *CompareView::memoryChart(Side side) const
{
    return m_memory[side == Side::Baseline ? 0 : 1];
}

TimelineChart *CompareView::timelineChart(Side side) const
{
    return m_timeline[side == Side::Baseline ? 0 : 1];
}

RooflineChart *CompareView::rooflineChart(Side side) const
{
    return m_roofline[side == Side::Baseline ? 0 : 1];
}

void CompareView::chartFed(Side side, int page)
{
    const int i = side == Side::Baseline ? 0 : 1;
    // Each timeline reads in its own unit (s, ms, µs): its span in seconds.
    if (page == 1)
        m_timelineSeconds[i] = m_timeline[i]->timeline().segments.empty()
                                   ? 0 : m_timeline[i]->xAxis->range().upper * m_timeline[i]->timeUnit();
}

void CompareView::alignCharts()
{
    // The memory charts scale to the busier plan's busiest chip (and so agree on whether the
    // HBM capacity is on the scale); the timelines to the longer step.
    double busiest = 0;
    for (const MemoryChart *chart : m_memory)
        for (const model::ChipKind &kind : chart->chipKinds())
            busiest = std::max(busiest, kind.memory.total);
    const double seconds = std::max(m_timelineSeconds[0], m_timelineSeconds[1]);
    for (int i = 0; i < 2; ++i) {
        if (!m_memory[i]->chipKinds().empty()) {
            m_memory[i]->setScaleBytes(busiest);
            m_memory[i]->replot(QCustomPlot::rpQueuedReplot);
        }
        if (seconds > 0 && !m_timeline[i]->timeline().segments.empty()) {
            m_timeline[i]->xAxis->setRange(0, seconds / m_timeline[i]->timeUnit());
            m_timeline[i]->replot(QCustomPlot::rpQueuedReplot);
        }
    }
}

int CompareView::rowOf(const QString &key) const
{
    for (int row = 0; row < m_table->rowCount(); ++row)
        if (const QTableWidgetItem *item = m_table->item(row, Quantity); item && item->data(kKeyRole).toString() == key)
            return row;
    return -1;
}

QString CompareView::cellText(const QString &key, int column) const
{
    const int row = rowOf(key);
    const QTableWidgetItem *item = row >= 0 ? m_table->item(row, column) : nullptr;
    return item ? item->text() : QString();
}

int CompareView::verdictOf(const QString &key) const
{
    const int row = rowOf(key);
    const QTableWidgetItem *item = row >= 0 ? m_table->item(row, Quantity) : nullptr;
    return item ? item->data(kVerdictRole).toInt() : 0;
}

} // namespace meshplan::views
