#include "formularenderer.h"

#include "base/valueunit.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meshplan::views {

namespace {

using Box = FormulaRenderer::Box;
using Node = model::ExpressionNode;

// Binding strength of what a box shows: a part needs parentheses when it binds looser than its
// place asks. A display fraction is self-delimiting except as the base of a power.
constexpr int kAdd = 1;
constexpr int kMul = 2;
constexpr int kNeg = 3;
constexpr int kPow = 4;
constexpr int kAtom = 5;

const QChar kMinus(0x2212);
const QChar kTimes(0x00D7);

QString greek(const std::string &word)
{
    static const std::pair<const char *, const char *> letters[] = {
        {"alpha", "α"}, {"beta", "β"},   {"gamma", "γ"}, {"delta", "δ"}, {"epsilon", "ε"}, {"eta", "η"},
        {"theta", "θ"}, {"lambda", "λ"}, {"mu", "μ"},    {"rho", "ρ"},   {"sigma", "σ"},   {"tau", "τ"},
        {"phi", "φ"},   {"Delta", "Δ"},  {"Sigma", "Σ"}};
    for (const auto &[name, letter] : letters)
        if (word == name)
            return QString::fromUtf8(letter);
    return {};
}

/// A name split as the book writes it: the part before the first '_' is the symbol, the rest
/// its subscript (further '_' read as spaces).
std::pair<QString, QString> splitName(std::string name)
{
    // A trailing _s says "seconds", which the values show: compute_s is written T-less as compute.
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "_s") == 0)
        name.resize(name.size() - 2);
    const auto cut = name.find('_');
    const std::string head = cut == std::string::npos || cut == 0 ? name : name.substr(0, cut);
    std::string tail = cut == std::string::npos || cut == 0 ? std::string() : name.substr(cut + 1);
    std::replace(tail.begin(), tail.end(), '_', ' ');
    const QString letter = greek(head);
    return {letter.isEmpty() ? QString::fromStdString(head) : letter, QString::fromStdString(tail)};
}

/// Plain digits where they read (up to 4 significant figures), else mantissa and power of ten.
FormattedValue plainNumber(double value)
{
    FormattedValue f;
    const double a = std::fabs(value);
    if (!std::isfinite(value)) {
        f.mantissa = QStringLiteral("n/a");
        return f;
    }
    if (a == 0 || (a >= 1e-3 && a < 1e6)) {
        // Integers exactly (4096, 131072); fractions to four figures (0.7213).
        if (value == std::floor(value))
            f.mantissa = QString::number(value, 'f', 0);
        else
            f.mantissa = QString::number(value, 'g', 4);
    } else {
        int exponent = static_cast<int>(std::floor(std::log10(a)));
        double mantissa = value / std::pow(10.0, exponent);
        // 9.996e5 rounds to 10.0 at three figures: carry into the exponent.
        if (std::fabs(std::round(mantissa * 100) / 100) >= 10) {
            mantissa /= 10;
            ++exponent;
        }
        f.mantissa = QString::number(mantissa, 'g', 3);
        f.exponent = exponent;
    }
    f.mantissa.replace(QLatin1Char('-'), kMinus);
    return f;
}

/// "1.23 ms" from formatSeconds / formatBytes: number and unit apart, µ for u.
FormattedValue splitUnit(const std::string &text)
{
    FormattedValue f;
    const auto space = text.find(' ');
    f.mantissa = QString::fromStdString(text.substr(0, space));
    f.mantissa.replace(QLatin1Char('-'), kMinus);
    if (space != std::string::npos) {
        f.unit = QString::fromStdString(text.substr(space + 1));
        if (f.unit == QStringLiteral("us"))
            f.unit = QStringLiteral("µs");
    }
    return f;
}

} // namespace

QString FormattedValue::plain() const
{
    QString s = mantissa;
    if (exponent != 0)
        s += QStringLiteral("×10^%1").arg(exponent);
    if (!unit.isEmpty())
        s += QLatin1Char(' ') + unit;
    return s;
}

QString FormattedValue::html() const
{
    QString s = mantissa.toHtmlEscaped();
    if (exponent != 0)
        s += QStringLiteral("×10<sup>%1</sup>").arg(QString::number(exponent).replace(QLatin1Char('-'), kMinus));
    if (!unit.isEmpty())
        s += QStringLiteral("&nbsp;") + unit.toHtmlEscaped();
    return s;
}

