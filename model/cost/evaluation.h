#pragma once
// What one plan costs: memory per chip, every collective, step time, MFU, throughput, warnings.

#include "base/derivation.h"
#include "hardware/collective.h"
#include "plan/placement.h"
#include "transformer/modelspec.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

struct Plan;

/// Bytes held by one chip.
struct MemoryBreakdown {
    double params = 0;
    double grads = 0;
    double optimizer = 0; ///< optimizer states and master weights
    double activations = 0;
    double kvCache = 0;
    double total = 0;
    double capacity = 0;
    bool fits = true;
};

/// A group of chips that hold the same things (e.g. the first pipeline stage).
struct ChipKind {
    std::string name;
    std::int64_t count = 0;
    MemoryBreakdown memory;
};

/// One collective of the step, summed over its repetitions.
struct CollectiveUse {
    CollectiveOp op = CollectiveOp::AllGather;
    std::string purpose;      ///< "fsdp weights", "tensor activations", ...
    Role role = Role::Data;
    std::vector<std::string> axes;
    double bytes = 0;         ///< the book's V for one occurrence
    double bytesPerChip = 0;  ///< bytes one chip sends for one occurrence
    std::int64_t countPerStep = 0;
    double timeS = 0;         ///< all occurrences in one step
    double exposedS = 0;      ///< the part not hidden behind compute
    LinkKind link = LinkKind::Ici;
    bool latencyBound = false;
    /// The compute one occurrence runs beside on the busiest chip: its FLOPs (per chip) and their
    /// time at the evaluation's rates. In training this is the window the step cost hides the
    /// collective behind (fsdp weights: one layer's forward; gradients: the backward; tensor: one
    /// matmul block); in serving, where nothing hides them, the work between two occurrences.
    /// Not part of the result contract; the roofline (oproofline.h) places collectives with it.
    double overlapFlops = 0;
    double overlapS = 0;
};

/// One operation of one transformer layer (or the logits matmul) on the busiest chip, for one
/// occurrence, built from the same quantities as the step cost (book ch. 1: a [B, D] x [D, F]
/// matmul does 2BDF FLOPs and moves its input, weights and output through HBM).
struct OperationCost {
    std::string op;     ///< "attention qkv projection", "mlp down", "decode: attention core", ...
    std::string kind;   ///< matmul, attention, elementwise
    double flops = 0;   ///< per chip, one occurrence
    double bytes = 0;   ///< HBM bytes per chip, one occurrence
    double timeS = 0;   ///< max(FLOPs / peak, bytes / HBM) at the evaluation's rates
    double memoryS = 0; ///< bytes / HBM at those rates: the op is compute-bound when timeS exceeds it
    std::int64_t countPerStep = 0; ///< occurrences per training step (layers x microbatches x passes),
                                   ///< per decode step, or per prefill
};

struct Warning {
    std::string code;    ///< "does-not-fit", "fsdp-communication-bound", ...
    std::string message; ///< the reason in words, with the user's numbers
};

/// One training step on the busiest chip.
struct StepTime {
    double time = 0;
    double compute = 0;             ///< matmuls and elementwise work, recompute included
    double recompute = 0;           ///< the part of `compute` spent recomputing activations
    double communication = 0;       ///< every collective's time
    double exposedCommunication = 0; ///< collectives and host-offload transfers not hidden by compute
    double offloadExposed = 0;       ///< the part of exposedCommunication moving remat offloads to host and back
    double bubble = 0;
    double optimizer = 0;
    double overlapInterference = 0; ///< compute slowed while hidden collectives hold some of the SMs
    double flops = 0;               ///< model FLOPs of the step (no recompute)
    double tokens = 0;
    /// The microbatches each replica runs: parallelism.microbatches, or, for an MoE count above an
    /// expert replica's sequences, that count read over data x fsdp at its microbatch size.
    double microbatches = 0;
};

struct InferenceResult {
    double prefillS = 0;
    double timeToFirstTokenS = 0;
    double decodeStepS = 0;
    double tokensPerS = 0;
    double tokensPerSPerChip = 0;
    double kvCacheBytesPerToken = 0;
};

/// The book's thresholds for this plan's placement, derived from the model's own costs: the
/// per-chip batch (tokens per microbatch) at which each role's communication equals the compute
/// that hides it, and the largest tensor-parallel degree that stays compute-bound. 0 where unused.
struct CriticalPoints {
    double fsdpTokensPerChip = 0;
    double dataTokensPerChip = 0;
    double tensorMaxDegree = 0;
    double tokensPerChip = 0; ///< the plan's own tokens per chip per microbatch
};

