#pragma once
// meshplan-cli: the command-line face of the model (plan-format.md's "Primitive calculators").

#include <iosfwd>
#include <string>
#include <vector>

namespace meshplan::app {

/// Runs one meshplan-cli command line (`args` without the program name), writing results to
/// `out` and errors to `err`. Returns the process exit code: 0 on success, 2 for bad input.
int runCli(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

} // namespace meshplan::app
