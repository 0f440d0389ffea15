#pragma once
// The plan's operations on the chip's roofline (book ch. 1): a point per operation of one layer
// (each matmul, attention, elementwise work) and per collective, with the chip's ceilings.

#include "evaluation.h"
#include "plan.h"

#include <string>
#include <vector>

namespace meshplan::model {

struct RooflinePoint {
    std::string op;       ///< "attention qkv projection", "mlp up+gate", "attention core", "fsdp weights", ...
    std::string kind;     ///< matmul, attention, elementwise, collective
    double flops = 0;     ///< per chip, per occurrence
    double bytes = 0;     ///< per chip: HBM bytes (on-chip ops) or bytes sent over the link (collectives)
    double intensity = 0; ///< flops / bytes
    double timeS = 0;     ///< per occurrence, at the plan's achievable rates
    double achievedFlopsPerS = 0; ///< flops / timeS
    std::string bound;    ///< compute, hbm, or the link name (ici, dcn, nvlink, scale-out)
    int collective = -1;  ///< index into Evaluation::collectives for collectives
    int countPerStep = 0; ///< occurrences per step (layers x microbatches x passes)
};

struct RooflineCeiling {
    std::string name;     ///< "bf16 peak", "int8 peak", "HBM", "ICI (x)", "NVLink", ...
    double value = 0;     ///< FLOPs/s for compute ceilings, bytes/s for slopes
    bool slope = false;   ///< a bandwidth slope (rate = value x intensity) rather than a flat peak
};

struct OpRoofline {
    std::vector<RooflineCeiling> ceilings;
    std::vector<RooflinePoint> points;
    double criticalIntensity = 0; ///< compute dtype peak / HBM bandwidth (the ridge point)
};

/// Every operation of one transformer layer on the busiest chip, sharded as the plan places it
/// (per-chip tokens, heads, d_ff over tensor, experts over expert), plus each collective of the
/// evaluation (its intensity: the FLOPs it overlaps per byte it sends). Points have positive,
/// finite coordinates; operations with no FLOPs or no bytes are left out.
OpRoofline opRoofline(const Plan &plan, const Evaluation &evaluation);

} // namespace meshplan::model
