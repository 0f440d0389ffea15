#include "base/expression.h"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace meshplan::model {

namespace {

using Node = ExpressionNode;
using NodePtr = std::shared_ptr<const Node>;

bool isFunction(const std::string &name)
{
    return name == "min" || name == "max" || name == "ceil" || name == "floor" || name == "sqrt" || name == "log2";
}

// Recursive descent over the grammar:
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '-' unary | power
//   power   := atom ('**' unary)?          (right-associative, binds tighter than unary minus on its left)
//   atom    := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'
class Parser
{
public:
    explicit Parser(std::string_view text) : m_text(text) {}

    Expected<NodePtr> parse()
    {
        NodePtr root = sum();
        if (!m_error.empty())
            return fail();
        skipSpace();
        if (m_pos != m_text.size()) {
            m_error = "unexpected '" + std::string(1, m_text[m_pos]) + "'";
            return fail();
        }
        return root;
    }

private:
    Error fail() const
    {
        return Error{"expression", m_error + " at character " + std::to_string(m_pos + 1) + " of \""
                                       + std::string(m_text) + "\""};
    }

    void skipSpace()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    bool take(std::string_view token)
    {
        skipSpace();
        if (m_text.substr(m_pos, token.size()) != token)
            return false;
        // '*' must not take the first half of '**'.
        if (token == "*" && m_text.substr(m_pos, 2) == "**")
            return false;
        m_pos += token.size();
        return true;
    }

    static NodePtr binary(Node::Kind kind, NodePtr a, NodePtr b)
    {
        auto n = std::make_shared<Node>();
        n->kind = kind;
        n->operands = {std::move(a), std::move(b)};
        return n;
    }

    NodePtr sum()
    {
        NodePtr left = product();
        while (m_error.empty()) {
            if (take("+"))
                left = binary(Node::Kind::Add, left, product());
            else if (take("-"))
                left = binary(Node::Kind::Subtract, left, product());
            else
                break;
        }
        return left;
    }

    NodePtr product()
    {
        NodePtr left = unary();
        while (m_error.empty()) {
            if (take("*"))
                left = binary(Node::Kind::Multiply, left, unary());
            else if (take("/"))
                left = binary(Node::Kind::Divide, left, unary());
            else
                break;
        }
        return left;
    }

    NodePtr unary()
    {
        if (take("-")) {
            auto n = std::make_shared<Node>();
            n->kind = Node::Kind::Negate;
            n->operands = {unary()};
            return n;
        }
        NodePtr base = atom();
        if (m_error.empty() && take("**"))
            return binary(Node::Kind::Power, base, unary());
        return base;
    }

