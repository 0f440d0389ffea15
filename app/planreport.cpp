#include "planreport.h"

#include "atomicwrite.h"
#include "chartfeed.h"
#include "chartstyle.h"
#include "palettes.h"
#include "plansummary.h"
#include "base/expression.h"
#include "base/units.h"
#include "base/valueunit.h"
#include "cost/evaluation.h"
#include "plan/plantitle.h"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QCoreApplication>
#include <QDateTime>
#include <QFileInfo>
#include <QPdfWriter>
#include <QTextDocument>

#include <qcustomplot.h>

#include <cmath>
#include <memory>

namespace meshplan::app {

namespace m = meshplan::model;

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("PlanReport", text);
}

QString esc(const QString &text)
{
    return text.toHtmlEscaped();
}

QString esc(const std::string &text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

struct Colors {
    QString text, muted, background, rule, link;
};

Colors colors(bool dark)
{
    if (dark)
        return {QStringLiteral("#e6e6e6"), QStringLiteral("#a0a0a0"), QStringLiteral("#1e1f22"), QStringLiteral("#444"),
                QStringLiteral("#8ab4f8")};
    return {QStringLiteral("#1a1a1a"), QStringLiteral("#666"), QStringLiteral("#ffffff"), QStringLiteral("#ccc"),
            QStringLiteral("#1a56c4")};
}

/// The charts a plan has: a serving plan is swept over its batch only.
std::vector<std::string> chartsOf(const m::Plan &plan)
{
    std::vector<std::string> charts;
    for (const char *name : kChartNames)
        if (!(plan.kind == m::WorkloadKind::Inference && std::string(name) == "sweep-chips"))
            charts.emplace_back(name);
    return charts;
}

QString chartCaption(const std::string &chart)
{
    if (chart == "roofline")
        return tr("Roofline: each operation and collective by its arithmetic intensity");
    if (chart == "memory")
        return tr("Memory per chip");
    if (chart == "timeline")
        return tr("One step on the busiest chip");
    if (chart == "sweep")
        return tr("Sweep of the batch");
    return tr("Sweep of the chip count");
}

constexpr QSize kChartLayout(900, 520);
constexpr int kCaptionHeight = 28; ///< PDF pixels (96 dpi) above each chart for its caption

/// A value as the report shows it: in the unit its name (or path) implies (valueunit.h), bytes
/// binary as the memory chart reads them; a count as digits.
std::string valueText(const std::string &name, double v)
{
    const m::ValueUnit unit = m::unitForName(name);
    if (unit == m::ValueUnit::Plain && v == std::floor(v) && std::abs(v) < 1e6)
        return std::to_string(static_cast<long long>(v));
    return m::formatInUnit(unit, v, true);
}

struct Headline {
    const char *path;
    const char *label;
};

QString derivationsHtml(const m::Derivations &derivations, bool training, const Colors &c)
{
    static const Headline kTraining[] = {{"step.time_s", "Step time"},
                                         {"step.compute_s", "Compute"},
                                         {"step.exposed_communication_s", "Exposed communication"},
                                         {"mfu", "MFU"},
                                         {"tokens_per_s", "Tokens per second"},
                                         {"memory_per_chip.total", "Memory per chip"}};
    static const Headline kServing[] = {{"inference.decode_step_s", "Decode step"},
                                        {"inference.time_to_first_token_s", "Time to first token"},
                                        {"inference.tokens_per_s", "Tokens per second"},
                                        {"inference.kv_cache_bytes_per_token", "KV cache per token"},
                                        {"memory_per_chip.total", "Memory per chip"}};
    QString html;
    const auto add = [&](const Headline &h) {
        const auto found = derivations.find(h.path);
        if (found == derivations.end())
            return;
        const m::Derivation &d = found->second;
        const auto expression = m::Expression::parse(d.expression);
        if (!expression)
            return;
        const std::string path(h.path);
        const std::string result = path == "mfu" ? m::formatNumber(100.0 * d.value) + "%" : valueText(path, d.value);
        const std::string named = expression->toText([](const std::string &n) { return n; });
        // A value whose name says no unit reads by the result it comes from, as the CLI reads it.
        const std::string substituted = expression->toText([&](const std::string &n) {
            const m::DerivationValue *v = d.find(n);
            if (!v)
                return valueText(n, 0.0);
            const bool byFrom = m::unitForName(v->name) == m::ValueUnit::Plain && !v->from.empty();
            return valueText(byFrom ? v->from : v->name, v->value);
        });
        html += QStringLiteral("<p><b>%1 = %2</b> <span style='color:%3'>(%4)</span><br>")
                    .arg(esc(QString::fromUtf8(h.label)), esc(result), c.muted, esc(std::string(h.path)));
        html += QStringLiteral("<code>%1</code><br><code>= %2</code><br>").arg(esc(named), esc(substituted));
        html += esc(d.words) + QStringLiteral("<br>");
        html += QStringLiteral("<span style='color:%1'>%2 %3, %4 — <a style='color:%5' href='%6'>%6</a></span></p>")
                    .arg(c.muted, tr("Book, ch."), esc(d.chapter), esc(m::bookChapterTitle(d.chapter)) + QStringLiteral(" · ") + esc(d.section),
                         c.link, esc(m::bookChapterUrl(d.chapter)));
    };
    if (training)
        for (const Headline &h : kTraining)
            add(h);
    else
        for (const Headline &h : kServing)
            add(h);
    return html;
}

QString row(const QString &key, const QString &value)
{
    return QStringLiteral("<tr><td style='padding-right:16px'><b>%1</b></td><td>%2</td></tr>").arg(esc(key), value);
}

QString modelHtml(const m::Plan &plan, const m::Evaluation &e)
{
    const m::ModelSpec &s = plan.model;
    QString t = QStringLiteral("<table>");
    t += row(tr("Model"), esc(s.name));
    const auto billions = [](std::int64_t n) { return QStringLiteral("%1 B").arg(double(n) / 1e9, 0, 'f', 2); };
    t += row(tr("Parameters"), billions(e.params.total)
                                   + (e.params.active != e.params.total
                                          ? QStringLiteral(" (%1 %2)").arg(billions(e.params.active), tr("active"))
                                          : QString()));
    t += row(tr("Layers × d_model × d_ff"), QStringLiteral("%1 × %2 × %3").arg(s.layers).arg(s.dModel).arg(s.dFf));
    t += row(tr("Heads (KV heads) × head dim"), QStringLiteral("%1 (%2) × %3").arg(s.heads).arg(s.kvHeads).arg(s.headDim));
    if (s.moe)
        t += row(tr("Experts"), QStringLiteral("%1 routed, %2 per token, %3 shared")
                                     .arg(s.moe->experts).arg(s.moe->expertsPerToken).arg(s.moe->sharedExperts));
    if (s.slidingWindow)
        t += row(tr("Sliding window"), tr("%1 tokens in %2 of %3 layers")
                                           .arg(s.slidingWindow->window)
                                           .arg(s.slidingWindow->localLayers)
                                           .arg(s.layers));
    t += row(tr("Vocabulary"), QString::number(s.vocab));
    return t + QStringLiteral("</table>");
}

QString clusterHtml(const m::Plan &plan)
{
    const m::Chip &chip = plan.topology.chip();
    QString t = QStringLiteral("<table>");
    t += row(tr("Chips"), QStringLiteral("%1 × %2 (%3)").arg(plan.topology.chipCount()).arg(esc(chip.name), esc(plan.topology.describe())));
    t += row(tr("Peak bf16 per chip"), esc(m::formatFlopsPerSecond(chip.peakFlops(m::DType::Bf16))));
    t += row(tr("HBM per chip"), esc(m::formatBytes(double(chip.hbmBytes), true) + ", " + m::formatBytesPerSecond(chip.hbmBandwidth)));
    if (plan.pricePerChipHour > 0)
        t += row(tr("Price per chip-hour"), QStringLiteral("$%1").arg(plan.pricePerChipHour, 0, 'f', 2));
    return t + QStringLiteral("</table>");
}

QString planHtml(const m::Plan &plan, const m::Evaluation &e)
{
    QString t = QStringLiteral("<table>");
    for (const auto &[role, axes] : e.placement) {
        QString names;
        for (const auto &a : axes)
            names += (names.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromStdString(a);
        t += row(QString::fromStdString(role), names.isEmpty() ? tr("—") : esc(names));
    }
    if (plan.kind == m::WorkloadKind::Training) {
        const m::TrainingSpec &w = plan.training;
        t += row(tr("Workload"), tr("training: %1 sequences of %2 tokens per step, %3")
                                     .arg(w.globalBatch).arg(w.seqLen).arg(esc(std::string(m::dtypeName(w.computeDtype)))));
        t += row(tr("ZeRO stage, microbatches"),
                 QStringLiteral("%1, %2 (%3)").arg(plan.parallelism.zeroStage).arg(plan.parallelism.microbatches)
                     .arg(esc(std::string(m::scheduleName(plan.parallelism.schedule)))));
        t += row(tr("Rematerialisation"), esc(std::string(m::rematName(w.remat.kind))));
    } else {
        const m::InferenceSpec &w = plan.inference;
        t += row(tr("Workload"), tr("serving: batch %1, prompt %2, generate %3, weights %4, KV %5")
                                     .arg(w.batch).arg(w.promptLen).arg(w.generateLen)
                                     .arg(esc(std::string(m::dtypeName(w.weightDtype))), esc(std::string(m::dtypeName(w.kvDtype)))));
    }
    return t + QStringLiteral("</table>");
}

QString warningsHtml(const m::Evaluation &e)
{
    if (e.warnings.empty())
        return QStringLiteral("<p>") + tr("None.") + QStringLiteral("</p>");
    QString html = QStringLiteral("<ul>");
    for (const auto &w : e.warnings)
        html += QStringLiteral("<li><b>%1</b>: %2</li>").arg(esc(w.code), esc(w.message));
    return html + QStringLiteral("</ul>");
}

QString headingOf(const ReportSection &s)
{
    if (!s.heading.isEmpty() || !s.plan)
        return s.heading.isEmpty() ? tr("A slide without a plan") : s.heading;
    const m::Plan &plan = *s.plan;
    return QString::fromStdString(m::titleFollowsPlan(plan) || plan.title.empty() ? m::generatedTitle(plan) : plan.title);
}

/// One section's text; `images` maps each chart to an <img> (a data URL) or "" to leave charts out.
QString sectionHtml(const ReportSection &s, bool dark, bool withImages)
{
    const Colors c = colors(dark);
    QString html = QStringLiteral("<h2>%1</h2>").arg(esc(headingOf(s)));
    if (!s.notes.isEmpty())
        html += QStringLiteral("<p style='color:%1'>%2</p>").arg(c.muted, esc(s.notes));
    if (!s.plan) {
        html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("This slide's plan could not be read:"), esc(s.problem));
        return html;
    }
    const m::Plan &plan = *s.plan;
    m::Derivations derivations;
    const auto evaluation = m::evaluate(plan, m::CostMode::Achievable, &derivations);
    if (!evaluation) {
        html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("This plan cannot be evaluated:"), esc(evaluation.error().toString()));
        return html;
    }
    const m::Evaluation &e = *evaluation;
    html += QStringLiteral("<h3>%1</h3>").arg(tr("Model")) + modelHtml(plan, e);
    html += QStringLiteral("<h3>%1</h3>").arg(tr("Cluster")) + clusterHtml(plan);
    html += QStringLiteral("<h3>%1</h3>").arg(tr("Plan")) + planHtml(plan, e);
    html += QStringLiteral("<h3>%1</h3>").arg(tr("Summary")) + views::planSummaryHtml(plan, evaluation);
    // The summary lists the warnings in words when there are any.
    if (e.warnings.empty())
        html += QStringLiteral("<h3>%1</h3>").arg(tr("Warnings")) + warningsHtml(e);
    html += QStringLiteral("<h3>%1</h3>").arg(tr("Where the headline numbers come from"))
            + derivationsHtml(derivations, plan.kind == m::WorkloadKind::Training, c);
    if (withImages) {
        html += QStringLiteral("<h3>%1</h3>").arg(tr("Charts"));
        for (const std::string &chart : chartsOf(plan)) {
            std::unique_ptr<QCustomPlot> plot = buildChart(plan, e, chart, dark);
            if (!plot)
                continue;
            plot->resize(kChartLayout);
            plot->replot();
            QByteArray png;
            QBuffer buffer(&png);
            buffer.open(QIODevice::WriteOnly);
            plot->toPixmap(kChartLayout.width(), kChartLayout.height(), 2.0).save(&buffer, "PNG");
            html += QStringLiteral("<figure><img alt='%1' style='max-width:100%' width='%2' src='data:image/png;base64,%3'>"
                                   "<figcaption style='color:%4'>%1</figcaption></figure>")
                        .arg(esc(chartCaption(chart))).arg(kChartLayout.width())
                        .arg(QString::fromLatin1(png.toBase64()), c.muted);
        }
    }
    return html;
}

