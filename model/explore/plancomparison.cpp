#include "explore/plancomparison.h"

#include "base/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

namespace meshplan::model {

using nlohmann::json;

namespace {

/// A number of one result, or nothing where that result has none (a serving plan's step).
using Reader = std::function<std::optional<double>(const Plan &, const Evaluation &)>;

struct NumberSpec {
    const char *path;
    const char *label;
    const char *unit;
    Better better;
    Reader read;
};

bool training(const Plan &plan)
{
    return plan.kind == WorkloadKind::Training;
}

Reader memory(double MemoryBreakdown::*field)
{
    return [field](const Plan &, const Evaluation &e) -> std::optional<double> { return e.memory.*field; };
}

Reader step(double StepTime::*field)
{
    return [field](const Plan &p, const Evaluation &e) -> std::optional<double> {
        if (!training(p))
            return std::nullopt;
        return e.step.*field;
    };
}

Reader trainingOnly(double Evaluation::*field)
{
    return [field](const Plan &p, const Evaluation &e) -> std::optional<double> {
        if (!training(p))
            return std::nullopt;
        return e.*field;
    };
}

Reader run(double TrainingRun::*field)
{
    return [field](const Plan &p, const Evaluation &e) -> std::optional<double> {
        if (!training(p) || !e.run)
            return std::nullopt;
        return (*e.run).*field;
    };
}

Reader inference(double InferenceResult::*field)
{
    return [field](const Plan &, const Evaluation &e) -> std::optional<double> {
        if (!e.inference)
            return std::nullopt;
        return (*e.inference).*field;
    };
}

Reader serving(double ServingExtras::*field, bool onlyPriced = false)
{
    return [field, onlyPriced](const Plan &, const Evaluation &e) -> std::optional<double> {
        if (!e.inference || (onlyPriced && !(e.serving.*field > 0)))
            return std::nullopt;
        return e.serving.*field;
    };
}

/// The summary numbers of the result contract (plan-format.md, "Result"), the headline first:
/// step time, MFU and cost (serving: latency, throughput and cost), then memory, then the parts.
const std::vector<NumberSpec> &numberSpecs()
{
    static const std::vector<NumberSpec> specs{
        {"chips", "chips", "chips", Better::Neither,
         [](const Plan &, const Evaluation &e) -> std::optional<double> { return double(e.chips); }},
        {"step.time_s", "step time", "s", Better::Lower, step(&StepTime::time)},
        {"mfu", "MFU", "fraction", Better::Higher, trainingOnly(&Evaluation::mfu)},
        {"tokens_per_s", "tokens/s", "tokens/s", Better::Higher, trainingOnly(&Evaluation::tokensPerS)},
        // Cost per step exists only at a price (the catalog's or hardware.price_per_hour).
        {"train.cost_per_step", "cost per step", "$", Better::Lower,
         [](const Plan &p, const Evaluation &e) -> std::optional<double> {
             if (!training(p) || !(e.costPerStep > 0))
                 return std::nullopt;
             return e.costPerStep;
         }},
        {"inference.decode_step_s", "decode step", "s", Better::Lower, inference(&InferenceResult::decodeStepS)},
        {"inference.time_to_first_token_s", "time to first token", "s", Better::Lower,
         inference(&InferenceResult::timeToFirstTokenS)},
        {"inference.tokens_per_s", "tokens/s", "tokens/s", Better::Higher, inference(&InferenceResult::tokensPerS)},
        {"inference.tokens_per_s_per_chip", "tokens/s per chip", "tokens/s", Better::Higher,
         inference(&InferenceResult::tokensPerSPerChip)},
        {"serving.cost_per_million_tokens", "cost per 1M tokens", "$", Better::Lower,
         serving(&ServingExtras::costPerMillionTokens, true)},
        {"memory_per_chip.total", "memory per chip", "bytes", Better::Lower, memory(&MemoryBreakdown::total)},
        {"memory_per_chip.capacity", "HBM per chip", "bytes", Better::Neither, memory(&MemoryBreakdown::capacity)},
        {"memory_per_chip.params", "parameters per chip", "bytes", Better::Lower, memory(&MemoryBreakdown::params)},
        {"memory_per_chip.grads", "gradients per chip", "bytes", Better::Lower, memory(&MemoryBreakdown::grads)},
        {"memory_per_chip.optimizer", "optimizer state per chip", "bytes", Better::Lower,
         memory(&MemoryBreakdown::optimizer)},
        {"memory_per_chip.activations", "activations per chip", "bytes", Better::Lower,
         memory(&MemoryBreakdown::activations)},
        {"memory_per_chip.kv_cache", "KV cache per chip", "bytes", Better::Lower, memory(&MemoryBreakdown::kvCache)},
        {"step.compute_s", "step: compute", "s", Better::Lower, step(&StepTime::compute)},
        {"step.recompute_s", "step: recompute", "s", Better::Lower, step(&StepTime::recompute)},
        {"step.communication_s", "step: communication", "s", Better::Lower, step(&StepTime::communication)},
        {"step.exposed_communication_s", "step: exposed comms", "s", Better::Lower,
         step(&StepTime::exposedCommunication)},
        {"step.bubble_s", "step: pipeline bubble", "s", Better::Lower, step(&StepTime::bubble)},
        {"step.optimizer_s", "step: optimizer update", "s", Better::Lower, step(&StepTime::optimizer)},
        {"step.overlap_interference_s", "step: compute slowed by hidden collectives", "s", Better::Lower,
         step(&StepTime::overlapInterference)},
        {"step.flops", "model FLOPs per step", "FLOPs", Better::Neither, step(&StepTime::flops)},
        {"step.tokens", "tokens per step", "tokens", Better::Neither, step(&StepTime::tokens)},
        {"train.tokens", "tokens to train", "tokens", Better::Neither, run(&TrainingRun::tokens)},
        {"train.steps", "steps to train", "steps", Better::Neither, run(&TrainingRun::steps)},
        {"train.time_s", "time to train", "s", Better::Lower, run(&TrainingRun::timeS)},
        {"train.days", "days to train", "days", Better::Lower, run(&TrainingRun::days)},
        {"train.cost", "cost to train", "$", Better::Lower,
         [](const Plan &p, const Evaluation &e) -> std::optional<double> {
             if (!training(p) || !e.run || !(e.run->cost > 0))
                 return std::nullopt;
             return e.run->cost;
         }},
        {"inference.prefill_s", "prefill", "s", Better::Lower, inference(&InferenceResult::prefillS)},
        {"inference.kv_cache_bytes_per_token", "KV cache per token", "bytes", Better::Neither,
         inference(&InferenceResult::kvCacheBytesPerToken)},
        {"serving.steady_tokens_per_s", "steady tokens/s", "tokens/s", Better::Higher,
         serving(&ServingExtras::steadyTokensPerS)},
        {"serving.max_batch", "largest batch that fits", "sequences", Better::Higher, serving(&ServingExtras::maxBatch)},
    };
    return specs;
}

/// The plan's inputs as planToJson writes them, with the model and the chip by name (an inline
/// or imported model would otherwise list every key of its config), and without what does not
/// change the cost (the title, the file's format) or is compared as evaluated (the placement).
json comparableInputs(const Plan &plan)
{
    json doc = planToJson(plan);
    for (const char *key : {"format", "version", "title"})
        doc.erase(key);
    doc["model"] = plan.modelRef.is_string() ? plan.modelRef.get<std::string>() : plan.model.name;
    if (doc.contains("hardware") && doc["hardware"].is_object())
        doc["hardware"]["chip"] = plan.chipRef.is_string() ? plan.chipRef.get<std::string>() : plan.topology.chip().name;
    if (doc.contains("parallelism") && doc["parallelism"].is_object())
        doc["parallelism"].erase("placement");
    return doc;
}

void collectChanges(const json &a, const json &b, const std::string &path, std::vector<PlanChange> &out)
{
    if (a.is_object() && b.is_object()) {
        std::set<std::string> keys;
        for (auto it = a.begin(); it != a.end(); ++it)
            keys.insert(it.key());
        for (auto it = b.begin(); it != b.end(); ++it)
            keys.insert(it.key());
        for (const std::string &key : keys) {
            const std::string sub = path.empty() ? key : path + "." + key;
            collectChanges(a.contains(key) ? a.at(key) : json(), b.contains(key) ? b.at(key) : json(), sub, out);
        }
        return;
    }
    // Lists (a topology, a remat policy's tensors) and scalars are compared whole.
    if (a != b)
        out.push_back({path, a, b});
}

/// The sections in the order a reader looks for them; keys beyond these follow, sorted.
constexpr const char *kSections[] = {"model", "hardware", "parallelism", "workload"};

} // namespace

int NumberComparison::verdict() const
{
    if (!baseline || !candidate || better == Better::Neither)
        return 0;
    const double a = *baseline;
    const double b = *candidate;
    if (std::fabs(b - a) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)))
        return 0;
    const bool lower = b < a;
    return (better == Better::Lower) == lower ? 1 : -1;
}

