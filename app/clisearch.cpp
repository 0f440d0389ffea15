// meshplan-cli search: the best parallelizations of a plan's model on its cluster (plansearch.h),
// as a ranked table or the meshplan/search document, and the best plan saved as the window saves.
#include "cli.h"
#include "plandocument.h"

#include "base/units.h"
#include "explore/plansearch.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ostream>

namespace meshplan::app {

using nlohmann::json;
namespace m = meshplan::model;

namespace {

constexpr int kBadInput = 2;

/// "dp 128 · tp 8 · pp 16, zero 1, sp, interleaved-1f1b x4, 16 microbatches, remat full".
std::string layout(const m::Plan &plan)
{
    const m::ParallelismSpec &p = plan.parallelism;
    std::string out;
    const std::pair<m::Role, const char *> short_[] = {{m::Role::Data, "dp"},     {m::Role::Fsdp, "fsdp"},
                                                       {m::Role::Tensor, "tp"},   {m::Role::Pipeline, "pp"},
                                                       {m::Role::Expert, "ep"},   {m::Role::Context, "cp"}};
    for (const auto &[role, name] : short_)
        if (p.degree(role) > 1)
            out += (out.empty() ? "" : " x ") + std::string(name) + " " + std::to_string(p.degree(role));
    if (out.empty())
        out = "one chip";
    if (plan.kind == m::WorkloadKind::Inference) {
        out += ", batch " + std::to_string(plan.inference.batch);
        if (plan.inference.serving == m::Serving::Disaggregated)
            out += ", " + std::to_string(plan.inference.prefillChips) + " prefill chips";
        return out;
    }
    if (p.degree(m::Role::Data) > 1 || p.degree(m::Role::Context) > 1)
        out += ", zero " + std::to_string(p.zeroStage);
    if (p.sequenceParallel && p.degree(m::Role::Tensor) > 1)
        out += ", sp";
    if (p.degree(m::Role::Pipeline) > 1)
        out += ", " + std::string(m::scheduleName(p.schedule))
               + (p.virtualStages > 1 ? " x" + std::to_string(p.virtualStages) : std::string());
    out += ", " + std::to_string(p.microbatches) + (p.microbatches == 1 ? " microbatch" : " microbatches");
    out += ", remat " + plan.training.remat.name;
    return out;
}

/// "tensor: gpu; data: node" from the evaluation's placement.
std::string placementText(const m::Evaluation &e)
{
    std::string out;
    for (const auto &[role, axes] : e.placement) {
        std::string names;
        for (const auto &axis : axes)
            names += (names.empty() ? "" : "+") + axis;
        out += (out.empty() ? "" : "; ") + role + " " + names;
    }
    return out.empty() ? "-" : out;
}

std::string cell(std::string text, std::size_t width)
{
    if (text.size() < width)
        text.resize(width, ' ');
    return text + "  ";
}

void printTraining(const m::SearchOutcome &o, std::ostream &out)
{
    out << cell("#", 3) << cell("memory", 10) << cell("step", 9) << cell("MFU", 6) << "layout (placement)\n";
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const auto &c = o.results[i];
        const m::Evaluation &e = c.evaluation;
        out << cell(std::to_string(i + 1), 3) << cell(m::formatBytes(e.memory.total, true), 10)
            << cell(m::formatSeconds(e.step.time), 9) << cell(m::formatNumber(100.0 * e.mfu) + "%", 6) << layout(c.plan)
            << " (" << placementText(e) << ")\n"
            << "     why: " << c.why << "\n";
    }
    out << "\nPareto front, memory per chip against step time (" << o.pareto.size() << " plans):\n";
    for (const auto &c : o.pareto)
        out << "  " << cell(m::formatBytes(c.evaluation.memory.total, true), 10)
            << cell(m::formatSeconds(c.evaluation.step.time), 9) << layout(c.plan) << "\n";
}

void printServing(const m::SearchOutcome &o, std::ostream &out)
{
    const auto perChip = [](const m::Evaluation &e) { return e.serving.steadyTokensPerS / double(e.chips); };
    out << cell("#", 3) << cell("chips", 6) << cell("latency", 9) << cell("tok/s/chip", 10) << cell("$/M tok", 8)
        << "layout (placement)\n";
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const auto &c = o.results[i];
        const m::Evaluation &e = c.evaluation;
        out << cell(std::to_string(i + 1), 3) << cell(std::to_string(e.chips), 6)
            << cell(m::formatSeconds(e.inference->decodeStepS), 9) << cell(m::formatNumber(perChip(e)), 10)
            << cell(m::formatNumber(e.serving.costPerMillionTokens), 8) << layout(c.plan) << " (" << placementText(e)
            << ")\n"
            << "     why: " << c.why << "\n";
    }
    out << "\nPareto front, latency against tokens/s per chip (" << o.pareto.size() << " plans):\n";
    for (const auto &c : o.pareto)
        out << "  " << cell(m::formatSeconds(c.evaluation.inference->decodeStepS), 9)
            << cell(m::formatNumber(perChip(c.evaluation)), 10) << c.evaluation.chips
            << (c.evaluation.chips == 1 ? " chip, " : " chips, ")
            << layout(c.plan) << "\n";
}

} // namespace