FormattedValue formatNamedValue(const std::string &name, double value)
{
    const model::ValueUnit unit = model::unitForName(name);
    if (!std::isfinite(value) || unit == model::ValueUnit::Plain)
        return plainNumber(value);
    return splitUnit(model::formatInUnit(unit, value, true));
}

QString symbolHtml(const std::string &name)
{
    const auto [head, sub] = splitName(name);
    QString html = QStringLiteral("<i>%1</i>").arg(head.toHtmlEscaped());
    if (!sub.isEmpty())
        html += QStringLiteral("<sub>%1</sub>").arg(sub.toHtmlEscaped());
    return html;
}

void FormulaRenderer::Box::place(const Box &child, qreal dx, qreal dy)
{
    for (Run run : child.runs) {
        run.at += QPointF(dx, dy);
        runs.push_back(std::move(run));
    }
    for (Stroke stroke : child.strokes) {
        stroke.path.translate(dx, dy);
        strokes.push_back(std::move(stroke));
    }
    ascent = std::max(ascent, child.ascent - dy);
    descent = std::max(descent, child.descent + dy);
}

namespace {

class Typesetter
{
public:
    Typesetter(const QFont &font, const std::map<std::string, double> *values)
        : m_font(font)
        , m_values(values)
    {
    }

    Box node(const Node &n, qreal scale, bool inScript) const
    {
        switch (n.kind) {
        case Node::Kind::Number: return value(plainNumber(n.number), scale, false);
        case Node::Kind::Name: return name(n.name, scale);
        case Node::Kind::Negate: {
            Box operand = wrap(node(*n.operands[0], scale, inScript), kNeg, false, scale);
            Box b = row({text(QString(kMinus), font(scale)), operand});
            b.plain = QString(kMinus) + operand.plain;
            b.precedence = kNeg;
            return b;
        }
        case Node::Kind::Add:
        case Node::Kind::Subtract:
        case Node::Kind::Multiply: return binary(n, scale, inScript);
        case Node::Kind::Divide: return inScript ? inlineDivide(n, scale) : fraction(n, scale);
        case Node::Kind::Power: return power(n, scale, inScript);
        case Node::Kind::Call: return call(n, scale, inScript);
        }
        return {};
    }

    QFont font(qreal scale, bool italic = false) const
    {
        QFont f(m_font);
        // Never below 7 points (or pixels): a deep exponent stays legible.
        if (m_font.pointSizeF() > 0)
            f.setPointSizeF(std::max(7.0, m_font.pointSizeF() * scale));
        else
            f.setPixelSize(std::max(9, static_cast<int>(std::lround(m_font.pixelSize() * scale))));
        f.setItalic(italic);
        return f;
    }

    Box text(const QString &s, const QFont &f, bool accent = false) const
    {
        const QFontMetricsF fm(f);
        Box b;
        b.width = fm.horizontalAdvance(s);
        // Italic overhang: the next glyph must not touch the slant. Fonts slant by different
        // amounts (and a synthesized oblique by more), so the ink itself sets the minimum.
        if (f.italic())
            b.width = std::max(b.width + fm.height() * 0.06, fm.tightBoundingRect(s).right() + fm.height() * 0.04);
        b.ascent = fm.ascent();
        b.descent = fm.descent();
        b.runs.push_back({QPointF(0, 0), s, f, accent});
        b.plain = s;
        return b;
    }

    Box space(qreal width) const
    {
        Box b;
        b.width = width;
        return b;
    }

    Box row(const std::vector<Box> &parts) const
    {
        Box r;
        for (const Box &part : parts) {
            r.place(part, r.width, 0);
            r.width += part.width;
            r.plain += part.plain;
        }
        return r;
    }

    qreal em(qreal scale) const { return QFontMetricsF(font(scale)).height() * 0.8; }
    qreal rule(qreal scale) const { return std::max(1.0, QFontMetricsF(font(scale)).lineWidth()); }

    Box name(const std::string &n, qreal scale) const
    {
        if (m_values) {
            const auto it = m_values->find(n);
            if (it != m_values->end())
                return value(formatNamedValue(n, it->second), scale, true);
        }
        const auto [head, sub] = splitName(n);
        Box b = text(head, font(scale, true));
        if (!sub.isEmpty()) {
            const qreal subScale = std::max(0.55, scale * 0.72);
            Box s = text(sub, font(subScale));
            b.place(s, b.width, QFontMetricsF(font(scale)).xHeight() * 0.45);
            b.width += s.width;
        }
        b.plain = QString::fromStdString(n);
        b.precedence = kAtom;
        return b;
    }

