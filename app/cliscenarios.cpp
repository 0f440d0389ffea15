// meshplan-cli scenarios: the book's worked examples (plan/scenariocatalog.h) listed, or one
// written out as a plan file with the window's atomic writer.
#include "cli.h"
#include "plandocument.h"

#include "plan/scenariocatalog.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>

namespace meshplan::app {

using nlohmann::json;
namespace m = meshplan::model;

int runScenarios(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    constexpr int kBadInput = 2;
    bool asJson = false;
    std::string id;
    std::string target;
    const auto fail = [&](const std::string &path, const std::string &message) {
        err << "meshplan-cli: " << (path.empty() ? "" : path + ": ") << message << "\n";
        if (asJson)
            out << json{{"error", {{"path", path}, {"message", message}}}}.dump(2) << "\n";
        return kBadInput;
    };
    for (const auto &a : args)
        asJson = asJson || a == "--json";
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "--json")
            continue;
        if (a == "--help" || a == "-h") {
            out << "usage: meshplan-cli scenarios [--json]            the built-in scenarios\n"
                   "       meshplan-cli scenarios ID [--json]         one scenario's teaching note and plan\n"
                   "       meshplan-cli scenarios ID -o FILE.meshplan write its plan (atomically)\n";
            return 0;
        }
        if (a == "-o" || a == "--output") {
            if (i + 1 >= args.size())
                return fail(a, "needs a file name");
            target = args[++i];
        } else if (a.rfind("-", 0) == 0) {
            return fail(a, "is not an option of \"scenarios\" (try --help)");
        } else if (id.empty()) {
            id = a;
        } else {
            return fail("", "unexpected argument \"" + a + "\"");
        }
    }

    if (id.empty()) {
        if (!target.empty())
            return fail("-o", "needs a scenario id (see meshplan-cli scenarios)");
        if (asJson) {
            json list = json::array();
            for (const auto &s : m::builtInScenarios())
                list.push_back({{"id", s.id}, {"title", s.title}, {"chapter", s.chapter}, {"section", s.section},
                                {"note", s.note}});
            out << list.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
            return 0;
        }
        out << "Scenarios (the book's worked examples; write one with: meshplan-cli scenarios ID -o FILE.meshplan):\n";
        for (const auto &s : m::builtInScenarios()) {
            std::string shown = s.id;
            shown.resize(std::max<std::size_t>(shown.size() + 2, 30), ' ');
            std::string chapter = "ch. " + s.chapter;
            chapter.resize(8, ' ');
            out << "  " << shown << chapter << s.title << "\n";
        }
        return 0;
    }

    const m::Scenario *scenario = m::findScenario(id);
    if (!scenario)
        return fail("", "unknown scenario \"" + id + "\" (known: " + m::scenarioIdList() + ")");
    if (target.empty()) {
        // Without -o: the scenario itself, its note and its plan.
        if (asJson) {
            out << json{{"id", scenario->id}, {"title", scenario->title}, {"chapter", scenario->chapter},
                        {"section", scenario->section}, {"note", scenario->note}, {"plan", scenario->plan}}
                       .dump(2, ' ', false, json::error_handler_t::replace)
                << "\n";
        } else {
            out << scenario->title << "\n  book: ch. " << scenario->chapter << ", " << scenario->section << "\n\n"
                << scenario->note << "\n\nWrite it out with: meshplan-cli scenarios " << scenario->id
                << " -o FILE.meshplan\n";
        }
        return 0;
    }
    if (auto error = PlanDocument::writeJsonFile(QString::fromStdString(target), scenario->plan))
        return fail("-o", error->toStdString());
    if (asJson)
        out << json{{"id", scenario->id}, {"written", target}}.dump(2) << "\n";
    else
        out << "Wrote scenario " << scenario->id << " (" << scenario->title << ") to " << target << "\n";
    return 0;
}

} // namespace meshplan::app