int runSearch(const std::vector<std::string> &positional, const json &args, bool asJson, bool ideal, std::ostream &out,
              std::ostream &err)
{
    const auto fail = [&](const std::string &flag, const std::string &message) {
        err << "meshplan-cli: " << (flag.empty() ? "" : flag + ": ") << message << "\n";
        if (asJson)
            out << json{{"error", {{"path", flag}, {"message", message}}}}.dump(2, ' ', false, json::error_handler_t::replace)
                << "\n";
        return kBadInput;
    };
    if (positional.size() != 1)
        return fail("", "search takes one plan file");
    const std::string file = positional[0];
    const auto plan = loadPlan(file);
    if (!plan) {
        const std::string path = plan.error().path == file ? std::string() : plan.error().path;
        err << "meshplan-cli: " << file << ": " << (path.empty() ? "" : path + ": ") << plan.error().message << "\n";
        if (asJson)
            out << json{{"error", {{"file", file}, {"path", path}, {"message", plan.error().message}}}}.dump(
                       2, ' ', false, json::error_handler_t::replace)
                << "\n";
        return kBadInput;
    }
    const bool training = plan->kind == m::WorkloadKind::Training;
    m::SearchOptions options;
    options.mode = ideal ? m::CostMode::Ideal : m::CostMode::Achievable;
    options.objective = training ? m::SearchObjective::StepTime : m::SearchObjective::TokensPerChip;
    if (args.contains("objective")) {
        const auto objective = m::objectiveFromName(args["objective"].get<std::string>());
        if (!objective)
            return fail("--objective", objective.error().message);
        options.objective = objective.value();
    }
    if (args.contains("top")) {
        if (!args["top"].is_number_integer() || args["top"].get<std::int64_t>() < 1 || args["top"].get<std::int64_t>() > 10000)
            return fail("--top", "must be an integer from 1 to 10000");
        options.top = static_cast<int>(args["top"].get<std::int64_t>());
    }
    if (args.contains("max_chips")) {
        if (!args["max_chips"].is_number_integer() || args["max_chips"].get<std::int64_t>() < 1
            || args["max_chips"].get<std::int64_t>() > m::kMaxChips)
            return fail("--max-chips", "must be an integer from 1 to 10000000");
        if (training)
            return fail("--max-chips", "applies to serving plans (a training search keeps the plan's cluster)");
        options.maxChips = args["max_chips"].get<std::int64_t>();
    }
    if (args.contains("latency")) {
        const double latency = args["latency"].get<double>();
        if (!(latency > 0) || !std::isfinite(latency))
            return fail("--latency", "must be a positive number of seconds per token");
        if (training)
            return fail("--latency", "applies to serving plans (a per-token latency target)");
        options.latencyTargetS = latency;
    }
    const auto outcome = m::searchPlans(plan.value(), options);
    if (!outcome) {
        const std::string &path = outcome.error().path;
        const std::string flag = path == "objective" ? "--objective" : path == "top" ? "--top"
                                 : path == "max_chips" ? "--max-chips" : path == "latency" ? "--latency" : "";
        return fail(flag, outcome.error().message);
    }
    const m::SearchOutcome &o = outcome.value();
    if (args.contains("save_best")) {
        const std::string target = args["save_best"].get<std::string>();
        if (o.results.empty())
            return fail("--save-best", "no plan fits, so there is none to save; nothing was written to " + target);
        if (auto error = PlanDocument::writeJsonFile(QString::fromStdString(target), m::planToJson(o.results.front().plan)))
            return fail("--save-best", error->toStdString());
    }
    if (asJson) {
        out << m::searchToJson(o, training).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
        return 0;
    }
    const m::SearchSpace &s = o.space;
    const std::int64_t chips = training ? plan->topology.chipCount()
                                        : (options.maxChips > 0 ? options.maxChips : plan->topology.chipCount());
    out << "Searched " << s.size << " plans of " << plan->model.name << " on " << (training ? "" : "up to ") << chips
        << " " << plan->topology.chip().id << " by " << m::objectiveName(o.objective) << " in "
        << m::formatSeconds(o.elapsedS) << " (" << m::formatNumber(o.elapsedS > 0 ? double(s.size) / o.elapsedS : 0.0)
        << " plans/s): " << s.evaluated << " evaluated, " << s.pruned << " skipped by bounds, " << s.fits << " fit, "
        << s.doesNotFit << " do not fit" << (s.rejected ? ", " + std::to_string(s.rejected) + " refused" : std::string())
        << (o.cancelled ? " (cancelled)" : "") << "\n\n";
    if (o.results.empty())
        out << "No plan fits" << (training ? "" : " within the latency target") << ".\n";
    if (training)
        printTraining(o, out);
    else
        printServing(o, out);
    if (args.contains("save_best"))
        out << "\nSaved the best plan to " << args["save_best"].get<std::string>() << "\n";
    return 0;
}

} // namespace meshplan::app