    Box value(const FormattedValue &v, qreal scale, bool accent) const
    {
        const QFont f = font(scale);
        std::vector<Box> parts{text(v.mantissa, f, accent)};
        if (v.exponent != 0) {
            parts.push_back(text(QString(kTimes) + QStringLiteral("10"), f, accent));
            Box e = text(QString::number(v.exponent).replace(QLatin1Char('-'), kMinus), font(std::max(0.55, scale * 0.7)),
                         accent);
            Box sup;
            sup.place(e, 0, -QFontMetricsF(f).xHeight() * 0.9);
            sup.width = e.width;
            parts.push_back(sup);
        }
        if (!v.unit.isEmpty()) {
            parts.push_back(space(em(scale) * 0.2));
            parts.push_back(text(v.unit, f, accent));
        }
        Box b = row(parts);
        b.plain = v.plain();
        const bool negative = v.mantissa.startsWith(kMinus);
        b.precedence = negative ? kNeg : (v.exponent != 0 || !v.unit.isEmpty()) ? kPow : kAtom;
        return b;
    }

    /// `b` in parentheses when it binds looser than `required`, or (`keep`) where the text had them.
    Box wrap(Box b, int required, bool keep, qreal scale) const
    {
        if (b.precedence >= required && !keep)
            return b;
        return fenced(b, QStringLiteral("("), QStringLiteral(")"), scale);
    }

    Box fenced(const Box &inner, const QString &open, const QString &close, qreal scale) const
    {
        const QFont f = font(scale);
        const QFontMetricsF fm(f);
        Box b;
        // A line of text, subscripts included, takes the font's own parentheses.
        if (inner.ascent <= fm.ascent() * 1.05 && inner.descent <= fm.descent() * 2.0) {
            b = row({text(open, f), inner, text(close, f)});
        } else {
            // Taller than a line (a fraction inside): parentheses drawn to its height.
            const qreal w = em(scale) * 0.32;
            const qreal pad = em(scale) * 0.08;
            const qreal top = -inner.ascent - rule(scale);
            const qreal bottom = inner.descent + rule(scale);
            const qreal pen = rule(scale) * 1.2;
            QPainterPath left;
            left.moveTo(w * 0.85, top);
            left.quadTo(w * 0.05, (top + bottom) / 2, w * 0.85, bottom);
            QPainterPath right;
            const qreal x = w + pad + inner.width + pad;
            right.moveTo(x + w * 0.15, top);
            right.quadTo(x + w * 0.95, (top + bottom) / 2, x + w * 0.15, bottom);
            b.place(inner, w + pad, 0);
            b.strokes.push_back({left, pen, false});
            b.strokes.push_back({right, pen, false});
            b.width = x + w;
            b.ascent = std::max(b.ascent, -top + pen);
            b.descent = std::max(b.descent, bottom + pen);
        }
        b.plain = open + inner.plain + close;
        b.precedence = kAtom;
        return b;
    }

    Box binary(const Node &n, qreal scale, bool inScript) const
    {
        const int prec = n.kind == Node::Kind::Multiply ? kMul : kAdd;
        const QString op = n.kind == Node::Kind::Add ? QStringLiteral("+")
                           : n.kind == Node::Kind::Subtract ? QString(kMinus)
                                                             : QString(kTimes);
        const Node &l = *n.operands[0];
        const Node &r = *n.operands[1];
        // Grouping the text made among equals (a + (b + c)) is kept: it shows the terms.
        const auto sameLevel = [&](const Node &child) {
            const int c = child.kind == Node::Kind::Multiply ? kMul
                          : (child.kind == Node::Kind::Add || child.kind == Node::Kind::Subtract) ? kAdd
                                                                                                  : 0;
            return child.parenthesized && c == prec;
        };
        Box left = wrap(node(l, scale, inScript), prec, sameLevel(l), scale);
        Box rightRaw = node(r, scale, inScript);
        // a − (b + c) needs them; so does any negative right operand (a × (−b)).
        int rightNeeds = n.kind == Node::Kind::Subtract ? kMul : prec;
        if (rightRaw.precedence == kNeg)
            rightNeeds = kAtom;
        Box right = wrap(rightRaw, rightNeeds, sameLevel(r), scale);
        const qreal gap = em(scale) * (inScript ? 0.12 : 0.22);
        Box b = row({left, space(gap), text(op, font(scale)), space(gap), right});
        b.plain = left.plain + QLatin1Char(' ') + op + QLatin1Char(' ') + right.plain;
        b.precedence = prec;
        return b;
    }

