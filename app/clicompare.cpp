// meshplan-cli compare: two plans side by side, every summary number with its difference and
// ratio, then what changed between them.
#include "cli.h"

#include "cost/evaluation.h"
#include "explore/plancomparison.h"

#include <nlohmann/json.hpp>

#include <ostream>

namespace meshplan::app {

namespace m = meshplan::model;
using nlohmann::json;

namespace {

std::string padded(std::string text, std::size_t width)
{
    if (text.size() < width)
        text.resize(width, ' ');
    return text;
}

void printComparison(const m::PlanComparison &c, const std::string &fileA, const m::Plan &a, const std::string &fileB,
                     const m::Plan &b, std::ostream &out)
{
    const auto title = [](const m::Plan &plan) { return plan.title.empty() ? plan.model.name : plan.title; };
    out << "A (baseline):  " << fileA << ": " << title(a) << "\n";
    out << "B (candidate): " << fileB << ": " << title(b) << "\n\n";
    out << "  " << padded("", 28) << padded("A", 14) << padded("B", 14) << padded("B-A", 14) << "B/A\n";
    for (const m::NumberComparison &n : c.numbers) {
        const std::string none = "-";
        std::string line = "  " + padded(n.label, 28);
        line += padded(n.baseline ? m::formatCompared(*n.baseline, n.unit) : none, 14);
        line += padded(n.candidate ? m::formatCompared(*n.candidate, n.unit) : none, 14);
        line += padded(n.difference ? m::formatDifference(*n.difference, n.unit) : none, 14);
        line += padded(n.ratio ? m::formatRatio(*n.ratio) : none, 10);
        const int verdict = n.verdict();
        line += verdict > 0 ? "better" : verdict < 0 ? "worse" : "";
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out << line << "\n";
    }
    for (const m::PlanChange &v : c.verdicts)
        out << "  " << padded(v.path == "bound" ? "bound" : "fits", 28) << padded(m::changeValueText(v.baseline), 14)
            << m::changeValueText(v.candidate) << "\n";
    out << "\nWhat changed (A -> B):\n";
    if (c.changes.empty())
        out << "  nothing: the plans are the same\n";
    for (const m::PlanChange &change : c.changes)
        out << "  " << padded(change.path, 34) << m::changeValueText(change.baseline) << " -> "
            << m::changeValueText(change.candidate) << "\n";
}

} // namespace

int runCompare(const std::vector<std::string> &files, bool asJson, bool ideal, std::ostream &out, std::ostream &err)
{
    const auto failIn = [&](const std::string &file, const std::string &path, const std::string &message) {
        err << "meshplan-cli: " << (file.empty() ? "" : file + ": ") << (path.empty() ? "" : path + ": ") << message
            << "\n";
        if (asJson)
            out << json{{"error", {{"file", file}, {"path", path}, {"message", message}}}}.dump(
                       2, ' ', false, json::error_handler_t::replace)
                << "\n";
        return 2;
    };
    if (files.size() != 2)
        return failIn("", "", "compare takes two plan files: the baseline, then the candidate");
    const auto mode = ideal ? m::CostMode::Ideal : m::CostMode::Achievable;
    std::vector<m::Plan> plans;
    std::vector<m::Evaluation> evaluations;
    for (const std::string &file : files) {
        auto plan = loadPlan(file);
        if (!plan)
            return failIn(file, plan.error().path == file ? std::string() : plan.error().path, plan.error().message);
        auto evaluation = m::evaluate(plan.value(), mode);
        if (!evaluation)
            return failIn(file, evaluation.error().path, evaluation.error().message);
        plans.push_back(std::move(plan).value());
        evaluations.push_back(std::move(evaluation).value());
    }
    const m::PlanComparison comparison = m::comparePlans(plans[0], evaluations[0], plans[1], evaluations[1]);
    if (asJson)
        out << m::comparisonToJson(comparison, plans[0], evaluations[0], plans[1], evaluations[1])
                   .dump(2, ' ', false, json::error_handler_t::replace)
            << "\n";
    else
        printComparison(comparison, files[0], plans[0], files[1], plans[1], out);
    return 0;
}

} // namespace meshplan::app
