#pragma once
// A derivation's formula: parsed from its text, evaluated over named values, walked to typeset it.

#include "base/expected.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

/// One node of a parsed formula. The grammar is the one plan-format.md allows in a derivation:
/// names, numbers, + - * / ** (right-associative), unary minus, parentheses and the calls min,
/// max, ceil, floor, sqrt, log2.
struct ExpressionNode {
    enum class Kind { Number, Name, Negate, Add, Subtract, Multiply, Divide, Power, Call };
    Kind kind = Kind::Number;
    double number = 0;     ///< Number
    std::string name;      ///< Name, or the function of a Call
    bool parenthesized = false; ///< written inside parentheses in the text (a typesetter may drop them)
    std::vector<std::shared_ptr<const ExpressionNode>> operands; ///< 1 (Negate), 2 (binary), 1+ (Call)
};

/// A parsed formula. Cheap to copy (the tree is shared and immutable).
class Expression
{
public:
    /// Parses `text`; an Error (path "expression") saying where and why it is malformed.
    static Expected<Expression> parse(std::string_view text);

    /// The value with `values` substituted; an Error for a name not in `values` or an unknown call.
    Expected<double> evaluate(const std::map<std::string, double> &values) const;

    /// The names the formula uses, each once, in order of first use.
    std::vector<std::string> names() const;

    /// The formula as one line of text with × for *, ^ for ** and parentheses only where the
    /// precedence needs them; `name` writes each name (itself, or a value substituted for it).
    std::string toText(const std::function<std::string(const std::string &)> &name) const;

    const ExpressionNode &root() const { return *m_root; }
    const std::string &text() const { return m_text; }

private:
    std::shared_ptr<const ExpressionNode> m_root;
    std::string m_text;
};

} // namespace meshplan::model
