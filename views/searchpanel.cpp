#include "searchpanel.h"

#include "paretochart.h"
#include "searchresultsmodel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace meshplan::views {

namespace {

/// A count with a k/M/G suffix, three figures: "812", "3.4M".
QString count(double n)
{
    if (n >= 1e9)
        return QString::number(n / 1e9, 'g', 3) + QStringLiteral("G");
    if (n >= 1e6)
        return QString::number(n / 1e6, 'g', 3) + QStringLiteral("M");
    if (n >= 1e4)
        return QString::number(n / 1e3, 'g', 3) + QStringLiteral("k");
    return QString::number(static_cast<qint64>(n));
}

QString seconds(double s)
{
    return s < 1 ? QStringLiteral("%1 ms").arg(QString::number(s * 1e3, 'g', 3))
                 : QStringLiteral("%1 s").arg(QString::number(s, 'g', 3));
}

} // namespace

SearchPanel::SearchPanel(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("searchPanel"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto *controls = new QHBoxLayout;
    m_objective = new QComboBox(this);
    m_objective->setObjectName(QStringLiteral("searchObjective"));
    m_objective->setToolTip(tr("What the ranking optimizes: the shortest step (the highest MFU), the most "
                                  "tokens/s per chip within the latency target, or the lowest cost at the "
                                  "cluster's price per chip-hour."));
    // Narrow enough to share a tab group with the inspector without widening its column.
    m_objective->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_objective->setMinimumContentsLength(6);
    m_search = new QPushButton(tr("Search"), this);
    m_search->setObjectName(QStringLiteral("searchButton"));
    m_search->setToolTip(tr("Search every parallelization of the open plan's model on its cluster."));
    m_search->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelSearchButton"));
    m_cancel->setToolTip(tr("Stop the search; the plan is left as it is."));
    // Serving's latency target sits beside the objective it qualifies: a row less, so the
    // table and the plot keep their height in a small window.
    m_latencyLabel = new QLabel(tr("≤"), this);
    m_latencyLabel->setToolTip(tr("Latency target per generated token"));
    m_latency = new QDoubleSpinBox(this);
    m_latency->setObjectName(QStringLiteral("searchLatency"));
    m_latency->setRange(0, 10000);
    m_latency->setDecimals(0); // whole milliseconds: "50 ms" keeps the row narrow
    m_latency->setSuffix(tr(" ms"));
    m_latency->setSpecialValueText(tr("no target"));
    m_latency->setToolTip(tr("Latency target per generated token: slower serving plans are not ranked."));
    controls->addWidget(m_objective, 1);
    controls->addWidget(m_latencyLabel);
    controls->addWidget(m_latency);
    controls->addWidget(m_search);
    controls->addWidget(m_cancel);
    layout->addLayout(controls);

    auto *progressRow = new QHBoxLayout;
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("searchProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("Ready"));
    m_apply = new QPushButton(tr("Apply"), this);
    m_apply->setObjectName(QStringLiteral("applySearchButton"));
    m_apply->setToolTip(tr("Put the picked plan into the document (one undo step)."));
    m_compare = new QPushButton(tr("Compare"), this);
    m_compare->setObjectName(QStringLiteral("compareSearchButton"));
    m_compare->setToolTip(tr("Show the picked plan beside the open plan in the Compare tab "
                             "(right-click a row to compare it with the best result)."));
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_compare);
    progressRow->addWidget(m_apply);
    layout->addLayout(progressRow);
    m_status = new QLabel(tr("Ranks every way to parallelize the open plan that fits."), this);
    m_status->setObjectName(QStringLiteral("searchStatus"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_stale = new QLabel(tr("⚠ The plan's model, chip or workload changed since this search; "
                            "<i>Apply</i> puts the searched plan back with the result's layout."),
                         this);
    m_stale->setObjectName(QStringLiteral("searchStale"));
    m_stale->setWordWrap(true);
    m_stale->hide();
    layout->addWidget(m_stale);

    m_results = new SearchResultsModel(this);
    m_sorted = new QSortFilterProxyModel(this);
    m_sorted->setSourceModel(m_results);
    m_sorted->setSortRole(SearchResultsModel::SortRole);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("searchResults"));
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_pareto = new ParetoChart(this);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("searchSplit"));
    split->addWidget(m_table);
    split->addWidget(m_pareto);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({300, 200}); // the table's rows first; the plot reads at 100 px already
    split->setChildrenCollapsible(false);
    layout->addWidget(split, 1);


    connect(m_search, &QPushButton::clicked, this, [this] { emit searchRequested(options()); });
    connect(m_cancel, &QPushButton::clicked, this, &SearchPanel::cancelRequested);
    connect(m_apply, &QPushButton::clicked, this, [this] {
        if (m_picked >= 0)
            emit applyRequested(m_picked);
    });
    connect(m_compare, &QPushButton::clicked, this, [this] {
        if (m_picked >= 0)
            emit compareRequested(m_picked, -1);
    });
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, &SearchPanel::showTableMenu);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &SearchPanel::tableSelectionChanged);
    connect(m_pareto, &ParetoChart::candidateClicked, this, &SearchPanel::pickCandidate);
    fillObjectives(true, false);
    updateButtons();
}