/// Serving figures beyond the contract's inference block.
struct ServingExtras {
    double maxBatch = 0;            ///< sequences (whole deployment) whose KV fits next to the weights
    double criticalBatch = 0;       ///< decode batch per replica where matmuls turn compute-bound
    double steadyTokensPerS = 0;    ///< continuous batching, finished sequences replaced by new prompts
    double costPerMillionTokens = 0; ///< at the plan's per-chip-hour price
    double kvTransferS = 0;         ///< disaggregated: one prompt's KV from prefill to decode chips
    double kvCacheBytesPerSequence = 0;
    double decodeWeightsS = 0;      ///< parts of the mean decode step
    double decodeKvS = 0;
    double decodeComputeS = 0;
    double decodeCommunicationS = 0;
    double decodeBookStepS = 0;     ///< the book's formula: max(FLOPs, weights) + KV, no comms or overheads
    /// Decode's model FLOPs utilization: one step's matmul FLOPs per chip over (step time x the
    /// chip's listed peak). Small by nature below the critical batch, where weights are read
    /// for few tokens; the training MFU's counterpart for the serving summary.
    double decodeMfu = 0;
    double prefillReplicas = 0;
    double decodeReplicas = 0;
    double batchPerReplica = 0;
};

/// The whole training run of workload.train_tokens: steps of the plan's step time, and what the
/// chip-hours cost at the plan's price.
struct TrainingRun {
    double tokens = 0;
    double steps = 0;   ///< train_tokens / tokens per step (a last partial step counts in part)
    double timeS = 0;   ///< steps x step time
    double days = 0;
    double cost = 0;    ///< chips x hours x price per chip-hour (0 without a price)
};

struct Evaluation {
    std::int64_t chips = 0;
    ServingExtras serving;
    CriticalPoints critical;
    std::map<std::string, std::vector<std::string>> placement;
    ParamCounts params;
    double flopsPerToken = 0;
    double forwardFlopsPerToken = 0;
    double kvCacheBytesPerToken = 0;
    MemoryBreakdown memory;          ///< the most loaded chip
    std::vector<ChipKind> perChip;
    StepTime step;
    double mfu = 0;
    double tokensPerS = 0;
    /// Training at a price (the catalog's or hardware.price_per_hour): chips x step time x price
    /// per chip-hour / 3600; 0 without a price. The result carries it as train.cost_per_step in
    /// the train block (a plan with workload.train_tokens); the summary and comparisons always.
    double costPerStep = 0;
    std::string bound;               ///< compute, hbm, ici, dcn, nvlink, scale-out, memory-capacity
    std::vector<CollectiveUse> collectives;
    std::vector<Warning> warnings;
    std::optional<InferenceResult> inference;
    std::optional<TrainingRun> run; ///< training plans with workload.train_tokens
    /// Training: one layer's operations (dense and, for MoE, MoE layers) and the logits matmul at
    /// the per-chip tokens per microbatch. Serving: the mean decode step's ("decode: ...") and the
    /// prefill's ("prefill: ..."). Operations with no FLOPs or no bytes are left out. Not part of
    /// the result contract.
    std::vector<OperationCost> operations;
    /// Intermediate quantities the derivations name (one layer's forward time, one collective's
    /// time per occurrence, ...), keyed by bare name ("dense_layer_forward_s"); their derivations
    /// are at "terms.<name>". Filled only when evaluate() is asked for derivations; the result
    /// carries them as "terms" then.
    std::map<std::string, double> terms;
};

/// One collective of a step as the result reports it: `count` occurrences of `timeEach` seconds,
/// `exposed` of which are not hidden behind compute; `one` is collectiveCost() of one occurrence.
CollectiveUse collectiveUse(const Topology &topology, CollectiveOp op, std::string purpose, Role role,
                            const std::vector<AxisSpan> &spans, double bytes, double count, double timeEach,
                            double exposed, const CollectiveCost &one);

/// What binds a step: `localBound` ("compute" or "hbm") for `localTime` of on-chip work, unless
/// the exposed time of the collectives whose purpose starts with `purposePrefix`, summed per
/// link, exceeds it; then that link's name.
std::string bindingResource(const std::vector<CollectiveUse> &collectives, std::string_view purposePrefix,
                            double localTime, const std::string &localBound);

/// Evaluates `plan` with the achievable model (or the book's ideal one). Pure and deterministic;
/// an Error for a plan that cannot be evaluated (degrees that do not fit the mesh, ...).
/// With `derivations`, also records how every number of the result came to be (plan-format.md
/// "Derivations"), and the intermediate terms they name; without, costs nothing extra.
Expected<Evaluation> evaluate(const Plan &plan, CostMode mode = CostMode::Achievable,
                              Derivations *derivations = nullptr);

/// The result document of plan-format.md ("format": "meshplan/result").
nlohmann::json evaluationToJson(const Evaluation &evaluation, bool training);

} // namespace meshplan::model
