#include "explainpanel.h"

#include "base/expression.h"

#include <QCoreApplication>
#include <QEvent>
#include <QLabel>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QTextDocumentFragment>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace meshplan::views {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

bool startsWith(const std::string &s, const std::string &prefix)
{
    return s.rfind(prefix, 0) == 0;
}

/// "layer_forward_s" → "layer forward".
QString humanize(std::string key)
{
    if (key.size() > 2 && key.compare(key.size() - 2, 2, "_s") == 0)
        key.resize(key.size() - 2);
    std::replace(key.begin(), key.end(), '_', ' ');
    QString s = qs(key);
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s;
}

/// How far a formula (a term too wide for a line) shrinks before it scrolls sideways.
constexpr qreal kMinFormulaScale = 0.75;

/// A formula in a frameless area that scrolls sideways once the formula cannot shrink further.
QScrollArea *formulaScroll(FormulaView *view, QWidget *parent)
{
    auto *scroll = new QScrollArea(parent);
    scroll->setObjectName(view->objectName() + QStringLiteral("Scroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    scroll->setWidget(view);
    view->setAutoFillBackground(false);
    scroll->viewport()->setAutoFillBackground(false);
    return scroll;
}

/// Gives `scroll` the height its formula takes at the width it has, plus a scroll bar's where
/// the formula is wider than that even shrunk.
void fitFormulaScroll(QScrollArea *scroll, FormulaView *view, int width)
{
    view->fitTo(width);
    const bool scrolls = view->minimumSizeHint().width() > width;
    const int bar = scrolls ? scroll->horizontalScrollBar()->sizeHint().height() : 0;
    scroll->setFixedHeight(view->heightForWidth(std::max(width, view->minimumSizeHint().width())) + bar);
}

} // namespace

FormulaView::FormulaView(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void FormulaView::setFormula(const model::Expression &expression, const QFont &font,
                             const std::optional<std::map<std::string, double>> &values, const QString &trailing)
{
    m_expression = expression;
    m_font = font;
    m_values = values;
    m_trailing = trailing;
    m_formula.emplace(expression.root(), font, m_values ? &*m_values : nullptr, trailing);
    m_fittedWidth = 0;
    updateGeometry();
    update();
}

void FormulaView::clearFormula()
{
    m_expression.reset();
    m_formula.reset();
    updateGeometry();
    update();
}

void FormulaView::fitTo(int width)
{
    if (!m_expression || width == m_fittedWidth)
        return;
    m_fittedWidth = width;
    m_formula.emplace(m_expression->root(), m_font, m_values ? &*m_values : nullptr, m_trailing, width - 2);
    updateGeometry();
    update();
}

QSize FormulaView::sizeHint() const
{
    if (!m_formula)
        return {0, 0};
    return m_formula->size().toSize() + QSize(2, 2);
}

QSize FormulaView::minimumSizeHint() const
{
    if (!m_formula)
        return {0, 0};
    const QSizeF s = m_formula->size() * kMinFormulaScale;
    return QSize(static_cast<int>(std::ceil(s.width())) + 2, static_cast<int>(std::ceil(s.height())) + 2);
}

qreal FormulaView::scaleFor(int width) const
{
    if (!m_formula || m_formula->size().width() <= 0)
        return 1;
    return std::clamp((width - 2) / m_formula->size().width(), kMinFormulaScale, 1.0);
}

int FormulaView::heightForWidth(int width) const
{
    if (!m_formula)
        return 0;
    return static_cast<int>(std::ceil(m_formula->size().height() * scaleFor(width))) + 2;
}

void FormulaView::paintEvent(QPaintEvent *)
{
    if (!m_formula)
        return;
    QPainter painter(this);
    const qreal scale = scaleFor(width());
    painter.translate(1, 1);
    painter.scale(scale, scale);
    const QColor text = palette().color(foregroundRole());
    // Values in the link colour the labels use, readable on either palette.
    const bool dark = palette().color(backgroundRole()).lightness() < 128;
    const QColor accent = dark ? QColor(0x8a, 0xc4, 0xff) : QColor(0x0b, 0x57, 0xb0);
    m_formula->paint(&painter, QPointF(0, 0), text, accent);
}

QString explainTitle(const std::string &path)
{
    static const std::map<std::string, const char *> titles = {
        {"step.time_s", "Step time"},
        {"step.compute_s", "Compute per step"},
        {"step.recompute_s", "Recompute per step"},
        {"step.communication_s", "Communication per step"},
        {"step.exposed_communication_s", "Exposed communication per step"},
        {"step.bubble_s", "Pipeline bubble"},
        {"step.optimizer_s", "Optimizer update"},
        {"step.overlap_interference_s", "Compute slowed by hidden collectives"},
        {"step.flops", "Model FLOPs per step"},
        {"step.tokens", "Tokens per step"},
        {"mfu", "MFU (model FLOPs utilization)"},
        {"tokens_per_s", "Tokens per second"},
        {"memory_per_chip.params", "Parameters per chip"},
        {"memory_per_chip.grads", "Gradients per chip"},
        {"memory_per_chip.optimizer", "Optimizer state per chip"},
        {"memory_per_chip.activations", "Activations per chip"},
        {"memory_per_chip.kv_cache", "KV cache per chip"},
        {"memory_per_chip.total", "Memory per chip"},
        {"memory_per_chip.capacity", "HBM capacity per chip"},
        {"inference.prefill_s", "Prefill"},
        {"inference.time_to_first_token_s", "Time to first token"},
        {"inference.decode_step_s", "Decode step"},
        {"inference.tokens_per_s", "Tokens per second"},
        {"inference.tokens_per_s_per_chip", "Tokens per second per chip"},
        {"inference.kv_cache_bytes_per_token", "KV cache per token"},
        {"model.params", "Parameters"},
    };
    if (const auto it = titles.find(path); it != titles.end())
        return QCoreApplication::translate("ExplainPanel", it->second);
    // collectives[3].time_s → "Collective 3: time"
    if (startsWith(path, "collectives[")) {
        const auto close = path.find(']');
        const QString index = qs(path.substr(12, close == std::string::npos ? 0 : close - 12));
        const std::string field = close == std::string::npos ? "" : path.substr(std::min(path.size(), close + 2));
        const QString what = field == "exposed_s" ? QCoreApplication::translate("ExplainPanel", "exposed time")
                                                  : field == "time_s" ? QCoreApplication::translate("ExplainPanel", "time")
                                                                      : humanize(field).toLower();
        return QCoreApplication::translate("ExplainPanel", "Collective %1: %2").arg(index, what);
    }
    if (startsWith(path, "terms.operation_")) {
        // terms.operation_4_time_s: the roofline's fifth operation point.
        const std::string rest = path.substr(16);
        const auto cut = rest.find('_');
        return QCoreApplication::translate("ExplainPanel", "Operation %1: %2")
            .arg(qs(rest.substr(0, cut)), humanize(cut == std::string::npos ? "" : rest.substr(cut + 1)).toLower());
    }
    const auto dot = path.rfind('.');
    return humanize(dot == std::string::npos ? path : path.substr(dot + 1));
}

FormattedValue formatPathValue(const std::string &path, double value)
{
    if (path == "mfu" || (path.size() > 4 && path.compare(path.size() - 4, 4, "_mfu") == 0)
        || (path.size() > 4 && path.compare(path.size() - 4, 4, ".mfu") == 0)) {
        FormattedValue f;
        f.mantissa = QString::number(100.0 * value, 'g', 3);
        f.unit = QStringLiteral("%");
        return f;
    }
    // The unit rule reads a whole path: memory_per_chip.total is bytes, step.time_s seconds.
    return formatNamedValue(path, value);
}

ExplainPanel::ExplainPanel(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("explainPanel"));
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);

    auto *bar = new QWidget(this);
    auto *barLayout = new QHBoxLayout(bar);
    barLayout->setContentsMargins(6, 4, 6, 2);
    m_back = new QToolButton(bar);
    m_back->setObjectName(QStringLiteral("explainBack"));
    m_back->setText(tr("◀ Back"));
    m_back->setToolTip(tr("Back to the number this one feeds (Alt+Left)"));
    m_back->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_back->setAutoRaise(true);
    connect(m_back, &QToolButton::clicked, this, &ExplainPanel::back);
    m_trail = new QLabel(bar);
    m_trail->setObjectName(QStringLiteral("explainTrail"));
    m_trail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    barLayout->addWidget(m_back);
    barLayout->addWidget(m_trail, 1);
    outer->addWidget(bar);

    m_scroll = new QScrollArea(this);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // text wraps; a long formula scrolls on its own
    auto *content = new QWidget(m_scroll);
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(10, 6, 10, 10);
    layout->setSpacing(4);

    m_empty = new QLabel(content);
    m_empty->setObjectName(QStringLiteral("explainEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    layout->addWidget(m_empty);

    m_body = new QWidget(content);
    auto *body = new QVBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    body->setSpacing(4);
    const auto label = [this](const QString &name) {
        auto *l = new QLabel(m_body);
        l->setObjectName(name);
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
        return l;
    };
    const auto heading = [this](const QString &text) {
        auto *l = new QLabel(text, m_body);
        m_headings.push_back(l);
        QFont f = l->font();
        f.setBold(true);
        f.setPointSizeF(f.pointSizeF() * 0.9);
        l->setFont(f);
        l->setContentsMargins(0, 6, 0, 0);
        return l;
    };
    m_title = label(QStringLiteral("explainTitle"));
    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    m_title->setFont(titleFont);
    m_value = label(QStringLiteral("explainValue"));
    QFont valueFont = m_value->font();
    valueFont.setPointSizeF(valueFont.pointSizeF() * 1.6);
    m_value->setFont(valueFont);
    m_idealLine = label(QStringLiteral("explainIdeal"));
    m_idealLine->setTextFormat(Qt::RichText);
    m_formulaHeading = heading(tr("Formula"));
    m_formula = new FormulaView(m_body);
    m_formula->setObjectName(QStringLiteral("explainFormula"));
    m_formulaScroll = formulaScroll(m_formula, m_body);
    m_substitutedHeading = heading(tr("With this plan's numbers"));
    m_substituted = new FormulaView(m_body);
    m_substituted->setObjectName(QStringLiteral("explainSubstituted"));
    m_substitutedScroll = formulaScroll(m_substituted, m_body);
    m_words = label(QStringLiteral("explainWords"));
    m_inputsHeading = heading(tr("Inputs"));
    m_inputs = label(QStringLiteral("explainInputs"));
    m_inputs->setTextFormat(Qt::RichText);
    connect(m_inputs, &QLabel::linkActivated, this, [this](const QString &link) {
        if (link.startsWith(QStringLiteral("explain:")))
            drillInto(link.mid(8).toStdString());
    });
    m_chapter = label(QStringLiteral("explainChapter"));
    m_chapter->setTextFormat(Qt::RichText);
    m_chapter->setOpenExternalLinks(true);
    auto *book = heading(tr("In the book"));
    for (QWidget *w : std::initializer_list<QWidget *>{m_title, m_value, m_idealLine, m_formulaHeading, m_formulaScroll,
                                                       m_substitutedHeading, m_substitutedScroll, m_words, m_inputsHeading,
                                                       m_inputs, book, m_chapter})
        body->addWidget(w);
    layout->addWidget(m_body);
    layout->addStretch(1);
    m_scroll->setWidget(content);
    m_scroll->viewport()->installEventFilter(this);
    outer->addWidget(m_scroll, 1);
    render();
}

void ExplainPanel::setDerivations(const model::Derivations &achievable, const model::Derivations &ideal)
{
    m_achievable = achievable;
    m_ideal = ideal;
    m_message.clear();
    render();
}

void ExplainPanel::setPathTitles(std::map<std::string, QString> titles)
{
    m_titles = std::move(titles);
    render();
}

void ExplainPanel::setMessage(const QString &message)
{
    m_achievable.clear();
    m_ideal.clear();
    m_message = message;
    render();
}

void ExplainPanel::showPath(const std::string &path)
{
    m_history.clear();
    m_path = path;
    render();
}

void ExplainPanel::drillInto(const std::string &path)
{
    if (path.empty() || path == m_path)
        return;
    m_history.push_back(m_path);
    m_path = path;
    render();
}

void ExplainPanel::back()
{
    if (m_history.empty())
        return;
    m_path = m_history.back();
    m_history.pop_back();
    render();
}

QString ExplainPanel::titleOf(const std::string &path) const
{
    if (const auto it = m_titles.find(path); it != m_titles.end())
        return it->second;
    return explainTitle(path);
}

QColor ExplainPanel::linkColor() const
{
    // The dark palette keeps Qt's default link blue, unreadable on dark grey.
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    return dark ? QColor(0x8a, 0xc4, 0xff) : QColor(0x0b, 0x57, 0xb0);
}

void ExplainPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        render(); // link colours are written into the rich text
}

void ExplainPanel::fitFormulas()
{
    const int width = m_scroll->viewport()->width() - 20; // the content's margins
    fitFormulaScroll(m_formulaScroll, m_formula, width);
    fitFormulaScroll(m_substitutedScroll, m_substituted, width);
}

void ExplainPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitFormulas();
}

