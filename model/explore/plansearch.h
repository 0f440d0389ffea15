#pragma once
// The search over how a plan is parallelized: every role degree, placement, ZeRO stage, schedule,
// microbatch count and remat policy (serving: batch, mode, prefill chips), ranked by an objective,
// with the Pareto front (plan-format.md, "Search").

#include "base/expected.h"
#include "cost/evaluation.h"
#include "plan/plan.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace meshplan::model {

enum class SearchObjective {
    StepTime,      ///< training: the shortest step (the highest MFU)
    Cost,          ///< training: cost per step; serving: cost per million tokens
    TokensPerChip, ///< serving: tokens/s per chip within the latency target
};

std::string_view objectiveName(SearchObjective objective);   ///< "step-time", "cost", "tokens-per-chip"
Expected<SearchObjective> objectiveFromName(std::string_view name);

struct SearchOptions {
    SearchObjective objective = SearchObjective::StepTime;
    double latencyTargetS = 0;   ///< serving: per-token latency target (0: the plan's, else none)
    std::int64_t maxChips = 0;   ///< serving: the largest deployment tried (0: the plan's chips)
    int top = 10;                ///< ranked results kept
    int threads = 0;             ///< 0: every hardware thread
    CostMode mode = CostMode::Achievable;
};

/// How much of the space was looked at (plan-format.md: space.size counts every candidate
/// considered, pruned or not).
struct SearchSpace {
    std::int64_t size = 0;
    std::int64_t evaluated = 0;
    std::int64_t pruned = 0;
    std::int64_t fits = 0;
    std::int64_t doesNotFit = 0; ///< evaluated (or bounded) and over the chip's memory
    std::int64_t rejected = 0;   ///< refused by the cost model (an error, e.g. a batch it cannot split)
};

struct SearchCandidate {
    Plan plan;               ///< a complete plan; evaluate(plan) gives `evaluation`
    Evaluation evaluation;
    std::string why;         ///< one line: what makes it win (or lose) against the plan searched from
};

struct SearchOutcome {
    SearchObjective objective = SearchObjective::StepTime;
    SearchSpace space;
    double elapsedS = 0;
    bool cancelled = false;               ///< stopped early: results hold what was found so far
    std::vector<SearchCandidate> results; ///< best first, at most options.top, deterministic order
    std::vector<SearchCandidate> pareto;  ///< training: memory vs step time; serving: latency vs tokens/s per chip
};

/// Called from a search thread, now and then, with the candidates considered so far and the
/// space size (an estimate until the search ends). Must be cheap and thread-safe.
using SearchProgress = std::function<void(std::int64_t considered, std::int64_t total)>;

/// Searches the parallelizations of `plan` (its model, hardware and workload stay). Exact: pruning
/// only skips candidates a bound proves cannot enter the results or the Pareto front. The same
/// input gives the same outcome, whatever the thread count. `cancel` (may be null) stops it early.
Expected<SearchOutcome> searchPlans(const Plan &plan, const SearchOptions &options,
                                    const SearchProgress &progress = {},
                                    const std::atomic<bool> *cancel = nullptr);

/// The result document (plan-format.md, "format": "meshplan/search").
nlohmann::json searchToJson(const SearchOutcome &outcome, bool training);

} // namespace meshplan::model
