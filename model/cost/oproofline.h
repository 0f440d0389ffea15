#pragma once
// The plan's operations on the chip's roofline (book ch. 1): a point per operation of one layer
// (each matmul, attention, elementwise work) and per collective, with the chip's ceilings.

#include "cost/evaluation.h"
#include "plan/plan.h"

#include <string>
#include <vector>

namespace meshplan::model {

struct RooflinePoint {
    /// Unique within an OpRoofline: "attention qkv projection", "mlp up+gate", "attention core",
    /// "decode: mlp down", "prefill: attention core", ...; a collective's purpose ("fsdp weights"),
    /// followed by its op when two collectives share the purpose ("tensor activations (sequence
    /// parallel) all-gather" and "... reduce-scatter").
    std::string op;
    std::string kind;     ///< matmul, attention, elementwise, collective
    double flops = 0;     ///< per chip, per occurrence (collectives: the compute it runs beside)
    double bytes = 0;     ///< per chip: HBM bytes (on-chip ops) or bytes sent over the link (collectives)
    /// On-chip ops: flops / bytes. Collectives: the effective intensity flops / effectiveBytes,
    /// placed against their link's drawn slope (see opRoofline).
    double intensity = 0;
    /// Per occurrence, at the rates of the evaluation (achievable by default). Collectives: the
    /// compute window and the collective together, as the step cost counts them (see opRoofline).
    double timeS = 0;
    double achievedFlopsPerS = 0; ///< flops / timeS
    /// On-chip ops: "compute" when FLOPs take longer than bytes at the rates of the evaluation
    /// (flops / achievable peak > bytes / achievable HBM bandwidth), else "hbm": the side of the
    /// ridge those rates put, which is not criticalIntensity's (the datasheet's) when the FLOPs
    /// fraction and the HBM efficiency differ. Collectives: the link name (ici, dcn, nvlink, scale-out) when the step cost exposes
    /// any of it (CollectiveUse::exposedS > 0), else "compute" (hidden behind the compute).
    std::string bound;
    int collective = -1;  ///< index into Evaluation::collectives for collectives
    int countPerStep = 0; ///< occurrences per step (layers x microbatches x passes)
    // Collectives only, per occurrence:
    double commS = 0;     ///< the collective's own time (CollectiveUse::timeS / count)
    double overlapS = 0;  ///< the compute window it runs beside (CollectiveUse::overlapS)
    double exposedS = 0;  ///< the part the step pays on top of compute (CollectiveUse::exposedS / count)
    std::string collectiveOp; ///< "all-gather", "reduce-scatter", "all-reduce", "all-to-all", ...
    std::vector<std::string> axes; ///< the mesh axes it runs over
    std::string link;         ///< ici, dcn, nvlink, scale-out
    std::string linkCeiling;  ///< the slope drawn for its link ("ICI (per axis)", "DCN (per chip)", ...)
    double linkBandwidth = 0; ///< that slope's bytes/s, W
    double effectiveBytes = 0; ///< W x the time the link holds it: flops / effectiveBytes = intensity
};

struct RooflineCeiling {
    std::string name;     ///< "bf16 peak", "int8 peak", "HBM", "ICI (per axis)", "DCN (per chip)",
                          ///< "NVLink (per GPU)", "scale-out (per GPU)"
    double value = 0;     ///< FLOPs/s for compute ceilings, bytes/s for slopes
    bool slope = false;   ///< a bandwidth slope (rate = value x intensity) rather than a flat peak
};

struct OpRoofline {
    /// The chip's datasheet: each dtype's listed peak, the HBM slope, and one slope per link kind
    /// of the topology: ICI per axis (both directions, the book's W_ici), DCN per chip, NVLink per
    /// GPU, scale-out per GPU (the node's egress over its GPUs).
    std::vector<RooflineCeiling> ceilings;
    std::vector<RooflinePoint> points;
    double criticalIntensity = 0; ///< compute dtype peak / HBM bandwidth (datasheet: the ridge point)
    std::string computeDtype;     ///< the plan's compute dtype ("bf16"): its peak is the roof
    double computePeak = 0;       ///< Chip::peakFlops of it (a listed peak, or the wider format's)
};

/// Every operation of one transformer layer on the busiest chip, sharded as the plan places it
/// (per-chip tokens, heads, d_ff over tensor, experts over expert), plus each collective of the
/// evaluation. Points have positive, finite coordinates; operations with no FLOPs or no bytes
/// are left out.
///
/// On-chip points are Evaluation::operations, i.e. the step cost's own FLOPs: training, one
/// dense layer (and a MoE one) at the per-chip tokens per microbatch, plus the logits matmul;
/// serving, the mean decode step ("decode: ...", the batch per replica, weights and KV cache
/// read from HBM) and the prefill ("prefill: ..."). Bytes follow the book (ch. 1): a [B, D] x
/// [D, F] matmul moves 2(BD + DF + BF) bytes in bf16.
///
/// A collective's point: FLOPs = the compute one occurrence runs beside (CollectiveUse::
/// overlapFlops: one layer's forward for an fsdp gather, its backward for the gradients'
/// reduce-scatter, one matmul block for a tensor collective, ...), bytes = what one chip sends
/// per occurrence. Its bound and time follow the step cost's own exposure, not a comparison of
/// the two times (the step exposes some collectives whatever their window: tensor all-reduces
/// in training, every serving collective, the cross-slice gradient all-reduce):
///  - exposed (exposedS > 0): bound by its link; one occurrence takes the window and the exposed
///    part one after the other, overlapS + exposedS, and never less than commS;
///  - hidden (exposedS = 0): bound by "compute"; one occurrence takes max(overlapS, commS).
/// Achieved rate = FLOPs / that time: a hidden collective sits with the compute it hides behind,
/// an exposed one below it by the time it adds.
///
/// Its position is an effective intensity against the one slope drawn for its link (W: ICI per
/// axis, DCN per chip, NVLink or scale-out per GPU), whatever bandwidth the collective really
/// gets (a sub-ring without wraparound, several axes, a hierarchical DCN stripe):
///     intensity = FLOPs / (W x t_link),  t_link = timeS if exposed, else commS,
/// i.e. the bytes the drawn slope would move while the link holds the occurrence. So an exposed
/// collective lies on its link's slope (rate = W x intensity), left of that slope's ridge, and a
/// hidden one lies below its slope by overlapS / commS; with the book's times (the ideal model,
/// one full axis per W) it is right of the ridge C / W exactly when its compute outlasts it, the
/// book's F / B > C / W. A link the topology gives no slope is timed with its own rate,
/// W = bytes / commS.
OpRoofline opRoofline(const Plan &plan, const Evaluation &evaluation);

} // namespace meshplan::model
