#pragma once
// Serving trade-offs over a plan: latency against throughput across batch sizes, and the cheapest
// deployment that meets a per-token latency target.

#include "base/expected.h"
#include "hardware/collective.h"
#include "plan/plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace meshplan::model {

class ChipCatalog;
struct Chip;

/// One batch size of an inference plan.
struct ServingPoint {
    std::int64_t batch = 0;
    double decodeStepS = 0;        ///< per-token latency (mean decode step)
    double timeToFirstTokenS = 0;
    double tokensPerS = 0;         ///< steady state, whole deployment
    double tokensPerSPerChip = 0;
    double costPerMillionTokens = 0;
    bool fits = true;
};

/// Evaluates `plan` (an inference plan) at each batch size; batches that do not fit are kept
/// with fits = false so a chart can show where memory ends. Batches smaller than the number of
/// decoding replicas are left out (an error only when no batch remains).
Expected<std::vector<ServingPoint>> latencyThroughputSweep(const Plan &plan, const std::vector<std::int64_t> &batches,
                                                           CostMode mode = CostMode::Achievable);

/// The TPU slice shapes of `chip` up to `maxChips` chips, growing the smallest axis first: 1x1,
/// 2x1, 2x2, 4x2, ... (and the 3D analogue); shapes the chip cannot form are left out.
std::vector<std::vector<int>> tpuSliceShapes(const Chip &chip, std::int64_t maxChips);

/// Powers of two from 1 up to `limit` (and `limit` itself): the default sweep.
std::vector<std::int64_t> batchLadder(std::int64_t limit);

/// The batches a latency-throughput chart of `plan` shows: the ladder up to twice the largest
/// batch that fits (`maxBatch`, so the chart shows where memory ends; at least 8), plus the
/// plan's own batch and `maxBatch` itself, ascending and distinct.
std::vector<std::int64_t> servingChartBatches(std::int64_t planBatch, std::int64_t maxBatch);

struct ServingChoice {
    Plan plan;          ///< the chosen deployment (hardware, tensor degree, replicas, batch)
    ServingPoint point;
    std::string description;
};

/// Searches slice sizes (TPU: the chip's 2D/3D slice shapes; GPU: 1-8 GPUs, then whole nodes) up
/// to `maxChips`, tensor parallelism inside a replica, replicas, and batch sizes, for the lowest
/// cost per million tokens whose decode step is within `latencyTargetS`. Error if none meets it.
Expected<ServingChoice> cheapestServing(const Plan &plan, double latencyTargetS, std::int64_t maxChips,
                                        CostMode mode = CostMode::Achievable);

} // namespace meshplan::model
