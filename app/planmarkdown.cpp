#include "planmarkdown.h"

#include "chartfeed.h"

#include "base/units.h"
#include "plan/placement.h"

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

namespace meshplan::app {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("PlanMarkdown", text);
}

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString secs(double s)
{
    return qs(model::formatSeconds(s));
}

QString gib(double bytes)
{
    return qs(model::formatBytes(bytes, true));
}

/// Three significant figures, as the summary prints them: 57.1%, 0.606%.
QString percent(double fraction)
{
    return QString::number(100.0 * fraction, 'g', 3) + QStringLiteral("%");
}

/// Whole numbers with thousands separated (a pasted table is read, not parsed): 3,424,211.
QString count(double value)
{
    return QLocale(QLocale::English).toString(value, 'f', 0);
}

QString dollars(double amount)
{
    return QStringLiteral("$") + QLocale(QLocale::English).toString(amount, 'f', amount < 100 ? 2 : 0);
}

QString row(const QString &name, const QString &value)
{
    return QStringLiteral("| %1 | %2 |\n").arg(markdownCell(name), markdownCell(value));
}

QString table(const QString &heading, const QString &rows)
{
    return QStringLiteral("| %1 | |\n|---|---|\n").arg(markdownCell(heading)) + rows;
}

QString parallelismText(const model::Plan &plan)
{
    QStringList parts;
    for (model::Role role : model::kRoles)
        if (plan.parallelism.degree(role) > 1)
            parts << QStringLiteral("%1 %2").arg(qs(model::roleName(role))).arg(plan.parallelism.degree(role));
    return parts.isEmpty() ? tr("none (one chip holds everything)") : parts.join(QStringLiteral(" × "));
}

QString placementText(const model::Evaluation &e)
{
    QStringList parts;
    for (const auto &[role, axes] : e.placement) {
        QStringList names;
        for (const auto &axis : axes)
            names << qs(axis);
        if (!names.isEmpty())
            parts << QStringLiteral("%1 on %2").arg(qs(role), names.join(QStringLiteral(", ")));
    }
    return parts.join(QStringLiteral("; "));
}

QString workloadText(const model::Plan &plan)
{
    if (plan.kind == model::WorkloadKind::Training) {
        const model::TrainingSpec &w = plan.training;
        return tr("training: %1 sequences of %2 tokens per step, %3, ZeRO %4, microbatches %5, remat %6")
            .arg(w.globalBatch)
            .arg(w.seqLen)
            .arg(qs(model::dtypeName(w.computeDtype)))
            .arg(plan.parallelism.zeroStage)
            .arg(plan.parallelism.microbatches)
            .arg(qs(model::rematName(w.remat.kind)));
    }
    const model::InferenceSpec &w = plan.inference;
    return tr("serving: batch %1, prompt %2, generate %3, weights %4, KV %5")
        .arg(w.batch)
        .arg(w.promptLen)
        .arg(w.generateLen)
        .arg(qs(model::dtypeName(w.weightDtype)), qs(model::dtypeName(w.kvDtype)));
}

} // namespace

QString markdownCell(const QString &text)
{
    QString cell = text;
    cell.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
    cell.replace(QLatin1Char('|'), QStringLiteral("\\|"));
    cell.replace(QStringLiteral("\r\n"), QStringLiteral(" "));
    cell.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return cell;
}

QString planMarkdown(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation)
{
    const QString title = plan.title.empty() ? exportTitle(plan) : qs(plan.title);
    QString md = QStringLiteral("### %1\n\n").arg(QString(title).replace(QLatin1Char('\n'), QLatin1Char(' ')));
    const model::Chip &chip = plan.topology.chip();
    QString rows;
    rows += row(tr("Model"), qs(plan.model.name));
    rows += row(tr("Cluster"), tr("%1 × %2 (%3)").arg(plan.topology.chipCount()).arg(qs(chip.name), qs(plan.topology.describe())));
    rows += row(tr("Parallelism"), parallelismText(plan));
    if (evaluation) {
        const QString placement = placementText(*evaluation);
        if (!placement.isEmpty())
            rows += row(tr("Placement"), placement);
    }
    rows += row(tr("Workload"), workloadText(plan));
    md += table(tr("Plan"), rows);
    if (!evaluation)
        return md + QStringLiteral("\n**%1** %2\n").arg(tr("This plan cannot be evaluated:"), qs(evaluation.error().toString()));

    const model::Evaluation &e = *evaluation;
    rows.clear();
    rows += row(tr("Fits"), (e.memory.fits ? tr("yes: %1 of %2 HBM per chip") : tr("NO: %1 needed, %2 HBM per chip"))
                                .arg(gib(e.memory.total), gib(e.memory.capacity)));
    if (plan.kind == model::WorkloadKind::Training) {
        rows += row(tr("Step time"), secs(e.step.time));
        rows += row(tr("Compute"), secs(e.step.compute));
        rows += row(tr("Exposed communication"), tr("%1 of %2").arg(secs(e.step.exposedCommunication), secs(e.step.communication)));
        if (e.step.bubble > 0)
            rows += row(tr("Pipeline bubble"), secs(e.step.bubble));
        rows += row(tr("MFU"), percent(e.mfu));
        rows += row(tr("Tokens/s"), count(e.tokensPerS));
        if (e.costPerStep > 0)
            rows += row(tr("Cost per step"), e.costPerStep < 1 ? QStringLiteral("$") + QString::number(e.costPerStep, 'g', 3)
                                                               : dollars(e.costPerStep));
        if (e.run)
            rows += row(tr("Training run"), e.run->cost > 0 ? tr("%1 days, %2").arg(QString::number(e.run->days, 'g', 3), dollars(e.run->cost))
                                                           : tr("%1 days").arg(QString::number(e.run->days, 'g', 3)));
    } else if (e.inference) {
        const model::InferenceResult &i = *e.inference;
        rows += row(tr("Time to first token"), secs(i.timeToFirstTokenS));
        rows += row(tr("Decode step"), secs(i.decodeStepS));
        rows += row(tr("Tokens/s"), tr("%1 (%2 per chip)").arg(count(i.tokensPerS), count(i.tokensPerSPerChip)));
        rows += row(tr("Decode MFU"), percent(e.serving.decodeMfu));
        rows += row(tr("Largest batch that fits"), count(e.serving.maxBatch));
        if (e.serving.costPerMillionTokens > 0)
            rows += row(tr("Cost per 1M tokens"), dollars(e.serving.costPerMillionTokens));
    }
    rows += row(tr("Bound by"), qs(e.bound));
    rows += row(tr("Chips"), QString::number(e.chips));
    md += QStringLiteral("\n") + table(tr("Summary"), rows);
    if (!e.warnings.empty()) {
        md += QStringLiteral("\n**%1**\n\n").arg(tr("Warnings"));
        for (const auto &w : e.warnings)
            md += QStringLiteral("- %1\n").arg(qs(w.message).replace(QLatin1Char('\n'), QLatin1Char(' ')));
    }
    return md;
}

} // namespace meshplan::app
