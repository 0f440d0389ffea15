#include "searchresultsmodel.h"

#include "base/units.h"

#include <QLocale>

namespace meshplan::views {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString secs(double s)
{
    return qs(model::formatSeconds(s));
}

/// Tokens/s with a k/M suffix, three figures.
QString rate(double perSecond)
{
    if (perSecond >= 1e6)
        return qs(model::formatNumber(perSecond / 1e6)) + QStringLiteral("M");
    if (perSecond >= 1e3)
        return qs(model::formatNumber(perSecond / 1e3)) + QStringLiteral("k");
    return QString::number(perSecond, 'g', 3);
}

QString dollars(double amount)
{
    return QStringLiteral("$") + QLocale(QLocale::English).toString(amount, 'f', amount < 100 ? 2 : 0);
}

double rateOf(const model::Evaluation &e, bool training)
{
    if (training)
        return e.mfu;
    return e.inference ? e.inference->tokensPerSPerChip : 0;
}

} // namespace

SearchResultsModel::SearchResultsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void SearchResultsModel::setResults(const std::vector<model::SearchCandidate> &results, bool training)
{
    beginResetModel();
    m_results = results;
    m_training = training;
    endResetModel();
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

void SearchResultsModel::clear()
{
    beginResetModel();
    m_results.clear();
    endResetModel();
}

int SearchResultsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_results.size());
}

int SearchResultsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SearchResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Rank: return tr("#");
        case Time: return m_training ? tr("Step time") : tr("Latency");
        case Rate: return m_training ? tr("MFU") : tr("Tokens/s/chip");
        case Memory: return tr("Memory/chip");
        case Cost: return m_training ? tr("Run cost") : tr("$/1M tokens");
        case Degrees: return tr("Degrees");
        case Placement: return tr("Placement");
        case Settings: return tr("Settings");
        case Why: return tr("Why");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Rank: return tr("Rank by the search's objective (1: the best).");
        case Time: return m_training ? tr("Time of one training step.") : tr("Per-token latency: one decode step.");
        case Rate: return m_training ? tr("Model FLOPs utilization.") : tr("Tokens per second per chip.");
        case Memory: return tr("HBM used on the most loaded chip.");
        case Cost:
            return m_training ? tr("Cost of the whole run (workload.train_tokens) at the cluster's price per chip-hour.")
                              : tr("Cost of a million generated tokens at the cluster's price per chip-hour.");
        case Degrees: return tr("The parallelism degrees above 1.");
        case Placement: return tr("The physical axes each role spans.");
        case Settings:
            return m_training ? tr("ZeRO stage, microbatches, pipeline schedule and rematerialization.")
                              : tr("Batch, serving mode and prefill chips.");
        case Why: return tr("What makes it win against the plan searched from.");
        }
    }
    return {};
}

QVariant SearchResultsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const auto &c = m_results[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole: return display(c, index.column(), index.row());
    case SortRole: return sortKey(c, index.column(), index.row());
    case Qt::ToolTipRole: return describe(c, m_training, index.row() + 1);
    case Qt::TextAlignmentRole:
        if (index.column() <= Cost)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default: return {};
    }
}

QVariant SearchResultsModel::display(const model::SearchCandidate &c, int column, int row) const
{
    const auto &e = c.evaluation;
    switch (column) {
    case Rank: return row + 1;
    case Time: return secs(timeOf(e, m_training));
    case Rate:
        return m_training ? QString::number(100.0 * e.mfu, 'f', 1) + QStringLiteral("%") : rate(rateOf(e, false));
    case Memory: return qs(model::formatBytes(e.memory.total, true));
    case Cost: return costOf(e, m_training) > 0 ? dollars(costOf(e, m_training)) : QStringLiteral("—");
    case Degrees: return degreesText(c.plan);
    case Placement: return placementText(e);
    case Settings: return settingsText(c.plan);
    case Why: return qs(c.why);
    }
    return {};
}

QVariant SearchResultsModel::sortKey(const model::SearchCandidate &c, int column, int row) const
{
    const auto &e = c.evaluation;
    switch (column) {
    case Rank: return row + 1;
    case Time: return timeOf(e, m_training);
    case Rate: return rateOf(e, m_training);
    case Memory: return e.memory.total;
    case Cost: return costOf(e, m_training);
    default: return display(c, column, row);
    }
}

