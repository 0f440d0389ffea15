// meshplan-cli evaluate --explain: every number of a result as its formula, the formula with the
// plan's values, the book's words and where each value comes from (plan-format.md "Derivations").
#include "cli.h"

#include "base/derivation.h"
#include "base/expression.h"
#include "base/valueunit.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <tuple>

namespace meshplan::app {

using nlohmann::json;
namespace m = meshplan::model;

namespace {

constexpr std::size_t kColumns = 100;

/// Columns a UTF-8 string takes in a terminal (× and ← are one column, three bytes).
std::size_t columns(const std::string &text)
{
    std::size_t n = 0;
    for (const char c : text)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
            ++n;
    return n;
}

// Stands for a space that must not break a line ("1.54 ms", "t ← terms.t_s"); a space on output.
constexpr char kGlue = '\x1f';

std::string glued(std::string text)
{
    std::replace(text.begin(), text.end(), ' ', kGlue);
    return text;
}

/// `text` broken at spaces into lines of at most kColumns, the first after `indent`, the rest
/// after `hanging`. A word longer than a line stays whole rather than being cut.
std::string wrapWords(const std::string &text, const std::string &indent, const std::string &hanging)
{
    std::string out;
    std::string line = indent;
    bool lineEmpty = true;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string word = text.substr(start, end - start);
        start = end + 1;
        if (word.empty())
            continue;
        if (!lineEmpty && columns(line) + 1 + columns(word) > kColumns) {
            out += line + "\n";
            line = hanging;
            lineEmpty = true;
        }
        line += (lineEmpty ? "" : " ") + word;
        lineEmpty = false;
    }
    if (!lineEmpty)
        out += line + "\n";
    return out;
}


std::string plain(double value)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
}

/// A number formatted by the unit its name says (valueunit.h); a name that says none gets four digits.
std::string formatAs(const std::string &name, double value)
{
    const m::ValueUnit unit = m::unitForName(name);
    return unit == m::ValueUnit::Plain ? plain(value) : m::formatInUnit(unit, value);
}

/// A value of the formula: by its own name, else by the name of the result it comes from.
std::string formatValue(const m::DerivationValue &v)
{
    if (m::unitForName(v.name) == m::ValueUnit::Plain && !v.from.empty())
        return formatAs(v.from, v.value);
    return formatAs(v.name, v.value);
}

/// "collectives[12].time_s" -> 12; -1 for another path.
long collectiveIndex(const std::string &path)
{
    if (path.rfind("collectives[", 0) != 0)
        return -1;
    return std::strtol(path.c_str() + 12, nullptr, 10);
}

/// Where a path falls in the reading order of the result: its block, its key within the block.
std::tuple<int, long, int, std::string> readingOrder(const std::string &path)
{
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kBlocks{
        {"model.", {"params", "active_params", "flops_per_token", "forward_flops_per_token", "kv_cache_bytes_per_token"}},
        {"memory_per_chip.", {"params", "grads", "optimizer", "activations", "kv_cache", "total", "capacity"}},
        {"step.", {"time_s", "compute_s", "recompute_s", "communication_s", "exposed_communication_s", "bubble_s",
                   "optimizer_s", "overlap_interference_s", "flops", "tokens"}},
        {"mfu", {}},
        {"tokens_per_s", {}},
        {"inference.", {"prefill_s", "time_to_first_token_s", "decode_step_s", "tokens_per_s", "tokens_per_s_per_chip",
                        "kv_cache_bytes_per_token"}},
        {"serving.", {}},
        {"collectives[", {"time_s", "exposed_s"}},
        {"train.", {}},
    };
    if (path.rfind("terms.", 0) == 0)
        return {int(kBlocks.size()) + 1, 0, 0, path};
    for (std::size_t b = 0; b < kBlocks.size(); ++b) {
        const auto &[prefix, keys] = kBlocks[b];
        if (path.rfind(prefix, 0) != 0 || (keys.empty() && path != prefix && prefix.back() != '.'))
            continue;
        const long index = collectiveIndex(path);
        const std::string key = path.substr(path.find_last_of(".]") + 1);
        const auto at = std::find(keys.begin(), keys.end(), key);
        return {int(b), index, int(at - keys.begin()), path};
    }
    return {int(kBlocks.size()), 0, 0, path};
}