const NumberComparison *PlanComparison::number(const std::string &path) const
{
    for (const auto &n : numbers)
        if (n.path == path)
            return &n;
    return nullptr;
}

const PlanChange *PlanComparison::change(const std::string &path) const
{
    for (const auto &c : changes)
        if (c.path == path)
            return &c;
    return nullptr;
}

PlanComparison comparePlans(const Plan &baseline, const Evaluation &baselineEvaluation, const Plan &candidate,
                            const Evaluation &candidateEvaluation)
{
    PlanComparison out;
    for (const NumberSpec &spec : numberSpecs()) {
        NumberComparison n;
        n.baseline = spec.read(baseline, baselineEvaluation);
        n.candidate = spec.read(candidate, candidateEvaluation);
        if (!n.baseline && !n.candidate)
            continue;
        n.path = spec.path;
        n.label = spec.label;
        n.unit = spec.unit;
        n.better = spec.better;
        if (n.baseline && n.candidate) {
            n.difference = *n.candidate - *n.baseline;
            if (*n.baseline != 0)
                n.ratio = *n.candidate / *n.baseline;
        }
        out.numbers.push_back(std::move(n));
    }

    const json a = comparableInputs(baseline);
    const json b = comparableInputs(candidate);
    std::set<std::string> sections(std::begin(kSections), std::end(kSections));
    for (const char *section : kSections) {
        collectChanges(a.contains(section) ? a.at(section) : json(), b.contains(section) ? b.at(section) : json(),
                       section, out.changes);
        if (std::string(section) == "parallelism") {
            // The placement as evaluated, right after the degrees it places.
            std::set<std::string> roles;
            for (const auto &[role, axes] : baselineEvaluation.placement)
                roles.insert(role);
            for (const auto &[role, axes] : candidateEvaluation.placement)
                roles.insert(role);
            for (const std::string &role : roles) {
                const auto ia = baselineEvaluation.placement.find(role);
                const auto ib = candidateEvaluation.placement.find(role);
                const json va = ia == baselineEvaluation.placement.end() ? json() : json(ia->second);
                const json vb = ib == candidateEvaluation.placement.end() ? json() : json(ib->second);
                if (va != vb)
                    out.changes.push_back({"placement." + role, va, vb});
            }
        }
    }
    // Keys the plans carry beyond the contract's sections (kept unknown keys).
    std::set<std::string> rest;
    for (const json *doc : {&a, &b})
        for (auto it = doc->begin(); it != doc->end(); ++it)
            if (!sections.count(it.key()))
                rest.insert(it.key());
    for (const std::string &key : rest)
        collectChanges(a.contains(key) ? a.at(key) : json(), b.contains(key) ? b.at(key) : json(), key, out.changes);

    out.verdicts.push_back({"memory_per_chip.fits", baselineEvaluation.memory.fits, candidateEvaluation.memory.fits});
    out.verdicts.push_back({"bound", baselineEvaluation.bound, candidateEvaluation.bound});
    return out;
}