QString SearchResultsModel::degreesText(const model::Plan &plan)
{
    QStringList parts;
    for (model::Role role : model::kRoles) {
        const int degree = plan.parallelism.degree(role);
        if (degree > 1)
            parts << QStringLiteral("%1 %2").arg(qs(std::string(model::roleName(role)))).arg(degree);
    }
    return parts.isEmpty() ? tr("one chip") : parts.join(QStringLiteral(" × "));
}

QString SearchResultsModel::placementText(const model::Evaluation &evaluation)
{
    QStringList parts;
    // In the mesh's order of roles, not the map's alphabetical one: tensor first reads as "innermost".
    for (model::Role role : {model::Role::Tensor, model::Role::Expert, model::Role::Context, model::Role::Fsdp,
                             model::Role::Data, model::Role::Pipeline}) {
        const auto it = evaluation.placement.find(std::string(model::roleName(role)));
        if (it == evaluation.placement.end() || it->second.empty())
            continue;
        QStringList axes;
        for (const auto &axis : it->second)
            axes << qs(axis);
        parts << QStringLiteral("%1 %2").arg(qs(it->first), axes.join(QLatin1Char(',')));
    }
    return parts.join(QStringLiteral(" · "));
}

QString SearchResultsModel::settingsText(const model::Plan &plan)
{
    QStringList parts;
    if (plan.kind == model::WorkloadKind::Training) {
        const auto &p = plan.parallelism;
        parts << tr("ZeRO %1").arg(p.zeroStage);
        parts << tr("%n microbatch(es)", nullptr, p.microbatches);
        if (p.degree(model::Role::Pipeline) > 1) {
            QString schedule = qs(std::string(model::scheduleName(p.schedule)));
            if (p.virtualStages > 1)
                schedule += tr(" ×%1 virtual").arg(p.virtualStages);
            parts << schedule;
        }
        parts << tr("remat %1").arg(qs(plan.training.remat.name));
    } else {
        const auto &i = plan.inference;
        parts << tr("batch %1").arg(i.batch);
        if (i.serving == model::Serving::Disaggregated)
            parts << tr("disaggregated, %1 prefill chips").arg(i.prefillChips);
        else
            parts << tr("interleaved");
    }
    return parts.join(QStringLiteral(" · "));
}

double SearchResultsModel::costOf(const model::Evaluation &e, bool training)
{
    if (training)
        return e.run ? e.run->cost : 0;
    return e.serving.costPerMillionTokens;
}

double SearchResultsModel::timeOf(const model::Evaluation &evaluation, bool training)
{
    if (training)
        return evaluation.step.time;
    return evaluation.inference ? evaluation.inference->decodeStepS : 0;
}

QString SearchResultsModel::describe(const model::SearchCandidate &c, bool training, int rank)
{
    const auto &e = c.evaluation;
    const auto row = [](const QString &name, const QString &value) {
        return QStringLiteral("<tr><td style='padding-right:8px'>%1</td><td><b>%2</b></td></tr>")
            .arg(name, value.toHtmlEscaped());
    };
    QString html = rank > 0 ? tr("<b>#%1</b> ").arg(rank) : QString();
    html += QStringLiteral("<b>%1</b><table>").arg(degreesText(c.plan).toHtmlEscaped());
    html += row(tr("Placement"), placementText(e));
    html += row(tr("Settings"), settingsText(c.plan));
    html += row(tr("Memory/chip"), tr("%1 of %2%3")
                                       .arg(qs(model::formatBytes(e.memory.total, true)),
                                            qs(model::formatBytes(e.memory.capacity, true)),
                                            e.memory.fits ? QString() : tr(" (does not fit)")));
    if (training) {
        html += row(tr("Step time"), secs(e.step.time));
        html += row(tr("MFU"), QString::number(100.0 * e.mfu, 'f', 1) + QStringLiteral("%"));
    } else if (e.inference) {
        html += row(tr("Latency"), secs(e.inference->decodeStepS) + tr(" per token"));
        html += row(tr("Tokens/s/chip"), rate(e.inference->tokensPerSPerChip));
    }
    if (costOf(e, training) > 0)
        html += row(training ? tr("Run cost") : tr("Per 1M tokens"), dollars(costOf(e, training)));
    html += row(tr("Bound by"), qs(e.bound));
    html += QStringLiteral("</table>");
    if (!c.why.empty())
        html += QStringLiteral("<i>%1</i>").arg(qs(c.why).toHtmlEscaped());
    return html;
}

} // namespace meshplan::views