QString documentHead(bool dark, const QString &title)
{
    const Colors c = colors(dark);
    return QStringLiteral("<!DOCTYPE html><html><head><meta charset='utf-8'><title>%1</title>"
                          "<style>body{font-family:'DejaVu Sans',sans-serif;color:%2;background:%3;max-width:980px;"
                          "margin:24px auto;padding:0 16px;line-height:1.4}h1,h2{border-bottom:1px solid %4}"
                          "a{color:%5}code{font-family:'DejaVu Sans Mono',monospace}td{vertical-align:top}</style>"
                          "</head><body>")
        .arg(esc(title), c.text, c.background, c.rule, c.link);
}

QString reportTitle(const std::vector<ReportSection> &sections)
{
    return sections.size() == 1 ? tr("Meshplan report: %1").arg(headingOf(sections.front())) : tr("Meshplan report");
}

QString generatedLine()
{
    return QStringLiteral("<p>") + tr("Generated by Meshplan on %1. Numbers from the achievable model; the book's "
                                      "ideal numbers are one --ideal away.")
                                       .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'")))
           + QStringLiteral("</p>");
}

/// The whole sheet, margins included, in `color` (the painter's origin is the printable area's).
void fillPage(QPainter &painter, QPdfWriter &writer, const QColor &color)
{
    const int dpi = writer.resolution();
    const QRect full = writer.pageLayout().fullRectPixels(dpi);
    const QRect paint = writer.pageLayout().paintRectPixels(dpi);
    painter.fillRect(full.translated(-paint.topLeft()), color);
}