bool ExplainPanel::eventFilter(QObject *watched, QEvent *event)
{
    // The width the formulas have changes with the vertical scroll bar too, not only the panel.
    if (watched == m_scroll->viewport() && event->type() == QEvent::Resize)
        fitFormulas();
    return QWidget::eventFilter(watched, event);
}

void ExplainPanel::render()
{
    // Headings a step quieter than the text, on either palette.
    const QColor text = palette().color(QPalette::WindowText);
    const QColor window = palette().color(QPalette::Window);
    const QColor quiet = QColor::fromRgbF(0.65f * text.redF() + 0.35f * window.redF(),
                                          0.65f * text.greenF() + 0.35f * window.greenF(),
                                          0.65f * text.blueF() + 0.35f * window.blueF());
    for (QLabel *heading : m_headings) {
        QPalette p = heading->palette();
        p.setColor(QPalette::WindowText, quiet);
        heading->setPalette(p);
    }

    m_links.clear();
    m_back->setVisible(!m_history.empty());
    QStringList trail;
    for (const auto &p : m_history)
        trail << titleOf(p);
    if (!m_path.empty())
        trail << titleOf(m_path);
    m_trail->setText(trail.size() > 1 ? trail.join(QStringLiteral(" › ")) : QString());
    m_trail->setVisible(trail.size() > 1);
    m_back->parentWidget()->setVisible(!m_history.empty()); // no empty row above a first number

    const auto it = m_achievable.find(m_path);
    if (m_path.empty() || it == m_achievable.end()) {
        m_body->hide();
        m_empty->show();
        if (!m_message.isEmpty())
            m_empty->setText(m_message);
        else if (m_path.empty())
            m_empty->setText(tr("Click a number, a memory bar, a collective or a roofline point, or press F1 on it, "
                                "to see how it is worked out: the formula, this plan's numbers in it, and where the "
                                "book explains it."));
        else
            m_empty->setText(tr("%1 has no derivation in this plan.").arg(titleOf(m_path)));
        return;
    }
    m_empty->hide();
    m_body->show();
    const model::Derivation &d = it->second;
    const QString link = linkColor().name();

    m_title->setText(titleOf(m_path));
    m_title->setToolTip(qs(m_path));
    const FormattedValue shown = formatPathValue(m_path, d.value);
    m_value->setText(shown.html());
    m_value->setTextFormat(Qt::RichText);

    // The book's ideal number beside the achievable one, and the factors that make the difference.
    const auto ideal = m_ideal.find(m_path);
    if (ideal != m_ideal.end()) {
        const double a = d.value;
        const double b = ideal->second.value;
        QString line = tr("ideal (book): <b>%1</b> · achievable: <b>%2</b>")
                           .arg(formatPathValue(m_path, b).html(), shown.html());
        QStringList differ;
        // The factors first (values of their own, such as an efficiency), then the derived inputs
        // that differ because of them.
        std::vector<model::DerivationValue> ordered = d.values;
        std::stable_partition(ordered.begin(), ordered.end(), [](const auto &v) { return v.from.empty(); });
        for (const auto &v : ordered) {
            const model::DerivationValue *other = ideal->second.find(v.name);
            const double scale = std::max(std::fabs(v.value), other ? std::fabs(other->value) : 0.0);
            if (!other) {
                differ << tr("%1 (achievable only: %2)").arg(symbolHtml(v.name), formatNamedValue(v.name, v.value).html());
            } else if (std::fabs(other->value - v.value) > 1e-9 * scale) {
                differ << tr("%1: %2 → %3")
                              .arg(symbolHtml(v.name), formatNamedValue(v.name, other->value).html(),
                                   formatNamedValue(v.name, v.value).html());
            }
        }
        for (const auto &v : ideal->second.values)
            if (!d.find(v.name))
                differ << tr("%1 (ideal only: %2)").arg(symbolHtml(v.name), formatNamedValue(v.name, v.value).html());
        if (std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)))
            line = tr("ideal (book) and achievable agree: <b>%1</b>").arg(shown.html());
        else if (!differ.isEmpty())
            line += QStringLiteral("<br>") + tr("differs in %1").arg(differ.join(QStringLiteral("; ")));
        m_idealLine->setText(line);
        m_idealLine->show();
    } else {
        m_idealLine->hide();
    }

    // The formula, then the same with this plan's numbers and the result.
    std::map<std::string, double> values;
    for (const auto &v : d.values)
        values[v.name] = v.value;
    const auto parsed = model::Expression::parse(d.expression);
    QFont formulaFont = font();
    formulaFont.setPointSizeF(formulaFont.pointSizeF() * 1.25);
    if (parsed) {
        m_formula->setFormula(*parsed, formulaFont);
        m_substituted->setFormula(*parsed, formulaFont, values, QStringLiteral(" = ") + shown.plain());
    } else {
        // Not the contract's grammar: shown as written rather than not at all.
        m_formula->clearFormula();
        m_substituted->clearFormula();
    }
    m_formulaHeading->setText(parsed ? tr("Formula") : tr("Formula: %1").arg(qs(d.expression)));
    fitFormulas();
    m_formula->setToolTip(qs(d.expression));
    m_substitutedHeading->setVisible(parsed.hasValue());
    m_formulaScroll->setVisible(parsed.hasValue());
    m_substitutedScroll->setVisible(parsed.hasValue());

    m_words->setText(qs(d.words));
    m_words->setVisible(!d.words.empty());

    QString rows = QStringLiteral("<table cellspacing='0' cellpadding='2'>");
    for (const auto &v : d.values) {
        QString where;
        if (!v.from.empty()) {
            where = QStringLiteral("<a href='explain:%1' style='color:%2'>%3</a>")
                        .arg(qs(v.from).toHtmlEscaped(), link, titleOf(v.from).toHtmlEscaped());
            if (!v.source.empty())
                where += QStringLiteral(" · ") + qs(v.source).toHtmlEscaped();
            m_links.push_back(v.from);
        } else {
            where = qs(v.source).toHtmlEscaped();
        }
        rows += QStringLiteral("<tr><td style='white-space:nowrap'>%1</td><td>&nbsp;=&nbsp;</td>"
                                   "<td style='white-space:nowrap'><b>%2</b></td><td>&nbsp;&nbsp;%3</td></tr>")
                    .arg(symbolHtml(v.name), formatNamedValue(v.name, v.value).html(), where);
    }
    rows += QStringLiteral("</table>");
    m_inputs->setText(rows);
    m_inputsHeading->setVisible(!d.values.empty());
    m_inputs->setVisible(!d.values.empty());

    const QString url = qs(model::bookChapterUrl(d.chapter));
    const QString chapterTitle = qs(model::bookChapterTitle(d.chapter));
    QString chapter = chapterTitle.isEmpty() ? tr("Chapter %1").arg(qs(d.chapter))
                                             : tr("Chapter %1, “%2”").arg(qs(d.chapter), chapterTitle.toHtmlEscaped());
    if (!d.section.empty())
        chapter += QStringLiteral(" — ") + tr("section “%1”").arg(qs(d.section).toHtmlEscaped());
    if (!url.isEmpty())
        chapter += QStringLiteral("<br><a href='%1' style='color:%2'>%1</a>").arg(url.toHtmlEscaped(), link);
    m_chapter->setText(chapter);
}