    Box fraction(const Node &n, qreal scale) const
    {
        const qreal partScale = std::max(0.6, scale * 0.88);
        const Box num = node(*n.operands[0], partScale, false);
        const Box den = node(*n.operands[1], partScale, false);
        const QFontMetricsF fm(font(scale));
        const qreal axis = fm.xHeight() * 0.5;
        const qreal thick = rule(scale);
        const qreal gap = std::max(1.5, fm.height() * 0.08);
        const qreal pad = em(scale) * 0.12;
        const qreal inner = std::max(num.width, den.width) + 2 * pad;
        Box b;
        const qreal numBaseline = -axis - thick / 2 - gap - num.descent;
        const qreal denBaseline = -axis + thick / 2 + gap + den.ascent;
        b.place(num, pad + (inner - 2 * pad - num.width) / 2 + pad, numBaseline);
        b.place(den, pad + (inner - 2 * pad - den.width) / 2 + pad, denBaseline);
        QPainterPath bar;
        bar.moveTo(pad, -axis);
        bar.lineTo(pad + inner, -axis);
        b.strokes.push_back({bar, thick, false});
        b.width = inner + 2 * pad;
        const auto plainPart = [](const Box &part, int needs) {
            return part.precedence >= needs ? part.plain : QStringLiteral("(") + part.plain + QStringLiteral(")");
        };
        b.plain = plainPart(num, kMul) + QStringLiteral(" / ") + plainPart(den, kPow);
        b.precedence = kPow;
        return b;
    }

    Box inlineDivide(const Node &n, qreal scale) const
    {
        Box num = wrap(node(*n.operands[0], scale, true), kMul, false, scale);
        Box den = wrap(node(*n.operands[1], scale, true), kPow, false, scale);
        Box b = row({num, text(QStringLiteral("/"), font(scale)), den});
        b.precedence = kMul;
        return b;
    }

    Box power(const Node &n, qreal scale, bool inScript) const
    {
        Box base = wrap(node(*n.operands[0], scale, inScript), kAtom, false, scale);
        const qreal supScale = std::max(0.55, scale * 0.7);
        Box sup = node(*n.operands[1], supScale, true);
        const QFontMetricsF fm(font(scale));
        const qreal shift = std::max(fm.xHeight() * 0.9, base.ascent - sup.ascent * 0.75);
        Box b = base;
        b.place(sup, base.width + em(scale) * 0.04, -shift);
        b.width = base.width + em(scale) * 0.04 + sup.width;
        b.plain = base.plain + QStringLiteral("^")
                  + (sup.precedence >= kAtom ? sup.plain : QStringLiteral("(") + sup.plain + QStringLiteral(")"));
        b.precedence = kPow;
        return b;
    }

    Box call(const Node &n, qreal scale, bool inScript) const
    {
        std::vector<Box> args;
        for (const auto &operand : n.operands)
            args.push_back(node(*operand, scale, inScript));
        if (n.name == "sqrt" && args.size() == 1)
            return radical(args[0], scale);
        if ((n.name == "ceil" || n.name == "floor") && args.size() == 1)
            return brackets(args[0], n.name == "ceil", scale);
        // min, max, log2 (and any other): an upright name, the arguments in parentheses.
        std::vector<Box> list;
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (i > 0) {
                list.push_back(text(QStringLiteral(","), font(scale)));
                list.push_back(space(em(scale) * 0.25));
            }
            list.push_back(args[i]);
        }
        Box inside = row(list);
        QStringList plains;
        for (const Box &a : args)
            plains << a.plain;
        inside.plain = plains.join(QStringLiteral(", "));
        Box head;
        if (n.name == "log2") {
            head = text(QStringLiteral("log"), font(scale));
            Box two = text(QStringLiteral("2"), font(std::max(0.55, scale * 0.72)));
            head.place(two, head.width, QFontMetricsF(font(scale)).xHeight() * 0.45);
            head.width += two.width;
            head.plain = QStringLiteral("log₂");
        } else {
            head = text(QString::fromStdString(n.name), font(scale));
        }
        Box b = row({head, space(em(scale) * 0.05), fenced(inside, QStringLiteral("("), QStringLiteral(")"), scale)});
        b.precedence = kAtom;
        return b;
    }

