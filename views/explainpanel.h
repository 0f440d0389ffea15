#pragma once
// The explain panel (issue 18): one number of the result with its formula typeset, the user's
// values put in, the book's words and chapter, and links into the derivations of its inputs.

#include "base/derivation.h"
#include "base/expression.h"
#include "formularenderer.h"

#include <QWidget>

#include <map>
#include <optional>
#include <string>
#include <vector>

class QLabel;
class QToolButton;
class QScrollArea;

namespace meshplan::views {

/// A formula typeset by FormulaRenderer, shrunk (down to a limit) to fit the width it is given.
class FormulaView : public QWidget
{
    Q_OBJECT

public:
    explicit FormulaView(QWidget *parent = nullptr);
    /// Typesets `expression` (with `values` put in and `trailing` after it, as FormulaRenderer).
    void setFormula(const model::Expression &expression, const QFont &font,
                    const std::optional<std::map<std::string, double>> &values = std::nullopt,
                    const QString &trailing = QString());
    void clearFormula();
    /// Lays the formula out for `width` pixels: a long sum over several lines.
    void fitTo(int width);
    const std::optional<FormulaRenderer> &formula() const { return m_formula; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    qreal scaleFor(int width) const;
    std::optional<model::Expression> m_expression;
    QFont m_font;
    std::optional<std::map<std::string, double>> m_values;
    QString m_trailing;
    int m_fittedWidth = 0;
    std::optional<FormulaRenderer> m_formula;
};

/// The number at a result path in words: "Step time", "Parameters per chip", "Collective 3: time".
QString explainTitle(const std::string &path);
/// The number at a result path as the panel writes it: MFU in percent, else by formatNamedValue
/// of the whole path (bytes under memory_per_chip, seconds for paths ending in _s, ...).
FormattedValue formatPathValue(const std::string &path, double value);

class ExplainPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ExplainPanel(QWidget *parent = nullptr);

    /// The derivations of the plan as it now is: the achievable ones, and the book's ideal ones
    /// (empty: none shown). The path on show stays and takes the new numbers.
    void setDerivations(const model::Derivations &achievable, const model::Derivations &ideal = {});
    /// Titles for paths explainTitle cannot word well (a collective by its purpose).
    void setPathTitles(std::map<std::string, QString> titles);
    /// Nothing to explain (the plan does not evaluate): `message` instead of the number.
    void setMessage(const QString &message);

    /// Shows the number at `path` as a new selection (the Back history is cleared); "" for none.
    void showPath(const std::string &path);
    /// Shows the derivation of an input (`path`, a value's `from`); Back returns here.
    void drillInto(const std::string &path);
    void back();
    bool canGoBack() const { return !m_history.empty(); }
    const std::string &currentPath() const { return m_path; }

    // What is on show, as plain text (tests, accessibility).
    QString titleText() const;
    QString valueText() const;
    QString formulaText() const;     ///< the formula as typeset, names as written
    QString substitutedText() const; ///< the formula with the values in, " = " and the result
    QString idealText() const;       ///< "ideal (book): … · achievable: …", or empty
    QString wordsText() const;
    QString chapterText() const;
    QString inputsText() const;
    /// The paths the input links drill into, in the order shown.
    std::vector<std::string> inputLinks() const;
    /// Whether the empty state ("Click a number …") is what shows.
    bool isEmptyState() const;

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void render();
    /// Sizes the formulas' areas to the panel's width.
    void fitFormulas();
    QString titleOf(const std::string &path) const;
    QColor linkColor() const;

    model::Derivations m_achievable;
    model::Derivations m_ideal;
    std::map<std::string, QString> m_titles;
    std::string m_path;
    std::vector<std::string> m_history;
    QString m_message;
    std::vector<std::string> m_links;

    QScrollArea *m_scroll = nullptr;
    QToolButton *m_back = nullptr;
    QLabel *m_trail = nullptr;
    QLabel *m_empty = nullptr;
    QWidget *m_body = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_value = nullptr;
    QLabel *m_idealLine = nullptr;
    QLabel *m_formulaHeading = nullptr;
    FormulaView *m_formula = nullptr;
    QScrollArea *m_formulaScroll = nullptr;
    QLabel *m_substitutedHeading = nullptr;
    FormulaView *m_substituted = nullptr;
    QScrollArea *m_substitutedScroll = nullptr;
    std::vector<QLabel *> m_headings;
    QLabel *m_words = nullptr;
    QLabel *m_inputsHeading = nullptr;
    QLabel *m_inputs = nullptr;
    QLabel *m_chapter = nullptr;
};

} // namespace meshplan::views
