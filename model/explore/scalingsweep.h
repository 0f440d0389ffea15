#pragma once
// How a training plan scales: MFU and step time against the per-chip batch and against the
// chip count, with the crossover where communication becomes the bottleneck.

#include "base/expected.h"
#include "plan/plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace meshplan::model {

struct ScalingPoint {
    double x = 0;              ///< tokens per chip per microbatch (batch sweep) or chips (chip sweep)
    std::int64_t globalBatch = 0;
    std::int64_t chips = 0;
    double mfu = 0;
    double stepTimeS = 0;
    double tokensPerS = 0;
    double exposedCommunicationS = 0;
    bool fits = true;
    std::string bound;         ///< as Evaluation::bound
    bool current = false;      ///< the plan as it is
    double bubbleS = 0;        ///< the pipeline bubble in the step (the chip sweep lowers microbatches)
    int microbatches = 1;      ///< as evaluated at this point
};

struct ScalingSweep {
    std::vector<ScalingPoint> points; ///< in increasing x; points that cannot be evaluated are left out
    /// Where communication starts to bind the step: the x at which the exposed communication on
    /// one link overtakes the on-chip time (compute + bubble), i.e. where Evaluation::bound turns
    /// from compute/hbm to a link (ici, dcn, nvlink, scale-out). Walking from the compute end of
    /// the sweep (the largest batch, the fewest chips), it is interpolated between the last
    /// compute/hbm-bound point and the first link-bound one: linearly in log x on the ratio of that
    /// exposed time to the on-chip time, which is 1 there. Points that do not fit in memory are
    /// skipped. 0 when the sweep never crosses. It lies past bookCriticalX (fewer tokens per
    /// chip, more chips): there communication starts to be exposed; here it outweighs compute.
    double crossoverX = 0;
    /// The book's critical batch for this placement (CriticalPoints: fsdpTokensPerChip or
    /// dataTokensPerChip, of the batch role below) in the sweep's x: tokens per chip per
    /// microbatch, or the chip count at which the fixed global batch gives that many. 0 if none.
    double bookCriticalX = 0;
    /// Why the sweep has no point one step below (above) the plan, in words (the refused plan's
    /// error, e.g. fewer sequences than batch shards); empty when that step was evaluated.
    std::string belowLimit;
    std::string aboveLimit;
};

/// Varies the global batch by powers of two (1/64x to 64x the plan's, whole sequences, at least
/// one per data-parallel shard and microbatch), keeping hardware, degrees and microbatches.
/// x = tokens per chip per microbatch (CriticalPoints::tokensPerChip: a batch shard's sequences
/// per microbatch x seq_len / context), the unit of the book's critical batch. An Error naming
/// "workload.kind" for inference plans, or the plan's own evaluation error.
Expected<ScalingSweep> sweepPerChipBatch(const Plan &plan, CostMode mode = CostMode::Achievable);

/// Varies the chip count by powers of two (1/16x to 16x: TPU slices or GPU nodes; below one
/// TPU slice, smaller slices of the same chip with the longest axis halved each time), keeping the global batch and every degree but one: the batch
/// role absorbs the change (data when it alone spans the slice or node axis, else fsdp if the
/// plan uses it, else data). Placement is automatic at the other chip counts
/// (PlanEdits::withHardware); microbatches are lowered to the sequences a replica still has.
/// x = chips; bookCriticalX uses the plan's microbatches. Errors as sweepPerChipBatch.
Expected<ScalingSweep> sweepChipCount(const Plan &plan, CostMode mode = CostMode::Achievable);

} // namespace meshplan::model