namespace {

/// Dollars with cents below $100 and thousands separated above: $0.42, $1,234, $3,456,789.
std::string dollars(double amount)
{
    char buffer[64];
    if (std::fabs(amount) < 100) {
        std::snprintf(buffer, sizeof buffer, "$%.2f", std::fabs(amount));
        return buffer;
    }
    std::snprintf(buffer, sizeof buffer, "%.0f", std::fabs(amount));
    std::string digits = buffer;
    for (int at = int(digits.size()) - 3; at > 0; at -= 3)
        digits.insert(std::size_t(at), ",");
    return "$" + digits;
}

} // namespace

std::string formatCompared(double value, const std::string &unit)
{
    if (!std::isfinite(value))
        return "n/a";
    if (unit == "s")
        return formatSeconds(value);
    if (unit == "bytes")
        return formatBytes(value, true);
    if (unit == "FLOPs")
        return formatFlops(value);
    if (unit == "fraction") {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.3g%%", 100.0 * value);
        return buffer;
    }
    if (unit == "$")
        return (value < 0 ? "-" : "") + dollars(value);
    // Counts read as counts: 16 chips, not "16.0".
    if ((unit == "chips" || unit == "tokens" || unit == "sequences" || unit == "steps") && value == std::floor(value)
        && std::fabs(value) < 1e7) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
        return buffer;
    }
    return formatNumber(value);
}

