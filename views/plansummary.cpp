#include "plansummary.h"

#include "base/units.h"
#include "cost/trackrecord.h"

#include <QCoreApplication>
#include <QLocale>

namespace meshplan::views {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("PlanSummary", text);
}

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString secs(double s)
{
    return qs(model::formatSeconds(s));
}

QString gib(double bytes)
{
    return qs(model::formatBytes(bytes, true));
}

QString num(double value)
{
    return qs(model::formatNumber(value));
}

QString rate(double perSecond)
{
    if (perSecond >= 1e6)
        return num(perSecond / 1e6) + QStringLiteral("M");
    if (perSecond >= 1e3)
        return num(perSecond / 1e3) + QStringLiteral("k");
    // Three significant figures however small: 0.606, not 0.00.
    return QString::number(perSecond, 'g', 3);
}

/// A fraction as a percentage to three figures, "<0.01%" below that: 3.6e-05% reads as noise.
QString percent(double fraction)
{
    const double p = 100.0 * fraction;
    if (p > 0 && p < 0.01)
        return QStringLiteral("<0.01%");
    return QString::number(p, 'g', 3) + QStringLiteral("%");
}

/// The binding resource in words (Evaluation::bound is a code).
QString boundWords(const std::string &bound)
{
    if (bound == "compute")
        return tr("compute (matmul FLOPs)");
    if (bound == "hbm")
        return tr("HBM bandwidth");
    if (bound == "ici")
        return tr("ICI links");
    if (bound == "dcn")
        return tr("DCN (between slices)");
    if (bound == "nvlink")
        return tr("NVLink");
    if (bound == "scale-out")
        return tr("scale-out network");
    if (bound == "memory-capacity")
        return tr("HBM capacity");
    return qs(bound);
}

/// Money with cents below $100 and thousands separated above: $0.42, $1,234.
QString dollars(double amount)
{
    return QStringLiteral("$") + QLocale(QLocale::English).toString(amount, 'f', amount < 100 ? 2 : 0);
}

QString row(const QString &name, const QString &value)
{
    return QStringLiteral("<tr><td style='padding-right:10px'>%1</td><td><b>%2</b></td></tr>").arg(name, value);
}

/// `value` as the link "explain:KEY" in `color`, not underlined: it looks as before (invalid
/// colour: no link).
QString explainLink(const QString &value, const char *key, const QColor &color)
{
    if (!color.isValid())
        return value;
    return QStringLiteral("<a href='explain:%1' style='color:%2; text-decoration:none'>%3</a>")
        .arg(QLatin1String(key), color.name(), value);
}

} // namespace