/// Draws `html` over as many pages as it needs, starting on the current page.
void paintText(QPainter &painter, QPdfWriter &writer, const QString &html, bool dark, bool &firstPage)
{
    const Colors c = colors(dark);
    QTextDocument doc;
    doc.documentLayout()->setPaintDevice(&writer);
    doc.setDefaultStyleSheet(QStringLiteral("a{color:%1} h1,h2{color:%2}").arg(c.link, c.text));
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPointSizeF(9.5);
    doc.setDefaultFont(font);
    doc.setHtml(html);
    const QRect page = writer.pageLayout().paintRectPixels(writer.resolution());
    doc.setPageSize(page.size());
    const int pages = doc.pageCount();
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette.setColor(QPalette::Text, QColor(c.text));
    for (int p = 0; p < pages; ++p) {
        if (!firstPage)
            writer.newPage();
        firstPage = false;
        fillPage(painter, writer, QColor(c.background));
        painter.save();
        painter.translate(0, -p * page.height());
        context.clip = QRectF(0, p * page.height(), page.width(), page.height());
        painter.setClipRect(context.clip);
        doc.documentLayout()->draw(&painter, context);
        painter.restore();
    }
}

std::optional<QString> writePdf(const std::vector<ReportSection> &sections, QByteArray &bytes, bool dark)
{
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    // At 96 dpi a point is what it is on screen, so the charts' fonts keep their size against
    // their layout when drawn into the page (as views::exportChart does).
    writer.setResolution(96);
    writer.setCreator(QStringLiteral("Meshplan"));
    writer.setTitle(reportTitle(sections));
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait, QMarginsF(15, 15, 15, 15),
                                     QPageLayout::Millimeter));
    QCPPainter painter;
    if (!painter.begin(&writer))
        return tr("the PDF could not be started");
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setMode(QCPPainter::pmNonCosmetic);
    const QRect page = writer.pageLayout().paintRectPixels(writer.resolution());
    bool firstPage = true;
    for (const ReportSection &s : sections) {
        // The report's title heads the first section's first page.
        const QString head = firstPage ? QStringLiteral("<h1>%1</h1>").arg(tr("Meshplan report")) + generatedLine()
                                       : QString();
        paintText(painter, writer, head + sectionHtml(s, dark, false), dark, firstPage);
        if (!s.plan)
            continue;
        const auto evaluation = m::evaluate(*s.plan);
        if (!evaluation)
            continue;
        // Two charts a page, drawn as vectors at the layout size scaled to the page's width.
        const std::vector<std::string> charts = chartsOf(*s.plan);
        const double scale = double(page.width()) / kChartLayout.width();
        const int slot = page.height() / 2;
        for (std::size_t i = 0; i < charts.size(); ++i) {
            std::unique_ptr<QCustomPlot> plot = buildChart(*s.plan, *evaluation, charts[i], dark);
            if (!plot)
                continue;
            if (i % 2 == 0) {
                writer.newPage();
                fillPage(painter, writer, QColor(colors(dark).background));
            }
            plot->resize(kChartLayout);
            plot->replot();
            painter.save();
            painter.translate(0, (i % 2) * slot);
            QFont caption(QStringLiteral("DejaVu Sans"));
            caption.setPointSizeF(10);
            caption.setBold(true);
            painter.setFont(caption);
            painter.setPen(QColor(colors(dark).text));
            painter.drawText(QRect(0, 0, page.width(), kCaptionHeight), Qt::AlignLeft | Qt::AlignVCenter,
                             chartCaption(charts[i]));
            painter.translate(0, kCaptionHeight);
            painter.scale(scale, scale);
            plot->toPainter(&painter, kChartLayout.width(), kChartLayout.height());
            painter.restore();
        }
    }
    if (!painter.end())
        return tr("the PDF could not be finished");
    return std::nullopt;
}

} // namespace

QString reportHtml(const std::vector<ReportSection> &sections, bool dark)
{
    const QString title = reportTitle(sections);
    QString html = documentHead(dark, title) + QStringLiteral("<h1>%1</h1>").arg(tr("Meshplan report")) + generatedLine();
    for (const ReportSection &s : sections)
        html += sectionHtml(s, dark, true);
    return html + QStringLiteral("</body></html>\n");
}

std::optional<QString> writeReport(const std::vector<ReportSection> &sections, const QString &path, bool dark)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    QByteArray bytes;
    if (suffix == QLatin1String("html") || suffix == QLatin1String("htm")) {
        bytes = reportHtml(sections, dark).toUtf8();
    } else if (suffix == QLatin1String("pdf")) {
        if (auto error = writePdf(sections, bytes, dark))
            return QStringLiteral("%1: %2; nothing was written").arg(path, *error);
    } else {
        return QStringLiteral("%1: a report is .html or .pdf, got \"%2\"").arg(path, suffix);
    }
    return views::writeFileAtomically(path, bytes);
}

} // namespace meshplan::app
