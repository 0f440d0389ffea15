#pragma once
// A small typesetter for a derivation's formula (issue 18): fractions, powers, subscripted
// symbols, ⌈ ⌉ ⌊ ⌋ √ and min/max, painted with QPainter; optionally with the values put in.

#include "base/expression.h"

#include <QColor>
#include <QFont>
#include <QLineF>
#include <QRectF>
#include <QPainterPath>
#include <QSizeF>
#include <QString>

#include <map>
#include <string>
#include <vector>

class QPainter;

namespace meshplan::views {

/// A value as the explain panel writes it: "1.2 ms", "35 GiB", "0.72", or mantissa × 10^exponent
/// ("1.2", 18) for counts too big or small for plain digits. `unit` follows the number.
struct FormattedValue {
    QString mantissa;
    int exponent = 0; ///< 0: no power of ten
    QString unit;     ///< "", "ms", "GiB", "%"
    /// "1.2 ms", "1.2×10^18" (plain text, for labels and tests).
    QString plain() const;
    /// The same as rich text, the exponent as <sup>.
    QString html() const;
};

/// Formats `value` in the unit its `name` (or result path) says (model::unitForName): seconds,
/// bytes (binary prefixes, as the memory chart), FLOPs and their rates; a plain number with a
/// power of ten for a name that says no unit. A guess from the name only; no unit is invented.
FormattedValue formatNamedValue(const std::string &name, double value);

/// A name as the book would write it: `t_math` → italic t with subscript "math", Greek names as
/// letters (alpha → α), a unit suffix _s left to the value (compute_s → compute). Rich text, for labels beside a typeset formula.
QString symbolHtml(const std::string &name);

class FormulaRenderer
{
public:
    /// Lays `expression` out in `font`. With `values`, each name found there is replaced by its
    /// value (formatNamedValue), drawn in the accent colour. `trailing` is set after the formula
    /// at its baseline (" = 1.23 s"). A sum wider than `maxWidth` (> 0) is broken into lines
    /// between its terms; plainText() stays one line.
    FormulaRenderer(const model::ExpressionNode &expression, const QFont &font,
                    const std::map<std::string, double> *values = nullptr, const QString &trailing = QString(),
                    qreal maxWidth = 0);

    /// The size the formula needs at scale 1, in the font's pixels.
    QSizeF size() const { return {m_box.width, m_box.ascent + m_box.descent}; }
    /// Distance from the top to the main baseline.
    qreal baseline() const { return m_box.ascent; }
    /// Paints with the top left at `topLeft`; names and operators in `text`, values in `accent`.
    void paint(QPainter *painter, QPointF topLeft, const QColor &text, const QColor &accent) const;
    /// The formula as one line of plain text ("flops / (peak × efficiency)"), as typeset.
    QString plainText() const { return m_box.plain; }
    /// The ink of each text run, and of each stroke (bars, parentheses, radicals), from the top
    /// left: what layout tests check for overlaps and for anything outside size().
    std::vector<QRectF> textInk() const;
    std::vector<QRectF> strokeInk() const;

    /// A laid-out piece: glyph runs and strokes relative to its baseline origin.
    struct Box {
        qreal width = 0;
        qreal ascent = 0;
        qreal descent = 0;
        struct Run {
            QPointF at; ///< baseline start
            QString text;
            QFont font;
            bool accent = false;
        };
        struct Stroke {
            QPainterPath path;
            qreal width = 1;
            bool accent = false;
        };
        std::vector<Run> runs;
        std::vector<Stroke> strokes;
        QString plain;
        int precedence = 5; ///< of the node it shows (for parentheses around it)

        void place(const Box &child, qreal dx, qreal dy);
    };

private:
    Box m_box;
};

} // namespace meshplan::views
