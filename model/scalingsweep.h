#pragma once
// How a training plan scales: MFU and step time against the per-chip batch and against the
// chip count, with the crossover where communication becomes the bottleneck.

#include "expected.h"
#include "plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace meshplan::model {

struct ScalingPoint {
    double x = 0;              ///< tokens per chip (batch sweep) or chips (chip sweep)
    std::int64_t globalBatch = 0;
    std::int64_t chips = 0;
    double mfu = 0;
    double stepTimeS = 0;
    double tokensPerS = 0;
    double exposedCommunicationS = 0;
    bool fits = true;
    std::string bound;         ///< as Evaluation::bound
    bool current = false;      ///< the plan as it is
};

struct ScalingSweep {
    std::vector<ScalingPoint> points; ///< in increasing x; points that cannot be evaluated are left out
    /// Where communication starts to bind: the x at which the exposed communication of the
    /// batch roles (fsdp/data) overtakes... interpolated between the last compute-bound point and the
    /// first communication-bound one; 0 when the sweep never crosses.
    double crossoverX = 0;
    double bookCriticalX = 0;  ///< the book's critical batch for this placement (CriticalPoints), 0 if none
};

/// Varies the global batch by powers of two (1/64x to 64x the plan's, whole sequences, at least
/// one per data-parallel shard), keeping hardware and degrees. x = tokens per chip per step.
Expected<ScalingSweep> sweepPerChipBatch(const Plan &plan);

/// Varies the chip count by powers of two (1/16x to 16x: TPU slices or GPU nodes; a single
/// slice's shape is not changed), keeping the global batch and the tensor, pipeline, expert and
/// context degrees; fsdp (or data) absorbs the change. x = chips.
Expected<ScalingSweep> sweepChipCount(const Plan &plan);

} // namespace meshplan::model
