#pragma once
// How a number of a result came to be: a formula over named values, in the book's words.

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <string>
#include <vector>

namespace meshplan::model {

/// One named value of a derivation's formula.
struct DerivationValue {
    std::string name;   ///< as used in the expression: flops, peak_flops, efficiency, ...
    double value = 0;
    std::string from;   ///< the result path whose own derivation gives this value ("" for an input)
    std::string source; ///< where an input comes from: "plan: training.seq_len", "catalog: H100 ...",
                        ///< an achievable-efficiency factor's benchmark ("" where obvious)
};

/// plan-format.md "Derivations": `expression` over `values` evaluates to `value` (relative 1e-9),
/// and `value` is the number at the derivation's path in the result.
struct Derivation {
    std::string expression;
    std::vector<DerivationValue> values; ///< in the order a reader meets them
    double value = 0;
    std::string words;   ///< one or two sentences in the book's vocabulary, with no numbers
    std::string chapter; ///< the book's part: "1" ... "12"
    std::string section; ///< the section title within it

    const DerivationValue *find(const std::string &name) const;
};

/// Every derivation of one evaluation, keyed by result path: "step.time_s", "mfu",
/// "memory_per_chip.activations", "collectives[3].time_s", "inference.decode_step_s", and
/// "terms.<name>" for the intermediate quantities the result carries under --explain.
using Derivations = std::map<std::string, Derivation>;

/// The book's part `chapter` ("5") as its title ("How to Parallelize a Transformer for Training")
/// and its page on the public site; empty strings for a chapter the book does not have.
std::string bookChapterTitle(const std::string &chapter);
std::string bookChapterUrl(const std::string &chapter);

/// {"expression", "values", "from", "sources", "value", "words", "chapter", "section", "url"}.
nlohmann::json derivationToJson(const Derivation &derivation);
/// The "derivations" object of plan-format.md, keyed by path.
nlohmann::json derivationsToJson(const Derivations &derivations);
/// The node at a derivation's `path` in the evaluation's result ("step.time_s",
/// "collectives[3].time_s", "collectives[3]"); null for a path the result does not have or
/// cannot be read (a missing key, an index past the end, "[x]"). Never throws.
const nlohmann::json *resultAt(const nlohmann::json &result, const std::string &path);

} // namespace meshplan::model