QString ExplainPanel::titleText() const
{
    return m_body->isHidden() ? QString() : m_title->text();
}

QString ExplainPanel::valueText() const
{
    if (m_body->isHidden())
        return {};
    return formatPathValue(m_path, m_achievable.at(m_path).value).plain();
}

QString ExplainPanel::formulaText() const
{
    return m_body->isHidden() || !m_formula->formula() ? QString() : m_formula->formula()->plainText();
}

QString ExplainPanel::substitutedText() const
{
    return m_body->isHidden() || !m_substituted->formula() ? QString() : m_substituted->formula()->plainText();
}

QString ExplainPanel::idealText() const
{
    if (m_body->isHidden() || m_idealLine->isHidden())
        return {};
    return QTextDocumentFragment::fromHtml(m_idealLine->text()).toPlainText();
}

QString ExplainPanel::wordsText() const
{
    return m_body->isHidden() ? QString() : m_words->text();
}

QString ExplainPanel::chapterText() const
{
    return m_body->isHidden() ? QString() : QTextDocumentFragment::fromHtml(m_chapter->text()).toPlainText();
}

QString ExplainPanel::inputsText() const
{
    return m_body->isHidden() ? QString() : QTextDocumentFragment::fromHtml(m_inputs->text()).toPlainText();
}

std::vector<std::string> ExplainPanel::inputLinks() const
{
    return m_body->isHidden() ? std::vector<std::string>() : m_links;
}

bool ExplainPanel::isEmptyState() const
{
    return m_body->isHidden();
}

} // namespace meshplan::views