void SearchPanel::fillObjectives(bool training, bool priced)
{
    const QVariant kept = m_objective->currentData();
    m_objective->clear();
    const auto add = [this](const QString &text, model::SearchObjective objective) {
        m_objective->addItem(text, static_cast<int>(objective));
    };
    if (training) {
        add(tr("Shortest step"), model::SearchObjective::StepTime); // the highest MFU too
        if (priced)
            add(tr("Cheapest step"), model::SearchObjective::Cost);
    } else {
        add(tr("Most tokens/s/chip"), model::SearchObjective::TokensPerChip);
        if (priced)
            add(tr("Cheapest 1M tokens"), model::SearchObjective::Cost);
    }
    const int again = m_objective->findData(kept);
    m_objective->setCurrentIndex(again >= 0 ? again : 0);
    m_latencyLabel->setVisible(!training);
    m_latency->setVisible(!training);
}

void SearchPanel::setOpenPlan(const model::Plan &plan, const model::Evaluation *evaluation)
{
    const bool training = plan.kind == model::WorkloadKind::Training;
    const bool priced = plan.pricePerChipHour > 0;
    if (training != m_training || priced != m_priced || m_objective->count() == 0)
        fillObjectives(training, priced);
    // The plan's own target is the default; the user's value stays until the plan's changes.
    if (!training && plan.inference.latencyTargetS != m_planLatencyS)
        m_latency->setValue(plan.inference.latencyTargetS * 1e3);
    m_planLatencyS = training ? -1 : plan.inference.latencyTargetS;
    m_training = training;
    m_priced = priced;
    if (evaluation)
        m_openEvaluation = *evaluation;
    else
        m_openEvaluation.reset();
    // The plot marks the open plan where it now stands (after an Apply, on the applied point).
    if (!m_candidates.empty()) {
        // A plan switched to another kind of workload since the search has no place on its axes.
        m_pareto->setCandidates(m_candidates, m_ranked, m_front, training == m_resultsTraining ? evaluation : nullptr,
                                m_resultsTraining);
        m_pareto->setSelected(m_picked);
    }
}

model::SearchOptions SearchPanel::options() const
{
    model::SearchOptions options;
    options.objective = static_cast<model::SearchObjective>(m_objective->currentData().toInt());
    options.top = kRanked;
    options.latencyTargetS = m_training ? 0 : m_latency->value() / 1e3;
    return options;
}

void SearchPanel::searchStarted()
{
    m_running = true;
    m_stale->hide();
    m_candidates.clear();
    m_front.clear();
    m_ranked = 0;
    m_picked = -1;
    m_results->clear();
    m_pareto->setMessage(tr("Searching…"));
    m_progress->setValue(0);
    m_progress->setFormat(tr("Searching…"));
    m_status->setText(tr("Every layout that fits is ranked; those that do not are counted."));
    updateButtons();
}

void SearchPanel::setProgress(std::int64_t considered, std::int64_t total, double elapsedS)
{
    if (!m_running)
        return;
    const double share = total > 0 ? std::clamp(double(considered) / double(total), 0.0, 1.0) : 0.0;
    m_progress->setValue(static_cast<int>(share * 1000));
    const double perS = elapsedS > 0 ? double(considered) / elapsedS : 0;
    // The bar carries the numbers, so the panel spends no extra line on them.
    m_progress->setFormat(tr("%p% · %1 of ~%2 · %3 plans/s")
                              .arg(count(double(considered)), count(double(total)), count(perS)));
}

