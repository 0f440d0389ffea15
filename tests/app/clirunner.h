#pragma once
// meshplan-cli run in-process for tests: its exit code and what it wrote to stdout and stderr.

#include "cli.h"

#include <sstream>
#include <string>
#include <vector>

namespace meshplan::testing {

struct CliRun {
    int code;
    std::string out;
    std::string err;
};

/// `args` as the command line after the program's name: {"evaluate", "plan.meshplan", "--json"}.
inline CliRun cli(std::vector<std::string> args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = meshplan::app::runCli(args, out, err);
    return {code, out.str(), err.str()};
}

} // namespace meshplan::testing