    Box radical(const Box &inner, qreal scale) const
    {
        const qreal thick = rule(scale);
        const qreal gap = std::max(1.5, em(scale) * 0.1);
        const qreal w = em(scale) * 0.55;
        const qreal top = -inner.ascent - gap - thick / 2;
        const qreal bottom = inner.descent;
        QPainterPath sign;
        sign.moveTo(0, (top + bottom) / 2 + em(scale) * 0.1);
        sign.lineTo(w * 0.25, (top + bottom) / 2);
        sign.lineTo(w * 0.55, bottom);
        sign.lineTo(w * 0.95, top);
        QPainterPath bar; // apart from the sign, so each stroke's ink is its own box
        bar.moveTo(w * 0.95, top);
        const qreal at = w + em(scale) * 0.1; // clear of the sign, even for an italic's overhang
        bar.lineTo(at + inner.width + em(scale) * 0.08, top);
        Box b;
        b.place(inner, at, 0);
        b.strokes.push_back({sign, thick, false});
        b.strokes.push_back({bar, thick, false});
        b.width = at + inner.width + em(scale) * 0.12;
        b.ascent = std::max(b.ascent, -top + thick);
        b.descent = std::max(b.descent, bottom + thick);
        b.plain = QStringLiteral("√(") + inner.plain + QStringLiteral(")");
        b.precedence = kAtom;
        return b;
    }

    Box brackets(const Box &inner, bool ceiling, qreal scale) const
    {
        const QFontMetricsF fm(font(scale));
        const qreal thick = rule(scale);
        const qreal w = em(scale) * 0.3;
        const qreal pad = em(scale) * 0.06;
        const qreal top = -std::max(inner.ascent, fm.ascent() * 0.85);
        const qreal bottom = std::max(inner.descent, fm.descent() * 0.85);
        const qreal x = w + pad + inner.width + pad;
        QPainterPath left;
        QPainterPath right;
        if (ceiling) {
            left.moveTo(w * 0.8, top);
            left.lineTo(w * 0.2, top);
            left.lineTo(w * 0.2, bottom);
            right.moveTo(x + w * 0.2, top);
            right.lineTo(x + w * 0.8, top);
            right.lineTo(x + w * 0.8, bottom);
        } else {
            left.moveTo(w * 0.2, top);
            left.lineTo(w * 0.2, bottom);
            left.lineTo(w * 0.8, bottom);
            right.moveTo(x + w * 0.8, top);
            right.lineTo(x + w * 0.8, bottom);
            right.lineTo(x + w * 0.2, bottom);
        }
        Box b;
        b.place(inner, w + pad, 0);
        b.strokes.push_back({left, thick, false});
        b.strokes.push_back({right, thick, false});
        b.width = x + w;
        b.ascent = std::max(b.ascent, -top + thick);
        b.descent = std::max(b.descent, bottom + thick);
        b.plain = (ceiling ? QStringLiteral("⌈") : QStringLiteral("⌊")) + inner.plain
                  + (ceiling ? QStringLiteral("⌉") : QStringLiteral("⌋"));
        b.precedence = kAtom;
        return b;
    }