std::string formatDifference(double difference, const std::string &unit)
{
    if (!std::isfinite(difference))
        return "n/a";
    if (difference == 0)
        return "0";
    const std::string sign = difference > 0 ? "+" : "-";
    if (unit == "fraction") {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.3g pp", 100.0 * std::fabs(difference));
        return sign + buffer;
    }
    return sign + formatCompared(std::fabs(difference), unit);
}

std::string formatRatio(double ratio)
{
    if (!std::isfinite(ratio))
        return "n/a";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3gx", ratio);
    return buffer;
}

std::string changeValueText(const json &value)
{
    if (value.is_null())
        return "(none)";
    if (value.is_string())
        return value.get<std::string>();
    if (value.is_boolean())
        return value.get<bool>() ? "yes" : "no";
    if (value.is_array() && !value.empty()) {
        const bool numbers = std::all_of(value.begin(), value.end(), [](const json &v) { return v.is_number(); });
        const bool names = std::all_of(value.begin(), value.end(), [](const json &v) { return v.is_string(); });
        if (numbers || names) {
            std::string text;
            for (const json &v : value)
                text += (text.empty() ? "" : (numbers ? "x" : ",")) + (names ? v.get<std::string>() : v.dump());
            return text;
        }
    }
    if (value.is_object() && !value.empty()
        && std::all_of(value.begin(), value.end(), [](const json &v) { return v.is_primitive(); })) {
        // A GPU cluster's {"nodes": 2048, "gpus_per_node": 8}: "gpus_per_node 8, nodes 2048".
        std::string text;
        for (auto it = value.begin(); it != value.end(); ++it)
            text += (text.empty() ? "" : ", ") + it.key() + " " + changeValueText(it.value());
        return text;
    }
    return value.dump();
}

json comparisonToJson(const PlanComparison &comparison, const Plan &baseline, const Evaluation &baselineEvaluation,
                      const Plan &candidate, const Evaluation &candidateEvaluation)
{
    const auto orNull = [](const std::optional<double> &v) { return v && std::isfinite(*v) ? json(*v) : json(); };
    const auto betterName = [](Better b) {
        return b == Better::Lower ? "lower" : b == Better::Higher ? "higher" : "neither";
    };
    json differences = json::array();
    for (const NumberComparison &n : comparison.numbers)
        differences.push_back({{"path", n.path},
                               {"label", n.label},
                               {"unit", n.unit},
                               {"better", betterName(n.better)},
                               {"baseline", orNull(n.baseline)},
                               {"candidate", orNull(n.candidate)},
                               {"difference", orNull(n.difference)},
                               {"ratio", orNull(n.ratio)},
                               {"verdict", n.verdict()}});
    const auto changeList = [](const std::vector<PlanChange> &changes) {
        json list = json::array();
        for (const PlanChange &c : changes)
            list.push_back({{"path", c.path}, {"baseline", c.baseline}, {"candidate", c.candidate}});
        return list;
    };
    return {{"format", "meshplan/comparison"},
            {"version", 1},
            {"baseline", evaluationToJson(baselineEvaluation, training(baseline))},
            {"candidate", evaluationToJson(candidateEvaluation, training(candidate))},
            {"differences", differences},
            {"changes", changeList(comparison.changes)},
            {"verdicts", changeList(comparison.verdicts)}};
}

} // namespace meshplan::model
