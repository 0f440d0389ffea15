#pragma once
// The book's worked examples as ready plans with a teaching note (resources/scenarios.json, compiled in).

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

/// One worked example of the book: a plan and what to look at, change and see in it.
struct Scenario {
    std::string id;      ///< "tensor-parallel-limit"
    std::string title;   ///< the plan's title
    std::string chapter; ///< the book's chapter, "1" to "12"
    std::string section; ///< the section inside it, in the book's words
    std::string note;    ///< what to look at, what to change, what happens (2-5 sentences)
    nlohmann::json plan; ///< a complete plan file (plan-format.md)
};

/// The built-in scenarios, in the order of the book's chapters; parsed once. Each plan loads
/// against the built-in catalogs (the tests check it).
const std::vector<Scenario> &builtInScenarios();
/// The scenario with this id, or nullptr.
const Scenario *findScenario(std::string_view id);
/// The title of one of the book's chapters ("5": "How to Parallelize a Transformer for
/// Training"), or "" for a chapter it does not have.
std::string_view bookChapterTitle(std::string_view chapter);
/// "matmul-roofline, multislice-dcn-allreduce, ..." — for error messages.
std::string scenarioIdList();

} // namespace meshplan::model
