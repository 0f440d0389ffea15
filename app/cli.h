#pragma once
// meshplan-cli: the command-line face of the model (plan-format.md's "Primitive calculators").

#include "base/derivation.h"
#include "base/expected.h"
#include "plan/plan.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace meshplan::app {

/// Runs one meshplan-cli command line (`args` without the program name), writing results to
/// `out` and errors to `err`. Returns the process exit code: 0 on success, 2 for bad input.
int runCli(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// Runs `render PLAN --chart NAME -o FILE [--size WxH]` (`args` from "render" on); needs a
/// QApplication. Same exit codes and error style as runCli.
int runRender(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// Runs `report PLAN -o FILE.pdf|FILE.html [--dark]` (`args` from "report" on); needs a
/// QApplication. Same exit codes and error style as runCli.
int runReport(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// Runs `search PLAN [--objective ...] [--latency S] [--max-chips N] [--top K] [--save-best FILE]`
/// with runCli's parsed options (`args` keyed as its option table); same exit codes and errors.
int runSearch(const std::vector<std::string> &positional, const nlohmann::json &args, bool asJson, bool ideal,
              std::ostream &out, std::ostream &err);
/// Runs `compare BASELINE CANDIDATE` once runCli has read its options (clicompare.cpp): the
/// summary numbers of both results with differences and ratios, then what changed.
int runCompare(const std::vector<std::string> &files, bool asJson, bool ideal, std::ostream &out, std::ostream &err);

/// The readable `evaluate --explain` (cliexplain.cpp): every derivation, in the order `result`
/// reads, as its formula, the formula with the plan's values, the book's words and where each
/// value comes from, in lines of at most 100 columns. A formula that does not parse or evaluate
/// is printed with its error.
void printDerivations(const model::Derivations &derivations, const nlohmann::json &result, std::ostream &out);

/// `text` broken at spaces into lines of at most 100 columns, the first after `indent`, the rest
/// after `hanging`, each ending in a newline (cliexplain.cpp).
std::string wrapLines(const std::string &text, const std::string &indent, const std::string &hanging);

/// Runs `scenarios [--json]` (the built-in scenarios) or `scenarios ID [-o FILE.meshplan] [--json]`
/// (`args` from "scenarios" on; cliscenarios.cpp). Same exit codes and error style as runCli.
int runScenarios(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// Reads and parses a plan file; the error's path is the JSON path ("" for a file problem).
model::Expected<model::Plan> loadPlan(const std::string &file);

} // namespace meshplan::app
