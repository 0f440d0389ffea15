#pragma once
// Two plans side by side: every summary number of their results with the difference and the
// ratio, which way is better, and what changed between the plans (degrees, placement, ZeRO,
// microbatches, schedule, remat, batch, ...).

#include "cost/evaluation.h"
#include "plan/plan.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace meshplan::model {

/// Which way a number is better, so that a difference can be called an improvement.
enum class Better {
    Lower,   ///< times, bytes, costs
    Higher,  ///< MFU, tokens/s
    Neither, ///< sizes that describe the plan (chips, tokens per step, capacity)
};

/// One summary number of both results, named by its path in the result contract
/// (plan-format.md): "step.time_s", "memory_per_chip.total", "inference.decode_step_s".
struct NumberComparison {
    std::string path;
    std::string label; ///< "step time"
    std::string unit;  ///< "s", "bytes", "fraction", "$", "tokens/s", "FLOPs", "tokens", "chips", "steps", "days", "sequences"
    Better better = Better::Neither;
    std::optional<double> baseline;   ///< absent when that result has no such number (a serving plan has no step)
    std::optional<double> candidate;
    std::optional<double> difference; ///< candidate − baseline, when both are present
    std::optional<double> ratio;      ///< candidate / baseline, when both are present and the baseline is not 0

    /// +1 when the candidate is better, −1 when worse, 0 when equal (to 1e-12 relative), when
    /// neither way is better, or when a side is missing.
    int verdict() const;
};

/// One input that differs between the plans, or one word of their results ("bound").
struct PlanChange {
    /// A plan key ("parallelism.tensor", "workload.remat", "hardware.topology"), or
    /// "placement.ROLE" for the axes a role was placed on as evaluated (the result's placement,
    /// which the cost follows whether the plan named the axes or they were chosen for it).
    std::string path;
    nlohmann::json baseline; ///< null where that plan has no such key or role
    nlohmann::json candidate;
};

struct PlanComparison {
    std::vector<NumberComparison> numbers; ///< headline first (step time, MFU, cost), then memory, then the parts
    std::vector<PlanChange> changes;       ///< only what differs: model, hardware, parallelism, placement, workload
    /// The results' verdicts in words, both always listed: "memory_per_chip.fits" (true or
    /// false) and "bound" (compute, hbm, ici, ...).
    std::vector<PlanChange> verdicts;

    const NumberComparison *number(const std::string &path) const;
    const PlanChange *change(const std::string &path) const;
};

/// Compares `candidate` with `baseline`, each with its evaluation (evaluate(plan)). Pure: the
/// same inputs give the same comparison.
PlanComparison comparePlans(const Plan &baseline, const Evaluation &baselineEvaluation, const Plan &candidate,
                            const Evaluation &candidateEvaluation);

/// A number of `unit` (NumberComparison::unit) in words, as comparisons print it: "1.23 s",
/// "66.5 GiB", "32.1%", "$12.40", "1.05e+06".
std::string formatCompared(double value, const std::string &unit);
/// A difference with its sign: "+180 ms", "-4.00 GiB", "+3.10 pp" (a fraction's percentage points).
std::string formatDifference(double difference, const std::string &unit);
/// A ratio to three figures: "0.854x".
std::string formatRatio(double ratio);

/// A change's value in words: "8", "1f1b", "16x16x32" (a list of numbers), "x,y" (of names),
/// "gpus_per_node 8, nodes 2048" (an object of plain values), "(none)" for null.
std::string changeValueText(const nlohmann::json &value);

/// The comparison document (Meshplan's own; plan-format.md names only the command):
/// {"format": "meshplan/comparison", "version": 1, "baseline": RESULT, "candidate": RESULT,
///  "differences": [{"path", "label", "unit", "better", "baseline", "candidate", "difference",
///  "ratio"}], "changes": [{"path", "baseline", "candidate"}], "verdicts": [...]}, with null for
/// what a side lacks. The results are evaluationToJson's.
nlohmann::json comparisonToJson(const PlanComparison &comparison, const Plan &baseline,
                                const Evaluation &baselineEvaluation, const Plan &candidate,
                                const Evaluation &candidateEvaluation);

} // namespace meshplan::model
