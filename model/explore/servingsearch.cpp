#include "explore/servingsearch.h"

#include "base/units.h"
#include "cost/evaluation.h"
#include "plan/plantitle.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace meshplan::model {

namespace {

Expected<ServingPoint> point(const Plan &plan, CostMode mode)
{
    const auto e = evaluate(plan, mode);
    if (!e)
        return e.error();
    ServingPoint p;
    p.batch = plan.inference.batch;
    p.decodeStepS = e->inference->decodeStepS;
    p.timeToFirstTokenS = e->inference->timeToFirstTokenS;
    p.tokensPerS = e->serving.steadyTokensPerS;
    p.tokensPerSPerChip = p.tokensPerS / double(e->chips);
    p.costPerMillionTokens = e->serving.costPerMillionTokens;
    p.fits = e->memory.fits;
    return p;
}


} // namespace

std::vector<std::int64_t> batchLadder(std::int64_t limit)
{
    std::vector<std::int64_t> out;
    for (std::int64_t b = 1; b < limit; b *= 2)
        out.push_back(b);
    if (limit >= 1)
        out.push_back(limit);
    return out;
}

std::vector<std::int64_t> servingChartBatches(std::int64_t planBatch, std::int64_t maxBatch)
{
    constexpr std::int64_t kLargest = std::int64_t(1) << 20;
    const std::int64_t limit = std::min(std::max<std::int64_t>({planBatch, 2 * maxBatch, 8}), kLargest);
    std::vector<std::int64_t> out = batchLadder(limit);
    for (std::int64_t b : {planBatch, maxBatch})
        if (b >= 1 && b <= kLargest)
            out.push_back(b);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Expected<std::vector<ServingPoint>> latencyThroughputSweep(const Plan &plan, const std::vector<std::int64_t> &batches,
                                                           CostMode mode)
{
    if (plan.kind != WorkloadKind::Inference)
        return Error{"workload.kind", "a latency-throughput sweep needs an inference plan"};
    std::vector<ServingPoint> points;
    std::optional<Error> tooSmall;
    Plan copy = plan;
    for (std::int64_t b : batches) {
        if (b < 1)
            return Error{"batch", "batch sizes must be positive, got " + std::to_string(b)};
        copy.inference.batch = b;
        auto p = point(copy, mode);
        if (p) {
            points.push_back(p.value());
        } else if (p.error().path == "workload.batch") {
            // Fewer sequences than decoding replicas: this placement cannot run that batch at
            // all, which is a fact about the placement, not a failure of the sweep.
            if (!tooSmall)
                tooSmall = p.error();
        } else {
            return p.error();
        }
    }
    if (points.empty() && tooSmall)
        return *tooSmall;
    return points;
}

Expected<ServingChoice> cheapestServing(const Plan &plan, double latencyTargetS, std::int64_t maxChips, CostMode mode)
{
    if (plan.kind != WorkloadKind::Inference)
        return Error{"workload.kind", "a serving search needs an inference plan"};
    if (!(latencyTargetS > 0))
        return Error{"latency_target_s", "must be a positive number of seconds"};
    const Chip &chip = plan.topology.chip();
    std::vector<Topology> topologies;
    if (chip.isTpu()) {
        for (const auto &shape : tpuSliceShapes(chip, maxChips))
            topologies.push_back(Topology::tpuSlice(chip, shape, 1).value());
    } else {
        const int domain = chip.nvlink->domainSize;
        for (int g = 1; g <= domain && g <= maxChips; g *= 2)
            topologies.push_back(Topology::gpuCluster(chip, 1, g).value());
        if (domain & (domain - 1))
            topologies.push_back(Topology::gpuCluster(chip, 1, domain).value());
        for (int n = 2; std::int64_t(n) * domain <= maxChips && n <= 1024; n *= 2)
            topologies.push_back(Topology::gpuCluster(chip, n, domain).value());
    }

    std::optional<ServingChoice> best;
    for (const auto &topology : topologies) {
        const std::int64_t chips = topology.chipCount();
        for (std::int64_t tp = 1; tp <= chips; tp *= 2) {
            if (chips % tp != 0 || plan.model.heads % tp != 0)
                continue;
            Plan candidate = plan;
            setTopology(candidate, topology); // the printed plan must be the evaluated one
            candidate.parallelism = ParallelismSpec{};
            candidate.parallelism.degrees[static_cast<std::size_t>(Role::Tensor)] = static_cast<int>(tp);
            candidate.parallelism.degrees[static_cast<std::size_t>(Role::Data)] = static_cast<int>(chips / tp);
            candidate.inference.serving = Serving::Interleaved;
            candidate.inference.prefillChips = 0;
            candidate.inference.batch = chips / tp;
            const auto probe = evaluate(candidate, mode);
            if (!probe)
                continue;
            const std::int64_t maxBatch = static_cast<std::int64_t>(probe->serving.maxBatch);
            for (std::int64_t b : batchLadder(std::max<std::int64_t>(maxBatch, 1))) {
                if (b < chips / tp)
                    continue;
                candidate.inference.batch = b;
                const auto p = point(candidate, mode);
                if (!p || !p->fits || p->decodeStepS > latencyTargetS)
                    continue;
                if (!best || p->costPerMillionTokens < best->point.costPerMillionTokens) {
                    best = ServingChoice{candidate, p.value(), ""};
                }
            }
        }
    }
    if (!best)
        return Error{"latency_target_s", "no deployment of up to " + std::to_string(maxChips) + " " + chip.id
                                             + " chips decodes " + plan.model.name + " within " + formatSeconds(latencyTargetS)};
    if (titleFollowsPlan(plan))
        best->plan.title = generatedTitle(best->plan);
    const Plan &p = best->plan;
    best->description = std::to_string(p.topology.chipCount()) + " x " + chip.id + " (" + p.topology.describe() + "), "
                        + std::to_string(p.parallelism.degree(Role::Data)) + (p.parallelism.degree(Role::Data) == 1 ? " replica" : " replicas") + " of tensor "
                        + std::to_string(p.parallelism.degree(Role::Tensor)) + ", batch " + std::to_string(p.inference.batch)
                        + ": " + formatSeconds(best->point.decodeStepS) + " per token, "
                        + formatNumber(best->point.tokensPerS) + " tokens/s, $" + formatNumber(best->point.costPerMillionTokens)
                        + " per million tokens";
    return *best;
}

std::vector<std::vector<int>> tpuSliceShapes(const Chip &chip, std::int64_t maxChips)
{
    std::vector<std::vector<int>> shapes;
    const bool threeD = chip.ici && chip.ici->torusDims == 3;
    std::vector<int> shape = threeD ? std::vector<int>{1, 1, 1} : std::vector<int>{1, 1};
    // Grow the smallest axis first: 1x1, 2x1, 2x2, 4x2, 4x4, ... (and the 3D analogue).
    for (int step = 0; step < 40; ++step) {
        std::int64_t chips = 1;
        for (int s : shape)
            chips *= s;
        if (chips > maxChips)
            break;
        if (Topology::tpuSlice(chip, shape, 1))
            shapes.push_back(shape);
        std::size_t smallest = 0;
        for (std::size_t i = 1; i < shape.size(); ++i)
            if (shape[i] < shape[smallest])
                smallest = i;
        shape[smallest] *= 2;
    }
    return shapes;
}

} // namespace meshplan::model