    /// A sum (a + b − c …) over lines no wider than `maxWidth` where it fits, each continuation
    /// line indented and led by its operator; `trailing` after the last term.
    Box brokenSum(const Node &n, qreal maxWidth, const Box &trailing) const
    {
        const auto additive = [](const Node &x) {
            return x.kind == Node::Kind::Add || x.kind == Node::Kind::Subtract;
        };
        // (((a + b) − c) + d): the terms left to right with the operator before each.
        std::vector<std::pair<QString, const Node *>> terms;
        const Node *at = &n;
        while (additive(*at) && (at == &n || !at->parenthesized)) {
            terms.push_back({at->kind == Node::Kind::Add ? QStringLiteral("+") : QString(kMinus), at->operands[1].get()});
            at = at->operands[0].get();
        }
        terms.push_back({QString(), at});
        std::reverse(terms.begin(), terms.end());
        const qreal gap = em(1.0) * 0.22;
        std::vector<Box> lines;
        Box line;
        for (std::size_t i = 0; i < terms.size(); ++i) {
            const auto &[op, node_] = terms[i];
            Box raw = node(*node_, 1.0, false);
            Box term = raw;
            if (i > 0) {
                int needs = op == QString(kMinus) ? kMul : kAdd;
                if (raw.precedence == kNeg)
                    needs = kAtom;
                term = wrap(raw, needs, node_->parenthesized && additive(*node_), 1.0);
            }
            if (i + 1 == terms.size() && trailing.width > 0)
                term = row({term, trailing});
            if (i == 0) {
                line = term;
                continue;
            }
            const Box opBox = text(op, font(1.0));
            const Box piece = row({space(gap), opBox, space(gap), term});
            if (line.width + piece.width > maxWidth) {
                lines.push_back(line);
                line = row({opBox, space(gap), term});
            } else {
                line = row({line, piece});
            }
        }
        lines.push_back(line);
        const qreal indent = em(1.0) * 1.2;
        const qreal leading = em(1.0) * 0.3;
        Box out;
        qreal y = 0;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (i > 0)
                y += lines[i - 1].descent + leading + lines[i].ascent;
            const qreal x = i > 0 ? indent : 0;
            out.place(lines[i], x, y);
            out.width = std::max(out.width, x + lines[i].width);
        }
        out.precedence = kAdd;
        return out;
    }

private:
    QFont m_font;
    const std::map<std::string, double> *m_values;
};

} // namespace

FormulaRenderer::FormulaRenderer(const model::ExpressionNode &expression, const QFont &font,
                                 const std::map<std::string, double> *values, const QString &trailing, qreal maxWidth)
{
    const Typesetter t(font, values);
    m_box = t.node(expression, 1.0, false);
    Box tail;
    if (!trailing.isEmpty()) {
        tail = t.text(trailing, t.font(1.0));
        const QString plain = m_box.plain + trailing;
        m_box.place(tail, m_box.width, 0);
        m_box.width += tail.width;
        m_box.plain = plain;
    }
    const bool sum = expression.kind == model::ExpressionNode::Kind::Add
                     || expression.kind == model::ExpressionNode::Kind::Subtract;
    if (maxWidth > 0 && m_box.width > maxWidth && sum) {
        // Too wide for one line: the sum's terms over several, as a book sets a long sum.
        Box broken = t.brokenSum(expression, maxWidth, tail);
        broken.plain = m_box.plain;
        m_box = std::move(broken);
    }
    // A hair of room on every side, so antialiased edges are not cut off.
    const qreal margin = 1;
    Box framed;
    framed.place(m_box, margin, 0);
    framed.width = m_box.width + 2 * margin;
    framed.ascent = m_box.ascent + margin;
    framed.descent = m_box.descent + margin;
    framed.plain = m_box.plain;
    framed.precedence = m_box.precedence;
    m_box = std::move(framed);
}

std::vector<QRectF> FormulaRenderer::textInk() const
{
    std::vector<QRectF> rects;
    const QPointF origin(0, m_box.ascent);
    for (const auto &run : m_box.runs)
        rects.push_back(QFontMetricsF(run.font).tightBoundingRect(run.text).translated(origin + run.at));
    return rects;
}

std::vector<QRectF> FormulaRenderer::strokeInk() const
{
    std::vector<QRectF> rects;
    const QPointF origin(0, m_box.ascent);
    for (const auto &stroke : m_box.strokes) {
        const qreal half = stroke.width / 2;
        rects.push_back(stroke.path.boundingRect().translated(origin).adjusted(-half, -half, half, half));
    }
    return rects;
}

void FormulaRenderer::paint(QPainter *painter, QPointF topLeft, const QColor &text, const QColor &accent) const
{
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setRenderHint(QPainter::TextAntialiasing);
    const QPointF origin = topLeft + QPointF(0, m_box.ascent);
    for (const auto &run : m_box.runs) {
        painter->setFont(run.font);
        painter->setPen(run.accent ? accent : text);
        painter->drawText(origin + run.at, run.text);
    }
    painter->setBrush(Qt::NoBrush);
    for (const auto &stroke : m_box.strokes) {
        painter->setPen(QPen(stroke.accent ? accent : text, stroke.width, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin));
        painter->drawPath(stroke.path.translated(origin));
    }
    painter->restore();
}

} // namespace meshplan::views