void SearchPanel::setOutcome(const model::SearchOutcome &outcome, bool training)
{
    m_running = false;
    m_resultsTraining = training;
    m_candidates = outcome.results;
    m_ranked = static_cast<int>(outcome.results.size());
    // The front's plans that are not ranked join the list after the ranked ones, so the plot's
    // every point can be previewed and applied.
    std::vector<nlohmann::json> keys;
    for (const auto &c : m_candidates)
        keys.push_back(model::planToJson(c.plan));
    std::vector<int> &front = m_front;
    front.clear();
    for (const auto &c : outcome.pareto) {
        const nlohmann::json key = model::planToJson(c.plan);
        const auto it = std::find(keys.begin(), keys.end(), key);
        if (it != keys.end()) {
            front.push_back(static_cast<int>(it - keys.begin()));
        } else {
            front.push_back(static_cast<int>(m_candidates.size()));
            m_candidates.push_back(c);
            keys.push_back(key);
        }
    }
    m_picked = -1;
    m_results->setResults(outcome.results, training);
    m_table->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
    // Cost only where the plan has a price (and, for training, a token budget to price).
    const bool costed = std::any_of(outcome.results.begin(), outcome.results.end(), [&](const model::SearchCandidate &c) {
        return SearchResultsModel::costOf(c.evaluation, training) > 0;
    });
    m_table->setColumnHidden(SearchResultsModel::Cost, !costed);
    m_table->resizeColumnsToContents();
    // Long layouts are cut (a row's tooltip holds all of it), so every column stays in reach.
    const int widest = 4 * m_table->fontMetrics().horizontalAdvance(QStringLiteral("tensor 8 "));
    for (int column = SearchResultsModel::Degrees; column < SearchResultsModel::Why; ++column)
        m_table->setColumnWidth(column, std::min(m_table->columnWidth(column), widest));
    if (m_candidates.empty())
        m_pareto->setMessage(outcome.space.doesNotFit > 0 ? tr("No plan fits in memory.") : tr("No plan found."));
    else
        m_pareto->setCandidates(m_candidates, m_ranked, front, m_openEvaluation ? &*m_openEvaluation : nullptr,
                                training);
    m_progress->setValue(outcome.cancelled ? m_progress->value() : 1000);

    const auto &s = outcome.space;
    const double perS = outcome.elapsedS > 0 ? double(s.size) / outcome.elapsedS : 0;
    m_progress->setFormat(outcome.cancelled ? tr("Cancelled after %1 plans in %2")
                                                  .arg(count(double(s.size)), seconds(outcome.elapsedS))
                                            : tr("%1 plans in %2 · %3/s")
                                                  .arg(count(double(s.size)), seconds(outcome.elapsedS), count(perS)));
    m_progress->setToolTip(tr("%1 plans considered in %2 s: %3 plans per second.")
                               .arg(QLocale().toString(static_cast<qint64>(s.size)))
                               .arg(outcome.elapsedS, 0, 'g', 3)
                               .arg(QLocale().toString(perS, 'f', 0)));
    // What did not fit is said, not silently dropped (issue 17).
    m_status->setText(tr("%1 fit, %2 do not fit, %3 pruned by bounds.%4")
                          .arg(count(double(s.fits)), count(double(s.doesNotFit)), count(double(s.pruned)),
                               outcome.cancelled ? tr(" The best found before the cancel:") : QString()));
    m_status->setToolTip(tr("%1 plans considered, %2 evaluated, %3 skipped by bounds that prove they cannot "
                            "rank or join the front; %4 fit in memory, %5 do not.\nClick a row or a point to "
                            "preview its plan on the mesh and the charts.")
                             .arg(QLocale().toString(static_cast<qint64>(s.size)),
                                  QLocale().toString(static_cast<qint64>(s.evaluated)),
                                  QLocale().toString(static_cast<qint64>(s.pruned)),
                                  QLocale().toString(static_cast<qint64>(s.fits)),
                                  QLocale().toString(static_cast<qint64>(s.doesNotFit))));
    updateButtons();
}

void SearchPanel::setStale(bool stale)
{
    m_stale->setVisible(stale && !m_candidates.empty());
}

bool SearchPanel::isStale() const
{
    return !m_stale->isHidden();
}

void SearchPanel::setFailed(const QString &message)
{
    m_running = false;
    m_progress->setValue(0);
    m_progress->setFormat(tr("Not run"));
    m_status->setText(tr("The search could not run: %1").arg(message));
    m_pareto->setMessage(tr("No results."));
    updateButtons();
}

void SearchPanel::pickCandidate(int index)
{
    if (index < 0 || index >= candidateCount()) {
        m_picked = -1;
        m_picking = true;
        m_table->clearSelection();
        m_picking = false;
        m_pareto->setSelected(-1);
        updateButtons();
        return;
    }
    m_picked = index;
    m_picking = true;
    if (index < m_ranked) {
        const QModelIndex row = m_sorted->mapFromSource(m_results->index(index, 0));
        m_table->selectionModel()->select(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(row);
    } else {
        m_table->clearSelection();
    }
    m_picking = false;
    m_pareto->setSelected(index);
    updateButtons();
    emit previewRequested(index);
}

void SearchPanel::tableSelectionChanged()
{
    if (m_picking)
        return;
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    pickCandidate(m_sorted->mapToSource(rows.front()).row());
}

void SearchPanel::updateButtons()
{
    m_search->setEnabled(!m_running);
    m_cancel->setEnabled(m_running);
    m_objective->setEnabled(!m_running);
    m_latency->setEnabled(!m_running);
    m_apply->setEnabled(!m_running && m_picked >= 0);
    m_compare->setEnabled(!m_running && m_picked >= 0);
    // The button names what it applies: the rank, or a plan of the front that was not ranked.
    m_apply->setText(m_picked < 0 ? tr("Apply")
                     : m_picked < m_ranked ? tr("Apply #%1").arg(m_picked + 1)
                                           : tr("Apply front plan"));
}

void SearchPanel::showTableMenu(const QPoint &position)
{
    const QModelIndex at = m_table->indexAt(position);
    if (!at.isValid() || m_running)
        return;
    const int index = m_sorted->mapToSource(at).row();
    QMenu menu(this);
    menu.addAction(tr("Compare #%1 with the open plan").arg(index + 1), this,
                   [this, index] { emit compareRequested(index, -1); });
    if (index != 0)
        menu.addAction(tr("Compare #%1 with #1").arg(index + 1), this, [this, index] { emit compareRequested(index, 0); });
    menu.exec(m_table->viewport()->mapToGlobal(position));
}

} // namespace meshplan::views
