// One training step of a plan: per-chip memory, compute, every collective and how much of it
// hides behind compute (book ch. 4-6 and 12, with the achievable efficiencies of the chip).
#include "cost/trainingcost.h"

#include "cost/derivationrecorder.h"
#include "base/units.h"
#include "cost/evaluation.h"
#include "cost/softwarestack.h"
#include "cost/weightstate.h"
#include "plan/plan.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace meshplan::model {

namespace {

// Backward of a matmul: two matmuls of the forward's size (dX and dW), book ch. 4.
constexpr double kBackwardFactor = 2.0;
// Naive attention writes the [heads, T] score row of every token and reads it back through
// the softmax, mask/dropout and the probabilities x V matmul: about four passes forward.
constexpr double kNaiveAttentionPasses = 4.0;
// A fused (flash) attention kernel's backward recomputes the scores QKᵀ and runs four more matmuls
// (dV, dP, dQ, dK) against the forward's two: 2.5x the forward's FLOPs (FlashAttention-2 paper,
// Dao 2023, section 4.1, which counts its backward throughput this way).
constexpr double kFlashBackwardFactor = 2.5;
// Every weight-matmul kernel also pays a fixed time, whatever its size: launch, ramp and tail.
// DeepSeek's DeepGEMM H800 table fits t = t0 + 2MN(K + K0)/R with t0 = 2.0 us (OpenXLA's H100
// table gives 6 us, its timing harness included); it shows only where a chip's microbatch is
// small. GPUs only: a TPU step is one compiled program.
constexpr double kMatmulLaunchS = 2.0e-6;

/// Why a training collective's time is or is not hidden, by its purpose (for its derivation).
std::string overlapRule(const std::string &purpose)
{
    if (purpose.rfind("tensor", 0) == 0)
        return "Megatron's activation collectives sit between the matmuls that need them: exposed unless the stack "
               "overlaps them with the matmuls (sequence parallelism on a stack that does, or tensor_overlap; torchtitan's "
               "async TP reaches the forward and recomputed passes, not the backward)";
    if (purpose.rfind("expert", 0) == 0 && purpose.find("gradients") == std::string::npos)
        return "every all-to-all waits for its tokens, unless DualPipe runs another microbatch's compute beside it "
               "(then only what outlasts the MoE layer's forward, backward and recompute shows) or expert_overlap does "
               "(Megatron's batch-level overlap: the forward and recomputed passes' all-to-alls hide so, the "
               "backward's stay exposed)";
    if (purpose.rfind("context", 0) == 0
        && (purpose.find("gathered once") != std::string::npos || purpose.find("each block") != std::string::npos))
        return "PyTorch's context parallelism gathers the keys and values once and waits for them at the second block, "
               "so only the first block's attention hides the gather; each block's fp32 key/value gradients are hidden "
               "by the next block's backward, and the last is waited for";
    if (purpose.rfind("context heads", 0) == 0)
        return "DeepSpeed-Ulysses' all-to-alls sit between the projections and the attention core that need their "
               "output: nothing runs beside them, so all of each shows, in the forward, the recomputed forward and the "
               "backward";
    if (purpose.rfind("context", 0) == 0)
        return "the ring passes keys and values while the attention core computes: only what outlasts it shows";
    if (purpose.rfind("fsdp", 0) == 0)
        return "a layer's weight gather prefetches behind the previous layer's forward, its gradients' reduce-scatter "
               "behind the backward: only what outlasts them shows (the book: B/X > C/W hides it)";
    if (purpose.rfind("updated", 0) == 0)
        return "Megatron-Core's distributed optimizer gathers each bucket of updated weights as the next step's first "
               "microbatch reaches it: only what outlasts that forward shows";
    if (purpose.find("gradients") != std::string::npos)
        return "the gradient all-reduce (a distributed optimizer's reduce-scatter) overlaps the last microbatch's "
               "backward and the bubble; a reduction bound by DCN starts after the backward in the achievable model "
               "(measured multi-slice runs)";
    if (purpose.rfind("pipeline", 0) == 0)
        return "steady-state transfers overlap the next chunk's forward and only what outlasts it shows; the "
               "2·(stages − 1) while the pipe fills and drains do not overlap";
    return "the part not hidden behind compute";
}

double ceilDiv(double a, double b)
{
    return std::ceil(a / b);
}

struct Degrees {
    int data, fsdp, tensor, pipeline, expert, context;
};

/// Per-token, per-layer quantities on one chip of a tensor-parallel group.
struct LayerCost {
    double matmulFlops = 0;    ///< forward, per token (routed experts excluded)
    double expertFlops = 0;    ///< forward, per token, in routed experts
    double attnCoreFlops = 0;  ///< forward, per token, as the kernel executes it (flash skips masked blocks)
    double scoreElements = 0;  ///< per token: the attention score row a naive kernel writes to HBM
    double weightElements = 0; ///< weights this chip reads (after tensor and expert sharding)
    double savedNone = 0;      ///< activation elements kept per token with no remat
    double savedSelective = 0; ///< ... with the attention core recomputed
    double savedFull = 0;      ///< ... with only the layer input kept
    double elementwise = 0;    ///< elements of intermediates per token (HBM traffic of non-matmul ops)
    double linearInputs = 0;   ///< elements per token entering the layer's weight matmuls (cast to fp8 in fp8 recipes)
    double qkvWidth = 0;       ///< per token: the queries, keys and values the projection writes
    double attnOutWidth = 0;   ///< per token: the attention output the output projection reads
    /// The weight matmuls' rate for their shapes: 1 / efficiency, weighted by FLOPs, over the
    /// forward's matmuls (depth K) and over the backward's (depths N for the input gradient and
    /// the microbatch's tokens for the weight gradient); the routed experts' separately.
    double matmulShape = 1;
    double matmulShapeBackward = 1;
    double expertShape = 1;
    double expertShapeBackward = 1;
    double matmulKernels = 0; ///< weight-matmul kernels of the forward (each pays kMatmulLaunchS)
    /// Per RematTensor (indexed by the enum), per token on this chip: its elements, and the
    /// forward FLOPs that rebuild it from its inputs (at the matmul rate; the routed experts' share
    /// at theirs).
    std::array<double, kRematTensorCount> rematWidth{};
    std::array<double, kRematTensorCount> rematFlops{};
    std::array<double, kRematTensorCount> rematExpertFlops{};
    bool moe = false;
};

/// The extra forward passes per microbatch that the recompute runs of each operation of a layer
/// (1: all of it, as full remat does; a fraction where only some of its outputs are rebuilt).
struct OperationRecompute {
    double qkv = 0;
    double outProj = 0;
    double core = 0;
    double mlpUp = 0;
    double mlpDown = 0;
    double elementwise = 0;
    double moeShared = 0; ///< router and shared experts
    double moeRouted = 0;
};

std::size_t at(RematTensor t)
{
    return static_cast<std::size_t>(t);
}

class TrainingCost
{
public:
    TrainingCost(const Plan &plan, const Placement &placement, CostMode mode, Evaluation &out, Derivations *derivations)
        : m_model(plan.model)
        , m_t(plan.topology)
        , m_chip(plan.topology.chip())
        , m_par(plan.parallelism)
        , m_train(plan.training)
        , m_placement(placement)
        , m_out(out)
        , m_params(countParams(plan.model))
        , m_why(derivations, out.terms)
    {
        const auto &p = plan.parallelism;
        m_d = {p.degree(Role::Data), p.degree(Role::Fsdp), p.degree(Role::Tensor), p.degree(Role::Pipeline),
               p.degree(Role::Expert), p.degree(Role::Context)};
        m_options.mode = mode;
        // The book's ideal model: advertised peaks, no kernel overheads beyond the matmuls.
        const bool ideal = mode == CostMode::Ideal;
        const bool compiled =
            compilesBlocks(m_chip, plan.training.stack, plan.training.computeDtype, plan.training.compile);
        m_elementwiseTraffic = ideal ? 0.0 : elementwiseTrafficShare(plan.training.stack, compiled);
        m_remat = ideal ? StepRemat{&plan.training.remat}
                        : stepRemat(m_chip, plan.training, plan.training.remat, plan.model);
        m_lossBytes = ideal ? 0.0 : lossBytesPerLogit(m_chip, plan.training.stack, plan.training.lossFusion, compiled);
        m_naivePasses = ideal ? 0.0 : kNaiveAttentionPasses;
        m_sequenceParallel = p.sequenceParallel
                             || (!ideal && m_d.tensor > 1 && shardsActivationsOverTensor(m_chip, plan.training.stack));
        m_tensorOverlap = p.tensorOverlap.value_or(
            !ideal && overlapsTensorCollectives(m_chip, plan.training.stack, m_d.tensor, p.sequenceParallel,
                                                double(plan.model.dModel)));
    }

    std::optional<Error> run();

private:
    /// Where the microbatch count comes from, for the derivations.
    std::string microbatchesNote() const
    {
        if (m_microbatches != m_par.microbatches)
            return "plan: parallelism.microbatches (" + std::to_string(m_par.microbatches)
                   + ") counted over data × fsdp, at its microbatch size over data × fsdp × expert";
        return m_par.microbatchesDefaulted ? "default: parallelism.microbatches left out of a pipelined plan, one "
                                             "sequence per microbatch (the global batch over data × fsdp × expert)"
                                           : "plan: parallelism.microbatches";
    }

    /// The microbatches each replica runs. A count above its sequences (validate() allows it only
    /// where the batch is also split over expert ranks) is read as the plan format counts it,
    /// over data x fsdp, at the same microbatch size.
    double effectiveMicrobatches() const
    {
        const double asked = m_par.microbatches;
        if (asked <= m_seqsPerReplica)
            return asked;
        return std::max(1.0, std::ceil(m_seqsPerReplica / double(m_formatMicrobatchSeqs)));
    }

    /// Whether the plan asks for 8-bit matmuls on a chip that lists no rate for them.
    bool eightBitEmulated() const { return m_chip.emulatesEightBit(m_train.computeDtype); }

    std::optional<Error> validate();
    LayerCost layerCost(bool moe) const;
    /// Chooses the attention kernel and the rates of its passes (and the fp8 recipe's bf16 parts).
    void setKernelRates(bool ideal);
    void chargeContextRingTraffic();
    /// Key/value heads a chip's context-parallel exchange carries (a ring's blocks, or Ulysses'
    /// all-to-alls before their repetition to the context degree): its KV heads, or every query
    /// head where the stack repeats them before the attention call.
    double ringKeyValueHeads() const
    {
        return m_ring.expandsKeyValueHeads ? m_model.heads / double(m_d.tensor)
                                           : std::max(1.0, m_model.kvHeads / double(m_d.tensor));
    }
    double attnCoreTime(const LayerCost &c) const { return c.attnCoreFlops * m_tokensMb / m_attnFwdRate; }
    double attnBackwardTime(const LayerCost &c) const
    {
        return c.attnCoreFlops * m_tokensMb * m_attnBackwardFactor / m_attnBwdRate;
    }
    int layersOnStage(int stage) const;
    int moeLayersOnStage(int stage) const;
    /// Weight elements one chip of `stage` holds, outside the routed experts (the embedding on the
    /// first stage, the output layer on the last; no final norm) and in them.
    struct StageWeights {
        double dense = 0;
        double expert = 0;
    };
    StageWeights stageWeights(int stage) const;
    /// DualPipe (DeepSeek-V3 report, section 3.2.1): each rank also holds the mirror stage.
    bool dualPipe() const { return m_par.schedule == PipelineSchedule::DualPipe && m_d.pipeline > 1; }
    /// Routed experts on one chip (experts / expert degree); 0 for a dense model.
    double localExperts() const { return m_model.moe ? double(m_model.moe->experts) / m_d.expert : 0.0; }
    double layerForwardTime(const LayerCost &layer) const;
    /// Reading the layer's weights from HBM once: the floor of its matmuls at a small batch.
    double weightReadTime(const LayerCost &layer) const;
    /// A layer's forward work beside its matmuls: elementwise traffic, naive attention's scores,
    /// fp8 casts and kernel launches, per microbatch.
    double layerOverheadTime(const LayerCost &layer) const;
    /// 1 / the share of the large-K rate a weight matmul of reduction depth `k` reaches (1 in the
    /// book's ideal model).
    double shapeInverse(double k, DType type) const;
    /// The backward's weight matmuls against twice the forward's: their time at their own shapes
    /// less the forward's doubled, per layer and microbatch.
    double backwardShapeTime(const LayerCost &layer) const;
    /// What a custom policy rebuilds of one layer per token: FLOPs at the matmul, expert and
    /// attention rates, and the share of the layer's non-matmul work that runs again.
    struct RebuiltFlops {
        double matmul = 0;
        double expert = 0;
        double attention = 0;
        double overheadShare = 0;
    };
    RebuiltFlops rebuiltFlops(const LayerCost &layer) const;
    /// A custom policy's recompute per layer and microbatch: the FLOPs of the tensors it rebuilds.
    double customRecomputeTime(const LayerCost &layer) const;
    /// Elements per token of a layer a custom policy keeps in HBM (its input included), or offloads.
    double customSavedElements(const LayerCost &layer) const;
    double offloadedElements(const LayerCost &layer) const;
    /// Weight elements one chip of `stage` holds (the mirror stage's too under DualPipe).
    double stageWeightElements(int stage) const;
    /// stageWeightElements' weights replicated over the expert ranks (attention, dense and shared
    /// MLPs, embeddings) and the routed experts' own.
    double stageDenseElements(int stage) const;
    double stageExpertElements(int stage) const;
    /// Optimizer states per weight: Adam 2, SGD 1, Adafactor about 0.1.
    double optimizerStates() const;
    /// The ranks ZeRO shards weight state over beyond FSDP: data and context (and, for the
    /// optimizer state and gradients of the weights every expert rank holds, the expert ranks:
    /// stageMemory).
    double zeroShards() const;
    /// The activation bytes of `stage`'s chips, in the parts its derivation names.
    struct StageActivations {
        int denseLayers = 0;
        int moeLayers = 0;
        double inFlight = 0;      ///< microbatches whose activations the stage holds at once
        double savedDense = 0;    ///< elements per token a dense layer keeps for its backward
        double savedMoe = 0;
        double perMicrobatch = 0; ///< bytes of one microbatch
        double working = 0;       ///< one layer's activations rebuilt during its backward
        double logits = 0;        ///< the last stage's logits
    };
    StageActivations stageActivations(int stage) const;
    MemoryBreakdown stageMemory(int stage) const;
    void addCollective(CollectiveOp op, std::string purpose, Role role, const std::vector<AxisSpan> &spans,
                       double bytes, double count, double exposed, double timeEach, double overlapFlops,
                       double overlapS, const CollectiveOptions *options = nullptr);
    /// One layer's operations (and the logits matmul) for the roofline; FLOPs as the step counts them.
    void recordOperations(const LayerCost &dense, const LayerCost &sparse, int stageLayers, int stageDense,
                          int stageMoe, const OperationRecompute &recompute);
    OperationRecompute operationRecompute(const LayerCost &dense, const LayerCost &sparse) const;
    void addOperation(std::string op, const char *kind, double flops, double bytes, double flopsRate,
                      double count);
    /// terms.expert_token_bytes: what the expert all-to-all sends per element, and who says so.
    void explainExpertTokens(const ExpertDispatchWire &wire);
    CollectiveCost cost(CollectiveOp op, const std::vector<AxisSpan> &spans, double bytes) const
    {
        return collectiveCost(m_t, op, spans, bytes, m_options);
    }
    void warn(const std::string &code, const std::string &message) { m_out.warnings.push_back({code, message}); }
    /// Adds `seconds` of communication the step waits for; `name` and `from` say what it is in
    /// the derivation of step.exposed_communication_s.
    void expose(double &exposed, double seconds, const char *name, long collective, const char *source);
    // Derivations (only when asked for: see DerivationRecorder).
    /// One layer's forward, backward and recompute as terms "<prefix>_layer_forward_s", ...
    void explainLayer(const std::string &prefix, const LayerCost &c, double forward, double backward,
                      double recompute);
    void explainMemory(int stage, const MemoryBreakdown &mem);
    DerivationValue peakValue() const;
    DerivationValue flopsFractionValue() const;
    DerivationValue hbmValue() const;
    DerivationValue hbmEfficiencyValue() const;
    std::string hbmRate() const { return "(hbm_bandwidth * hbm_efficiency)"; }

    const ModelSpec &m_model;
    const Topology &m_t;
    const Chip &m_chip;
    const ParallelismSpec &m_par;
    /// The plan's sequence_parallel, or a stack that shards activations over the tensor axis anyway.
    bool m_sequenceParallel = false;
    const TrainingSpec &m_train;
    StepRemat m_remat; ///< the plan's remat as its stack runs it (the plan's own in the ideal model)
    const Placement &m_placement;
    Evaluation &m_out;
    ParamCounts m_params;
    Degrees m_d{};
    CollectiveOptions m_options;