std::string explainOne(const std::string &path, const m::Derivation &d, const json &result)
{
    std::string out;
    // Header: the number, then the book's chapter and section it is reasoned in.
    std::string head = path;
    if (const long index = collectiveIndex(path); index >= 0)
        if (const json *c = m::resultAt(result, "collectives[" + std::to_string(index) + "]"); c && c->is_object())
            head += " (" + c->value("op", std::string()) + ", " + c->value("purpose", std::string()) + ")";
    head += " = " + formatAs(path, d.value);
    const std::string title = m::bookChapterTitle(d.chapter);
    std::string where = "[ch. " + (d.chapter.empty() ? std::string("?") : d.chapter)
                        + (title.empty() ? std::string() : " " + title)
                        + (d.section.empty() ? std::string() : " — " + d.section) + "]";
    if (columns(head) + 3 + columns(where) <= kColumns)
        out += head + "   " + where + "\n";
    else
        out += head + "\n" + wrapLines(where, "    ", "    ");

    const auto parsed = m::Expression::parse(d.expression);
    if (!parsed) {
        out += wrapLines(d.expression, "  ", "      ");
        out += wrapLines("! the formula does not parse: " + parsed.error().message, "  ", "    ");
    } else {
        out += wrapLines(parsed->toText([](const std::string &name) { return name; }), "  ", "      ");
        std::map<std::string, double> values;
        for (const auto &v : d.values)
            values[v.name] = v.value;
        const std::string substituted = parsed->toText([&](const std::string &name) {
            const m::DerivationValue *v = d.find(name);
            if (!v)
                return name + "?";
            // The formula's minus sign (U+2212) for a negative value too, and parentheses round it.
            std::string s = glued(formatValue(*v));
            if (v->value < 0 && !s.empty() && s[0] == '-')
                s = "(−" + s.substr(1) + ")";
            return s;
        });
        out += wrapLines("= " + substituted, "  ", "      ");
        const auto evaluated = parsed->evaluate(values);
        if (!evaluated) {
            out += wrapLines("! " + evaluated.error().message, "  ", "    ");
        } else {
            const double tolerance = std::max(1e-9 * std::fabs(d.value), 1e-12);
            if (!(std::fabs(*evaluated - d.value) <= tolerance))
                out += wrapLines("! the formula gives " + plain(*evaluated) + ", not " + plain(d.value), "  ", "    ");
        }
    }
    if (!d.words.empty())
        out += wrapLines(d.words, "  ", "  ");
    // Where the values come from: on one line when that fits, else one value a line.
    std::vector<std::string> sources;
    for (const auto &v : d.values) {
        std::string s;
        if (!v.from.empty())
            s = v.name + " ← " + v.from;
        if (!v.source.empty())
            s += (s.empty() ? v.name + ": " : ", ") + v.source;
        if (!s.empty())
            sources.push_back(s);
    }
    std::string joined;
    for (const auto &s : sources)
        joined += (joined.empty() ? "" : ";  ") + s;
    if (!sources.empty() && columns("  " + joined) <= kColumns)
        out += "  " + joined + "\n";
    else
        for (const auto &s : sources)
            out += wrapLines(s, "  ", "      ");
    return out;
}

} // namespace

void printDerivations(const model::Derivations &derivations, const nlohmann::json &result, std::ostream &out)
{
    std::vector<const std::pair<const std::string, m::Derivation> *> ordered;
    for (const auto &entry : derivations)
        ordered.push_back(&entry);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto *a, const auto *b) { return readingOrder(a->first) < readingOrder(b->first); });
    out << "\nHow each number comes to be (" << derivations.size() << " derivations):\n";
    if (derivations.empty())
        out << "  (this evaluation recorded none)\n";
    for (const auto *entry : ordered)
        out << "\n" << explainOne(entry->first, entry->second, result);
}

std::string wrapLines(const std::string &text, const std::string &indent, const std::string &hanging)
{
    const std::string words = wrapWords(text, indent, hanging);
    std::string out;
    for (const char c : words) {
        if (c == '\n')
            while (!out.empty() && out.back() == ' ')
                out.pop_back();
        out += c == kGlue ? ' ' : c;
    }
    return out;
}

} // namespace meshplan::app