QString planSummaryHtml(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation,
                        const QColor &linkColor)
{
    const auto link = [&linkColor](const QString &value, const char *key) { return explainLink(value, key, linkColor); };
    if (!evaluation) {
        // The same rows as always, empty, so the summary keeps its shape while a plan is being fixed.
        const QString none = QStringLiteral("—");
        QString html = QStringLiteral("<p style='color:#c0392b'><b>%1</b><br>%2</p><table>")
                           .arg(tr("This plan cannot be evaluated."), qs(evaluation.error().toString()).toHtmlEscaped());
        const bool training = plan.kind == model::WorkloadKind::Training;
        html += row(tr("Fits"), none);
        html += row(training ? tr("Step time") : tr("Decode step"), none);
        html += row(training ? tr("MFU") : tr("Decode MFU"), none);
        html += row(tr("Tokens/s"), none);
        html += row(tr("Bound by"), none);
        return html + QStringLiteral("</table>");
    }
    const auto &e = *evaluation;
    QString html;
    const auto &m = e.memory;
    html += m.fits ? QStringLiteral("<p style='color:#1e8449'><b>✔ %1</b></p>")
                         .arg(tr("Fits: %1 of %2 HBM per chip")
                                  .arg(explainLink(gib(m.total), "fits", linkColor.isValid() ? QColor(0x1e, 0x84, 0x49) : QColor()),
                                       explainLink(gib(m.capacity), "capacity", linkColor.isValid() ? QColor(0x1e, 0x84, 0x49) : QColor())))
                   : QStringLiteral("<p style='color:#c0392b'><b>✘ %1</b></p>")
                         .arg(tr("Does not fit: %1 needed, %2 HBM per chip")
                                  .arg(explainLink(gib(m.total), "fits", linkColor.isValid() ? QColor(0xc0, 0x39, 0x2b) : QColor()),
                                       explainLink(gib(m.capacity), "capacity", linkColor.isValid() ? QColor(0xc0, 0x39, 0x2b) : QColor())));
    html += QStringLiteral("<table>");
    if (plan.kind == model::WorkloadKind::Training) {
        const auto &s = e.step;
        html += row(tr("Step time"), link(secs(s.time), "step_time"));
        html += row(tr("  compute"), link(secs(s.compute), "compute"));
        html += row(tr("  exposed comms"),
                    link(secs(s.exposedCommunication), "exposed_comms") + tr(" of ") + link(secs(s.communication), "communication"));
        if (s.bubble > 0)
            html += row(tr("  pipeline bubble"), link(secs(s.bubble), "bubble"));
        if (s.overlapInterference > 0)
            html += row(tr("  overlap slowdown"), link(secs(s.overlapInterference), "interference"));
        html += row(tr("MFU"), link(percent(e.mfu), "mfu"));
        html += row(tr("Tokens/s"), link(rate(e.tokensPerS), "tokens_per_s"));
        if (e.costPerStep > 0) // at the plan's price per chip-hour; fractions of a cent on small clusters
            html += row(tr("Cost per step"), e.costPerStep < 1 ? QStringLiteral("$") + QString::number(e.costPerStep, 'g', 3)
                                                                : dollars(e.costPerStep));
        if (e.run) {
            QString run = tr("%1 days").arg(QString::number(e.run->days, 'g', 3));
            if (e.run->cost > 0)
                run += tr(", %1").arg(dollars(e.run->cost));
            html += row(tr("Training run"), run);
        }
    } else if (e.inference) {
        const auto &i = *e.inference;
        html += row(tr("Time to first token"), link(secs(i.timeToFirstTokenS), "ttft"));
        html += row(tr("Decode step"), link(secs(i.decodeStepS), "decode_step"));
        html += row(tr("Tokens/s"), link(rate(i.tokensPerS), "tokens_per_s")
                                        + tr(" (%1 per chip)").arg(link(rate(i.tokensPerSPerChip), "tokens_per_s_per_chip")));
        html += row(tr("Decode MFU"), link(percent(e.serving.decodeMfu), "decode_mfu"));
        html += row(tr("Largest batch that fits"), link(num(e.serving.maxBatch), "max_batch"));
        if (e.serving.costPerMillionTokens > 0)
            html += row(tr("Cost per 1M tokens"), dollars(e.serving.costPerMillionTokens));
    }
    html += row(tr("Bound by"), boundWords(e.bound));
    html += row(tr("Chips"), QString::number(e.chips));
    html += QStringLiteral("</table>");
    if (!e.warnings.empty()) {
        html += QStringLiteral("<p><b>%1</b></p><ul style='margin-left:-20px'>").arg(tr("Warnings"));
        for (const auto &w : e.warnings)
            html += QStringLiteral("<li>%1</li>").arg(qs(w.message).toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    // How far to trust the rows above: the validation page's record on published runs like this
    // (the model's English, as its warnings are).
    QStringList record;
    for (const auto &f : model::TrackRecord::builtin().forPlan(plan))
        record << qs(f.sentence()).toHtmlEscaped();
    if (record.isEmpty())
        record << qs(std::string(model::TrackRecord::noRecordSentence())).toHtmlEscaped();
    html += QStringLiteral("<p style='color:#808b96'><b>%1</b> %2</p>").arg(tr("Track record."), record.join(QStringLiteral("<br>")));
    return html;
}

QString planSummaryLine(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation)
{
    if (!evaluation)
        return tr("Cannot evaluate: ") + qs(evaluation.error().toString());
    const auto &e = *evaluation;
    QStringList parts;
    parts << (e.memory.fits ? tr("fits (%1 of %2)") : tr("DOES NOT FIT (%1 of %2)"))
                 .arg(gib(e.memory.total), gib(e.memory.capacity));
    if (plan.kind == model::WorkloadKind::Training) {
        parts << secs(e.step.time) + tr("/step") << tr("MFU %1%").arg(num(100.0 * e.mfu))
              << tr("%1 tokens/s").arg(rate(e.tokensPerS));
    } else if (e.inference) {
        parts << tr("TTFT %1").arg(secs(e.inference->timeToFirstTokenS))
              << tr("%1/token").arg(secs(e.inference->decodeStepS))
              << tr("%1 tokens/s").arg(rate(e.inference->tokensPerS));
    }
    parts << tr("%1-bound").arg(qs(e.bound));
    if (!e.warnings.empty())
        parts << QCoreApplication::translate("PlanSummary", "%n warning(s)", nullptr, static_cast<int>(e.warnings.size()));
    return parts.join(QStringLiteral(" · "));
}

} // namespace meshplan::views
