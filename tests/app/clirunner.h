#pragma once
// meshplan-cli run in-process for tests: its exit code and what it wrote to stdout and stderr.

#include "cli.h"

#include <QStringList>

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

/// `cli` of the arguments a test's data row holds as a QStringList.
inline CliRun cliRow(const QStringList &args)
{
    std::vector<std::string> list;
    for (const QString &a : args)
        list.push_back(a.toStdString());
    return cli(std::move(list));
}

} // namespace meshplan::testing
