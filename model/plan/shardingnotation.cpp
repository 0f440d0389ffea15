#include "plan/shardingnotation.h"

#include <cctype>

namespace meshplan::model {

const ShardedDim *ShardedArray::dim(const std::string &dimName) const
{
    for (const auto &d : dims)
        if (d.name == dimName)
            return &d;
    return nullptr;
}

namespace {

std::string axisLetter(const std::string &axis)
{
    if (axis == "x" || axis == "y" || axis == "z")
        return std::string(1, static_cast<char>(std::toupper(axis[0])));
    if (axis == "gpu")
        return "G";
    if (axis == "node")
        return "N";
    if (axis == "slice")
        return "S";
    return "{" + axis + "}";
}

std::string axesToString(const std::vector<std::string> &axes)
{
    bool allLetters = true;
    for (const auto &a : axes)
        allLetters = allLetters && axisLetter(a).size() == 1;
    std::string out;
    if (allLetters) {
        for (const auto &a : axes)
            out += axisLetter(a);
        return out;
    }
    out = "{";
    for (std::size_t i = 0; i < axes.size(); ++i)
        out += (i ? "," : "") + axes[i];
    return out + "}";
}

class Parser
{
public:
    explicit Parser(std::string_view text) : m_text(text) {}

    void skipSpace()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }
    bool atEnd()
    {
        skipSpace();
        return m_pos >= m_text.size();
    }
    bool accept(std::string_view token)
    {
        skipSpace();
        if (m_text.substr(m_pos, token.size()) == token) {
            m_pos += token.size();
            return true;
        }
        return false;
    }
    std::string identifier()
    {
        skipSpace();
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() && std::isalnum(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
        return std::string(m_text.substr(start, m_pos - start));
    }
    Error fail(const std::string &what) const
    {
        return Error{"notation", what + " at column " + std::to_string(m_pos + 1) + " of \""
                                     + std::string(m_text) + "\""};
    }

    // Axes after an underscore: "XY" (one letter each) or "{gpu,node}".
    bool axes(std::vector<std::string> &out, Error &error)
    {
        if (accept("{")) {
            while (true) {
                std::string name = identifier();
                if (name.empty()) {
                    error = fail("expected an axis name");
                    return false;
                }
                for (auto &ch : name)
                    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                out.push_back(name);
                if (accept("}"))
                    return true;
                if (!accept(",")) {
                    error = fail("expected ',' or '}'");
                    return false;
                }
            }
        }
        const std::string letters = identifier();
        if (letters.empty()) {
            error = fail("expected mesh axis letters after '_'");
            return false;
        }
        for (char ch : letters) {
            switch (std::toupper(static_cast<unsigned char>(ch))) {
            case 'X':
                out.emplace_back("x");
                break;
            case 'Y':
                out.emplace_back("y");
                break;
            case 'Z':
                out.emplace_back("z");
                break;
            case 'G':
                out.emplace_back("gpu");
                break;
            case 'N':
                out.emplace_back("node");
                break;
            case 'S':
                out.emplace_back("slice");
                break;
            default:
                error = fail(std::string("unknown mesh axis letter '") + ch + "' (use X, Y, Z, G, N, S or {name})");
                return false;
            }
        }
        return true;
    }

    bool array(ShardedArray &out, Error &error)
    {
        out.name = identifier();
        if (out.name.empty()) {
            error = fail("expected an array name");
            return false;
        }
        if (!accept("[")) {
            error = fail("expected '['");
            return false;
        }
        while (true) {
            ShardedDim dim;
            skipSpace();
            const std::size_t start = m_pos;
            while (m_pos < m_text.size() && std::isalnum(static_cast<unsigned char>(m_text[m_pos])))
                ++m_pos;
            dim.name = std::string(m_text.substr(start, m_pos - start));
            if (dim.name.empty()) {
                error = fail("expected a dimension name");
                return false;
            }
            if (out.dim(dim.name)) {
                error = fail("dimension " + dim.name + " appears twice in " + out.name);
                return false;
            }
            if (m_pos < m_text.size() && m_text[m_pos] == '_') {
                ++m_pos;
                if (!axes(dim.axes, error))
                    return false;
            }
            out.dims.push_back(dim);
            if (accept("]"))
                break;
            if (!accept(",")) {
                error = fail("expected ',' or ']'");
                return false;
            }
        }
        if (accept("{")) {
            skipSpace();
            if (!accept("U_") && !accept("U")) {
                error = fail("expected {U_X}");
                return false;
            }
            accept("_");
            if (!axes(out.unreduced, error))
                return false;
            if (!accept("}")) {
                error = fail("expected '}'");
                return false;
            }
        }
        // A mesh axis is spent once per array (book ch. 3): A[I_X, J_X] is not a sharding.
        std::vector<std::string> seen;
        for (const auto &d : out.dims)
            for (const auto &a : d.axes) {
                for (const auto &s : seen)
                    if (s == a) {
                        error = Error{"notation", out.name + " uses mesh axis " + axisLetter(a)
                                                      + " on two dimensions; an axis can shard only one"};
                        return false;
                    }
                seen.push_back(a);
            }
        return true;
    }

private:
    std::string_view m_text;
    std::size_t m_pos = 0;
};

} // namespace

std::string ShardedArray::toString() const
{
    std::string out = name + "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        out += (i ? ", " : "") + dims[i].name;
        if (!dims[i].axes.empty())
            out += "_" + axesToString(dims[i].axes);
    }
    out += "]";
    if (!unreduced.empty())
        out += "{U_" + axesToString(unreduced) + "}";
    return out;
}

std::string MatmulExpression::toString() const
{
    return lhs.toString() + " . " + rhs.toString() + " -> " + out.toString();
}

Expected<ShardedArray> parseShardedArray(std::string_view text)
{
    Parser p(text);
    ShardedArray array;
    Error error;
    if (!p.array(array, error))
        return error;
    if (!p.atEnd())
        return p.fail("unexpected text");
    return array;
}

Expected<MatmulExpression> parseMatmul(std::string_view text)
{
    Parser p(text);
    MatmulExpression e;
    Error error;
    if (!p.array(e.lhs, error))
        return error;
    if (!(p.accept("\xC2\xB7") || p.accept(".") || p.accept("*") || p.accept("@")))
        return p.fail("expected the product '.' between the two arrays");
    if (p.accept("_")) {
        // The book's "*_D" names the contracted dimension; the dims themselves say the same.
        p.identifier();
    }
    if (!p.array(e.rhs, error))
        return error;
    if (!(p.accept("->") || p.accept("\xE2\x86\x92")))
        return p.fail("expected '->' before the result");
    if (!p.array(e.out, error))
        return error;
    if (!p.atEnd())
        return p.fail("unexpected text");
    return e;
}

} // namespace meshplan::model