    // Derived once in run().
    double m_tokensMb = 0;  ///< tokens one chip processes per microbatch (before tensor sharding), mean
    double m_peakTokensMb = 0; ///< the same for the largest microbatch (activation memory)
    double m_seqsPerReplica = 0;
    /// The dense and MoE layers (layerCost) run() works out and prices the step with; each
    /// stage's memory reads them too.
    std::optional<std::pair<LayerCost, LayerCost>> m_layers;
    std::array<double, kDTypeCount> m_tileK0{}; ///< the chip's matmulTileOverhead per dtype
    /// Sequences per microbatch by the plan format's count over data x fsdp; set by validate()
    /// only where that reading applies (see effectiveMicrobatches()).
    std::int64_t m_formatMicrobatchSeqs = 1;
    double m_microbatches = 1;
    double m_actBytes = 2;
    /// Bytes per element of activations moving between kernels and over links: 16-bit under an
    /// fp8 recipe, which casts only the matmul operands (activations, norms and the tensor-,
    /// pipeline- and context-parallel exchanges stay bf16 in Megatron/Transformer Engine).
    double m_flowBytes = 2;
    double m_peak = 0;
    double m_hbm = 0;
    double m_lossBytes = 0; ///< HBM bytes per logit the loss moves per step (0 in the ideal model)
    double m_elementwiseTraffic = 0.5;
    double m_expertEfficiency = 1.0;
    double m_naivePasses = kNaiveAttentionPasses;
    double m_peak16 = 0;             ///< matmuls that stay in 16 bits (attention core, logits) under an fp8 recipe
    double m_attnFwdRate = 0;        ///< FLOPs/s of the attention core's forward pass
    double m_attnBwdRate = 0;        ///< ... and of its backward pass
    double m_attnBackwardFactor = kBackwardFactor; ///< backward FLOPs over forward FLOPs as the kernel runs them
    ContextParallelRing m_ring;      ///< the stack's context-parallel attention, where it differs from the ring
    double m_ringForwardShare = 1;   ///< the attention kernels' share of the core's time under that ring ...
    double m_ringBackwardShare = 1;  ///< ... forward and backward (the rest merges and accumulates blocks)
    double m_moeHostPerExpertS = 0;  ///< GPU idle per local expert and MoE layer forward while the host issues it
    double m_castBytes = 0;          ///< HBM bytes per linear-input element per step for fp8 casts and transposes
    /// Tensor-parallel collectives beside the matmuls: asked for by the plan, or done by the stack.
    bool m_tensorOverlap = false;
    DerivationRecorder m_why;
    std::vector<DerivationValue> m_exposedParts; ///< what step.exposed_communication_s adds up
};

std::optional<Error> TrainingCost::validate()
{
    if (m_chip.peakFlops(m_train.computeDtype) <= 0)
        return Error{"workload.compute_dtype", m_chip.id + " has no FLOPs/s figure for "
                                                   + std::string(dtypeName(m_train.computeDtype))};
    const auto &offloaded = m_train.remat.offloaded;
    if (m_chip.pcieBandwidth <= 0
        && std::any_of(offloaded.begin(), offloaded.end(), [](RematTensor t) { return t != RematTensor::MlpWo; }))
        return Error{"workload.remat", m_chip.id + " has no pcie_bandwidth figure to offload activations to host memory over"};
    if (m_train.seqLen % m_d.context != 0)
        return Error{"parallelism.context", "context parallelism of " + std::to_string(m_d.context)
                                                + " must divide seq_len " + std::to_string(m_train.seqLen)};
    const std::int64_t batchShards = std::int64_t(m_d.data) * m_d.fsdp * m_d.expert;
    if (m_train.globalBatch < batchShards)
        return Error{"workload.global_batch", std::to_string(m_train.globalBatch)
                                                  + " sequences cannot be split over data x fsdp x expert = "
                                                  + std::to_string(batchShards) + " replicas"};
    const std::int64_t perReplica = (m_train.globalBatch + batchShards - 1) / batchShards;
    // The plan format counts microbatches over data x fsdp. Meshplan also splits an MoE plan's
    // batch over its expert ranks, so a count above a replica's sequences there is read by the
    // format's formula where it divides that count; otherwise (and always without expert ranks,
    // where the two readings agree) the plan is refused.
    const std::int64_t dataFsdp = std::int64_t(m_d.data) * m_d.fsdp;
    const std::int64_t overDataFsdp = (m_train.globalBatch + dataFsdp - 1) / dataFsdp;
    if (m_par.microbatches > perReplica && m_d.expert == 1)
        return Error{"parallelism.microbatches", std::to_string(m_par.microbatches) + " microbatches need at least as many "
                                                     "sequences per replica; each replica has "
                                                     + std::to_string(perReplica)};
    if (m_par.microbatches > perReplica && overDataFsdp % m_par.microbatches != 0)
        return Error{"parallelism.microbatches",
                     std::to_string(m_par.microbatches) + " microbatches exceed the " + std::to_string(perReplica)
                         + " sequences each data x fsdp x expert replica runs, and do not divide the "
                         + std::to_string(overDataFsdp) + " each data x fsdp replica runs either"};
    if (m_par.microbatches > perReplica) {
        m_formatMicrobatchSeqs = overDataFsdp / m_par.microbatches;
        warn("microbatches-over-expert",
             std::to_string(m_par.microbatches) + " microbatches exceed the " + std::to_string(perReplica)
                 + " sequences each data x fsdp x expert replica runs; read as counted over data x fsdp (the "
                   "plan format's formula), at that count's microbatch size");
    } else if (perReplica % m_par.microbatches != 0) {
        warn("uneven-microbatches", std::to_string(perReplica) + " sequences per replica do not split evenly into "
                                        + std::to_string(m_par.microbatches)
                                        + " microbatches; costed at their mean size, memory at the largest");
    }
    if (eightBitEmulated())
        warn("dtype-emulated", m_chip.id + " has no " + std::string(dtypeName(m_train.computeDtype))
                                   + " units: the matmuls run at its 16-bit rate and activations stay 16-bit");
    if (m_d.context > 1 && shardsHeadsOverContext(m_chip, m_train.stack)) {
        // UlyssesSPAttentionHF refuses a degree that does not divide the heads, or that the
        // key/value heads and it do not divide one another (ulysses_sp.py at edaa722).
        const int heads = m_model.heads / m_d.tensor;
        const int kvHeads = std::max(1, m_model.kvHeads / m_d.tensor);
        if (heads % m_d.context != 0 || (kvHeads % m_d.context != 0 && m_d.context % kvHeads != 0))
            warn("ulysses-heads", "DeepSpeed's sequence parallelism splits the attention heads over the context ranks: "
                                      + std::to_string(heads) + " heads and " + std::to_string(kvHeads)
                                      + " key/value heads a tensor rank do not split over " + std::to_string(m_d.context)
                                      + " (DeepSpeed refuses it); costed as if they did");
    }
    if (m_train.globalBatch % batchShards != 0)
        warn("uneven-batch", std::to_string(m_train.globalBatch) + " sequences do not split evenly over "
                                 + std::to_string(batchShards) + " replicas; the busiest gets "
                                 + std::to_string(perReplica));
    return std::nullopt;
}

int TrainingCost::layersOnStage(int stage) const
{
    const int base = m_model.layers / m_d.pipeline;
    return base + (stage < m_model.layers % m_d.pipeline ? 1 : 0);
}

int TrainingCost::moeLayersOnStage(int stage) const
{
    if (!m_model.moe)
        return 0;
    int first = 0;
    for (int s = 0; s < stage; ++s)
        first += layersOnStage(s);
    const int last = first + layersOnStage(stage);
    const int dense = m_model.moe->firstDenseLayers;
    return std::max(0, last - std::max(first, dense));
}

LayerCost TrainingCost::layerCost(bool moe) const
{
    const ModelSpec &m = m_model;
    const double tp = m_d.tensor;
    const double d = double(m.dModel);
    const double T = double(m_train.seqLen);
    const double shardD = m_sequenceParallel ? tp : 1.0; // [tokens, d] tensors split only with SP
    const auto [qkDim, vDim] = attentionHeadDims(m);
    const double kvHeadsLocal = std::max(1.0, m.kvHeads / tp); // KV heads are replicated past kv_heads-way TP

    LayerCost c;
    c.moe = moe;
    const double attention = double(m_params.attentionPerLayer) / tp;
    c.matmulFlops = 2.0 * attention;
    const bool flash = m_train.flashAttention;
    // A fused kernel skips the masked blocks (and, in a local layer, the tiles past the window); an
    // unfused one computes every score and masks them afterwards.
    c.attnCoreFlops = 2.0 * (flash ? causalAttendedKeys(m, T, kAttentionTileKeys) : T) * (m.heads / tp) * (qkDim + vDim);
    c.scoreElements = flash ? 0.0 : (m.heads / tp) * T;
    c.weightElements = attention;

    const double qkv = m.mla ? (m.heads / tp) * (2 * qkDim + vDim) : (m.heads / tp + 2 * kvHeadsLocal) * m.headDim;
    const double attnOut = (m.heads / tp) * vDim;
    c.qkvWidth = qkv;
    c.attnOutWidth = attnOut;
    const double norms = m.parallelBlock ? 1.0 : 2.0;
    double mlpSaved = 0;
    const double width = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
    // Per-tensor widths and FLOPs for custom policies (matmuls only: biases and norms are
    // elementwise work). Latent attention's low-rank projections share their FLOPs by width.
    const double qWidth = (m.heads / tp) * (m.mla ? qkDim : double(m.headDim));
    const double kWidth = m.mla ? (m.heads / tp) * qkDim : kvHeadsLocal * m.headDim;
    const double vWidth = m.mla ? (m.heads / tp) * vDim : kvHeadsLocal * m.headDim;
    const double outW = double(m.heads) * vDim * d / tp;
    const double qkvFlops = m.mla ? 2.0 * (attention - outW) : 2.0 * d * qkv;
    c.rematWidth[at(RematTensor::QueryProj)] = qWidth;
    c.rematWidth[at(RematTensor::KeyProj)] = kWidth;
    c.rematWidth[at(RematTensor::ValueProj)] = vWidth;
    c.rematWidth[at(RematTensor::Context)] = attnOut;
    c.rematWidth[at(RematTensor::OutProj)] = d / shardD;
    c.rematWidth[at(RematTensor::MlpWo)] = d / shardD;
    c.rematWidth[at(RematTensor::LayerInput)] = d / shardD;
    c.rematFlops[at(RematTensor::QueryProj)] = qkvFlops * qWidth / qkv;
    c.rematFlops[at(RematTensor::KeyProj)] = qkvFlops * kWidth / qkv;
    c.rematFlops[at(RematTensor::ValueProj)] = qkvFlops * vWidth / qkv;
    c.rematFlops[at(RematTensor::Context)] = c.attnCoreFlops;
    c.rematFlops[at(RematTensor::OutProj)] = 2.0 * outW;
    if (moe) {
        const MoeSpec &e = *m.moe;
        const double expert = double(m_params.expertParams) / tp;
        const double localExperts = double(e.experts) / m_d.expert;
        c.matmulFlops += 2.0 * double(m_params.moeSharedPerLayer) / tp;
        c.expertFlops = 2.0 * e.expertsPerToken * expert;
        c.weightElements += double(m_params.moeSharedPerLayer) / tp + localExperts * expert;
        mlpSaved = e.expertsPerToken * (d + width * double(e.dFfExpert) / tp)
                   + e.sharedExperts * width * double(e.dFfExpert) / tp + e.experts;
        // mlpwi: the routed experts' and the shared experts' up (and gate) projections; the
        // router is rebuilt with them.
        const double fe = double(e.dFfExpert);
        c.rematWidth[at(RematTensor::MlpWi)] = (e.expertsPerToken + e.sharedExperts) * (width - 1.0) * fe / tp;
        c.rematFlops[at(RematTensor::MlpWi)] = 2.0 * (d * e.experts + e.sharedExperts * (width - 1.0) * d * fe) / tp;
        c.rematExpertFlops[at(RematTensor::MlpWi)] = c.expertFlops * (width - 1.0) / width;
    } else {
        const double mlp = double(m_params.denseMlpPerLayer) / tp;
        c.matmulFlops += 2.0 * mlp;
        c.weightElements += mlp;
        mlpSaved = width * double(m.dFf) / tp;
        c.rematWidth[at(RematTensor::MlpWi)] = (width - 1.0) * double(m.dFf) / tp;
        c.rematFlops[at(RematTensor::MlpWi)] = 2.0 * (width - 1.0) * d * double(m.dFf) / tp;
    }
    const double base = norms * 2.0 * d / shardD + qkv + attnOut + mlpSaved;
    c.savedSelective = base;
    // Without remat a naive kernel keeps the probabilities ([heads, T] per token, plus a byte of
    // dropout mask); a flash kernel keeps only its softmax statistics.
    c.savedNone = base + (flash ? 2.0 * m.heads / tp : 1.5 * (m.heads / tp) * T);
    c.savedFull = d / shardD;
    c.elementwise = base;
    c.linearInputs = matmulInputsPerToken(m, m_train.stack, tp, moe, m_d.expert > 1);

    // The weight matmuls' shapes, [tokens, K] x [K, N] (book ch. 1): the forward reduces over K,
    // the input gradient over N and the weight gradient over the microbatch's tokens.
    struct Gemm {
        double flops, k, n;
    };
    const DType type = m_train.computeDtype;
    const auto shapes = [&](std::initializer_list<Gemm> gemms, double tokens, double &forward, double &backward) {
        double flops = 0, fwd = 0, bwd = 0;
        for (const Gemm &g : gemms) {
            flops += g.flops;
            fwd += g.flops * shapeInverse(g.k, type);
            bwd += g.flops * 0.5 * (shapeInverse(g.n, type) + shapeInverse(tokens, type));
        }
        if (flops > 0) {
            forward = fwd / flops;
            backward = bwd / flops;
        }
    };
    const double tokens = m_tokensMb;
    // q/k/v, the output projection, the MLP's up (gate fused) and down projections; a MoE layer
    // adds the router and runs its routed experts as two grouped matmuls.
    c.matmulKernels = moe ? (m.moe->sharedExperts > 0 ? 7.0 : 5.0) : 4.0;
    if (moe) {
        const MoeSpec &e = *m.moe;
        const double fe = double(e.dFfExpert) / tp;
        const double shared = double(e.sharedExperts);
        shapes({{qkvFlops, d, qkv}, {2.0 * outW, attnOut, d}, {2.0 * d * e.experts, d, double(e.experts)},
                {2.0 * shared * (width - 1.0) * d * fe, d, shared * (width - 1.0) * fe}, {2.0 * shared * d * fe, fe, d}},
               tokens, c.matmulShape, c.matmulShapeBackward);
        // A routed expert's weight gradient reduces over the tokens routed to it from the whole
        // expert-parallel group.
        const double expertTokens = tokens * m_d.expert * e.expertsPerToken / double(e.experts);
        shapes({{2.0 * (width - 1.0) * d * fe, d, (width - 1.0) * fe}, {2.0 * d * fe, fe, d}}, expertTokens,
               c.expertShape, c.expertShapeBackward);
    } else {
        const double f = double(m.dFf) / tp;
        shapes({{qkvFlops, d, qkv}, {2.0 * outW, attnOut, d}, {2.0 * (width - 1.0) * d * f, d, (width - 1.0) * f},
                {2.0 * d * f, f, d}},
               tokens, c.matmulShape, c.matmulShapeBackward);
    }
    return c;
}

void TrainingCost::explainExpertTokens(const ExpertDispatchWire &wire)
{
    const bool achievable = m_options.mode == CostMode::Achievable;
    std::string words = "Bytes per element of a routed token in the expert all-to-all: ";
    if (!achievable)
        words += "the book's all-to-all at the recipe's dtypes, the dispatch and the combine averaged.";
    else if (wire.compactOut)
        words += "dispatched at the compute dtype and combined at the activations' (DeepSeek-V3 report, section "
                 "3.3.2).";
    else if (m_actBytes < m_flowBytes)
        words += "the activations' dtype both ways: stack " + m_train.stack
                 + " sends 16-bit tokens and quantizes them inside the expert matmuls.";
    else
        words += "the activations' dtype both ways.";
    if (achievable && !m_chip.isTpu()) {
        std::string owner = "stack " + m_train.stack + "'s dispatcher";
        if (m_par.expertDispatch != ExpertDispatch::Stack)
            owner = "the plan's parallelism.expert_dispatch";
        else if (m_train.stack.empty())
            owner = "a well-tuned stack, none named";
        words += wire.deduplicated ? " Each is sent once to each node, and each GPU, that holds one of its experts ("
                                   : " Every routed copy crosses the network on its own (";
        words += owner + ").";
    }
    std::vector<DerivationValue> values{{"flow_bytes", m_flowBytes, "", "the activations between kernels"}};
    if (wire.compactOut)
        values.insert(values.begin(), DerivationValue{"act_bytes", m_actBytes, "", "plan: workload.compute_dtype"});
    const bool tpu = m_chip.isTpu();
    m_why.term("expert_token_bytes", wire.bytes, wire.compactOut ? "(act_bytes + flow_bytes) / 2" : "flow_bytes",
               std::move(values), std::move(words), tpu ? "3" : "12",
               tpu ? "A deeper dive into communication primitives" : "Collectives on GPUs");
}

double TrainingCost::shapeInverse(double k, DType type) const
{
    if (m_options.mode == CostMode::Ideal)
        return 1.0;
    // K0 looked up once per dtype: a step prices its matmuls' shapes a hundred times and more.
    return 1.0 / Chip::shapeEfficiency(k, m_tileK0[static_cast<std::size_t>(type)]);
}

double TrainingCost::backwardShapeTime(const LayerCost &layer) const
{
    const double dense = layer.matmulFlops * (layer.matmulShapeBackward - layer.matmulShape);
    const double expert = layer.expertFlops * (layer.expertShapeBackward - layer.expertShape) / m_expertEfficiency;
    return kBackwardFactor * (dense + expert) * m_tokensMb / m_peak;
}

double TrainingCost::layerForwardTime(const LayerCost &layer) const
{
    const double tokens = m_tokensMb;
    const double flopsTime = (layer.matmulFlops * layer.matmulShape + layer.expertFlops * layer.expertShape / m_expertEfficiency)
                                 * tokens / m_peak
                             + attnCoreTime(layer);
    // Small per-chip batches cannot amortise reading the weights (book ch. 1: B < C / W_hbm).
    return std::max(flopsTime, weightReadTime(layer)) + layerOverheadTime(layer);
}

double TrainingCost::weightReadTime(const LayerCost &layer) const
{
    return layer.weightElements * bytesPerElement(m_train.paramDtype) / m_hbm;
}

double TrainingCost::layerOverheadTime(const LayerCost &layer) const
{
    const double tokens = m_tokensMb;
    const double elementwiseTime = 2.0 * m_elementwiseTraffic * layer.elementwise * tokens * m_flowBytes / m_hbm;
    const double scoreTime = m_naivePasses * layer.scoreElements * tokens * m_flowBytes / m_hbm;
    // An fp8 recipe casts each matmul input (and its gradient, with a transposed copy) per step:
    // charged a third per pass-equivalent here so that forward and backward pay m_castBytes in
    // all (a fully recomputed forward pays its third again, as it casts again).
    const double castTime = m_castBytes / 3.0 * layer.linearInputs * tokens / m_hbm;
    // A TPU runs the step as one compiled program: no kernel launches between its matmuls.
    const bool launches = m_options.mode == CostMode::Achievable && !m_chip.isTpu();
    const double launchTime = launches ? kMatmulLaunchS * layer.matmulKernels : 0.0;
    const double hostTime = layer.expertFlops > 0 ? m_moeHostPerExpertS * localExperts() : 0.0;
    return elementwiseTime + scoreTime + castTime + launchTime + hostTime;
}

TrainingCost::RebuiltFlops TrainingCost::rebuiltFlops(const LayerCost &layer) const
{
    RebuiltFlops r;
    for (RematTensor t : kRematBackwardReads) {
        const double rebuilt = m_remat.rebuiltShare(t);
        (t == RematTensor::Context ? r.attention : r.matmul) += rebuilt * layer.rematFlops[at(t)];
        r.expert += rebuilt * layer.rematExpertFlops[at(t)];
    }
    // Rebuilding a tensor runs the norms, activations and casts in front of its matmul again: the
    // layer's non-matmul work in the share of its FLOPs that is rebuilt (all of it, as full remat
    // pays, when every tensor the backward reads is rebuilt, or when the policy keeps none of it;
    // its matmul launches are charged whole with it, a few microseconds a layer).
    const double layerFlops = layer.matmulFlops + layer.expertFlops + layer.attnCoreFlops;
    r.overheadShare = m_remat.rebuildsElementwise ? 1.0
                      : layerFlops > 0 ? std::min(1.0, (r.matmul + r.expert + r.attention) / layerFlops)
                                       : 0.0;
    return r;
}

double TrainingCost::customRecomputeTime(const LayerCost &layer) const
{
    const RebuiltFlops r = rebuiltFlops(layer);
    const double flopsTime =
        (r.matmul * layer.matmulShape + r.expert * layer.expertShape / m_expertEfficiency) * m_tokensMb / m_peak
        + r.attention * m_tokensMb / m_attnFwdRate;
    // The rebuilt matmuls read their weights again: at a small per-chip batch that, not their
    // FLOPs, sets their time, as in the forward (the weights in proportion to the FLOPs rebuilt).
    const double allFlops = layer.matmulFlops + layer.expertFlops;
    const double weightTime = allFlops > 0 ? (r.matmul + r.expert) / allFlops * weightReadTime(layer) : 0.0;
    return std::max(flopsTime, weightTime) + r.overheadShare * layerOverheadTime(layer);
}

double TrainingCost::customSavedElements(const LayerCost &layer) const
{
    // The layer input stays in HBM unless the policy offloads it (MaxText's decoder_layer_input).
    const RematPolicy &policy = *m_remat.policy;
    double elements = policy.offloaded.count(RematTensor::LayerInput) ? 0.0 : layer.savedFull;
    for (RematTensor t : policy.saved)
        if (t != RematTensor::MlpWo && t != RematTensor::LayerInput)
            elements += layer.rematWidth[at(t)];
    // What the policy rebuilds only in part (one of a gated MLP's up projections) keeps the rest.
    for (RematTensor t : kRematBackwardReads)
        if (policy.rebuilds(t))
            elements += (1.0 - m_remat.rebuiltShare(t)) * layer.rematWidth[at(t)];
    return elements;
}

double TrainingCost::offloadedElements(const LayerCost &layer) const
{
    double elements = 0;
    for (RematTensor t : m_remat.policy->offloaded)
        if (t != RematTensor::MlpWo)
            elements += layer.rematWidth[at(t)];
    return elements;
}

TrainingCost::StageWeights TrainingCost::stageWeights(int stage) const
{
    const ModelSpec &m = m_model;
    const double tp = m_d.tensor;
    const int moeLayers = moeLayersOnStage(stage);
    StageWeights w;
    w.dense = (layersOnStage(stage) - moeLayers) * double(m_params.attentionPerLayer + m_params.denseMlpPerLayer) / tp
              + moeLayers * double(m_params.attentionPerLayer + m_params.moeSharedPerLayer) / tp;
    if (moeLayers > 0)
        w.expert = moeLayers * double(m.moe->experts) / m_d.expert * double(m_params.expertParams) / tp;
    const bool first = stage == 0;
    const bool last = stage == m_d.pipeline - 1;
    if (first)
        w.dense += double(m_params.embedding) / tp;
    if (last && !(first && m.tiedEmbeddings)) // tied weights are copied to the last stage
        w.dense += double(m.vocab * m.dModel) / tp;
    return w;
}

double TrainingCost::stageWeightElements(int stage) const
{
    return stageExpertElements(stage) + stageDenseElements(stage);
}

double TrainingCost::stageDenseElements(int stage) const
{
    const auto stageElements = [&](int s) {
        return stageWeights(s).dense + (s == m_d.pipeline - 1 ? double(m_params.finalNorm) : 0.0);
    };
    double elements = stageElements(stage);
    // DualPipe: the mirror stage's parameters too (Table 2: parameters 2x), with its gradients
    // and optimizer states.
    if (dualPipe())
        elements += stageElements(m_d.pipeline - 1 - stage);
    return elements;
}

double TrainingCost::stageExpertElements(int stage) const
{
    double elements = stageWeights(stage).expert;
    if (dualPipe())
        elements += stageWeights(m_d.pipeline - 1 - stage).expert;
    return elements;
}

double TrainingCost::optimizerStates() const
{
    return optimizerStatesPerWeight(m_train.optimizer);
}

double TrainingCost::zeroShards() const
{
    // Context-parallel ranks hold the same weights and see different tokens, so the stacks shard
    // weight state over them as over data ranks: Megatron-Core builds its distributed optimizer on
    // the data-parallel group with context parallelism (get_data_parallel_group(
    // with_context_parallel=True), megatron/core/optimizer), and torchtitan applies FSDP2 over the
    // flattened dp_shard x cp mesh ("dp_shard_cp", torchtitan parallelize_llama.py; "fsdp" of size
    // dp_shard * cp in parallel_dims.py); MaxText shards the weights' embed dimension over fsdp,
    // sequence, context and expert (its logical axis rules).
    return double(m_d.data) * m_d.context;
}

TrainingCost::StageActivations TrainingCost::stageActivations(int stage) const
{
    const ModelSpec &m = m_model;
    StageActivations a;
    a.moeLayers = moeLayersOnStage(stage);
    a.denseLayers = layersOnStage(stage) - a.moeLayers;
    // The microbatches in flight on this stage under the schedule.
    const double pp = m_d.pipeline;
    const double mb = m_microbatches;
    switch (m_par.schedule) {
    case PipelineSchedule::GPipe:
        a.inFlight = mb;
        break;
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::ZeroBubble:
        a.inFlight = std::min(mb, pp - stage);
        break;
    case PipelineSchedule::Interleaved1F1B:
        a.inFlight = std::min(mb, pp - stage) * (1.0 + (pp - 1.0) / (pp * m_par.virtualStages));
        break;
    case PipelineSchedule::DualPipe:
        a.inFlight = std::min(mb, pp + 1.0); // Table 2 of the DeepSeek-V3 report: PP + 1 on every rank
        break;
    }
    const LayerCost &dense = m_layers.value().first;
    const LayerCost &sparse = m_layers.value().second;
    const auto saved = [&](const LayerCost &c) {
        switch (m_remat.policy->kind) {
        case Remat::None:
            return c.savedNone;
        case Remat::Selective:
            return c.savedSelective;
        case Remat::Full:
            return c.savedFull;
        case Remat::Custom:
            return customSavedElements(c);
        }
        return c.savedNone;
    };
    a.savedDense = saved(dense);
    a.savedMoe = saved(sparse);
    a.perMicrobatch = (a.denseLayers * a.savedDense + a.moeLayers * a.savedMoe) * m_peakTokensMb * m_actBytes;
    // One layer's activations are rebuilt during its backward.
    if (m_remat.policy->kind == Remat::Full || m_remat.policy->kind == Remat::Custom)
        a.working = std::max(dense.savedSelective, sparse.savedSelective) * m_peakTokensMb * m_actBytes;
    const bool last = stage == m_d.pipeline - 1 || (dualPipe() && stage == 0);
    if (last) // the logits (16-bit under an fp8 recipe), whose gradient overwrites them in place
        a.logits = m_peakTokensMb * double(m.vocab) / m_d.tensor * m_flowBytes;
    return a;
}

MemoryBreakdown TrainingCost::stageMemory(int stage) const
{
    const int z = m_par.zeroStage;
    const WeightStateBytes state =
        weightStateBytes(m_train, z, stageDenseElements(stage), stageExpertElements(stage),
                         {double(m_d.fsdp), zeroShards(), double(m_d.expert)});
    MemoryBreakdown mem;
    mem.params = state.params;
    mem.grads = state.grads;
    mem.optimizer = state.optimizer;
    const StageActivations a = stageActivations(stage);
    mem.activations = a.inFlight * a.perMicrobatch + a.working + a.logits;
    mem.total = mem.params + mem.grads + mem.optimizer + mem.activations;
    mem.capacity = double(m_chip.hbmBytes);
    mem.fits = mem.total <= mem.capacity;
    return mem;
}

void TrainingCost::addCollective(CollectiveOp op, std::string purpose, Role role,
                                 const std::vector<AxisSpan> &spans, double bytes, double count, double exposed,
                                 double timeEach, double overlapFlops, double overlapS, const CollectiveOptions *options)
{
    if (count <= 0 || bytes <= 0)
        return;
    const CollectiveOptions &o = options ? *options : m_options;
    m_out.collectives.push_back(
        collectiveUse(m_t, op, std::move(purpose), role, spans, bytes, count, timeEach, exposed,
                      collectiveCost(m_t, op, spans, bytes, o)));
    m_out.collectives.back().overlapFlops = overlapFlops;
    m_out.collectives.back().overlapS = overlapS;
    if (m_why.on())
        explainCollective(m_why, m_t, m_out.collectives.size() - 1, m_out.collectives.back(), spans, count, timeEach,
                          exposed, o, overlapRule(m_out.collectives.back().purpose));
}

void TrainingCost::addOperation(std::string op, const char *kind, double flops, double bytes,
                                double flopsRate, double count)
{
    if (!(flops > 0) || !(bytes > 0) || count <= 0)
        return;
    OperationCost c;
    c.op = std::move(op);
    c.kind = kind;
    c.flops = flops;
    c.bytes = bytes;
    c.timeS = std::max(flops / flopsRate, bytes / m_hbm);
    c.memoryS = bytes / m_hbm;
    c.countPerStep = static_cast<std::int64_t>(std::llround(count));
    m_out.operations.push_back(std::move(c));
    if (m_why.on())
        explainOperation(m_why, m_out.operations.size() - 1, m_out.operations.back(), flopsRate,
                         flopsRate == m_peak ? "the matmul rate: peak × flops_fraction" : "this kernel's own FLOPs/s",
                         m_hbm, "HBM bandwidth × hbm_efficiency");
}

DerivationValue TrainingCost::peakValue() const
{
    return {"peak_flops", m_chip.peakFlops(m_train.computeDtype), "",
            "catalog: " + m_chip.id + " peak " + std::string(dtypeName(m_train.computeDtype)) + " FLOPs/s"};
}

DerivationValue TrainingCost::flopsFractionValue() const
{
    if (m_options.mode == CostMode::Ideal)
        return {"flops_fraction", 1.0, "", "the book's ideal model: matmuls at the advertised peak"};
    return {"flops_fraction", m_chip.achievableFlopsFraction(m_train.computeDtype), "",
            m_chip.achievableFlopsFractionNote(m_train.computeDtype)};
}

DerivationValue TrainingCost::hbmValue() const
{
    return {"hbm_bandwidth", m_chip.hbmBandwidth, "", "catalog: " + m_chip.id + " HBM bytes/s"};
}

DerivationValue TrainingCost::hbmEfficiencyValue() const
{
    if (m_options.mode == CostMode::Ideal)
        return {"hbm_efficiency", 1.0, "", "the book's ideal model: the advertised bandwidth"};
    return {"hbm_efficiency", m_chip.achievable.hbmEfficiency, "",
            "catalog: " + m_chip.figureOwner("hbm_efficiency") + " achievable.hbm_efficiency, from streaming benchmarks"};
}

void TrainingCost::expose(double &exposed, double seconds, const char *name, long collective, const char *source)
{
    exposed += seconds;
    if (m_why.on())
        m_exposedParts.push_back(
            {name, seconds, collective >= 0 ? "collectives[" + std::to_string(collective) + "].exposed_s" : "", source});
}

void TrainingCost::explainLayer(const std::string &prefix, const LayerCost &c, double forward, double backward,
                                double recompute)
{
    if (!m_why.on())
        return;
    const double tokens = m_tokensMb;
    const DerivationValue tokensValue{"tokens", tokens, "terms.tokens_per_microbatch", ""};
    const std::string kernel = m_train.flashAttention ? "the flash attention kernel's" : "naive attention's";
    const auto ringNote = [](double share) {
        return share < 1.0 ? "; x " + formatShare(share)
                                 + " for the context-parallel blocks' merges and fp32 gradient sums in eager ops"
                           : std::string();
    };
    const std::string attention = m_why.term(
        prefix + "_attention_forward_s", attnCoreTime(c), "attention_flops * tokens / attention_rate",
        {{"attention_flops", c.attnCoreFlops, "",
          m_model.slidingWindow ? "per token on this chip: 2·keys·(heads / TP)·(d_qk + d_v), keys the causal flash kernel visits "
                            "averaged over the layers (T/2 in a global layer; a local one's window and its edge tile)"
                          : "per token on this chip: 2·T·(heads / TP)·(d_qk + d_v), halved for a causal flash kernel"},
         tokensValue,
         {"attention_rate", m_attnFwdRate, "",
          m_options.mode == CostMode::Ideal ? "the book's ideal model: the matmul peak"
                                            : kernel + " forward FLOPs/s at this sequence length and head dim (benchmark curves, derated like the matmuls)"
                                                  + ringNote(m_ringForwardShare)}},
        "The attention core (Q·Kᵀ and the weighted sum of V) costs FLOPs per token that grow with the sequence "
        "length; it runs at its kernel's own rate, not the weight matmuls'.",
        "4", "Dot-product attention");
    const std::string attentionBackward = m_why.term(
        prefix + "_attention_backward_s", attnBackwardTime(c), "attention_flops * tokens * backward_factor / attention_backward_rate",
        {{"attention_flops", c.attnCoreFlops, "", "per token on this chip, as in the forward"},
         tokensValue,
         {"backward_factor", m_attnBackwardFactor, "",
          m_attnBackwardFactor == kBackwardFactor ? "the book: a backward pass is twice the forward"
                                                  : "a flash kernel's backward recomputes the scores: 2.5x the forward (FlashAttention-2)"},
         {"attention_backward_rate", m_attnBwdRate, "", kernel + " backward FLOPs/s" + ringNote(m_ringBackwardShare)}},
        "The attention core's backward pass, at its kernel's backward rate.", "4", "Forward vs backward FLOPs");
    const std::string overhead = m_why.term(
        prefix + "_layer_overhead_s", layerOverheadTime(c),
        "2 * elementwise_traffic * elementwise_elements * tokens * flow_bytes / " + hbmRate()
            + " + naive_passes * score_elements * tokens * flow_bytes / " + hbmRate() + " + cast_bytes / 3 * linear_inputs * tokens / "
            + hbmRate() + " + launch_s * kernels + host_per_expert_s * local_experts",
        {{"elementwise_traffic", m_elementwiseTraffic, "",
          "HBM round trips of the layer's intermediates under this software stack (and, for torchtitan and DeepSpeed, workload.compile, "
          "compiled by default for a torchtitan Float8 plan); "
          "0 in the ideal model"},
         {"elementwise_elements", c.elementwise, "", "intermediate elements per token: norms, q/k/v, attention output, MLP activations"},
         tokensValue,
         {"flow_bytes", m_flowBytes, "", "bytes per activation element between kernels"},
         hbmValue(), hbmEfficiencyValue(),
         {"naive_passes", m_naivePasses, "", "HBM passes over the attention scores of a naive (non-flash) kernel"},
         {"score_elements", c.scoreElements, "", "attention score elements per token (0 with a flash kernel)"},
         {"cast_bytes", m_castBytes, "", "fp8 recipes outside XLA: bytes per matmul-input element for casts and transposes"},
         {"linear_inputs", c.linearInputs, "",
          c.moe ? "elements per token entering the weight matmuls, the routed experts' input once per routed copy"
                : "elements per token entering the weight matmuls"},
         {"launch_s", m_options.mode == CostMode::Achievable && !m_chip.isTpu() ? kMatmulLaunchS : 0.0, "",
          "per weight-matmul kernel launch on a GPU (0 on TPUs, which run one compiled program)"},
         {"kernels", c.matmulKernels, "", "weight-matmul kernels per layer forward"},
         {"host_per_expert_s", m_moeHostPerExpertS, "",
          "an MoE layer under Megatron-Core on Hopper: the GPU idles while the host reads the tokens per expert and "
          "launches each local expert's matmuls (Megatron-Bridge's Nsight profile of its 16-H100 Qwen3-30B-A3B recipe); "
          "0 for other stacks and chips"},
         {"local_experts", c.expertFlops > 0 ? localExperts() : 0.0, "", "routed experts on this chip (experts / expert degree)"}},
        "Work beside the matmuls: elementwise operations reading and writing HBM, naive attention's scores, fp8 "
        "casts, kernel launches and host waits. The book's ideal model leaves it out.",
        "1", "Where does the time go?");
    std::string flopsPart = "matmul_flops * shape";
    std::vector<DerivationValue> values{
        {"matmul_flops", c.matmulFlops, "", "weight-matmul FLOPs per token on this chip: 2 × its weights (book: 2·B·D·F per matmul)"},
        {"shape", c.matmulShape, "",
         m_options.mode == CostMode::Ideal ? "the book's ideal model: every shape at peak"
                                           : "1 / the share of peak a matmul of its reduction depth reaches (GEMM benchmarks by shape), FLOP-weighted"}};
    if (c.expertFlops > 0) {
        flopsPart += " + expert_flops * expert_shape / dispatch_efficiency";
        values.push_back({"expert_flops", c.expertFlops, "", "routed experts' FLOPs per token on this chip"});
        values.push_back({"expert_shape", c.expertShape, "", "the grouped expert matmuls' shape factor"});
        values.push_back({"dispatch_efficiency", m_expertEfficiency, "",
                          "routing and permutation work around the grouped expert matmuls (1 in the ideal model)"});
    }
    values.push_back(tokensValue);
    values.push_back(peakValue());
    values.push_back(flopsFractionValue());
    values.push_back({"attention_s", attnCoreTime(c), attention, ""});
    values.push_back({"weight_elements", c.weightElements, "", "weights this chip reads per layer"});
    values.push_back({"param_bytes", bytesPerElement(m_train.paramDtype), "", "plan: training.param_dtype"});
    values.push_back(hbmValue());
    values.push_back(hbmEfficiencyValue());
    values.push_back({"overhead_s", layerOverheadTime(c), overhead, ""});
    const std::string fwd = m_why.term(
        prefix + "_layer_forward_s", forward,
        "max((" + flopsPart + ") * tokens / (peak_flops * flops_fraction) + attention_s, weight_elements * param_bytes / "
            + hbmRate() + ") + overhead_s",
        values,
        "A layer's forward pass takes the longer of its FLOPs at the achievable rate and reading its weights from HBM "
        "(the roofline: small per-chip batches cannot amortise the weights), plus the work beside the matmuls.",
        "1", "Where does the time go?");
    const double shapeBackward = backwardShapeTime(c);
    const std::string bwd = m_why.term(
        prefix + "_layer_backward_s", backward, "2 * forward_s - 2 * attention_s + attention_backward_s + backward_shape_s",
        {{"forward_s", forward, fwd, ""},
         {"attention_s", attnCoreTime(c), attention, ""},
         {"attention_backward_s", attnBackwardTime(c), attentionBackward, ""},
         {"backward_shape_s", shapeBackward, "",
          "the backward's matmuls at their own shapes (reducing over N and over the tokens) less twice the forward's"}},
        "The backward pass does twice the forward's matmul FLOPs (the gradients of the inputs and of the weights); "
        "the attention core's backward runs at its kernel's backward rate.",
        "4", "Forward vs backward FLOPs");
    std::string expression = "0";
    std::vector<DerivationValue> recomputeValues;
    std::string words = "Without rematerialisation the backward reads saved activations: nothing is recomputed.";
    switch (m_remat.policy->kind) {
    case Remat::None:
        break;
    case Remat::Full:
        expression = "forward_s";
        recomputeValues = {{"forward_s", forward, fwd, ""}};
        words = "Full rematerialisation keeps only each layer's input and runs the whole forward pass again in the backward.";
        break;
    case Remat::Selective:
        expression = "attention_s";
        recomputeValues = {{"attention_s", attnCoreTime(c), attention, ""}};
        words = "Selective rematerialisation recomputes only the attention core, whose activations grow with T².";
        break;
    case Remat::Custom:
        expression = "rebuilt_s";
        recomputeValues = {{"rebuilt_s", recompute, "",
                            std::string("the FLOPs of the tensors the policy neither saves nor offloads, at the matmul and "
                                        "attention rates, and ")
                                + (m_remat.rebuildsElementwise ? "all" : "their share") + " of the work beside the matmuls"}};
        // A policy other than the plan's own is the stack's reading of it (stepRemat).
        if (m_remat.policy == &m_train.remat)
            words = "A custom remat policy recomputes exactly the tensors it neither saves nor offloads.";
        else if (m_train.remat.kind == Remat::Full)
            words = "Full checkpointing keeps only each layer's input; PyTorch's non-reentrant checkpoint "
                    "(or, compiled, the partitioner) stops the rebuilt forward once every tensor the backward reads "
                    "is back, so the MLP's down projection is not run again.";
        else
            words = "torchtitan's selective checkpointing keeps the outputs of the matmuls but every second one (the "
                    "keys, the output projection and a gated MLP's up projection are rebuilt) and of the attention "
                    "kernel; every norm, activation and cast runs again.";
        break;
    }
    m_why.term(prefix + "_layer_recompute_s", recompute, expression, recomputeValues, words, "4", "Gradient checkpointing");
}

void TrainingCost::explainMemory(int stage, const MemoryBreakdown &mem)
{
    if (!m_why.on())
        return;
    const int z = m_par.zeroStage;
    const bool split = m_d.expert > 1;
    const std::string where = m_d.pipeline > 1 ? "this pipeline stage's weights (its layers, and the embedding or output layer at the ends), over tensor and expert parallelism"
                                               : "the model's weights over tensor and expert parallelism";
    const DerivationValue fsdpValue{"fsdp", double(m_d.fsdp), "", "plan: parallelism fsdp degree"};
    const auto dataShards = [&](int from) -> DerivationValue {
        const bool sharded = z >= from;
        const std::string axes = m_d.context > 1 ? "the data and context axes" : "the data axis";
        const std::string what = split && from < 3 ? "the routed experts' share" : "this";
        return {"data_shards", sharded ? zeroShards() : 1.0, "",
                sharded ? "ZeRO stage " + std::to_string(z) + " shards " + what + " over " + axes + " too"
                        : "ZeRO stage " + std::to_string(z) + ": replicated over " + axes};
    };
    // With expert ranks carved from the data ranks, the weights the expert ranks share shard over
    // them too (stageMemory).
    const auto denseShards = [&](int from) -> DerivationValue {
        const bool sharded = z >= from;
        return {"dense_shards", sharded ? zeroShards() * m_d.expert : 1.0, "",
                sharded ? "ZeRO stage " + std::to_string(z)
                              + " shards the weights every expert rank holds over the data, context and expert axes"
                        : "ZeRO stage " + std::to_string(z) + ": replicated"};
    };
    const auto record = [&](const std::string &path, double value, const std::string &perWeight,
                            std::vector<DerivationValue> bytes, int from, const std::string &words) {
        std::vector<DerivationValue> values;
        std::string expression;
        if (split && from < 3) {
            values = {{"dense_weights", stageDenseElements(stage), "", where + ": those every expert rank holds"},
                      {"expert_weights", stageExpertElements(stage), "", "the routed experts this chip holds"}};
            expression = "(dense_weights / dense_shards + expert_weights / data_shards) * " + perWeight + " / fsdp";
        } else {
            values = {{"weights", stageWeightElements(stage), "", where}};
            expression = "weights * " + perWeight + " / (fsdp * data_shards)";
        }
        values.insert(values.end(), bytes.begin(), bytes.end());
        values.push_back(fsdpValue);
        values.push_back(dataShards(from));
        if (split && from < 3)
            values.push_back(denseShards(from));
        m_why.record(path, value, expression, std::move(values), words, "5", "FSDP / ZeRO");
    };
    record("memory_per_chip.params", mem.params, "param_bytes",
           {{"param_bytes", bytesPerElement(m_train.paramDtype), "", "plan: training.param_dtype"}}, 3,
           "Each chip holds its shard of the weights: FSDP (ZeRO-3) divides them over its axes.");
    record("memory_per_chip.grads", mem.grads, "grad_bytes",
           {{"grad_bytes", bytesPerElement(m_train.gradDtype), "", "plan: training.grad_dtype"}}, 2,
           "Gradients have the weights' shape; ZeRO-2 and above shard them over the data (and context) axes too.");
    const double states = optimizerStates();
    record("memory_per_chip.optimizer", mem.optimizer, "(states * state_bytes + master_bytes)",
           {{"states", states, "", "optimizer states per weight: Adam 2 (two moments), SGD 1, Adafactor ~0.1"},
            {"state_bytes", bytesPerElement(m_train.optimizerDtype), "", "plan: training.optimizer_dtype"},
            {"master_bytes", m_train.masterWeights ? bytesPerElement(m_train.optimizerDtype) : 0.0, "",
             m_train.masterWeights ? "an fp32 master copy of the weights" : "no master copy"}},
           1, "The optimizer's states per weight (Adam's two moments, a master copy), sharded by ZeRO-1 and above.");
    const StageActivations a = stageActivations(stage);
    std::string schedule = "GPipe keeps every microbatch's activations until its backward";
    switch (m_par.schedule) {
    case PipelineSchedule::GPipe:
        break;
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::ZeroBubble:
        schedule = "1F1B: stage s holds min(microbatches, stages - s)";
        break;
    case PipelineSchedule::Interleaved1F1B:
        schedule = "interleaved 1F1B: min(microbatches, stages - s)·(1 + (stages - 1)/(stages·virtual stages))";
        break;
    case PipelineSchedule::DualPipe:
        schedule = "DualPipe: stages + 1 on every rank (DeepSeek-V3 report, Table 2)";
        break;
    }
    m_why.record("memory_per_chip.activations", mem.activations,
                 "in_flight * ((dense_layers * saved_dense + moe_layers * saved_moe) * tokens * act_bytes) + rebuilt_bytes + logits_bytes",
                 {{"in_flight", a.inFlight, "", schedule},
                  {"dense_layers", double(a.denseLayers), "", "dense layers on this stage"},
                  {"saved_dense", a.savedDense, "", "elements per token a dense layer keeps for its backward under remat " + std::string(rematName(m_train.remat.kind))},
                  {"moe_layers", double(a.moeLayers), "", "MoE layers on this stage"},
                  {"saved_moe", a.savedMoe, "", "elements per token an MoE layer keeps"},
                  {"tokens", m_peakTokensMb, m_peakTokensMb == m_tokensMb ? "terms.tokens_per_microbatch" : "",
                   m_peakTokensMb == m_tokensMb ? "" : "the largest microbatch's tokens (the microbatches are uneven)"},
                  {"act_bytes", m_actBytes, "", eightBitEmulated() ? "16-bit: the chip has no units for the plan's compute_dtype"
                                                                   : "plan: training.compute_dtype"},
                  {"rebuilt_bytes", a.working, "", "one layer's activations, rebuilt during its backward (full or custom remat)"},
                  {"logits_bytes", a.logits, "", "the logits on the last stage: tokens × vocab / tensor"}},
                 "Activations: what each layer keeps for its backward, per token, times the tokens of the microbatches in "
                 "flight on this stage. Rematerialisation trades these bytes for recompute.",
                 "4", "Gradient checkpointing");
    m_why.record("memory_per_chip.kv_cache", mem.kvCache, "0", {}, "Training keeps no KV cache.", "7", "KV cache");
    m_why.record("memory_per_chip.total", mem.total, "params + grads + optimizer + activations",
                 {{"params", mem.params, "memory_per_chip.params", ""},
                  {"grads", mem.grads, "memory_per_chip.grads", ""},
                  {"optimizer", mem.optimizer, "memory_per_chip.optimizer", ""},
                  {"activations", mem.activations, "memory_per_chip.activations", ""}},
                 "A chip must hold its weights, gradients, optimizer states and activations at once.", "5",
                 "Per-device memory");
    explainCapacity(m_why, m_chip);
}

void TrainingCost::recordOperations(const LayerCost &dense, const LayerCost &sparse, int stageLayers, int stageDense,
                                    int stageMoe, const OperationRecompute &recompute)
{
    const ModelSpec &m = m_model;
    const double tp = m_d.tensor;
    const double B = m_tokensMb;
    const double d = double(m.dModel);
    const double act = m_actBytes;
    const double wb = bytesPerElement(m_train.paramDtype);
    const double width = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
    const double vDim = attentionHeadDims(m).second;
    // Occurrences per step: forward, backward (two matmuls of the forward's size), recompute.
    const auto passes = [&](double recomputed) { return (1.0 + kBackwardFactor + recomputed) * m_microbatches; };
    // The step counts every attention parameter (norms and biases too) as matmul weights: the
    // output projection is heads x d_v x d, the queries, keys and values are the rest.
    const double outW = double(m.heads) * vDim * d / tp;
    const double qkvW = double(m_params.attentionPerLayer) / tp - outW;
    const LayerCost &attn = stageDense > 0 ? dense : sparse;
    // A matmul's rate for its shape, averaged over its passes: the forward (and its recompute)
    // reduces over K, the input gradient over N, the weight gradient over the tokens.
    const auto shaped = [&](double k, double n, double recomputed, DType type, double rate) {
        const double inverse = ((1.0 + recomputed) * shapeInverse(k, type) + shapeInverse(n, type) + shapeInverse(B, type))
                               / (1.0 + kBackwardFactor + recomputed);
        return rate / inverse;
    };
    const DType type = m_train.computeDtype;
    addOperation("attention qkv projection", "matmul", 2.0 * B * qkvW, act * B * (d + attn.qkvWidth) + wb * qkvW,
                 shaped(d, attn.qkvWidth, recompute.qkv, type, m_peak), stageLayers * passes(recompute.qkv));
    addOperation("attention output projection", "matmul", 2.0 * B * outW,
                 act * B * (attn.attnOutWidth + d) + wb * outW, shaped(attn.attnOutWidth, d, recompute.outProj, type, m_peak),
                 stageLayers * passes(recompute.outProj));
    const double attnBytes =
        act * B * (attn.qkvWidth + attn.attnOutWidth) + m_naivePasses * attn.scoreElements * B * act;
    if (m_attnBackwardFactor == kBackwardFactor && m_attnBwdRate == m_attnFwdRate) {
        // The book's count: the backward is two more matmuls of the forward's size and rate.
        addOperation("attention core", "attention", B * attn.attnCoreFlops, attnBytes, m_attnFwdRate,
                     stageLayers * passes(recompute.core));
    } else {
        // A fused kernel's backward has its own FLOPs (2.5x, the scores recomputed) and rate, and
        // reads the forward's tensors and the output gradient and writes three gradients.
        addOperation("attention core", "attention", B * attn.attnCoreFlops, attnBytes, m_attnFwdRate,
                     stageLayers * (1.0 + recompute.core) * m_microbatches);
        addOperation("attention core (backward)", "attention", B * attn.attnCoreFlops * m_attnBackwardFactor,
                     2.0 * attnBytes, m_attnBwdRate, stageLayers * m_microbatches);
    }
    if (stageDense > 0) {
        const double f = double(m.dFf);
        const double downW = d * f / tp;
        const double upW = double(m_params.denseMlpPerLayer) / tp - downW;
        addOperation(m.mlp == MlpKind::Gated ? "mlp up+gate" : "mlp up", "matmul", 2.0 * B * upW,
                     act * B * (d + (width - 1.0) * f / tp) + wb * upW,
                     shaped(d, (width - 1.0) * f / tp, recompute.mlpUp, type, m_peak), stageDense * passes(recompute.mlpUp));
        addOperation("mlp down", "matmul", 2.0 * B * downW, act * B * (f / tp + d) + wb * downW,
                     shaped(f / tp, d, recompute.mlpDown, type, m_peak), stageDense * passes(recompute.mlpDown));
        // About one FLOP per element of the intermediates (the step time counts only their bytes).
        addOperation("elementwise", "elementwise", B * dense.elementwise,
                     2.0 * m_elementwiseTraffic * dense.elementwise * B * act, m_peak,
                     stageDense * passes(recompute.elementwise));
    }
    if (stageMoe > 0) {
        const MoeSpec &e = *m.moe;
        const double fe = double(e.dFfExpert);
        const double sharedW = double(m_params.moeSharedPerLayer) / tp;
        addOperation("moe router and shared experts", "matmul", 2.0 * B * sharedW,
                     act * B * (2.0 * d + e.experts + e.sharedExperts * width * fe / tp) + wb * sharedW,
                     shaped(d, std::max(double(e.experts), e.sharedExperts * (width - 1.0) * fe / tp), recompute.moeShared,
                            type, m_peak),
                     stageMoe * passes(recompute.moeShared));
        const double localWeights = double(e.experts) / m_d.expert * double(m_params.expertParams) / tp;
        addOperation("moe routed experts", "matmul", B * sparse.expertFlops,
                     act * B * e.expertsPerToken * (2.0 * d + width * fe / tp) + wb * localWeights,
                     m_peak * m_expertEfficiency * (1.0 + kBackwardFactor + recompute.moeRouted)
                         / ((1.0 + recompute.moeRouted) * sparse.expertShape + kBackwardFactor * sparse.expertShapeBackward),
                     stageMoe * passes(recompute.moeRouted));
        addOperation("elementwise (moe layer)", "elementwise", B * sparse.elementwise,
                     2.0 * m_elementwiseTraffic * sparse.elementwise * B * act, m_peak,
                     stageMoe * passes(recompute.elementwise));
    }
    // The logits matmul of the last stage: forward and backward, never recomputed.
    const double logitsW = double(m.vocab * m.dModel) / tp;
    addOperation("logits (unembedding)", "matmul", 2.0 * B * logitsW, act * B * (d + double(m.vocab) / tp) + wb * logitsW,
                 shaped(d, double(m.vocab) / tp, 0.0, m_peak16 == m_peak ? type : DType::Bf16, m_peak16),
                 (1.0 + kBackwardFactor) * m_microbatches);
    // The loss over the logits: about one FLOP per logit, its bytes as the stack's kernels move them.
    addOperation("loss (softmax cross-entropy)", "elementwise", B * double(m.vocab) / tp, m_lossBytes * B * double(m.vocab) / tp,
                 m_peak, m_microbatches);
}

void TrainingCost::setKernelRates(bool ideal)
{
    m_peak16 = m_peak;
    m_attnFwdRate = m_peak;
    m_attnBwdRate = m_peak;
    m_attnBackwardFactor = kBackwardFactor;
    m_castBytes = 0;
    if (ideal) // the book: every matmul at the advertised peak, backward twice the forward
        return;
    if (m_chip.hasEightBitUnits(m_train.computeDtype)) {
        // 8-bit recipes (Transformer Engine and torchao float8 on GPUs, AQT on TPUs) run only the
        // weight matmuls in 8 bits; the attention core and the output layer stay in bf16.
        m_peak16 = m_chip.peakFlops(DType::Bf16) * m_chip.achievable.flopsFraction;
        // Transformer Engine and torchao cast every fp8 operand from bf16 with a per-tensor scale
        // (amax) in kernels of their own; XLA fuses the quantization into its neighbours, AQT's on
        // TPUs and MaxText's fp8 on GPUs.
        m_castBytes = eightBitCastBytes(m_chip, m_train.stack, m_train.computeDtype);
    }
    m_attnFwdRate = m_peak16;
    m_attnBwdRate = m_peak16;
    if (!m_train.flashAttention)
        return; // naive attention: batched matmuls at the matmul rate, probabilities stored
    m_attnBackwardFactor = kFlashBackwardFactor;
    const auto found = m_chip.attentionKernels.find(attentionKernelFor(m_chip, m_train.stack));
    const double derate = m_chip.benchmarkDerating();
    if (found == m_chip.attentionKernels.end() || derate <= 0)
        return; // no curve: the attention core runs at the matmul rate
    // A kernel's benchmark rate, derated as the chip's matmuls are from their benchmark to a
    // whole training step (flops_fraction / matmul_benchmark_fraction): the same clocks, the
    // same kernels competing with communication for the chip.
    const double peak16 = m_chip.peakFlops(DType::Bf16);
    const double S = double(m_train.seqLen);
    const double T = attentionKernelLength(m_chip, m_train.stack, S, m_d.context);
    m_attnFwdRate = peak16 * attentionKernelShare(found->second, m_model, T, S, false) * derate;
    m_attnBwdRate = peak16 * attentionKernelShare(found->second, m_model, T, S, true) * derate;
}

void TrainingCost::chargeContextRingTraffic()
{
    // A context-parallel implementation that merges each block's output and accumulates its
    // gradients in separate eager ops (PyTorch's) moves those bytes through HBM beside the
    // kernels. They scale with the blocks (one per context rank), the kernels' FLOPs with the
    // whole sequence: charged to the attention core as a lower effective rate, so a recomputed
    // forward pays them again.
    if (!m_train.flashAttention || m_ring.forwardOutput.perBlock <= 0)
        return;
    const ModelSpec &m = m_model;
    const double tp = m_d.tensor;
    const auto [qkDim, vDim] = attentionHeadDims(m);
    const double heads = m.heads / tp;
    const double kvHeads = ringKeyValueHeads();
    const double blocks = m_d.context;
    // Per token: the causal kernel's FLOPs (as LayerCost counts them) and the ring's bytes.
    const double flops = 2.0 * causalAttendedKeys(m, double(m_train.seqLen), kAttentionTileKeys) * heads * (qkDim + vDim);
    const double keyValues = kvHeads * (qkDim + vDim);
    const double forwardBytes = m_ring.forwardOutput.total(blocks - 1.0) * heads * vDim
                                + m_ring.forwardKeyValue.total(blocks - 1.0) * keyValues;
    const double backwardBytes = m_ring.backwardQuery.total(blocks) * heads * qkDim
                                 + m_ring.backwardKeyValue.total(blocks) * keyValues;
    const double forwardKernel = flops / m_attnFwdRate;
    const double backwardKernel = m_attnBackwardFactor * flops / m_attnBwdRate;
    m_ringForwardShare = forwardKernel / (forwardKernel + forwardBytes / m_hbm);
    m_ringBackwardShare = backwardKernel / (backwardKernel + backwardBytes / m_hbm);
    m_attnFwdRate *= m_ringForwardShare;
    m_attnBwdRate *= m_ringBackwardShare;
}

OperationRecompute TrainingCost::operationRecompute(const LayerCost &dense, const LayerCost &sparse) const
{
    OperationRecompute r;
    switch (m_remat.policy->kind) {
    case Remat::None:
        break;
    case Remat::Selective:
        r.core = 1.0;
        break;
    case Remat::Full:
        r = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
        break;
    case Remat::Custom: {
        const auto share = [&](RematTensor t) { return m_remat.rebuiltShare(t); };
        double qkv = 0;
        double rebuiltQkv = 0;
        for (RematTensor t : {RematTensor::QueryProj, RematTensor::KeyProj, RematTensor::ValueProj}) {
            qkv += dense.rematFlops[at(t)];
            rebuiltQkv += share(t) * dense.rematFlops[at(t)];
        }
        r.qkv = qkv > 0 ? rebuiltQkv / qkv : 0.0;
        r.outProj = share(RematTensor::OutProj);
        r.core = share(RematTensor::Context);
        r.mlpUp = share(RematTensor::MlpWi);
        r.elementwise = rebuiltFlops(dense).overheadShare;
        if (m_model.moe) {
            const double sharedFlops = 2.0 * double(m_params.moeSharedPerLayer) / m_d.tensor;
            r.moeShared = share(RematTensor::MlpWi) * sparse.rematFlops[at(RematTensor::MlpWi)] / sharedFlops;
            r.moeRouted = sparse.expertFlops > 0
                              ? share(RematTensor::MlpWi) * sparse.rematExpertFlops[at(RematTensor::MlpWi)]
                                    / sparse.expertFlops
                              : 0.0;
        }
        break;
    }
    }
    return r;
}

std::optional<Error> TrainingCost::run()
{
    if (auto error = validate())
        return error;
    // Room for every operation and collective a step lists (recordOperations: at most 12; a
    // step's collectives: a dozen at most), so the result is filled without regrowing.
    m_out.operations.reserve(12);
    m_out.collectives.reserve(16);
    const ModelSpec &m = m_model;
    const Achievable &a = m_chip.achievable;
    const bool ideal = m_options.mode == CostMode::Ideal;
    m_peak = m_chip.peakFlops(m_train.computeDtype) * (ideal ? 1.0 : m_chip.achievableFlopsFraction(m_train.computeDtype));
    m_hbm = m_chip.hbmBandwidth * (ideal ? 1.0 : a.hbmEfficiency);
    for (std::size_t t = 0; t < m_tileK0.size(); ++t)
        m_tileK0[t] = m_chip.matmulTileOverhead(static_cast<DType>(t));
    setKernelRates(ideal);
    if (!ideal && m_d.context > 1) {
        m_ring = contextParallelRing(m_chip, m_train.stack);
        chargeContextRingTraffic();
    }
    if (m.moe && !ideal) {
        m_expertEfficiency = expertDispatchEfficiency(m_chip, m_peak / m_hbm, double(m.moe->dFfExpert));
        m_moeHostPerExpertS = moeHostIssueSeconds(m_chip, m_train.stack);
    }
    // A chip without units for an 8-bit compute dtype runs the plan's matmuls at its 16-bit rate
    // (peakFlops) and keeps 16-bit activations: no recipe stores what it cannot multiply.
    const bool emulated = eightBitEmulated();
    m_actBytes = emulated ? bytesPerElement(DType::Bf16) : bytesPerElement(m_train.computeDtype);
    // MaxText's int8 (AQT) runs on TPUs were calibrated with activations exchanged at the compute
    // dtype; that is left as it was.
    m_flowBytes = ideal || m_chip.isTpu() ? m_actBytes : std::max(m_actBytes, bytesPerElement(DType::Bf16));
    const double T = double(m_train.seqLen);
    const double batchShards = double(m_d.data) * m_d.fsdp * m_d.expert;
    m_seqsPerReplica = ceilDiv(double(m_train.globalBatch), batchShards);
    m_microbatches = effectiveMicrobatches();
    // Uneven microbatches are timed at their mean size (the pipeline runs every sequence once);
    // activation memory is held for the largest.
    const double seqsPerMicrobatch = m_seqsPerReplica / m_microbatches;
    m_tokensMb = seqsPerMicrobatch * T / m_d.context;
    m_peakTokensMb = ceilDiv(m_seqsPerReplica, m_microbatches) * T / m_d.context;
    if (m_why.on())
        m_why.term("tokens_per_microbatch", m_tokensMb,
                   "ceil(global_batch / (data * fsdp * expert)) / microbatches * seq_len / context",
                   {{"global_batch", double(m_train.globalBatch), "", "plan: training.global_batch (sequences)"},
                    {"data", double(m_d.data), "", "plan: data-parallel degree"},
                    {"fsdp", double(m_d.fsdp), "", "plan: FSDP degree"},
                    {"expert", double(m_d.expert), "", "plan: expert-parallel degree (it splits the batch too)"},
                    {"microbatches", m_microbatches, "", microbatchesNote()},
                    {"seq_len", T, "", "plan: training.seq_len"},
                    {"context", double(m_d.context), "", "plan: context-parallel degree (splits each sequence)"}},
                   "The tokens one chip works on per microbatch: the batch split over the data-like axes, then into "
                   "microbatches, each sequence split over context parallelism. Tensor parallelism does not split them.",
                   "5", "Notation and the simplified model");
    const double mb = m_microbatches;
    const double tp = m_d.tensor;
    const double pp = m_d.pipeline;

    // Recompute: full remat runs the forward pass again, selective only the attention core, a
    // custom policy the tensors it neither saves nor offloads.
    const bool custom = m_remat.policy->kind == Remat::Custom;
    const double recomputeFactor = m_remat.policy->kind == Remat::Full ? 1.0 : 0.0;
    // Worked out once, for the step here and for each stage's memory (stageActivations).
    m_layers.emplace(layerCost(false), LayerCost{});
    m_layers->second = m.moe ? layerCost(true) : m_layers->first;
    const LayerCost &dense = m_layers->first;
    const LayerCost &sparse = m_layers->second;
    const double denseFwd = layerForwardTime(dense);
    const double sparseFwd = layerForwardTime(sparse);
    // Recompute time of one layer and microbatch.
    const auto layerRecompute = [&](const LayerCost &c, double fwd) {
        if (custom)
            return customRecomputeTime(c);
        return recomputeFactor * fwd + (m_remat.policy->kind == Remat::Selective ? attnCoreTime(c) : 0.0);
    };
    const double denseRecompute = layerRecompute(dense, denseFwd);
    const double sparseRecompute = layerRecompute(sparse, sparseFwd);
    // The backward of the weight matmuls is twice their forward; the attention kernel's has its
    // own FLOPs and rate.
    const auto layerBackward = [&](const LayerCost &c, double fwd) {
        return fwd * kBackwardFactor - kBackwardFactor * attnCoreTime(c) + attnBackwardTime(c) + backwardShapeTime(c);
    };
    const double denseBackward = layerBackward(dense, denseFwd);
    const double sparseBackward = layerBackward(sparse, sparseFwd);
    if (m_why.on()) {
        explainLayer("dense", dense, denseFwd, denseBackward, denseRecompute);
        if (m.moe)
            explainLayer("moe", sparse, sparseFwd, sparseBackward, sparseRecompute);
    }
    const auto layerTrain = [&](double fwd, double backward, double recompute) { return fwd + backward + recompute; };
    // The logits matmul, forward and backward ([tokens, d] x [d, vocab / TP]), in 16 bits.
    const DType logitsType = m_peak16 == m_peak ? m_train.computeDtype : DType::Bf16;
    const double unembedTime = 2.0 * double(m.vocab * m.dModel) / tp * m_tokensMb / m_peak16
                               * (shapeInverse(double(m.dModel), logitsType) + shapeInverse(double(m.vocab) / tp, logitsType)
                                  + shapeInverse(m_tokensMb, logitsType));
    if (m_why.on()) {
        const bool ideal16 = ideal || logitsType != DType::Bf16 || m_peak16 == m_peak;
        m_why.term("unembed_s", unembedTime,
                   "2 * vocab * d_model / tensor * tokens / logits_rate * (shape_d + shape_vocab + shape_tokens)",
                   {{"vocab", double(m.vocab), "", "model: vocabulary size"},
                    {"d_model", double(m.dModel), "", "model: d_model"},
                    {"tensor", tp, "", "plan: tensor-parallel degree (splits the vocabulary)"},
                    {"tokens", m_tokensMb, "terms.tokens_per_microbatch", ""},
                    {"logits_rate", m_peak16, "",
                     ideal16 ? "the matmul rate: peak × flops_fraction" : "the bf16 matmul rate (an fp8 recipe keeps the logits in bf16)"},
                    {"shape_d", shapeInverse(double(m.dModel), logitsType), "", "forward: 1 / the share of peak at depth d_model"},
                    {"shape_vocab", shapeInverse(double(m.vocab) / tp, logitsType), "", "input gradient: at depth vocab / tensor"},
                    {"shape_tokens", shapeInverse(m_tokensMb, logitsType), "", "weight gradient: at depth tokens"}},
                   "The output layer's matmul, [tokens, d] × [d, vocab], forward and backward (three matmuls of 2·tokens·d·vocab "
                   "FLOPs, one per pass shape) on the last stage.",
                   "4", "Counting FLOPs of contractions");
    }
    // The softmax cross-entropy streams the [tokens, vocab / TP] logits through HBM on the last
    // stage, forward and backward: about as long as the logits matmul itself for a 2K-wide model
    // with a 128K vocabulary under an unfused loss, negligible for a wide one.
    const double lossTime = m_lossBytes * double(m.vocab) / tp * m_tokensMb / m_hbm;
    if (m_why.on() && lossTime > 0) {
        m_why.term("loss_s", lossTime, "loss_bytes * vocab / tensor * tokens / " + hbmRate(),
                   {{"loss_bytes", m_lossBytes, "",
                     "HBM bytes per logit per step of the cross-entropy kernels (the passes they make over the logits): the "
                     "stack's, or a fused or unfused loss as the plan's loss_fusion (or a compiled torchtitan plan) says"},
                    {"vocab", double(m.vocab), "", "model: vocabulary size"},
                    {"tensor", tp, "", "plan: tensor-parallel degree (splits the vocabulary)"},
                    {"tokens", m_tokensMb, "terms.tokens_per_microbatch", ""},
                    hbmValue(), hbmEfficiencyValue()},
                   "The loss: softmax cross-entropy over the logits, forward and backward, at HBM speed on the last stage. "
                   "An unfused fp32 loss (Megatron-LM's) reads and writes them about a dozen times; a fused kernel "
                   "reads them twice and writes the gradient once. The book's ideal model leaves it out.",
                   "1", "Where does the time go?");
    }

    // The busiest stage sets the pace of the pipeline.
    int busiest = 0;
    double tMb = 0;
    double tMbRecompute = 0;
    const auto stageTime = [&](int s) {
        const int moeLayers = moeLayersOnStage(s);
        const int denseLayers = layersOnStage(s) - moeLayers;
        double t = denseLayers * layerTrain(denseFwd, denseBackward, denseRecompute)
                   + moeLayers * layerTrain(sparseFwd, sparseBackward, sparseRecompute);
        if (s == m_d.pipeline - 1)
            t += unembedTime + lossTime;
        return std::pair{t, denseLayers * denseRecompute + moeLayers * sparseRecompute};
    };
    // Under DualPipe a rank runs half the microbatches through its stage and half through the
    // mirror stage: its time per microbatch is the mean of the two.
    for (int s = 0; s < m_d.pipeline; ++s) {
        auto [t, recompute] = stageTime(s);
        if (dualPipe()) {
            const auto [mirror, mirrorRecompute] = stageTime(m_d.pipeline - 1 - s);
            t = 0.5 * (t + mirror);
            recompute = 0.5 * (recompute + mirrorRecompute);
        }
        if (t > tMb) {
            tMb = t;
            busiest = s;
            tMbRecompute = recompute;
        }
    }
    const int stageLayers = layersOnStage(busiest);
    const int stageMoe = moeLayersOnStage(busiest);
    const int stageDense = stageLayers - stageMoe;
    if (m_why.on()) {
        const std::string words = "The busiest pipeline stage's time per microbatch: each layer's forward, backward and "
                                  "recompute, and the output layer on the last stage. It sets the pipeline's pace.";
        if (dualPipe()) {
            m_why.term("stage_microbatch_s", tMb, "stage_s", {{"stage_s", tMb, "", "DualPipe: the mean of this rank's stage and its mirror stage"}},
                       words, "5", "Pipelining");
        } else {
            std::string expression = "dense_layers * (dense_forward_s + dense_backward_s + dense_recompute_s)";
            std::vector<DerivationValue> values{
                {"dense_layers", double(stageDense), "", "dense layers on the busiest stage"},
                {"dense_forward_s", denseFwd, "terms.dense_layer_forward_s", ""},
                {"dense_backward_s", denseBackward, "terms.dense_layer_backward_s", ""},
                {"dense_recompute_s", denseRecompute, "terms.dense_layer_recompute_s", ""}};
            if (m.moe) {
                expression += " + moe_layers * (moe_forward_s + moe_backward_s + moe_recompute_s)";
                values.push_back({"moe_layers", double(stageMoe), "", "MoE layers on the busiest stage"});
                values.push_back({"moe_forward_s", sparseFwd, "terms.moe_layer_forward_s", ""});
                values.push_back({"moe_backward_s", sparseBackward, "terms.moe_layer_backward_s", ""});
                values.push_back({"moe_recompute_s", sparseRecompute, "terms.moe_layer_recompute_s", ""});
            }
            if (busiest == m_d.pipeline - 1) {
                expression += lossTime > 0 ? " + unembed_s + loss_s" : " + unembed_s";
                values.push_back({"unembed_s", unembedTime, "terms.unembed_s", ""});
                if (lossTime > 0)
                    values.push_back({"loss_s", lossTime, "terms.loss_s", ""});
            }
            m_why.term("stage_microbatch_s", tMb, expression, values, words, "5", "Pipelining");
        }
    }

    m_out.critical.tokensPerChip = m_tokensMb;
    StepTime &step = m_out.step;
    step.compute = mb * tMb;
    step.recompute = mb * tMbRecompute;
    step.tokens = double(m_train.globalBatch) * T;
    step.microbatches = m_microbatches;
    // Model FLOPs count attention as causal kernels execute it (half the book's T^2 term), so that
    // MFU compares like with like against the compute time above (and matches MaxText's count).
    step.flops = step.tokens * causalTrainingFlopsPerToken(m, m_train.seqLen);
    if (m_why.on()) {
        m_why.record("step.compute_s", step.compute, "microbatches * stage_microbatch_s",
                     {{"microbatches", mb, "", microbatchesNote()},
                      {"stage_microbatch_s", tMb, "terms.stage_microbatch_s", ""}},
                     "Every microbatch passes through the busiest stage: the step's compute is the microbatches "
                     "times that stage's time per microbatch (recompute included).",
                     "5", "Notation and the simplified model");
        if (dualPipe()) {
            m_why.record("step.recompute_s", step.recompute, "microbatches * stage_recompute_s",
                         {{"microbatches", mb, "", microbatchesNote()},
                          {"stage_recompute_s", tMbRecompute, "", "DualPipe: the mean recompute of this rank's stage and its mirror"}},
                         "The part of the compute spent running forward passes again for the backward.", "4",
                         "Gradient checkpointing");
        } else {
            std::string expression = "microbatches * (dense_layers * dense_recompute_s";
            std::vector<DerivationValue> values{{"microbatches", mb, "", microbatchesNote()},
                                                {"dense_layers", double(stageDense), "", "dense layers on the busiest stage"},
                                                {"dense_recompute_s", denseRecompute, "terms.dense_layer_recompute_s", ""}};
            if (m.moe) {
                expression += " + moe_layers * moe_recompute_s";
                values.push_back({"moe_layers", double(stageMoe), "", "MoE layers on the busiest stage"});
                values.push_back({"moe_recompute_s", sparseRecompute, "terms.moe_layer_recompute_s", ""});
            }
            m_why.record("step.recompute_s", step.recompute, expression + ")", values,
                         "The part of the compute spent running forward passes again for the backward: the price of "
                         "the activation memory rematerialisation saves.",
                         "4", "Gradient checkpointing");
        }
        m_why.record("step.tokens", step.tokens, "global_batch * seq_len",
                     {{"global_batch", double(m_train.globalBatch), "", "plan: training.global_batch (sequences)"},
                      {"seq_len", T, "", "plan: training.seq_len"}},
                     "The tokens of one step: the global batch of sequences times their length.", "5",
                     "Notation and the simplified model");
        const double matmulPerToken = trainingFlopsPerToken(m, 0);
        std::vector<DerivationValue> flopValues{
            {"tokens", step.tokens, "step.tokens", ""},
            {"matmul_flops_per_token", matmulPerToken, "", "6 × the parameters a token meets (the book's 6·N)"}};
        std::string expression = "tokens * (matmul_flops_per_token + 0.5 * (flops_per_token - matmul_flops_per_token))";
        std::string words = "attention, counted as a causal kernel runs it (half of the book's full T² term).";
        if (m.slidingWindow) {
            // The book's count caps a local layer at min(T, W) keys, not at the causal average: write it out.
            const auto [qk, v] = attentionHeadDims(m);
            expression = "tokens * (matmul_flops_per_token + 6 * heads * (d_qk + d_v) * ((layers - local_layers) * "
                         "seq_len / 2 + local_layers * (min(seq_len, window) - min(seq_len, window) ** 2 / (2 * seq_len))))";
            words = "attention, counted as a causal kernel runs it: T/2 keys per query in a global layer; in a local one "
                    "the first W queries see their prefix and the rest W keys, W − W²/(2T) on average.";
            flopValues.insert(flopValues.end(),
                              {{"heads", double(m.heads), "", "model: query heads"},
                               {"d_qk", qk, "", "model: query/key head dimension"},
                               {"d_v", v, "", "model: value head dimension"},
                               {"layers", double(m.layers), "", "model: layers"},
                               {"local_layers", double(m.slidingWindow->localLayers), "", "model: layers that attend through the window"},
                               {"seq_len", T, "", "plan: training.seq_len"},
                               {"window", double(m.slidingWindow->window), "", "model: the sliding window, in tokens"}});
        } else {
            flopValues.push_back({"flops_per_token", m_out.flopsPerToken, "", "model.flops_per_token: 6·N plus attention at this sequence length"});
        }
        m_why.record("step.flops", step.flops, expression, flopValues,
                     "The model FLOPs of a step: 6·N per token for the weight matmuls (2 forward, 4 backward), plus " + words
                         + " No recompute.",
                     "4", "Whole-model totals and the 6·N·T rule");
    }

    // Pipeline bubble of the schedule, in microbatch stage times tMb = F + B.
    if (m_d.pipeline > 1) {
        double stageTimes = pp - 1.0; // GPipe and 1F1B: (PP - 1)(F + B)
        switch (m_par.schedule) {
        case PipelineSchedule::GPipe:
        case PipelineSchedule::OneFOneB:
            break;
        case PipelineSchedule::Interleaved1F1B:
            stageTimes /= m_par.virtualStages;
            break;
        case PipelineSchedule::ZeroBubble:
            stageTimes /= 3.0; // ZB-H1: a third of 1F1B's bubble at the same memory
            break;
        case PipelineSchedule::DualPipe:
            // (PP/2 - 1)(F&B + B - 3W) (DeepSeek-V3 report, Table 2), with a backward twice the
            // forward and its weight-gradient half W equal to F: (PP/2 - 1) x 2F, two thirds of tMb.
            stageTimes = std::max(0.0, pp / 2.0 - 1.0) * 2.0 / 3.0;
            if (m_d.pipeline % 2 != 0 || std::fmod(m_microbatches, 2.0) != 0)
                warn("dualpipe-shape", "DualPipe runs half the microbatches from each end: it needs an even number of "
                                       "pipeline stages and of microbatches, got "
                                       + std::to_string(m_d.pipeline) + " and " + formatNumber(m_microbatches));
            break;
        }
        step.bubble = stageTimes * tMb;
    }
    if (m_why.on()) {
        std::string expression = "0";
        std::string words = "Without pipeline parallelism there is no bubble.";
        std::vector<DerivationValue> values;
        if (m_d.pipeline > 1) {
            values = {{"stages", pp, "", "plan: pipeline-parallel degree"},
                      {"stage_microbatch_s", tMb, "terms.stage_microbatch_s", ""}};
            switch (m_par.schedule) {
            case PipelineSchedule::GPipe:
            case PipelineSchedule::OneFOneB:
                expression = "(stages - 1) * stage_microbatch_s";
                words = "Filling and draining the pipeline leaves each stage idle for (stages − 1) microbatch times.";
                break;
            case PipelineSchedule::Interleaved1F1B:
                expression = "(stages - 1) / virtual_stages * stage_microbatch_s";
                values.push_back({"virtual_stages", double(m_par.virtualStages), "", "plan: parallelism.virtual_stages"});
                words = "Interleaving v virtual stages per chip divides the fill-and-drain bubble by v.";
                break;
            case PipelineSchedule::ZeroBubble:
                expression = "(stages - 1) / 3 * stage_microbatch_s";
                words = "Zero-bubble (ZB-H1) scheduling splits the backward and fills a third of 1F1B's bubble.";
                break;
            case PipelineSchedule::DualPipe:
                expression = "max(0, stages / 2 - 1) * 2 / 3 * stage_microbatch_s";
                words = "DualPipe feeds microbatches from both ends: (stages/2 − 1) × (F&B + B − 3W), two thirds of a "
                        "microbatch time per stage (DeepSeek-V3 report, Table 2).";
                break;
            }
        }
        m_why.record("step.bubble_s", step.bubble, expression, values, words, "5", "Pipelining");
    }

    double exposed = 0;

    // The compute each collective runs beside, per occurrence (for the roofline; no effect on the step).
    const auto forwardFlops = [&](const LayerCost &c) {
        return (c.matmulFlops + c.attnCoreFlops + c.expertFlops) * m_tokensMb;
    };
    const double stageFwdFlops = stageDense * forwardFlops(dense) + stageMoe * forwardFlops(sparse);
    const double stageFwdTime = stageDense * denseFwd + stageMoe * sparseFwd;
    const double layerFwdFlops = stageFwdFlops / stageLayers;
    const double layerFwdTime = stageFwdTime / stageLayers;
    const double blocksPerLayer = m.parallelBlock ? 1.0 : 2.0; // attention and MLP, or one parallel block

    // Recomputed forwards redo their collectives. Full remat redoes every one; a custom policy
    // the attention block's tensor collective when it rebuilds out_proj, the experts' dispatch
    // when it rebuilds mlpwi and the context ring when it rebuilds the attention output. Under
    // sequence parallelism rebuilding mlpwi also gathers the MLP's input again (half of the MLP
    // block's gather and reduce-scatter); without it that input is whole on every rank.
    const double recomputeRounds = m_remat.policy->kind == Remat::Full ? 1.0 : 0.0;
    const auto rounds = [&](RematTensor t, double share) {
        return custom ? (m_remat.policy->rebuilds(t) ? share : 0.0) : recomputeRounds;
    };
    const double mlpGatherRounds =
        custom && m_sequenceParallel && !m.parallelBlock ? rounds(RematTensor::MlpWi, 0.5 / blocksPerLayer) : 0.0;
    const double tensorRounds = rounds(RematTensor::OutProj, 1.0 / blocksPerLayer) + mlpGatherRounds;
    const double expertRounds = rounds(RematTensor::MlpWi, 0.5);
    const double contextRounds = rounds(RematTensor::Context, 1.0);
    // The recomputed share of the busiest stage's forward pass (1 for full remat).
    const double stageRecomputeFactor =
        custom ? (stageDense * denseRecompute + stageMoe * sparseRecompute) / stageFwdTime : recomputeFactor;
    recordOperations(dense, sparse, stageLayers, stageDense, stageMoe, operationRecompute(dense, sparse));

    // Host offload: each offloaded tensor goes to host memory during the forward and comes back
    // for the backward over PCIe, hidden behind that layer's forward, backward and recompute.
    if (custom && !m_remat.policy->offloaded.empty()) {
        const auto layerExposed = [&](const LayerCost &c, double fwd, double backward, double recompute) {
            const double elements = offloadedElements(c); // mlpwo alone moves nothing (and needs no PCIe)
            if (elements <= 0)
                return 0.0;
            const double transfer = 2.0 * elements * m_tokensMb * m_actBytes / m_chip.pcieBandwidth;
            return std::max(0.0, transfer - layerTrain(fwd, backward, recompute));
        };
        step.offloadExposed = mb * (stageDense * layerExposed(dense, denseFwd, denseBackward, denseRecompute)
                                    + stageMoe * layerExposed(sparse, sparseFwd, sparseBackward, sparseRecompute));
        expose(exposed, step.offloadExposed, "host_offload_s", -1,
               "moving the offloaded activations to host and back over PCIe, beyond the layer compute that hides it");
    }

    // Tensor parallelism (Megatron): two all-reduces of the activations per layer forward (one for
    // a parallel block), the same backward, again for a recomputed forward.
    if (m_d.tensor > 1) {
        const auto spans = m_placement.of(Role::Tensor);
        const double v = m_tokensMb * double(m.dModel) * m_flowBytes;
        const double perLayer = (m.parallelBlock ? 1.0 : 2.0) * (2.0 + tensorRounds);
        const double count = perLayer * stageLayers * mb;
        // With the backward overlapped, its collectives (one round of 2 + recompute rounds) hide
        // behind the weight-gradient matmuls, as many FLOPs as the forward's matmuls.
        const bool backwardOverlap = !m_tensorOverlap && m_options.mode == CostMode::Achievable
                                     && overlapsTensorBackward(m_chip, m_train.stack);
        const double weightGradients = mb * m_tokensMb
                                       * (stageDense * (dense.matmulFlops + dense.expertFlops)
                                          + stageMoe * (sparse.matmulFlops + sparse.expertFlops / m_expertEfficiency))
                                       / m_peak;
        // Collective matmuls hide every round they reach: forward, recompute and backward, or, where
        // they reach only the forward and recomputed passes (torchtitan), all but the backward's.
        const double overlapReach = m_options.mode == CostMode::Ideal || tensorOverlapCoversBackward(m_train.stack)
                                        ? 1.0
                                        : (1.0 + tensorRounds) / (2.0 + tensorRounds);
        const auto hiddenOf = [&](double total) {
            if (m_tensorOverlap)
                return std::min(total * overlapReach, step.compute);
            return backwardOverlap ? std::min(total / (2.0 + tensorRounds), weightGradients) : 0.0;
        };
        if (m_sequenceParallel) {
            const double ag = cost(CollectiveOp::AllGather, spans, v).time;
            const double rs = cost(CollectiveOp::ReduceScatter, spans, v).time;
            const double total = count * (ag + rs);
            const double hidden = hiddenOf(total);
            expose(exposed, total - hidden, "tensor_s", -1,
                   "the sequence-parallel all-gathers and reduce-scatters (the next two collectives) not hidden by compute");
            addCollective(CollectiveOp::AllGather, "tensor activations (sequence parallel)", Role::Tensor, spans, v,
                          count, count * ag * (1 - hidden / total), ag, layerFwdFlops / blocksPerLayer,
                          layerFwdTime / blocksPerLayer);
            addCollective(CollectiveOp::ReduceScatter, "tensor activations (sequence parallel)", Role::Tensor, spans,
                          v, count, count * rs * (1 - hidden / total), rs, layerFwdFlops / blocksPerLayer,
                          layerFwdTime / blocksPerLayer);
        } else {
            const double ar = cost(CollectiveOp::AllReduce, spans, v).time;
            const double total = count * ar;
            const double hidden = hiddenOf(total);
            expose(exposed, total - hidden, "tensor_s", long(m_out.collectives.size()), "");
            addCollective(CollectiveOp::AllReduce, "tensor activations", Role::Tensor, spans, v, count, total - hidden, ar,
                          layerFwdFlops / blocksPerLayer, layerFwdTime / blocksPerLayer);
        }
        // The book's limit (ch. 5, 12): past F·W/C-way, the activations' collectives outrun the matmuls.
        const double commPerLayer = perLayer / (2.0 + tensorRounds) * (m_sequenceParallel
                                        ? cost(CollectiveOp::AllGather, spans, v).time + cost(CollectiveOp::ReduceScatter, spans, v).time
                                        : cost(CollectiveOp::AllReduce, spans, v).time);
        const double matmulPerLayer = (dense.matmulFlops + dense.expertFlops) * m_tokensMb / m_peak;
        // Matmul time falls as 1/Y while the activations' collectives do not shrink with Y.
        const double limit = tp * matmulPerLayer / commPerLayer;
        m_out.critical.tensorMaxDegree = limit;
        if (commPerLayer > matmulPerLayer && !m_tensorOverlap) {
            warn("tensor-parallel-limit",
                 "tensor parallelism of " + std::to_string(m_d.tensor) + " spends " + formatSeconds(commPerLayer)
                     + " per layer on activation collectives against " + formatSeconds(matmulPerLayer)
                     + " of matmuls; about " + formatNumber(limit) + "-way keeps it compute-bound (book: Y < F·W/C)");
        }
    }

    // Expert parallelism: dispatch and combine all-to-alls in every MoE layer, forward and backward.
    if (m_d.expert > 1 && m.moe && stageMoe > 0) {
        const auto spans = m_placement.of(Role::Expert);
        // Under an fp8 recipe a stack that dispatches fp8 sends tokens in fp8 and combines them in
        // bf16 (DeepSeek-V3 report, section 3.3.2): the mean of the two per element, as the ideal
        // model keeps. Megatron and the other frameworks send bf16 both ways. DeepEP-style kernels
        // send a token across the network once per node that holds one of its experts.
        const ExpertDispatchWire wire = expertDispatchWire(m_chip, m_train.stack, m_par.expertDispatch, m_actBytes,
                                                           m_flowBytes, m_options.mode == CostMode::Achievable);
        const double routed = m_tokensMb * m.moe->expertsPerToken * double(m.dModel) * wire.bytes
                              / (m_sequenceParallel ? tp : 1.0);
        const double v = routed * m_d.expert;
        const double count = 2.0 * (2.0 + expertRounds) * stageMoe * mb;
        CollectiveOptions dispatch = m_options;
        if (wire.deduplicated)
            dispatch.forwardedTopK = m.moe->expertsPerToken;
        if (m_why.on())
            explainExpertTokens(wire);
        const double each = collectiveCost(m_t, CollectiveOp::AllToAll, spans, v, dispatch).time;
        // Without overlap every all-to-all waits for its tokens. DualPipe runs one micro-batch's
        // all-to-alls beside another's computation: per MoE layer and microbatch, only what outlasts
        // that layer's forward, backward and recompute shows (DeepSeek-V3 report, sec. 3.2.1: both
        // all-to-alls "fully hidden"). Megatron's batch-level overlap (expert_overlap) saves about
        // half the all-to-all time on three matched A/B runs (Megatron-Bridge's Qwen3-30B-A3B on 16
        // H100 with HybridEP and with alltoall, the MoE model zoo's Qwen3-235B on 256 H100): priced
        // as the forward and recomputed passes' all-to-alls hidden so, the backward's exposed.
        const double layerCompute = sparseFwd + sparseBackward + sparseRecompute;
        double exposedA2a = count * each;
        if (m_par.schedule == PipelineSchedule::DualPipe) {
            exposedA2a = stageMoe * mb * std::max(0.0, 2.0 * (2.0 + expertRounds) * each - layerCompute);
        } else if (m_par.expertOverlap) {
            exposedA2a = stageMoe * mb * (2.0 * each + std::max(0.0, 2.0 * (1.0 + expertRounds) * each - layerCompute));
        }
        expose(exposed, exposedA2a, "expert_s", long(m_out.collectives.size()), "");
        // Dispatch before the routed experts, combine after: half their work each.
        const double expertFlops = sparse.expertFlops * m_tokensMb;
        addCollective(CollectiveOp::AllToAll, "expert dispatch and combine", Role::Expert, spans, v, count,
                      exposedA2a, each, expertFlops / 2.0, expertFlops / (m_peak * m_expertEfficiency) / 2.0, &dispatch);
    }

    // Context parallelism: Ulysses' all-to-alls over the heads (DeepSpeed), or a ring passing keys and
    // values around, overlapped with the attention (PyTorch's, or Transformer Engine's and the book's).
    if (m_d.context > 1 && m_options.mode == CostMode::Achievable && shardsHeadsOverContext(m_chip, m_train.stack)) {
        // Ulysses: q, k and v trade a share of the tokens for a share of the heads before the
        // attention core, the output trades back after it, and the backward does the same to the
        // gradients; each all-to-all waits for its input. Key/value heads fewer than the context
        // ranks are repeated up to one per rank before they are sent (UlyssesSPAttentionHF).
        // The layout copies around each all-to-all (O(tokens) bytes against the core's O(tokens x
        // sequence) FLOPs) are not counted.
        const auto spans = m_placement.of(Role::Context);
        const auto [qkDim, vDim] = attentionHeadDims(m);
        const double heads = m.heads / tp;
        const double kvHeads = m.mla ? heads : std::max(ringKeyValueHeads(), double(m_d.context));
        const double inWidth = heads * qkDim + kvHeads * (qkDim + vDim);
        const double outWidth = heads * vDim;
        const double global = m_tokensMb * m_d.context * m_flowBytes; // a tensor's bytes over the group, per element
        const double in = cost(CollectiveOp::AllToAll, spans, global * inWidth).time;
        const double out = cost(CollectiveOp::AllToAll, spans, global * outWidth).time;
        const double passes = 2.0 + contextRounds; // the forward, each recomputed forward, the backward
        const double layersMb = double(stageLayers) * mb;
        expose(exposed, passes * (in + out) * layersMb, "context_s", -1,
               "DeepSpeed-Ulysses' all-to-alls of q, k, v and the attention output, each waited for (the next two "
               "collectives)");
        // Their window on the roofline is the attention core they feed and drain, as the ring's.
        const double coreFlops = dense.attnCoreFlops * m_tokensMb;
        addCollective(CollectiveOp::AllToAll, "context heads: q, k and v (Ulysses)", Role::Context, spans,
                      global * inWidth, passes * layersMb, passes * in * layersMb, in, coreFlops, attnCoreTime(dense));
        addCollective(CollectiveOp::AllToAll, "context heads: attention output (Ulysses)", Role::Context, spans,
                      global * outWidth, passes * layersMb, passes * out * layersMb, out, coreFlops, attnCoreTime(dense));
    } else if (m_d.context > 1 && m_ring.gathersOnce && !m.mla) {
        // Keys and values gathered once per pass, hidden only by the first (diagonal) block's
        // attention; the key/value gradients (fp32) go to the next rank after every block of the
        // backward, each hidden by the next block, the last waited for after the loop.
        const auto spans = m_placement.of(Role::Context);
        const double blocks = m_d.context;
        const double kvWidth = 2.0 * ringKeyValueHeads() * m.headDim;
        const double v = m_tokensMb * blocks * kvWidth * m_flowBytes;
        const double gradients = m_tokensMb * kvWidth * m_ring.keyValueGradientBytes;
        const double ag = cost(CollectiveOp::AllGather, spans, v).time;
        const double send = cost(CollectiveOp::SendRecv, spans, gradients).time;
        const double forwardBlock = attnCoreTime(dense) / blocks;
        const double backwardBlock = attnBackwardTime(dense) / blocks;
        const double gathers = 2.0 + contextRounds; // each forward pass and the backward
        const double exposedGather = (1.0 + contextRounds) * std::max(0.0, ag - forwardBlock)
                                     + std::max(0.0, ag - backwardBlock);
        const double exposedSend = (blocks - 1.0) * std::max(0.0, send - backwardBlock) + send;
        const double layersMb = double(stageLayers) * mb;
        expose(exposed, (exposedGather + exposedSend) * layersMb, "context_s", -1,
               "keys and values gathered once a pass, hidden by the first block's attention only, and "
               "the fp32 key/value gradients sent on after each block, the last one waited for "
               "(PyTorch's context parallelism; the next two collectives)");
        addCollective(CollectiveOp::AllGather, "context keys and values (gathered once a pass)", Role::Context, spans,
                      v, gathers * layersMb, exposedGather * layersMb, ag, dense.attnCoreFlops * m_tokensMb / blocks,
                      forwardBlock);
        addCollective(CollectiveOp::SendRecv, "context key and value gradients (fp32, each block)", Role::Context,
                      spans, gradients, blocks * layersMb, exposedSend * layersMb, send,
                      m_attnBackwardFactor * dense.attnCoreFlops * m_tokensMb / blocks, backwardBlock);
    } else if (m_d.context > 1) {
        const auto spans = m_placement.of(Role::Context);
        const double kvWidth = m.mla ? double(m.mla->kvLoraRank + m.mla->qkRopeHeadDim)
                                     : 2.0 * std::max(1.0, m.kvHeads / tp) * m.headDim;
        const double v = m_tokensMb * m_d.context * kvWidth * m_flowBytes;
        const double ag = cost(CollectiveOp::AllGather, spans, v).time;
        const double rs = cost(CollectiveOp::ReduceScatter, spans, v).time;
        // The backward needs every block's keys and values again beside their gradients: a ring
        // keeps only its own block, so it passes them once more (Transformer Engine's
        // AttnFuncWithCP backward sends keys, values and their gradients in one buffer each step).
        // The book's ideal ring passes them once a forward and reduces the gradients.
        const bool ideal = m_options.mode == CostMode::Ideal;
        const double kvPasses = (ideal ? 1.0 : 2.0) + contextRounds;
        const double perLayerComm = kvPasses * ag + rs;
        const double perLayerAttn = (1.0 + contextRounds) * attnCoreTime(dense) + attnBackwardTime(dense);
        const double exposedPerLayer = std::max(0.0, perLayerComm - perLayerAttn);
        const double exposedTotal = exposedPerLayer * stageLayers * mb;
        expose(exposed, exposedTotal, "context_s", -1,
               "the ring's key and value passes (the next two collectives) beyond the attention they overlap");
        const double share = perLayerComm > 0 ? exposedTotal / perLayerComm : 0.0;
        addCollective(CollectiveOp::AllGather, "context keys and values", Role::Context, spans, v,
                      kvPasses * stageLayers * mb, share * kvPasses * ag, ag,
                      dense.attnCoreFlops * m_tokensMb, attnCoreTime(dense));
        addCollective(CollectiveOp::ReduceScatter, "context key and value gradients", Role::Context, spans, v,
                      stageLayers * mb, share * rs, rs, kBackwardFactor * dense.attnCoreFlops * m_tokensMb,
                      kBackwardFactor * attnCoreTime(dense));
    }

    // FSDP / ZeRO-3: gather each layer's weights before its forward and again for its backward,
    // reduce-scatter its gradients; gathers prefetch behind the previous layer's compute.
    // Under ZeRO-3 the gathers span the data and context ranks too (zeroShards).
    const bool zeroOverData = m_par.zeroStage >= 3 && m_d.data > 1;
    const bool zeroOverContext = m_par.zeroStage >= 3 && m_d.context > 1;
    std::vector<Role> fsdpRoles{Role::Fsdp};
    if (zeroOverData)
        fsdpRoles.push_back(Role::Data);
    if (zeroOverContext)
        fsdpRoles.push_back(Role::Context);
    std::vector<AxisSpan> fsdpSpans = m_placement.combined(fsdpRoles);
    const double fsdpGroup = double(m_d.fsdp) * (zeroOverData ? m_d.data : 1) * (zeroOverContext ? m_d.context : 1);
    if (fsdpGroup > 1) {
        const double paramBytes = bytesPerElement(m_train.paramDtype);
        const double gradBytes = bytesPerElement(m_train.gradDtype);
        double agTime = 0;
        double rsTime = 0;
        double exposedFsdp = 0;
        double agCount = 0;
        double bytesSum = 0;
        const auto layer = [&](const LayerCost &c, double fwd, double backward, double recompute, int count) {
            if (count <= 0)
                return;
            const double v = c.weightElements * paramBytes;
            const double ag = cost(CollectiveOp::AllGather, fsdpSpans, v).time;
            const double rs = cost(CollectiveOp::ReduceScatter, fsdpSpans, c.weightElements * gradBytes).time;
            const double bwd = backward + recompute;
            exposedFsdp += count * mb * (std::max(0.0, ag - fwd) + std::max(0.0, ag + rs - bwd));
            agTime += count * mb * 2.0 * ag;
            rsTime += count * mb * rs;
            agCount += count * mb * 2.0;
            bytesSum += count * mb * 2.0 * v;
        };
        layer(dense, denseFwd, denseBackward, denseRecompute, stageDense);
        layer(sparse, sparseFwd, sparseBackward, sparseRecompute, stageMoe);
        expose(exposed, exposedFsdp, "fsdp_s", -1,
               "the weight gathers and gradient reduce-scatters (the next two collectives) beyond the compute they prefetch behind");
        const double share = (agTime + rsTime) > 0 ? exposedFsdp / (agTime + rsTime) : 0.0;
        const double avgV = bytesSum / agCount;
        // A layer's gather prefetches behind the previous layer's forward (the book's B/X > C/W);
        // its gradients' reduce-scatter behind the backward (with the recomputed forward).
        const double backward = kBackwardFactor + stageRecomputeFactor;
        addCollective(CollectiveOp::AllGather, "fsdp weights", Role::Fsdp, fsdpSpans, avgV, agCount, share * agTime,
                      agTime / agCount, layerFwdFlops, layerFwdTime);
        addCollective(CollectiveOp::ReduceScatter, "fsdp gradients", Role::Fsdp, fsdpSpans,
                      avgV * gradBytes / paramBytes, agCount / 2.0, share * rsTime, rsTime / (agCount / 2.0),
                      backward * layerFwdFlops, backward * layerFwdTime);
        // Compute grows with the per-chip batch, a layer's weight gather does not: the batch at
        // which they balance is the book's critical batch (B/X > C/W) for these axes.
        const LayerCost &typical = stageMoe > stageDense ? sparse : dense;
        const double fwdComm = cost(CollectiveOp::AllGather, fsdpSpans, typical.weightElements * paramBytes).time;
        const double fwdFlops = (typical.matmulFlops + typical.attnCoreFlops + typical.expertFlops / m_expertEfficiency)
                                * m_tokensMb / m_peak;
        const double critical = m_tokensMb * fwdComm / fwdFlops;
        m_out.critical.fsdpTokensPerChip = critical;
        if (share > 0.05) {
            const double tokensPerChip = m_tokensMb;
            warn("fsdp-communication-bound",
                 "FSDP weight gathers are exposed for " + formatSeconds(exposedFsdp) + " per step: "
                     + formatNumber(tokensPerChip) + " tokens per chip per microbatch is below the critical batch of "
                     + "about " + formatNumber(critical) + " on these axes (book: B/X > C/W)");
        }
    }

    // Data-parallel gradient reduction once per step, hidden behind the last microbatch's backward.
    {
        std::vector<Role> denseGroup;
        if (m_d.data > 1 && !zeroOverData)
            denseGroup.push_back(Role::Data);
        if (m_d.context > 1 && !zeroOverContext)
            denseGroup.push_back(Role::Context);
        std::vector<Role> expertGroup = denseGroup;
        if (m_d.expert > 1)
            denseGroup.push_back(Role::Expert);
        const double shard = fsdpGroup;
        const double gradBytes = bytesPerElement(m_train.gradDtype);
        // Under DualPipe a rank holds the mirror stage too, and reduces its gradients as well.
        const StageWeights own = stageWeights(busiest);
        const int mirror = m_d.pipeline - 1 - busiest;
        const StageWeights other = dualPipe() && mirror != busiest ? stageWeights(mirror) : StageWeights{};
        const double denseElements = own.dense + other.dense;
        const double expertElements = own.expert + other.expert;
        // Megatron-Core's distributed optimizer gathers the updated weights behind the first
        // microbatch's forward instead of all-reducing the gradients behind the backward.
        const bool splitsReduction = m_options.mode == CostMode::Achievable
                                     && gathersWeightsBehindForward(m_chip, m_train.stack, m_par.zeroStage);
        // The reduce-scatter then has the pipeline's cooldown, its idle time after the last
        // backward (the bubble's backward and recompute share). The gather has the warmup only on
        // an interleaved schedule, whose align_param_gather (on by default) starts the first
        // chunks' gathers as the schedule begins (megatron/core/pipeline_parallel/schedules.py);
        // otherwise the first bucket's pre-hook fires when the first input arrives.
        const double forwardShare = 1.0 / (1.0 + kBackwardFactor + stageRecomputeFactor);
        const double window = tMb * kBackwardFactor * forwardShare + step.bubble * (splitsReduction ? 1.0 - forwardShare : 1.0);
        const double warmup = m_par.schedule == PipelineSchedule::Interleaved1F1B ? step.bubble * forwardShare : 0.0;
        const double forwardWindow = tMb * forwardShare + warmup;
        double used = 0;
        double usedForward = 0;
        double afterBackwardS = 0;
        const auto reduce = [&](const std::vector<Role> &roles, double elements, const std::string &purpose) {
            if (roles.empty() || elements <= 0)
                return;
            const std::vector<AxisSpan> spans = m_placement.combined(roles);
            if (spans.empty())
                return;
            const double v = elements * gradBytes / shard;
            const CollectiveCost c = cost(splitsReduction ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, spans, v);
            const double each = c.time;
            // The book hides the cross-slice reduction behind the backward pass too. Measured
            // multi-slice runs do not: MaxText on 2 v5p slices or 32 v5e slices loses at least the
            // whole DCN all-reduce (0.8 s on v5p against 0.42 s priced), so in the achievable
            // model a reduction bound by DCN starts after the backward pass.
            const bool afterBackward = m_options.mode == CostMode::Achievable && c.bindingLink == LinkKind::Dcn;
            const double hidden = afterBackward ? 0.0 : std::min(each, std::max(0.0, window - used));
            afterBackwardS += afterBackward ? each : 0.0;
            used += each;
            const bool dense = purpose == "gradients";
            expose(exposed, each - hidden, dense ? "gradients_s" : "expert_gradients_s", long(m_out.collectives.size()), "");
            addCollective(splitsReduction ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, purpose, roles.front(),
                          spans, v, 1.0, each - hidden, each, kBackwardFactor * stageFwdFlops, tMb * kBackwardFactor * forwardShare);
            if (!splitsReduction)
                return;
            // The other half: each rank's updated shard of the weights, gathered in their dtype.
            const double w = elements * bytesPerElement(m_train.paramDtype) / shard;
            const double gather = cost(CollectiveOp::AllGather, spans, w).time;
            const double gatherHidden = std::min(gather, std::max(0.0, forwardWindow - usedForward));
            usedForward += gather;
            expose(exposed, gather - gatherHidden, dense ? "weights_s" : "expert_weights_s", long(m_out.collectives.size()), "");
            addCollective(CollectiveOp::AllGather, dense ? "updated weights" : "updated expert weights", roles.front(), spans,
                          w, 1.0, gather - gatherHidden, gather, stageFwdFlops, tMb * forwardShare);
        };
        reduce(denseGroup, denseElements, "gradients");
        reduce(expertGroup, expertElements, "expert gradients");
        if (used > 0) {
            // The backward matmuls of one microbatch grow with its tokens; the reduction does not.
            const double backwardFlops = (stageDense * (dense.matmulFlops + dense.attnCoreFlops)
                                          + stageMoe * (sparse.matmulFlops + sparse.attnCoreFlops
                                                        + sparse.expertFlops / m_expertEfficiency))
                                         * kBackwardFactor * m_tokensMb / m_peak;
            // Under the distributed optimizer the weights' gather has the forward, a third of that.
            m_out.critical.dataTokensPerChip
                = m_tokensMb * std::max(used / backwardFlops, usedForward * kBackwardFactor / backwardFlops);
        }
        if (afterBackwardS > 0.05 * (step.compute + step.bubble))
            warn("cross-slice-gradients-exposed",
                 "the gradient all-reduce across slices adds " + formatSeconds(afterBackwardS)
                     + " after the backward pass (the book overlaps it with the backward; measured multi-slice "
                       "runs do not): a larger per-chip batch or fewer slices amortises it");
        const double dpExposed = std::max(0.0, used - window) + std::max(0.0, usedForward - forwardWindow);
        if (dpExposed > 0.05 * (step.compute + step.bubble))
            warn("data-parallel-communication-bound",
                 splitsReduction
                     ? "the gradient reduce-scatter and the updated weights' all-gather leave " + formatSeconds(dpExposed)
                           + " exposed (" + formatSeconds(used) + " behind " + formatSeconds(window) + " of backward, "
                           + formatSeconds(usedForward) + " behind " + formatSeconds(forwardWindow)
                           + " of forward): the per-chip batch is below the data-parallel critical batch"
                     : "the gradient all-reduce takes " + formatSeconds(used) + " and only " + formatSeconds(window)
                           + " of backward hides it: the per-chip batch is below the data-parallel critical batch");
    }

    // Pipeline: activations forward and gradients backward across each stage boundary; the
    // steady state overlaps them, filling and draining the pipe does not. An interleaved
    // schedule gives each chip `virtual_stages` model chunks, so a microbatch crosses that many
    // boundaries per chip each way: "the amount of communication also increases by v"
    // (Narayanan et al. 2021, sec. 2.2.2). Its fill still crosses pp − 1 of them.
    if (m_d.pipeline > 1) {
        const auto spans = m_placement.of(Role::Pipeline);
        const double chunks = m_par.schedule == PipelineSchedule::Interleaved1F1B ? m_par.virtualStages : 1.0;
        const double v = m_tokensMb * double(m.dModel) * m_flowBytes / (m_sequenceParallel ? tp : 1.0);
        const double each = cost(CollectiveOp::SendRecv, spans, v).time;
        const double fill = 2.0 * (pp - 1.0) * each;
        expose(exposed, fill, "pipeline_fill_s", -1,
               "2·(stages − 1) stage-boundary transfers while the pipeline fills and drains");
        // In the steady state a transfer hides behind the next chunk's forward, and what outlasts
        // it shows.
        const double sends = 2.0 * mb * chunks;
        const double chunkForward = stageFwdTime / chunks;
        const double steady = std::max(0.0, sends - 2.0 * (pp - 1.0)) * std::max(0.0, each - chunkForward);
        expose(exposed, steady, "pipeline_steady_s", -1,
               "steady-state stage-boundary transfers (2·microbatches·virtual_stages less the fill's) beyond the chunk "
               "forward each runs beside");
        addCollective(CollectiveOp::SendRecv, "pipeline activations", Role::Pipeline, spans, v, sends,
                      fill + steady, each, stageFwdFlops / chunks, chunkForward);
        if (m_microbatches < m_d.pipeline)
            warn("too-few-microbatches", formatNumber(m_microbatches) + " microbatches for "
                                             + std::to_string(m_d.pipeline) + " pipeline stages: the bubble is "
                                             + formatNumber(100.0 * step.bubble / (step.compute + step.bubble))
                                             + "% of the step; use at least " + std::to_string(4 * m_d.pipeline));
    }

    // Optimizer: an elementwise pass over the local shard of weights, gradients and states.
    {
        const MemoryBreakdown mem = stageMemory(busiest);
        step.optimizer = 2.0 * (mem.params + mem.optimizer) / m_hbm + mem.grads / m_hbm;
    }

    step.exposedCommunication = exposed;
    double exposedCollectives = 0;
    for (const auto &c : m_out.collectives) {
        step.communication += c.timeS;
        exposedCollectives += c.exposedS;
    }
    double hiddenCommunication = step.communication - exposedCollectives;
    // A hidden collective is not free on a GPU: its kernels hold some of the SMs for as long as it
    // runs, and the matmuls beside it run on the rest. TPUs move collectives with DMA engines.
    // Collectives hidden side by side behind the same compute hold SMs once: at most the span.
    hiddenCommunication = std::min(hiddenCommunication, step.compute + step.bubble);
    const double smShare = m_options.mode == CostMode::Achievable ? m_chip.achievable.collectiveSmShare : 0.0;
    step.overlapInterference = smShare * hiddenCommunication;
    step.time = step.compute + step.bubble + exposed + step.optimizer + step.overlapInterference;
    if (m_why.on()) {
        std::vector<DerivationValue> parts;
        for (std::size_t i = 0; i < m_out.collectives.size(); ++i)
            parts.push_back({"c" + std::to_string(i), m_out.collectives[i].timeS, "collectives[" + std::to_string(i) + "].time_s", ""});
        m_why.record("step.communication_s", step.communication, DerivationRecorder::sum(parts), parts,
                     "Every collective of the step, hidden or not.", "3", "A deeper dive into communication primitives");
        m_why.record("step.exposed_communication_s", exposed, DerivationRecorder::sum(m_exposedParts), m_exposedParts,
                     "The communication the step waits for: each collective's time beyond the compute it overlaps.",
                     "5", "What do we mean by scaling?");
        const MemoryBreakdown mem = stageMemory(busiest);
        const bool same = m_d.pipeline == 1;
        m_why.record("step.optimizer_s", step.optimizer,
                     "2 * (params + optimizer) / " + hbmRate() + " + grads / " + hbmRate(),
                     {{"params", mem.params, same ? "memory_per_chip.params" : "", same ? "" : "the busiest stage's weight bytes"},
                      {"optimizer", mem.optimizer, same ? "memory_per_chip.optimizer" : "",
                       same ? "" : "the busiest stage's optimizer-state bytes"},
                      hbmValue(), hbmEfficiencyValue(),
                      {"grads", mem.grads, same ? "memory_per_chip.grads" : "", same ? "" : "the busiest stage's gradient bytes"}},
                     "The optimizer update is elementwise: it reads and writes the local weights and states and reads "
                     "the gradients, bound by HBM bandwidth.",
                     "1", "Where does the time go?");
        m_why.record("step.overlap_interference_s", step.overlapInterference,
                     "collective_sm_share * min(communication_s - exposed_collectives_s, compute_s + bubble_s)",
                     {{"collective_sm_share", smShare, "",
                       m_options.mode == CostMode::Ideal
                           ? "the book's ideal model: overlapped communication costs nothing"
                           : "catalog: " + m_chip.figureOwner("collective_sm_share") + " achievable.collective_sm_share, the share of the SMs a collective's kernels hold (0 on TPUs)"},
                      {"communication_s", step.communication, "step.communication_s", ""},
                      {"exposed_collectives_s", exposedCollectives, "",
                       "the collectives' exposed time (host-offload transfers are not collectives)"},
                      {"compute_s", step.compute, "step.compute_s", ""},
                      {"bubble_s", step.bubble, "step.bubble_s", ""}},
                     "The collectives compute hides still hold some of a GPU's SMs while they run, so the compute "
                     "beside them runs on the rest: the step pays that share of their hidden time.",
                     "5", "What do we mean by scaling?");
        m_why.record("step.time_s", step.time,
                     "compute_s + bubble_s + exposed_communication_s + optimizer_s + overlap_interference_s",
                     {{"compute_s", step.compute, "step.compute_s", ""},
                      {"bubble_s", step.bubble, "step.bubble_s", ""},
                      {"exposed_communication_s", exposed, "step.exposed_communication_s", ""},
                      {"optimizer_s", step.optimizer, "step.optimizer_s", ""},
                      {"overlap_interference_s", step.overlapInterference, "step.overlap_interference_s", ""}},
                     "A step is its compute, the pipeline bubble, the communication compute does not hide, the "
                     "optimizer update, and the compute the hidden collectives slow down.",
                     "5", "What do we mean by scaling?");
    }
    if (step.offloadExposed > 0.05 * step.time)
        warn("remat-offload-exposed",
             "moving the offloaded activations to host memory and back over PCIe adds " + formatSeconds(step.offloadExposed)
                 + " per step beyond the compute that hides it: offload fewer tensors or save them in HBM");

    // Memory for each kind of chip.
    const auto kind = [&](const char *name, int stage, std::int64_t count) {
        m_out.perChip.push_back({name, count, stageMemory(stage)});
    };
    m_out.perChip.reserve(3);
    const std::int64_t perStage = m_t.chipCount() / m_d.pipeline;
    if (m_d.pipeline == 1) {
        kind("every chip", 0, m_t.chipCount());
    } else {
        kind("first pipeline stage", 0, perStage);
        if (m_d.pipeline > 2)
            kind("middle pipeline stages", m_d.pipeline / 2, perStage * (m_d.pipeline - 2));
        kind("last pipeline stage", m_d.pipeline - 1, perStage);
    }
    m_out.memory = m_out.perChip.front().memory;
    int loadedStage = 0;
    const int kindStages[] = {0, m_d.pipeline > 2 ? m_d.pipeline / 2 : m_d.pipeline - 1, m_d.pipeline - 1};
    for (std::size_t i = 0; i < m_out.perChip.size(); ++i)
        if (m_out.perChip[i].memory.total > m_out.memory.total) {
            m_out.memory = m_out.perChip[i].memory;
            loadedStage = kindStages[i];
        }
    explainMemory(loadedStage, m_out.memory);

    const double peakAll = m_chip.peakFlops(m_train.computeDtype) * double(m_t.chipCount());
    m_out.mfu = step.flops / (step.time * peakAll);
    m_out.tokensPerS = step.tokens / step.time;
    if (m_why.on()) {
        m_why.record("mfu", m_out.mfu, "flops / (time_s * (peak_flops * chips))",
                     {{"flops", step.flops, "step.flops", ""},
                      {"time_s", step.time, "step.time_s", ""},
                      peakValue(),
                      {"chips", double(m_t.chipCount()), "", "the plan's mesh"}},
                     "Model FLOPs utilization: the model's FLOPs per step over what every chip could do at its "
                     "advertised peak in that time. Recompute does not count.",
                     "6", "FLOPs, time and memory");
        m_why.record("tokens_per_s", m_out.tokensPerS, "tokens / time_s",
                     {{"tokens", step.tokens, "step.tokens", ""}, {"time_s", step.time, "step.time_s", ""}},
                     "Training throughput: the tokens of a step over the step time.", "6", "FLOPs, time and memory");
    }

    // What binds: memory capacity first; otherwise the largest of compute and each link's exposed time.
    if (!m_out.memory.fits) {
        m_out.bound = "memory-capacity";
        const MemoryBreakdown &mem = m_out.memory;
        warn("does-not-fit", "needs " + formatBytes(mem.total, true) + " per chip (params " + formatBytes(mem.params, true)
                                 + ", gradients " + formatBytes(mem.grads, true) + ", optimizer "
                                 + formatBytes(mem.optimizer, true) + ", activations " + formatBytes(mem.activations, true)
                                 + ") but " + m_chip.id + " has " + formatBytes(mem.capacity, true));
    } else {
        // FLOP-bound time: the weight matmuls at the matmul rate, the attention kernel's passes at
        // its own rates (a slow attention kernel is compute-bound, not HBM-bound).
        const auto layerFlopsTime = [&](const LayerCost &c) {
            return (c.matmulFlops + c.expertFlops / m_expertEfficiency) * m_tokensMb * (3.0 + stageRecomputeFactor)
                       / m_peak
                   + attnCoreTime(c) * (1.0 + stageRecomputeFactor) + attnBackwardTime(c);
        };
        const double flopsTime = mb * (stageDense * layerFlopsTime(dense) + stageMoe * layerFlopsTime(sparse));
        m_out.bound = bindingResource(m_out.collectives, "", step.compute + step.bubble,
                                      flopsTime >= 0.5 * step.compute ? "compute" : "hbm");
    }
    return std::nullopt;
}

} // namespace

std::optional<Error> evaluateTraining(const Plan &plan, const Placement &placement, CostMode mode, Evaluation &out,
                                      Derivations *derivations)
{
    TrainingCost cost(plan, placement, mode, out, derivations);
    return cost.run();
}

} // namespace meshplan::model