    NodePtr atom()
    {
        skipSpace();
        auto n = std::make_shared<Node>();
        if (m_pos >= m_text.size()) {
            m_error = "the formula ends early";
            return n;
        }
        const char c = m_text[m_pos];
        if (c == '(') {
            ++m_pos;
            NodePtr inner = sum();
            if (m_error.empty() && !take(")"))
                m_error = "missing ')'";
            if (!m_error.empty())
                return n;
            auto copy = std::make_shared<Node>(*inner);
            copy->parenthesized = true;
            return copy;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            const std::string rest(m_text.substr(m_pos));
            char *end = nullptr;
            n->kind = Node::Kind::Number;
            n->number = std::strtod(rest.c_str(), &end);
            if (end == rest.c_str()) {
                m_error = "a malformed number";
                return n;
            }
            m_pos += static_cast<std::size_t>(end - rest.c_str());
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            const std::size_t start = m_pos;
            while (m_pos < m_text.size()
                   && (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
                ++m_pos;
            n->name = std::string(m_text.substr(start, m_pos - start));
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == '(') {
                if (!isFunction(n->name)) {
                    m_error = "unknown function '" + n->name + "'";
                    return n;
                }
                ++m_pos;
                n->kind = Node::Kind::Call;
                do
                    n->operands.push_back(sum());
                while (m_error.empty() && take(","));
                if (m_error.empty() && !take(")"))
                    m_error = "missing ')' after the arguments of " + n->name;
                const bool unaryCall = n->name != "min" && n->name != "max";
                if (m_error.empty() && unaryCall && n->operands.size() != 1)
                    m_error = n->name + " takes one argument";
                return n;
            }
            n->kind = Node::Kind::Name;
            return n;
        }
        m_error = "unexpected '" + std::string(1, c) + "'";
        return n;
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
    std::string m_error;
};

Expected<double> evaluateNode(const Node &n, const std::map<std::string, double> &values)
{
    std::vector<double> args;
    for (const auto &operand : n.operands) {
        auto v = evaluateNode(*operand, values);
        if (!v)
            return v;
        args.push_back(*v);
    }
    switch (n.kind) {
    case Node::Kind::Number:
        return n.number;
    case Node::Kind::Name: {
        const auto it = values.find(n.name);
        if (it == values.end())
            return Error{"expression", "no value named '" + n.name + "'"};
        return it->second;
    }
    case Node::Kind::Negate:
        return -args[0];
    case Node::Kind::Add:
        return args[0] + args[1];
    case Node::Kind::Subtract:
        return args[0] - args[1];
    case Node::Kind::Multiply:
        return args[0] * args[1];
    case Node::Kind::Divide:
        return args[0] / args[1];
    case Node::Kind::Power:
        return std::pow(args[0], args[1]);
    case Node::Kind::Call:
        break;
    }
    if (n.name == "min" || n.name == "max") {
        double r = args[0];
        for (double a : args)
            r = n.name == "min" ? std::min(r, a) : std::max(r, a);
        return r;
    }
    if (n.name == "ceil")
        return std::ceil(args[0]);
    if (n.name == "floor")
        return std::floor(args[0]);
    if (n.name == "sqrt")
        return std::sqrt(args[0]);
    if (n.name == "log2")
        return std::log2(args[0]);
    return Error{"expression", "unknown function '" + n.name + "'"};
}

void collectNames(const Node &n, std::vector<std::string> &out)
{
    if (n.kind == Node::Kind::Name && std::find(out.begin(), out.end(), n.name) == out.end())
        out.push_back(n.name);
    for (const auto &operand : n.operands)
        collectNames(*operand, out);
}

// Binding strength: a child binds looser than its parent needs parentheses.
int precedence(const Node &n)
{
    switch (n.kind) {
    case Node::Kind::Add:
    case Node::Kind::Subtract:
        return 1;
    case Node::Kind::Multiply:
    case Node::Kind::Divide:
        return 2;
    case Node::Kind::Negate:
        return 3;
    case Node::Kind::Power:
        return 4;
    default:
        return 5;
    }
}

std::string numberText(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

std::string formatNode(const Node &n, const std::function<std::string(const std::string &)> &name)
{
    const auto operand = [&](std::size_t i, bool rightOfNonAssociative) {
        const Node &c = *n.operands[i];
        const bool paren = precedence(c) < precedence(n) || (rightOfNonAssociative && precedence(c) == precedence(n))
                           || (n.kind == Node::Kind::Power && i == 0 && precedence(c) <= precedence(n));
        const std::string t = formatNode(c, name);
        return paren ? "(" + t + ")" : t;
    };
    switch (n.kind) {
    case Node::Kind::Number:
        return numberText(n.number);
    case Node::Kind::Name:
        return name(n.name);
    case Node::Kind::Negate:
        return "−" + operand(0, false);
    case Node::Kind::Add:
        return operand(0, false) + " + " + operand(1, false);
    case Node::Kind::Subtract:
        return operand(0, false) + " − " + operand(1, true);
    case Node::Kind::Multiply:
        return operand(0, false) + " × " + operand(1, false);
    case Node::Kind::Divide:
        return operand(0, false) + " / " + operand(1, true);
    case Node::Kind::Power:
        return operand(0, false) + "^" + operand(1, false);
    case Node::Kind::Call: {
        std::string out = n.name + "(";
        for (std::size_t i = 0; i < n.operands.size(); ++i)
            out += (i ? ", " : "") + formatNode(*n.operands[i], name);
        return out + ")";
    }
    }
    return "";
}

} // namespace

std::string Expression::toText(const std::function<std::string(const std::string &)> &name) const
{
    return formatNode(*m_root, name);
}

Expected<Expression> Expression::parse(std::string_view text)
{
    Parser parser(text);
    auto root = parser.parse();
    if (!root)
        return root.error();
    Expression e;
    e.m_root = std::move(root.value());
    e.m_text = std::string(text);
    return e;
}

Expected<double> Expression::evaluate(const std::map<std::string, double> &values) const
{
    return evaluateNode(*m_root, values);
}

std::vector<std::string> Expression::names() const
{
    std::vector<std::string> out;
    collectNames(*m_root, out);
    return out;
}

} // namespace meshplan::model
