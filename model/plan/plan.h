#pragma once
// A plan: a model on a cluster with a parallelism choice and a workload (plan-format.md).

#include "base/expected.h"
#include "hardware/chip.h"
#include "hardware/topology.h"
#include "plan/placement.h"
#include "plan/rematpolicy.h"
#include "transformer/modelspec.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace meshplan::model {

class ChipCatalog;
class ModelCatalog;

enum class PipelineSchedule {
    GPipe,
    OneFOneB,
    Interleaved1F1B,
    ZeroBubble,
    /// DeepSeek-V3's bidirectional schedule: each rank holds a stage and its mirror, and one
    /// micro-batch's computation overlaps another's communication (expert all-to-alls included).
    DualPipe,
};

/// How routed tokens reach the expert-parallel ranks that hold their experts.
enum class ExpertDispatch {
    Stack,        ///< what the plan's software stack does (deduplicatesExpertDispatch)
    AllToAll,     ///< one all-to-all: each routed copy of a token travels on its own
    /// A token crosses the scale-out network once per node holding one of its experts and is
    /// forwarded over NVLink there (DeepSeek-V3's kernels, DeepEP, HybridEP).
    Deduplicated,
};

enum class Optimizer {
    Adam,  ///< two moments
    AdamW, ///< Adam with decoupled weight decay: the same state
    Sgd,  ///< momentum: one state
    Adafactor, ///< factored second moment: negligible state
};

enum class WorkloadKind {
    Training,
    Inference,
};

enum class Serving {
    Interleaved,
    Disaggregated,
};

std::string_view scheduleName(PipelineSchedule schedule);
std::string_view optimizerName(Optimizer optimizer);
std::string_view expertDispatchName(ExpertDispatch dispatch); ///< "all-to-all", "deduplicated" ("" for Stack)
/// The names workload.stack takes for a training and for a serving workload.
const std::vector<std::string_view> &trainingStacks();
const std::vector<std::string_view> &servingStacks();

struct ParallelismSpec {
    RoleDegrees degrees{1, 1, 1, 1, 1, 1};
    std::map<Role, std::vector<std::string>> placement; ///< requested axes per role (may be empty)
    int zeroStage = 0;
    bool sequenceParallel = false;
    /// Tensor-parallel collectives overlapped with matmuls (collective matmul); absent, what the
    /// stack does by itself (overlapsTensorCollectives).
    std::optional<bool> tensorOverlap;
    /// Expert all-to-alls overlapped with another micro-batch's computation (DualPipe implies it).
    bool expertOverlap = false;
    ExpertDispatch expertDispatch = ExpertDispatch::Stack;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int microbatches = 1;
    /// The plan left microbatches out of a pipelined training step: one sequence per microbatch,
    /// which a change of the global batch keeps (defaultMicrobatches).
    bool microbatchesDefaulted = false;
    int virtualStages = 1;

    int degree(Role role) const { return degrees[static_cast<std::size_t>(role)]; }
};

struct TrainingSpec {
    std::int64_t seqLen = 4096;
    std::int64_t globalBatch = 1024; ///< sequences per step
    DType paramDtype = DType::Bf16;
    DType computeDtype = DType::Bf16;
    Optimizer optimizer = Optimizer::Adam;
    DType optimizerDtype = DType::Fp32;
    bool masterWeights = true; ///< a copy of the weights in optimizer_dtype (when params are narrower)
    DType gradDtype = DType::Bf16;
    RematPolicy remat; ///< workload.remat: a legacy level, a framework's named policy or save/offload lists
    /// Flash (fused, causal blocks skipped) or naive attention (score matrix written to HBM, as
    /// in 2021-era Megatron): the latter costs HBM traffic and memory quadratic in seq_len.
    bool flashAttention = true;
    /// The software that runs the plan (workload.stack, one of trainingStacks()), or "" for a
    /// well-tuned stack for the chip; it picks the attention kernel and the fusion (cost/softwarestack.h).
    std::string stack;
    std::int64_t trainTokens = 0; ///< tokens of the whole training run (0: not given)
    /// workload.loss_fusion: whether the loss runs as one fused kernel over the logits (true) or
    /// as the framework's unfused fp32 ops (false); absent, what the stack does by default.
    std::optional<bool> lossFusion;
    /// workload.compile: whether torchtitan or DeepSpeed compiles its blocks (torch.compile, or
    /// fused kernels in their place) or runs them eagerly; absent, the stack's default
    /// (compilesBlocks: compiled for torchtitan's Float8 on fp8 units, else eager). Only those two read it.
    std::optional<bool> compile;
};

struct InferenceSpec {
    std::int64_t batch = 1;
    std::int64_t promptLen = 2048;
    std::int64_t generateLen = 512;
    DType weightDtype = DType::Bf16;
    DType kvDtype = DType::Bf16;
    Serving serving = Serving::Interleaved;
    std::int64_t prefillChips = 0;
    DType computeDtype = DType::Bf16; ///< matmul dtype (int8 weights are often multiplied in bf16)
    double latencyTargetS = 0;        ///< optional per-token latency target (0: none)
    /// The serving software (one of servingStacks()), or "": as for training.
    std::string stack;
};

struct Plan {
    std::string title;
    nlohmann::json modelRef; ///< as written: a catalog id, an inline object or {"hf_config": ...}
    ModelSpec model;
    nlohmann::json chipRef;  ///< as written: a catalog id or an inline chip
    Topology topology;
    nlohmann::json topologyRef; ///< as written
    ParallelismSpec parallelism;
    WorkloadKind kind = WorkloadKind::Training;
    TrainingSpec training;
    InferenceSpec inference;
    nlohmann::json extra; ///< keys we do not know, kept so that a save does not lose them
    /// Keys inside the model, hardware, parallelism and workload objects that the plan format
    /// does not define ("workload.remat_policy"): read past, and reported by evaluate().
    std::vector<std::string> unknownKeys;
    double pricePerChipHour = 0; ///< hardware.price_per_hour, else the chip's catalog price
};

inline constexpr int kPlanVersion = 1;

/// Reads a plan from parsed JSON. Errors carry the JSON path of the field (parallelism.tensor).
Expected<Plan> planFromJson(const nlohmann::json &document, const ChipCatalog &chips, const ModelCatalog &models);
/// Parses plan text (a .meshplan file); `label` names the file in parse errors.
Expected<Plan> planFromText(const std::string &text, const std::string &label, const ChipCatalog &chips,
                            const ModelCatalog &models);
nlohmann::json planToJson(const Plan &plan);

/// Gives the plan another mesh of the same chip, in both its evaluated and its written form
/// (hardware.topology and hardware.slices), so that planToJson writes the mesh that is evaluated.
/// Other hardware keys (price_per_hour) are kept.
void setTopology(Plan &plan, const Topology &topology);

/// Checks that the model can be split as the parallelism asks (heads over tensor, experts over
/// expert, layers over pipeline), for training and serving alike; errors name the role.
std::optional<Error> checkModelSharding(const Plan &plan);

/// The built-in default plan: LLaMA-3 70B training on a TPU v5p pod (the book's ch. 6 layout).
Plan defaultPlan();

/// Microbatches of one sequence each: the global batch over data x fsdp x expert, rounded up (what a
/// pipelined training plan that leaves parallelism.microbatches out runs).
int defaultMicrobatches(const ParallelismSpec &parallelism, std::int64_t globalBatch);

} // namespace meshplan::model
