// Serving a plan: prefill, decode steps, KV cache, latency, throughput and cost (book ch. 7, 8, 12).
#include "cost/inferencecost.h"

#include "cost/derivationrecorder.h"
#include "cost/softwarestack.h"

#include "base/units.h"
#include "plan/plan.h"
#include "transformer/expertload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meshplan::model {

namespace {

// Decode steps run many small kernels (norms, sampling, cache updates) besides the matmuls;
// in the achievable model they add HBM traffic of this many [batch, d_model] tensors per layer.
constexpr double kDecodeElementwiseTensors = 20.0;

// GPU decode launches a fixed train of kernels per layer whatever the batch: norm, QKV matmul,
// rope + cache write, attention, output matmul, residual + norm, up/gate matmul, activation,
// down matmul, residual (TensorRT-LLM's and vLLM's Llama decoder layer; the tensor all-reduces are
// priced as collectives). With CUDA graphs each costs a couple of microseconds beyond its bytes:
// CUDA.jl's graph docs measure a batch-16 MLP of 8 small kernels at 16 us per graph launch
// (cuda.juliagpu.org/dev/usage/graphs), 2 us a kernel.
constexpr double kDecodeKernelsPerLayer = 10.0;
constexpr double kGpuKernelLatencyS = 2e-6;

// Weight-only int4 (AWQ/GPTQ, group size 128) stores an fp16 scale and a packed 4-bit zero per
// group of 128 weights: 2.5 bytes per 128 beside the 64 of the weights (the GPTQ/AWQ checkpoint
// layout: scales fp16 [K/128, N], qzeros int32-packed [K/128, N/8]).
constexpr double kInt4GroupSize = 128.0;
constexpr double kInt4GroupBytes = 2.0 + 0.5;

// Low-precision matmuls at decode batch sizes reach a smaller share of HBM bandwidth than bf16
// ones: the kernel dequantizes (int4/int8) or runs an 8-bit GEMM at M of 1-8. Derived from
// measured speedups over FP16 on H100 with this model's own step (decode bandwidth 0.70, 20 us
// of kernels per layer): 8-bit from TensorRT-LLM's quantization blog, LLaMA-v2-7B batch 1,
// 1024 in / 128 out: FP8 1.51x, INT8 SmoothQuant 1.47x -> the 8-bit weight read at 0.80 of the
// bf16 one; 4-bit from TensorRT Model Optimizer's benchmark.md, Llama3-8B batch 2: INT4 AWQ
// 1.61x against FP8 1.39x -> 0.50.
constexpr double kEightBitDecodeEfficiency = 0.80;
constexpr double kFourBitDecodeEfficiency = 0.50;

// Expert-parallel prefill runs two micro-batches so one's dispatch and combine overlap the
// other's compute (DeepSeek-V3 report sec. 3.4 / open-infra-index day 6; SGLang two-batch
// overlap), and dispatches in fp8 when the experts run fp8 while the combine stays bf16
// (DeepEP README: "FP8 dispatching and BF16 combining").
constexpr double kEpPrefillMicroBatches = 2.0;

// The share of its benchmark rate (MAMF) a 16-bit kernel keeps in an inference engine, against a
// training step's 0.71 (flops_fraction / matmul_benchmark_fraction), which also carries the
// backward pass's layouts and gradient collectives sharing the SMs. Vidur's kernel timings of the
// linear layers engines run (fp16 F.linear; six models at TP 1-8 and 1k-16k tokens, M >= 1024:
// microsoft/vidur@7d47513 data/profiling/compute/{a100,h100}/*/mlp.csv) give a median 0.815 of
// A100's MAMF, which has no shape term here, and 0.875 of H100's once its shape factor (K0 = 137)
// is divided out, as the model applies it again: 0.845 between them. Vidur profiles no 8-bit
// kernels, so 8-bit matmuls keep the step's share (TensorRT-LLM's fp8 prefills on H100 sit there).
constexpr double kInferenceKernelShare = 0.845;

constexpr const char *kFusedAllReduceReason =
    "on a TPU the all-reduce runs fused with the matmul that produces it (attention output, MLP down "
    "projection) and hides behind that matmul: its weight stream, or its FLOPs past the critical batch; "
    "only what outlasts the matmul shows";

class InferenceCost
{
public:
    InferenceCost(const Plan &plan, const Placement &placement, CostMode mode, Evaluation &out, Derivations *derivations)
        : m_plan(plan)
        , m_model(plan.model)
        , m_t(plan.topology)
        , m_chip(plan.topology.chip())
        , m_spec(plan.inference)
        , m_placement(placement)
        , m_mode(mode)
        , m_out(out)
        , m_params(countParams(plan.model))
        , m_why(derivations, out.terms)
    {
        m_options.mode = mode;
    }

    std::optional<Error> run();

private:
    struct Phase {
        double compute = 0;   ///< max(matmul FLOPs, weight reads)
        double weights = 0;   ///< weight bytes / HBM
        double flops = 0;     ///< matmul FLOPs / peak
        double kv = 0;        ///< attention: max(KV reads, attention FLOPs)
        double elementwise = 0;
        double comms = 0;
        double latency = 0; ///< kernel latency beyond the bytes and FLOPs
        double overlapInterference = 0; ///< compute slowed by the SMs hidden collectives hold
        double total() const { return compute + kv + elementwise + comms + latency + overlapInterference; }
    };

    std::optional<Error> validate();
    /// One decode step for `batch` sequences per replica at context `context`.
    /// One decode step, averaged while the context grows from `from` to `to` tokens.
    Phase decodeStep(double batch, double from, double to, bool record);
    /// The prompt's forward pass for `sequences` sequences on one replica.
    Phase prefill(double sequences, bool record);
    /// The weight matmuls' mean 1 / efficiency at their reduction depths (1 in the ideal model). A
    /// prefill and a decode step run the same weight matmuls, so both pay it; the depth, not the
    /// rows, sets it (a decode batch of a few hundred rows still fills the tiles it uses).
    double matmulShape() const;
    /// Weights a token multiplies in matmuls: the active parameters less the embedding lookup,
    /// with the output layer.
    double activeMatmulWeights() const;
    /// A prefill's routed experts: their share of a token's matmul FLOPs, the share of their
    /// rate they keep while their tokens are sorted to them and back, and the share the stack's
    /// grouped-GEMM kernels reach of the chip's matmul rate (none of it in the ideal model).
    struct ExpertSorting {
        double routedShare = 0.0;
        double dispatchEfficiency = 1.0;
        double kernelShare = 1.0;
        double busiestRankLoad = 1.0; ///< the busiest expert rank's routed tokens over the mean
        /// The matmuls' time with the sorting, the expert kernels and the busiest rank over without.
        double factor() const
        {
            return 1.0 + routedShare * (busiestRankLoad / (dispatchEfficiency * kernelShare) - 1.0);
        }
    };
    /// For a prefill of `tokens` prompt tokens per replica; its experts wait for the busiest rank
    /// of each micro-batch.
    ExpertSorting prefillExpertSorting(double tokens) const;
    /// The routed experts' share of a token's matmul FLOPs (0 for a dense model).
    double routedShare() const;
    /// A decode step's matmul time with the stack's expert kernels and the busiest expert rank's
    /// load over without (its few rows per expert are not sorted).
    double decodeExpertFactor(double batch) const
    {
        return 1.0 + routedShare() * (busiestRankLoad(batch) / m_expertKernelShare - 1.0);
    }
    /// The busiest expert-parallel rank's routed tokens over the mean when `tokens` tokens per
    /// replica pass a MoE layer (busiestExpertRankLoad); 1 without expert ranks or in the ideal model.
    double busiestRankLoad(double tokens) const;
    /// The tokens of a prefill of `tokens` that pass a MoE layer together: one of the
    /// kEpPrefillMicroBatches micro-batches (the whole prefill in the ideal model).
    double prefillMicroBatchTokens(double tokens) const
    {
        return m_mode == CostMode::Ideal ? tokens : tokens / kEpPrefillMicroBatches;
    }
    DerivationValue busiestRankLoadValue(double tokens) const;
    DerivationValue routedShareValue() const;
    /// The prefill attention's slowdown against the matmul rate (m_prefillAttentionSlowdown).
    double prefillAttentionSlowdown() const;
    double kvShards(double batch) const;
    /// The sequences whose cache one chip holds (and one layer's attention call reads) when
    /// `batch` sequences are split over kvShards(batch) chips.
    double sequencesPerKvShard(double batch) const;
    /// The KV-cache bytes one chip reads in a decode step: its share of every stage's cache, the
    /// stages reading one after another.
    double decodeKvBytes(double batch, double context) const;
    /// What the decode derivations' `context` is: the mean context, windowed where layers are local.
    std::string contextNote() const;
    /// One sequence's KV cache at `context` tokens (a local layer keeps only its window).
    double sequenceKvBytes(double context) const { return cachedTokens(m_model, context) * m_kvPerToken; }
    /// What `max_context` is in the memory derivations.
    std::string maxContextNote() const;
    double weightBytesPerChip() const;
    /// The layers' weights over the whole model: outside the routed experts (embeddings not
    /// included) and in them.
    struct Weights {
        double dense = 0;
        double experts = 0;
    };
    Weights layerWeights() const;
    /// `overlapFlops` and `overlapS`: the work between two occurrences (CollectiveUse), per chip.
    /// `exposedShare`: the part of it that stays on the critical path (1: all of it).
    void addCollective(CollectiveOp op, std::string purpose, Role role, double bytes, double count,
                       double overlapFlops, double overlapS, double exposedShare = 1.0,
                       const CollectiveOptions *options = nullptr, const char *hiddenReason = nullptr);
    /// The share of a decode tensor all-reduce (`allReduce` seconds) left on the critical path.
    /// `matmulStretch`: the step's matmul time over its weight stream (>= 1 past the critical batch).
    double tensorAllReduceExposedShare(double allReduce, double expertFraction, double matmulStretch) const;
    /// The operations of one layer (and the logits) for the roofline: `rows` tokens per replica,
    /// `context` tokens attended per query (average), `kvRead` KV-cache bytes per layer and chip.
    void recordOperations(const std::string &prefix, double rows, double context, double kvRead, double expertFraction);
    void addOperation(std::string op, const char *kind, double flops, double bytes, double count);
    double collectiveTime(CollectiveOp op, Role role, double bytes) const;
    double collectiveTime(CollectiveOp op, Role role, double bytes, const CollectiveOptions &options) const;
    void warn(const std::string &code, const std::string &message) { m_out.warnings.push_back({code, message}); }
    // Derivations (only when asked for: see DerivationRecorder).
    void explainMemory(const MemoryBreakdown &mem, double batch, double maxContext);
    void explainDecode(const Phase &ph, double batch, double context, double expertFraction, double kvRead,
                       double attnFlops, std::size_t firstCollective);
    void explainPrefill(const Phase &ph, double sequences, double attention, double pipelineFactor,
                        std::size_t firstCollective);
    DerivationValue peakValue() const;
    DerivationValue flopsFractionValue() const;
    /// The share of peak the plan's matmuls reach here: a GPU's 16-bit matmuls at their benchmark
    /// rate x kInferenceKernelShare, others (8-bit, fp4, fp32; TPUs) at the chip's achievable
    /// fraction; 1 in the ideal model.
    double inferenceFlopsFraction() const;
    /// The share of a 16-bit kernel's benchmark rate an inference engine keeps on this chip: 0 in
    /// the ideal model, on TPUs and on chips with no matmul benchmark.
    double inferenceKernelShare() const;
    /// Whether the plan's matmuls run at their benchmark rate x inferenceKernelShare().
    bool matmulsKeepTheInferenceShare() const;
    DerivationValue expertKernelShareValue(double share) const;
    DerivationValue hbmValue(const char *name = "hbm_bandwidth") const;
    DerivationValue hbmEfficiencyValue() const;
    DerivationValue kvEfficiencyValue(double bytesPerLayer, double sequences) const;
    DerivationValue shapeValue() const;
    /// The share of HBM bandwidth a decode step's attention reads its cache at, when one layer's
    /// kernel reads `bytesPerLayer` on a chip for `sequences` sequences: the chip's decode
    /// attention curve on GPUs that list one, else hbm_efficiency (1 in the ideal mode).
    double decodeKvEfficiency(double bytesPerLayer, double sequences) const;
    DerivationValue lanesValue() const;
    /// The elementwise work of `rows` rows ([rows, d_model] tensors) as terms.<name>.
    std::string explainElementwise(const std::string &name, double value, const DerivationValue &rows);

    const Plan &m_plan;
    const ModelSpec &m_model;
    const Topology &m_t;
    const Chip &m_chip;
    const InferenceSpec &m_spec;
    const Placement &m_placement;
    CostMode m_mode;
    Evaluation &m_out;
    ParamCounts m_params;
    CollectiveOptions m_options;

    int m_tp = 1, m_pp = 1, m_ep = 1, m_fs = 1, m_cp = 1, m_dp = 1;
    double m_lanes = 1;       ///< chips working on one stage at once: tensor x expert x fsdp x context
    double m_kvHeadUnits = 1; ///< the KV heads one can shard (MLA's latent is one)
    double m_peak = 0;
    double m_hbm = 0;
    double m_decodeWeightHbm = 0; ///< bytes/s a decode step reads the weights at
    double m_layerLatency = 0;    ///< seconds of kernel latency per layer of a decode step
    /// The matmul rate over the fused attention kernel's forward rate at the prompt's length: how
    /// much slower a prefill's attention FLOPs run than its weight matmuls (1: the matmul rate).
    double m_prefillAttentionSlowdown = 1.0;
    /// The share of the matmul rate the stack's routed-expert kernels reach (expertKernelShare;
    /// 1 in the ideal model).
    double m_expertKernelShare = 1.0;
    double m_weightBytes = 2;
    double m_kvBytes = 2;
    double m_actBytes = 2;
    double m_kvPerToken = 0; ///< bytes, whole model
    DerivationRecorder m_why;
};

std::optional<Error> InferenceCost::validate()
{
    const ParallelismSpec &p = m_plan.parallelism;
    m_tp = p.degree(Role::Tensor);
    m_pp = p.degree(Role::Pipeline);
    m_ep = p.degree(Role::Expert);
    m_fs = p.degree(Role::Fsdp);
    m_cp = p.degree(Role::Context);
    m_dp = p.degree(Role::Data);
    m_lanes = double(m_tp) * m_ep * m_fs * m_cp;
    m_kvHeadUnits = m_model.mla ? 1.0 : double(m_model.kvHeads);
    if (m_chip.peakFlops(m_spec.computeDtype) <= 0)
        return Error{"workload.compute_dtype", m_chip.id + " has no FLOPs/s figure for "
                                                   + std::string(dtypeName(m_spec.computeDtype))};
    if (m_spec.promptLen % m_cp != 0)
        return Error{"parallelism.context", "context parallelism of " + std::to_string(m_cp)
                                                + " must divide prompt_len " + std::to_string(m_spec.promptLen)};
    const std::int64_t chipsPerReplica = m_t.chipCount() / m_dp;
    if (m_spec.serving == Serving::Disaggregated) {
        if (m_spec.prefillChips % chipsPerReplica != 0 || m_spec.prefillChips >= m_t.chipCount())
            return Error{"workload.prefill_chips", "must be a multiple of the " + std::to_string(chipsPerReplica)
                                                       + " chips of one replica and leave chips for decoding; got "
                                                       + std::to_string(m_spec.prefillChips) + " of "
                                                       + std::to_string(m_t.chipCount())};
    }
    const std::int64_t decodeReplicas =
        m_dp - (m_spec.serving == Serving::Disaggregated ? m_spec.prefillChips / chipsPerReplica : 0);
    if (m_spec.batch < decodeReplicas)
        return Error{"workload.batch", std::to_string(m_spec.batch) + " sequences cannot keep "
                                           + std::to_string(decodeReplicas) + " decoding replicas busy; lower parallelism.data"};
    return std::nullopt;
}

InferenceCost::Weights InferenceCost::layerWeights() const
{
    const ModelSpec &m = m_model;
    Weights w;
    w.dense = double(m.layers) * double(m_params.attentionPerLayer)
              + double(m.layers - m.moeLayerCount()) * double(m_params.denseMlpPerLayer)
              + double(m.moeLayerCount()) * double(m_params.moeSharedPerLayer);
    w.experts = m.moe ? double(m.moeLayerCount()) * m.moe->experts * double(m_params.expertParams) : 0.0;
    return w;
}

double InferenceCost::weightBytesPerChip() const
{
    // Everything but the routed experts is split over tensor, pipeline and FSDP; experts also over
    // the expert axis. Embeddings sit on the first stage, the output projection on the last.
    const auto [dense, experts] = layerWeights();
    const double vocab = double(m_params.embedding + m_params.unembedding);
    const double perChip = dense / (m_tp * m_pp * m_fs) + experts / (m_tp * m_pp * m_fs * m_ep)
                           + vocab / (m_tp * m_fs) / (m_pp > 1 ? 2.0 : 1.0);
    return perChip * m_weightBytes;
}

double InferenceCost::kvShards(double batch) const
{
    // KV heads first (at most K-way; MLA's latent is one "head"), then the batch (book ch. 7).
    // Engines replicate the KV heads past K-way on the tensor axis instead (vLLM's and
    // TensorRT-LLM's num_kv_head_replicas; jax-llm-examples shards kv_heads over one of its two
    // tensor axes): the book's batch split and its all-to-alls stay the ideal model's.
    const double tensorShards = m_mode == CostMode::Achievable ? std::min(double(m_tp), m_kvHeadUnits) : double(m_tp);
    const double group = tensorShards * m_ep;
    return double(m_pp) * m_cp * std::min(group, m_kvHeadUnits * std::max(1.0, batch));
}

std::string InferenceCost::contextNote() const
{
    if (!m_model.slidingWindow)
        return "the mean context over the generation: prompt_len + generate_len / 2";
    return "the mean context over the generation (from prompt_len to prompt_len + generate_len) as the layers keep "
           "it: a local layer only its window of " + formatNumber(double(m_model.slidingWindow->window))
           + " tokens (averaged over the steps and the layers)";
}

std::string InferenceCost::maxContextNote() const
{
    return m_model.slidingWindow ? "prompt_len + generate_len, the longest context, as the layers keep it: a local layer "
                                   "only its window (averaged over the layers)"
                                 : "plan: prompt_len + generate_len, the longest context";
}

double InferenceCost::decodeKvBytes(double batch, double context) const
{
    return batch * context * m_kvPerToken / (kvShards(batch) / m_pp);
}

double InferenceCost::sequencesPerKvShard(double batch) const
{
    // kvShards splits the KV heads first (one sequence's cache is split that far); what it splits
    // beyond them is the batch.
    return batch / std::max(1.0, kvShards(batch) / kvShards(1.0));
}

double InferenceCost::tensorAllReduceExposedShare(double allReduce, double expertFraction, double matmulStretch) const
{
    // XLA on a TPU fuses a row-parallel matmul into the all-reduce of its output and pipelines
    // the two: in jax-llm-examples' decode profile of Llama 3.1 70B on v5e-16 (llama3/README.md,
    // images/llama3_70B_decode_step.png) the attention output and MLP down projections run inside
    // all-reduce fusions. A small reduction's latency then hides behind that matmul; only what
    // outlasts it shows. The matmul lasts its weight stream, stretched by `matmulStretch` (the
    // step's matmul time over its weight stream, >= 1) where its FLOPs take longer: past the
    // critical batch the MXU, not HBM, paces it. A GPU runs the all-reduce as a kernel of its own
    // after the matmul's, so there nothing hides.
    if (m_mode != CostMode::Achievable || !m_chip.isTpu() || !(allReduce > 0))
        return 1.0;
    const ModelSpec &m = m_model;
    const double streamRate = m_lanes * m_decodeWeightHbm / m_weightBytes / std::max(1.0, matmulStretch); // weights per second
    const double v = attentionHeadDims(m).second;
    const double outProjection = double(m.heads) * v * double(m.dModel) / streamRate;
    const auto [dense, experts] = layerWeights();
    const double mlpPerLayer =
        (dense - double(m.layers) * double(m_params.attentionPerLayer) + experts * expertFraction) / double(m.layers);
    const double downProjection = mlpPerLayer / (m.mlp == MlpKind::Gated ? 3.0 : 2.0) / streamRate;
    if (m.parallelBlock)
        return std::max(0.0, allReduce - outProjection - downProjection) / allReduce;
    return (std::max(0.0, allReduce - outProjection) + std::max(0.0, allReduce - downProjection)) / (2.0 * allReduce);
}

double InferenceCost::collectiveTime(CollectiveOp op, Role role, double bytes) const
{
    return collectiveTime(op, role, bytes, m_options);
}

double InferenceCost::collectiveTime(CollectiveOp op, Role role, double bytes, const CollectiveOptions &options) const
{
    return collectiveCost(m_t, op, m_placement.of(role), bytes, options).time;
}

void InferenceCost::addCollective(CollectiveOp op, std::string purpose, Role role, double bytes, double count,
                                  double overlapFlops, double overlapS, double exposedShare,
                                  const CollectiveOptions *options, const char *hiddenReason)
{
    const auto &spans = m_placement.of(role);
    if (count <= 0 || bytes <= 0 || spans.empty())
        return;
    const CollectiveOptions &o = options ? *options : m_options;
    const CollectiveCost one = collectiveCost(m_t, op, spans, bytes, o);
    const double each = one.time;
    // Serving is latency-bound: nothing hides these, except where the caller overlaps micro-batches.
    m_out.collectives.push_back(
        collectiveUse(m_t, op, std::move(purpose), role, spans, bytes, count, each, each * count * exposedShare, one));
    m_out.collectives.back().overlapFlops = overlapFlops;
    m_out.collectives.back().overlapS = overlapS;
    if (m_why.on())
        explainCollective(m_why, m_t, m_out.collectives.size() - 1, m_out.collectives.back(), spans, count, each,
                          each * count * exposedShare, o,
                          hiddenReason ? hiddenReason
                          : exposedShare < 1.0 ? "prefill splits the batch into micro-batches and runs one's all-to-alls "
                                                 "beside the other's layer compute; only what outlasts it shows"
                                               : "serving is latency-bound: nothing hides a decode or prefill collective");
}

void InferenceCost::addOperation(std::string op, const char *kind, double flops, double bytes, double count)
{
    if (!(flops > 0) || !(bytes > 0) || count <= 0)
        return;
    OperationCost c;
    c.op = std::move(op);
    c.kind = kind;
    c.flops = flops;
    c.bytes = bytes;
    c.timeS = std::max(flops / m_peak, bytes / m_hbm);
    c.memoryS = bytes / m_hbm;
    c.countPerStep = static_cast<std::int64_t>(std::llround(count));
    m_out.operations.push_back(std::move(c));
    if (m_why.on())
        explainOperation(m_why, m_out.operations.size() - 1, m_out.operations.back(), m_peak,
                         "the matmul rate: peak × flops_fraction", m_hbm, "HBM bandwidth × hbm_efficiency");
}

void InferenceCost::recordOperations(const std::string &prefix, double rows, double context, double kvRead,
                                     double expertFraction)
{
    // Per chip, as the step cost counts it: FLOPs and weights over the chips of one stage. Tensor
    // parallelism splits the widths (heads, d_ff); fsdp, expert and context the rows.
    const ModelSpec &m = m_model;
    const double tp = m_tp;
    const double r = rows * tp / m_lanes; // rows (tokens) one chip multiplies
    const double d = double(m.dModel);
    const double act = m_actBytes;
    const double wb = m_weightBytes;
    const double width = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
    const auto [qk, v] = attentionHeadDims(m);
    const double layers = m.layers;
    const double moeLayers = m.moeLayerCount();
    const double denseLayers = layers - moeLayers;
    // Queries, and the keys and values the cache takes (MLA: its latent and rope key).
    const double qkvOut = m.heads * qk + (m.mla ? double(m.mla->kvLoraRank + m.mla->qkRopeHeadDim)
                                                : 2.0 * m.kvHeads * m.headDim);
    const double outW = double(m.heads) * v * d;
    const double qkvW = double(m_params.attentionPerLayer) - outW;
    addOperation(prefix + "attention qkv projection", "matmul", 2.0 * rows * qkvW / m_lanes,
                 wb * qkvW / m_lanes + act * r * (d + qkvOut / tp), layers);
    addOperation(prefix + "attention output projection", "matmul", 2.0 * rows * outW / m_lanes,
                 wb * outW / m_lanes + act * r * (m.heads * v / tp + d), layers);
    // Decode reads the whole cache; prefill attends causally within the prompt (half of it on average).
    addOperation(prefix + "attention core", "attention", 2.0 * rows * context * m.heads * (qk + v) / m_lanes,
                 kvRead + act * r * m.heads * (qk + v) / tp, layers);
    if (denseLayers > 0) {
        const double f = double(m.dFf);
        const double downW = d * f;
        const double upW = double(m_params.denseMlpPerLayer) - downW;
        addOperation(prefix + (m.mlp == MlpKind::Gated ? "mlp up+gate" : "mlp up"), "matmul", 2.0 * rows * upW / m_lanes,
                     wb * upW / m_lanes + act * r * (d + (width - 1.0) * f / tp), denseLayers);
        addOperation(prefix + "mlp down", "matmul", 2.0 * rows * downW / m_lanes,
                     wb * downW / m_lanes + act * r * (f / tp + d), denseLayers);
    }
    if (moeLayers > 0) {
        const MoeSpec &e = *m.moe;
        const double fe = double(e.dFfExpert);
        const double sharedW = double(m_params.moeSharedPerLayer);
        addOperation(prefix + "moe router and shared experts", "matmul", 2.0 * rows * sharedW / m_lanes,
                     wb * sharedW / m_lanes + act * r * (2.0 * d + e.experts + e.sharedExperts * width * fe / tp),
                     moeLayers);
        // Only the experts some token picked are read (all of them in a long prefill).
        const double expertW = double(e.experts) * double(m_params.expertParams) * expertFraction;
        addOperation(prefix + "moe routed experts", "matmul",
                     2.0 * rows * e.expertsPerToken * double(m_params.expertParams) / m_lanes,
                     wb * expertW / m_lanes + act * r * e.expertsPerToken * (2.0 * d + width * fe / tp), moeLayers);
    }
    if (m_mode == CostMode::Achievable) // about one FLOP per element the step's elementwise kernels move
        addOperation(prefix + "elementwise", "elementwise", kDecodeElementwiseTensors * rows * d / m_lanes,
                     kDecodeElementwiseTensors * rows * d * act / m_lanes, layers);
    // The logits matmul (the final norm's FLOPs with it, as the step counts them).
    const double logitsW = double(m.vocab * m.dModel);
    addOperation(prefix + "logits (unembedding)", "matmul", 2.0 * rows * (logitsW + double(m_params.finalNorm)) / m_lanes,
                 wb * logitsW / m_lanes + act * r * (d + double(m.vocab) / tp), 1.0);
}

InferenceCost::Phase InferenceCost::decodeStep(double batch, double from, double to, bool record)
{
    const ModelSpec &m = m_model;
    Phase ph;
    // The cached tokens per layer over the steps (a local layer keeps and reads only its window),
    // averaged over the layers: without a window, the mean context.
    const double context = meanCachedTokens(m, from, to);
    // Weights read per step: with MoE only the experts some token picked (expected distinct
    // choices of batch x k draws among E).
    double expertFraction = 1.0;
    if (m.moe) {
        const double e = m.moe->experts;
        expertFraction = 1.0 - std::pow(1.0 - double(m.moe->expertsPerToken) / e, batch);
    }
    const auto [layers, experts] = layerWeights();
    const double dense = layers + double(m.vocab * m.dModel); // the output layer is read every step
    ph.weights = (dense + experts * expertFraction) * m_weightBytes / (m_lanes * m_decodeWeightHbm);
    const double matmulParams = activeMatmulWeights();
    ph.flops = 2.0 * matmulParams * matmulShape() * decodeExpertFactor(batch) * batch / (m_lanes * m_peak);
    ph.compute = std::max(ph.flops, ph.weights);

    // Attention reads every cached token of every sequence: bandwidth-bound at any batch.
    const auto [qk, v] = attentionHeadDims(m);
    // Stages run one after another, so the step reads each stage's share on that stage's chips.
    const double kvBytes = decodeKvBytes(batch, context);
    const double kvRead = kvBytes / (m_chip.hbmBandwidth * decodeKvEfficiency(kvBytes / m.layers, sequencesPerKvShard(batch)));
    const double attnFlops = 2.0 * batch * context * m.heads * (qk + v) * m.layers / (m_lanes * m_peak);
    ph.kv = std::max(kvRead, attnFlops);
    if (m_mode == CostMode::Achievable)
        ph.elementwise = kDecodeElementwiseTensors * batch * double(m.dModel) * m_actBytes * m.layers / (m_lanes * m_hbm);
    ph.latency = m_layerLatency * m.layers; // the stages' layers run one after another

    if (record)
        recordOperations("decode: ", batch, context, kvBytes / m.layers, expertFraction);
    const std::size_t firstDecodeCollective = m_out.collectives.size();

    // Collectives of one step, all on the latency-critical path. What lies between two of them
    // (per chip): a layer's matmuls, its attention, a MoE layer's experts, a stage.
    const double stepFlops = 2.0 * matmulParams * batch / m_lanes; // the FLOPs, not their time at the peak
    const double layerFlops = stepFlops / m.layers;
    const double layerTime = ph.compute / m.layers;
    const double attnLayerFlops = attnFlops * m_peak / m.layers;
    const double attnLayerTime = ph.kv / m.layers;
    const double act = batch * double(m.dModel) * m_actBytes;
    const double perLayerAr = m.parallelBlock ? 1.0 : 2.0;
    double comms = 0;
    if (m_tp > 1) {
        const double allReduce = collectiveTime(CollectiveOp::AllReduce, Role::Tensor, act);
        const double exposedShare = tensorAllReduceExposedShare(allReduce, expertFraction, ph.weights > 0 ? ph.compute / ph.weights : 1.0);
        comms += perLayerAr * m.layers * allReduce * exposedShare;
        if (record)
            addCollective(CollectiveOp::AllReduce, "decode: tensor activations", Role::Tensor, act, perLayerAr * m.layers,
                          layerFlops / perLayerAr, layerTime / perLayerAr, exposedShare, nullptr,
                          exposedShare < 1.0 ? kFusedAllReduceReason : nullptr);
        // Only when the batch is actually split past the heads: one sequence keeps its KV heads
        // replicated on the extra chips (kvShards), and nothing moves.
        if (m_mode == CostMode::Ideal && m_tp > m_kvHeadUnits && kvShards(batch) > kvShards(1.0)) {
            // KV sharded over batch past K-way: queries and outputs move between head and batch
            // sharding with two all-to-alls per attention layer (book ch. 7).
            const double q = batch * m.heads * v * m_actBytes;
            comms += 2.0 * m.layers * collectiveTime(CollectiveOp::AllToAll, Role::Tensor, q);
            if (record)
                addCollective(CollectiveOp::AllToAll, "decode: queries to batch-sharded KV", Role::Tensor, q, 2.0 * m.layers,
                              attnLayerFlops / 2.0, attnLayerTime / 2.0);
        }
    }
    if (m_ep > 1 && m.moe) {
        // Dispatch in fp8 when the experts run fp8, combine in bf16 (DeepEP low-latency kernels).
        // The busiest expert rank receives and returns its load's share of the routed tokens.
        const double elements = batch * m.moe->expertsPerToken * double(m.dModel) * busiestRankLoad(batch);
        const bool ideal = m_mode == CostMode::Ideal;
        const double dispatch = elements * (!ideal && m_spec.computeDtype == DType::Fp8 ? 1.0 : m_actBytes);
        const double combine = elements * (ideal ? m_actBytes : 2.0); // bf16 even when the matmuls run fp8
        CollectiveOptions decodeDispatch = m_options;
        if (!ideal && deduplicatesServingDispatch(m_plan.parallelism.expertDispatch, false))
            decodeDispatch.forwardedTopK = m.moe->expertsPerToken;
        comms += m.moeLayerCount() * (collectiveTime(CollectiveOp::AllToAll, Role::Expert, dispatch, decodeDispatch)
                                      + collectiveTime(CollectiveOp::AllToAll, Role::Expert, combine, decodeDispatch));
        if (record) {
            const double expertFlops = 2.0 * batch * m.moe->expertsPerToken * double(m_params.expertParams) / m_lanes;
            const double expertRead = double(m.moe->experts) * double(m_params.expertParams) * expertFraction
                                      * m_weightBytes / m_lanes;
            const double between = std::max(expertFlops / m_peak, expertRead / m_decodeWeightHbm) / 2.0;
            addCollective(CollectiveOp::AllToAll, "decode: expert dispatch", Role::Expert, dispatch, m.moeLayerCount(),
                          expertFlops / 2.0, between, 1.0, &decodeDispatch);
            addCollective(CollectiveOp::AllToAll, "decode: expert combine", Role::Expert, combine, m.moeLayerCount(),
                          expertFlops / 2.0, between, 1.0, &decodeDispatch);
        }
    }
    if (m_fs > 1) {
        const double layerWeights = (double(m_params.attentionPerLayer) + double(m_params.denseMlpPerLayer)) / m_tp
                                    * m_weightBytes;
        comms += m.layers * collectiveTime(CollectiveOp::AllGather, Role::Fsdp, layerWeights);
        if (record)
            addCollective(CollectiveOp::AllGather, "decode: fsdp weights", Role::Fsdp, layerWeights, m.layers, layerFlops,
                          layerTime);
    }
    if (m_cp > 1) {
        // Sequence-sharded KV: gather the queries, then combine partial attention outputs.
        const double q = batch * m.heads * v * m_actBytes;
        comms += m.layers * (collectiveTime(CollectiveOp::AllGather, Role::Context, q)
                             + collectiveTime(CollectiveOp::AllReduce, Role::Context, q));
        if (record) {
            addCollective(CollectiveOp::AllGather, "decode: queries to sequence-sharded KV", Role::Context, q, m.layers,
                          attnLayerFlops, attnLayerTime);
            addCollective(CollectiveOp::AllReduce, "decode: partial attention outputs", Role::Context, q, m.layers,
                          attnLayerFlops, attnLayerTime);
        }
    }
    if (m_pp > 1) {
        comms += (m_pp - 1) * collectiveTime(CollectiveOp::SendRecv, Role::Pipeline, act);
        if (record)
            addCollective(CollectiveOp::SendRecv, "decode: pipeline activations", Role::Pipeline, act, m_pp - 1,
                          (stepFlops + attnFlops * m_peak) / m_pp, (ph.compute + ph.kv) / m_pp);
    }
    ph.comms = comms;
    if (record && m_why.on())
        explainDecode(ph, batch, context, expertFraction, kvRead, attnFlops, firstDecodeCollective);
    return ph;
}

InferenceCost::Phase InferenceCost::prefill(double sequences, bool record)
{
    const ModelSpec &m = m_model;
    Phase ph;
    const double prompt = double(m_spec.promptLen);
    const double tokens = sequences * prompt;
    const double matmulParams = activeMatmulWeights();
    const auto [qk, v] = attentionHeadDims(m);
    // Causal attention over the prompt: on average each token attends to half of it (a local layer
    // to at most its window).
    const double attended = causalAttendedKeys(m, prompt);
    const double attention = 2.0 * attended * m.heads * (qk + v) * m.layers;
    // The weight matmuls at their shapes' rate (K / (K + K0) of the large-K rate, the forward's
    // depths: d_model, heads x head_dim / TP, d_ff / TP), as in a training step's forward.
    ph.flops = (2.0 * matmulParams * matmulShape() * prefillExpertSorting(tokens).factor() + attention * m_prefillAttentionSlowdown)
               * tokens
               / (m_lanes * m_peak);
    // Sequences flow through the pipeline one after another: (n + stages - 1) / n of the work.
    const double pipelineFactor = (sequences + m_pp - 1.0) / sequences;
    ph.flops *= pipelineFactor;
    ph.weights = weightBytesPerChip() * m_pp / m_hbm; // every stage's weights, read once
    ph.compute = std::max(ph.flops, ph.weights);
    if (m_mode == CostMode::Achievable)
        ph.elementwise = kDecodeElementwiseTensors * tokens * double(m.dModel) * m_actBytes * m.layers / (m_lanes * m_hbm);
    if (record) // the attention kernel reads the prompt's keys and values as the cache stores them
        recordOperations("prefill: ", tokens, attended, tokens * m_kvPerToken / m.layers * m_pp / kvShards(sequences),
                         1.0);
    const std::size_t firstPrefillCollective = m_out.collectives.size();

    // What lies between two collectives (per chip): one sequence's layer, attention, experts or stage.
    const double seqLayerFlops = (2.0 * matmulParams + attention) * prompt / (m_lanes * m.layers);
    const double seqLayerTime = ph.compute / (sequences * m.layers);
    const double act = prompt * double(m.dModel) * m_actBytes; // one sequence's activations
    const double perLayerAr = m.parallelBlock ? 1.0 : 2.0;
    double comms = 0;
    if (m_tp > 1) {
        comms += sequences * perLayerAr * m.layers * collectiveTime(CollectiveOp::AllReduce, Role::Tensor, act);
        if (record)
            addCollective(CollectiveOp::AllReduce, "prefill: tensor activations", Role::Tensor, act,
                          sequences * perLayerAr * m.layers, seqLayerFlops / perLayerAr, seqLayerTime / perLayerAr);
    }
    if (m_ep > 1 && m.moe) {
        // One dispatch and one combine per MoE layer carry all the step's routed tokens: the
        // batch's sequences go through a layer together, not one after another. The busiest expert
        // rank receives and returns its load's share of them.
        const double elements =
            tokens * m.moe->expertsPerToken * double(m.dModel) * busiestRankLoad(prefillMicroBatchTokens(tokens));
        const bool ideal = m_mode == CostMode::Ideal;
        // The book leaves them exposed; real EP serving splits the batch in kEpPrefillMicroBatches
        // and hides each micro-batch's all-to-alls under the other's layer compute.
        const double microBatches = ideal ? 1.0 : kEpPrefillMicroBatches;
        const double dispatch = elements / microBatches * (!ideal && m_spec.computeDtype == DType::Fp8 ? 1.0 : m_actBytes);
        const double combine = elements / microBatches * (ideal ? m_actBytes : 2.0); // bf16 even when the matmuls run fp8
        CollectiveOptions forwarded = m_options;
        if (!ideal && deduplicatesServingDispatch(m_plan.parallelism.expertDispatch, true))
            forwarded.forwardedTopK = m.moe->expertsPerToken;
        const double perLayer = microBatches
                                * (collectiveTime(CollectiveOp::AllToAll, Role::Expert, dispatch, forwarded)
                                   + collectiveTime(CollectiveOp::AllToAll, Role::Expert, combine, forwarded));
        const double layerTime = ph.compute / m.layers;
        const double exposed = ideal ? perLayer : std::max(0.0, perLayer - layerTime);
        comms += m.moeLayerCount() * exposed;
        // The hidden part still holds the SMs its kernels run on (DeepEP's normal kernels take
        // 20-24 of H100's 132), so the compute beside it runs on the rest, as in a training step.
        if (!ideal)
            ph.overlapInterference = m_chip.achievable.collectiveSmShare * m.moeLayerCount() * (perLayer - exposed);
        if (record) {
            const double expertFlops = 2.0 * tokens * m.moe->expertsPerToken * double(m_params.expertParams) / m_lanes;
            const double share = ideal ? 2.0 : 2.0 * microBatches; // what runs beside one all-to-all
            const double between = ideal ? expertFlops / m_peak / 2.0 : layerTime / share;
            const double exposedShare = perLayer > 0 ? exposed / perLayer : 1.0;
            addCollective(CollectiveOp::AllToAll, "prefill: expert dispatch", Role::Expert, dispatch,
                          microBatches * m.moeLayerCount(), expertFlops / share, between, exposedShare, &forwarded);
            addCollective(CollectiveOp::AllToAll, "prefill: expert combine", Role::Expert, combine,
                          microBatches * m.moeLayerCount(), expertFlops / share, between, exposedShare, &forwarded);
        }
    }
    if (m_cp > 1) {
        const double kv = sequenceKvBytes(prompt) / m.layers; // one layer's keys and values of the prompt
        const double ring = collectiveTime(CollectiveOp::AllGather, Role::Context, kv);
        const double attnPerLayer = attention * m_prefillAttentionSlowdown / m.layers * prompt / (m_lanes * m_peak);
        comms += sequences * m.layers * std::max(0.0, ring - attnPerLayer); // ring attention overlaps
        if (record)
            addCollective(CollectiveOp::AllGather, "prefill: ring attention keys and values", Role::Context, kv,
                          sequences * m.layers, attention / m.layers * prompt / m_lanes, attnPerLayer,
                          ring > 0 ? std::max(0.0, ring - attnPerLayer) / ring : 1.0);
    }
    if (m_pp > 1) {
        comms += (m_pp - 1) * collectiveTime(CollectiveOp::SendRecv, Role::Pipeline, act);
        if (record)
            addCollective(CollectiveOp::SendRecv, "prefill: pipeline activations", Role::Pipeline, act,
                          sequences * (m_pp - 1), seqLayerFlops * m.layers / m_pp, seqLayerTime * m.layers / m_pp);
    }
    ph.comms = comms;
    if (record && m_why.on())
        explainPrefill(ph, sequences, attention, pipelineFactor, firstPrefillCollective);
    return ph;
}

DerivationValue InferenceCost::peakValue() const
{
    return {"peak_flops", m_chip.peakFlops(m_spec.computeDtype), "",
            "catalog: " + m_chip.id + " peak " + std::string(dtypeName(m_spec.computeDtype)) + " FLOPs/s"};
}

DerivationValue InferenceCost::expertKernelShareValue(double share) const
{
    return {"expert_kernel_share", share, "",
            "the share of the matmul rate the stack's grouped-GEMM kernels for the routed experts reach: they are built "
            "for the previous GPU generation (catalog: " + m_chip.figureOwner("legacy_kernel_share") + " achievable.legacy_kernel_share)"};
}

DerivationValue InferenceCost::flopsFractionValue() const
{
    if (m_mode == CostMode::Ideal)
        return {"flops_fraction", 1.0, "", "the book's ideal model: matmuls at the advertised peak"};
    const double fraction = inferenceFlopsFraction();
    if (matmulsKeepTheInferenceShare())
        return {"flops_fraction", fraction, "",
                "matmul_benchmark_fraction " + formatShare(m_chip.achievable.matmulBenchmarkFraction) + " (catalog: "
                    + m_chip.figureOwner("matmul_benchmark_fraction") + ", the best a matmul reaches alone) x " + formatShare(kInferenceKernelShare)
                    + ", the share of it an inference engine's 16-bit matmuls keep (Vidur's kernel timings)"};
    return {"flops_fraction", fraction, "", m_chip.achievableFlopsFractionNote(m_spec.computeDtype)};
}

double InferenceCost::inferenceKernelShare() const
{
    if (m_mode == CostMode::Ideal || m_chip.isTpu() || m_chip.achievable.matmulBenchmarkFraction <= 0)
        return 0.0;
    return kInferenceKernelShare;
}

bool InferenceCost::matmulsKeepTheInferenceShare() const
{
    return inferenceKernelShare() > 0 && m_chip.computesAtSixteenBitRate(m_spec.computeDtype);
}

double InferenceCost::inferenceFlopsFraction() const
{
    if (m_mode == CostMode::Ideal)
        return 1.0;
    if (matmulsKeepTheInferenceShare())
        return m_chip.achievable.matmulBenchmarkFraction * inferenceKernelShare();
    return m_chip.achievableFlopsFraction(m_spec.computeDtype);
}

DerivationValue InferenceCost::hbmValue(const char *name) const
{
    return {name, m_chip.hbmBandwidth, "", "catalog: " + m_chip.id + " HBM bytes/s"};
}

DerivationValue InferenceCost::hbmEfficiencyValue() const
{
    if (m_mode == CostMode::Ideal)
        return {"hbm_efficiency", 1.0, "", "the book's ideal model: the advertised bandwidth"};
    return {"hbm_efficiency", m_chip.achievable.hbmEfficiency, "",
            "catalog: " + m_chip.figureOwner("hbm_efficiency") + " achievable.hbm_efficiency, from streaming benchmarks"};
}

DerivationValue InferenceCost::shapeValue() const
{
    return {"shape", matmulShape(), "",
            m_mode == CostMode::Ideal ? "the book's ideal model: every shape at peak"
                                      : "1 / the share of peak the layer's matmuls reach at their depths (GEMM benchmarks by shape)"};
}

DerivationValue InferenceCost::kvEfficiencyValue(double bytesPerLayer, double sequences) const
{
    const double share = decodeKvEfficiency(bytesPerLayer, sequences);
    if (m_mode == CostMode::Ideal || m_chip.isTpu() || !m_chip.decodeAttention)
        return {"kv_efficiency", share, "",
                m_mode == CostMode::Ideal ? "the book's ideal model: the advertised bandwidth"
                                          : "catalog: " + m_chip.figureOwner("hbm_efficiency") + " achievable.hbm_efficiency, from streaming benchmarks"};
    const double batched = DecodeAttentionCurve::kBatchedFrom;
    return {"kv_efficiency", share, "",
            "catalog: " + m_chip.figureOwner("decode_attention") + " decode_attention, the decode kernel's measured share at " + formatBytes(bytesPerLayer)
                + " per layer and chip, " + formatCount(sequences)
                + (sequences >= batched ? " sequences (the batched curve)"
                   : sequences <= 1     ? " sequence (the single-request curve)"
                                        : " sequences (between the single and the batched curve)")};
}

double InferenceCost::decodeKvEfficiency(double bytesPerLayer, double sequences) const
{
    if (m_mode == CostMode::Ideal || m_chip.isTpu() || !m_chip.decodeAttention)
        return m_hbm / m_chip.hbmBandwidth;
    return m_chip.decodeAttention->share(bytesPerLayer, sequences, m_chip.hbmBandwidth);
}

DerivationValue InferenceCost::lanesValue() const
{
    return {"lanes", m_lanes, "",
            "chips working on one pipeline stage at once: tensor × expert × fsdp × context"};
}

void InferenceCost::explainMemory(const MemoryBreakdown &mem, double batch, double maxContext)
{
    const ModelSpec &m = m_model;
    const auto [dense, experts] = layerWeights();
    const double vocab = double(m_params.embedding + m_params.unembedding);
    m_why.record("memory_per_chip.params", mem.params,
                 "(dense_weights / (tensor * pipeline * fsdp) + expert_weights / (tensor * pipeline * fsdp * expert) + "
                 "vocab_weights / (tensor * fsdp) / vocab_split) * weight_bytes",
                 {{"dense_weights", dense, "", "model: every weight outside the routed experts and the embeddings"},
                  {"tensor", double(m_tp), "", "plan: tensor-parallel degree"},
                  {"pipeline", double(m_pp), "", "plan: pipeline-parallel degree"},
                  {"fsdp", double(m_fs), "", "plan: FSDP degree"},
                  {"expert_weights", experts, "", "model: the routed experts' weights"},
                  {"expert", double(m_ep), "", "plan: expert-parallel degree"},
                  {"vocab_weights", vocab, "", "model: the embedding and output layer"},
                  {"vocab_split", m_pp > 1 ? 2.0 : 1.0, "", "with a pipeline, the embedding sits on the first stage and the output layer on the last"},
                  {"weight_bytes", m_weightBytes, "",
                   "plan: inference.weight_dtype" + std::string(m_mode == CostMode::Achievable && m_spec.weightDtype == DType::Int4
                                                                    ? ", plus a 16-bit scale per group of 128 weights" : "")}},
                 "Serving holds only the weights: sharded over tensor, pipeline and FSDP, the experts over the expert "
                 "axis too.",
                 "7", "Memory at inference");
    m_why.record("memory_per_chip.grads", mem.grads, "0", {}, "Serving keeps no gradients.", "7", "Memory at inference");
    m_why.record("memory_per_chip.optimizer", mem.optimizer, "0", {}, "Serving keeps no optimizer states.", "7",
                 "Memory at inference");
    m_why.record("memory_per_chip.kv_cache", mem.kvCache, "batch * (max_context * kv_bytes_per_token) / kv_shards",
                 {{"batch", batch, "", "sequences per decoding replica: ceil(inference.batch / replicas)"},
                  {"max_context", cachedTokens(m, maxContext), "", maxContextNote()},
                  {"kv_bytes_per_token", m_kvPerToken, "inference.kv_cache_bytes_per_token", ""},
                  {"kv_shards", kvShards(batch), "",
                   "chips the cache is split over: pipeline × context × min(tensor × expert, KV heads × batch) (book: "
                   "KV heads first, then the batch)"}},
                 "The KV cache holds every layer's keys and values for every token of every sequence at the longest "
                 "context; it is split over KV heads, then over the batch.",
                 "7", "KV cache sharding");
    m_why.record("memory_per_chip.activations", mem.activations, "prompt / context * (4 * d_model + 3 * d_ff / tensor) * act_bytes",
                 {{"prompt", double(m_spec.promptLen), "", "plan: inference.prompt_len"},
                  {"context", double(m_cp), "", "plan: context-parallel degree"},
                  {"d_model", double(m.dModel), "", "model: d_model"},
                  {"d_ff", double(std::max(m.dFf, m.moe ? m.moe->dFfExpert : 0)), "", "model: the widest MLP"},
                  {"tensor", double(m_tp), "", "plan: tensor-parallel degree"},
                  {"act_bytes", m_actBytes, "", "plan: inference.compute_dtype, at most 16 bits"}},
                 "A prefill's working set: one sequence's layer activations at a time.", "7", "Memory at inference");
    m_why.record("memory_per_chip.total", mem.total, "params + kv_cache + activations",
                 {{"params", mem.params, "memory_per_chip.params", ""},
                  {"kv_cache", mem.kvCache, "memory_per_chip.kv_cache", ""},
                  {"activations", mem.activations, "memory_per_chip.activations", ""}},
                 "A serving chip holds its weights, its share of the KV cache and a prefill's working set.", "7",
                 "Memory at inference");
    explainCapacity(m_why, m_chip);
}

std::string InferenceCost::explainElementwise(const std::string &name, double value, const DerivationValue &rows)
{
    if (m_mode == CostMode::Ideal)
        return m_why.term(name, value, "0", {}, "The book's ideal model leaves out the work beside the matmuls.", "1",
                          "Where does the time go?");
    return m_why.term(
        name, value, "tensors * " + rows.name + " * d_model * act_bytes * layers / (lanes * (hbm_bandwidth * hbm_efficiency))",
        {{"tensors", kDecodeElementwiseTensors, "", "[rows, d_model] tensors each layer's norms, residuals and activations move"},
         rows,
         {"d_model", double(m_model.dModel), "", "model: d_model"},
         {"act_bytes", m_actBytes, "", "plan: compute dtype, at most 16 bits"},
         {"layers", double(m_model.layers), "", "model: layers"},
         lanesValue(), hbmValue(), hbmEfficiencyValue()},
        "Work beside the matmuls: norms, residuals and activations through HBM. The book's ideal model leaves it out.",
        "1", "Where does the time go?");
}

void InferenceCost::explainDecode(const Phase &ph, double batch, double context, double expertFraction, double kvRead,
                                  double attnFlops, std::size_t firstCollective)
{
    const ModelSpec &m = m_model;
    const auto [layers, experts] = layerWeights();
    const double dense = layers + double(m.vocab * m.dModel); // the output layer is read every step
    const bool ideal = m_mode == CostMode::Ideal;
    const DerivationValue batchValue{"batch", batch, "", "sequences per decoding replica"};
    std::string weightsSource = "the HBM rate weights stream at";
    if (ideal)
        weightsSource = "the book's ideal model: the advertised HBM bandwidth";
    else if (!m_chip.isTpu())
        weightsSource = "GPU decode reads weights in many small matrix-vector kernels: catalog: "
                        + m_chip.figureOwner("decode_hbm_efficiency") + " achievable.decode_hbm_efficiency"
                          " (× a low-precision kernel's efficiency for 8- or 4-bit weights)";
    else
        weightsSource = "HBM bandwidth × " + m_chip.figureOwner("hbm_efficiency") + " achievable.hbm_efficiency";
    const std::string weights = m_why.term(
        "decode_weights_s", ph.weights,
        "(dense_weights + expert_weights * expert_fraction) * weight_bytes / (lanes * decode_hbm)",
        {{"dense_weights", dense, "", "model: every weight a token meets outside the routed experts, the output layer included"},
         {"expert_weights", experts, "", "model: the routed experts' weights"},
         {"expert_fraction", expertFraction, "", "the share of experts some token of the batch picks: 1 − (1 − k/E)^batch"},
         {"weight_bytes", m_weightBytes, "", "plan: inference.weight_dtype"},
         lanesValue(),
         {"decode_hbm", m_decodeWeightHbm, "", weightsSource}},
        "Each decode step reads every weight it uses once from HBM, whatever the batch.", "7",
        "Latency and throughput bounds");
    const double matmulParams = activeMatmulWeights();
    std::vector<DerivationValue> flopValues{
        {"matmul_params", matmulParams, "", "model: active weights in matmuls (the output layer, not the embedding)"},
        shapeValue(), batchValue, lanesValue(), peakValue(), flopsFractionValue()};
    std::string flopFormula = "2 * matmul_params * shape * batch / (lanes * (peak_flops * flops_fraction))";
    const bool uneven = busiestRankLoad(batch) != 1.0;
    const bool legacy = m_expertKernelShare != 1.0;
    if (routedShare() > 0 && (legacy || uneven)) {
        const std::string routed = uneven && legacy ? "busiest_rank_load / expert_kernel_share"
                                   : uneven         ? "busiest_rank_load"
                                                    : "1 / expert_kernel_share";
        flopFormula = "2 * matmul_params * shape * (1 + routed_share * (" + routed
                      + " - 1)) * batch / (lanes * (peak_flops * flops_fraction))";
        flopValues.push_back(routedShareValue());
        if (uneven)
            flopValues.push_back(busiestRankLoadValue(batch));
        if (legacy)
            flopValues.push_back(expertKernelShareValue(m_expertKernelShare));
    }
    const std::string flops = m_why.term("decode_flops_s", ph.flops, flopFormula, std::move(flopValues),
                                         "A decode step does 2 FLOPs per active weight per sequence of the batch.", "7",
                                         "Linear operations: the critical batch size");
    const std::string compute = m_why.term(
        "decode_compute_s", ph.compute, "max(flops_s, weights_s)",
        {{"flops_s", ph.flops, flops, ""}, {"weights_s", ph.weights, weights, ""}},
        "The weight matmuls take the longer of their FLOPs and reading the weights: below the critical batch "
        "(B < C / W_hbm), decode is bound by memory bandwidth.",
        "7", "Linear operations: the critical batch size");
    const auto [qk, v] = attentionHeadDims(m);
    const std::string kvReadPath = m_why.term(
        "decode_kv_read_s", kvRead,
        "batch * context * kv_bytes_per_token / (kv_shards / pipeline) / (hbm_bandwidth * kv_efficiency)",
        {batchValue,
         {"context", context, "", contextNote()},
         {"kv_bytes_per_token", m_kvPerToken, "inference.kv_cache_bytes_per_token", ""},
         {"kv_shards", kvShards(batch), "", "chips the cache is split over"},
         {"pipeline", double(m_pp), "", "plan: pipeline-parallel degree (stages read their share one after another)"},
         hbmValue(), kvEfficiencyValue(decodeKvBytes(batch, context) / m.layers, sequencesPerKvShard(batch))},
        "Attention reads every cached key and value of every sequence once per step.", "7", "Attention during prefill and generation");
    const std::string attention = m_why.term(
        "decode_attention_flops_s", attnFlops,
        "2 * batch * context * heads * (d_qk + d_v) * layers / (lanes * (peak_flops * flops_fraction))",
        {batchValue,
         {"context", context, "", contextNote()},
         {"heads", double(m.heads), "", "model: query heads"},
         {"d_qk", qk, "", "model: query/key head dimension"},
         {"d_v", v, "", "model: value head dimension"},
         {"layers", double(m.layers), "", "model: layers"},
         lanesValue(), peakValue(), flopsFractionValue()},
        "Attention's FLOPs per step: each new token's queries against the whole context.", "7",
        "Attention during prefill and generation");
    const std::string kv = m_why.term("decode_kv_s", ph.kv, "max(kv_read_s, attention_s)",
                                      {{"kv_read_s", kvRead, kvReadPath, ""}, {"attention_s", attnFlops, attention, ""}},
                                      "Attention during decode is bound by reading the KV cache at any batch: its "
                                      "arithmetic intensity is about 1.",
                                      "7", "Attention during prefill and generation");
    const std::string elementwise = explainElementwise("decode_elementwise_s", ph.elementwise, batchValue);
    std::vector<DerivationValue> parts;
    for (std::size_t i = firstCollective; i < m_out.collectives.size(); ++i)
        parts.push_back({"c" + std::to_string(i), m_out.collectives[i].exposedS, "collectives[" + std::to_string(i) + "].exposed_s", ""});
    const std::string comms = m_why.term("decode_communication_s", ph.comms, DerivationRecorder::sum(parts), parts,
                                         "The decode step's collectives: on the latency-critical path. Only a TPU's "
                                         "tensor all-reduce hides, inside the matmul that produces it.",
                                         "7", "Sharding generation");
    const std::string latency = m_why.term(
        "decode_latency_s", ph.latency, "layer_latency * layers",
        {{"layer_latency", m_layerLatency, "", ideal || m_chip.isTpu() ? "none: one compiled program (or the ideal model)"
                                                                       : "GPU kernel launches of a decode layer (about 10 kernels × 2 µs)"},
         {"layers", double(m.layers), "", "model: layers"}},
        "Kernel latency a small decode step cannot hide.", "7", "Designing an effective inference engine");
    m_why.record("inference.decode_step_s", ph.total(), "compute_s + kv_s + elementwise_s + communication_s + latency_s",
                 {{"compute_s", ph.compute, compute, ""},
                  {"kv_s", ph.kv, kv, ""},
                  {"elementwise_s", ph.elementwise, elementwise, ""},
                  {"communication_s", ph.comms, comms, ""},
                  {"latency_s", ph.latency, latency, ""}},
                 "The mean decode step over the generation: the weight matmuls, attention over the KV cache, the work "
                 "beside them and the collectives, one after another.",
                 "7", "Latency and throughput bounds");
}

void InferenceCost::explainPrefill(const Phase &ph, double sequences, double attention, double pipelineFactor,
                                   std::size_t firstCollective)
{
    const double prompt = double(m_spec.promptLen);
    const double matmulParams = activeMatmulWeights();
    const DerivationValue tokens{"tokens", sequences * prompt, "", "prompt tokens of the sequences prefilled together"};
    std::vector<DerivationValue> flopValues{
        {"matmul_params", matmulParams, "", "model: active weights in matmuls"},
        shapeValue(),
        {"attention_flops", attention, "",
         m_model.slidingWindow ? "per token: causal attention over the prompt, 2·keys·heads·(d_qk + d_v)·layers, the keys a "
                           "query attends to averaged over the layers (T/2 in a global layer, a local one's window)"
                         : "per token: causal attention over the prompt, 2·(T/2)·heads·(d_qk + d_v)·layers"},
        {"attention_factor", m_prefillAttentionSlowdown, "",
         m_prefillAttentionSlowdown == 1.0
             ? "1: attention at the matmul rate (the ideal model, a TPU, or no kernel curve for the chip)"
             : "the matmul rate over the fused attention kernel's forward rate at the prompt's length, in 16 bits "
               "(catalog attention_kernels, at the share of its benchmark an engine keeps)"},
        tokens, lanesValue(), peakValue(), flopsFractionValue(),
        {"pipeline_factor", pipelineFactor, "", "(sequences + stages − 1) / sequences: filling the pipeline"}};
    std::string matmuls = "2 * matmul_params * shape";
    if (const ExpertSorting sorting = prefillExpertSorting(sequences * prompt); sorting.routedShare > 0) {
        const bool legacy = sorting.kernelShare != 1.0;
        const bool uneven = sorting.busiestRankLoad != 1.0;
        matmuls += std::string(" * (1 + routed_share * (") + (uneven ? "busiest_rank_load" : "1") + " / "
                   + (legacy ? "(dispatch_efficiency * expert_kernel_share)" : "dispatch_efficiency") + " - 1))";
        flopValues.push_back(routedShareValue());
        if (uneven)
            flopValues.push_back(busiestRankLoadValue(prefillMicroBatchTokens(sequences * prompt)));
        flopValues.push_back({"dispatch_efficiency", sorting.dispatchEfficiency, "",
                              "the share of their rate the routed experts keep while their tokens are sorted to them and "
                              "back: 1 / (1 + 1.5 × permute_cost × ridge / d_ff_expert), the training step's forward "
                              "alone"});
        if (legacy)
            flopValues.push_back(expertKernelShareValue(sorting.kernelShare));
    }
    const std::string flops = m_why.term(
        "prefill_flops_s", ph.flops,
        "(" + matmuls + " + attention_flops * attention_factor) * tokens / (lanes * (peak_flops * flops_fraction)) * pipeline_factor",
        std::move(flopValues),
        "Prefill runs the prompt's forward pass: 2 FLOPs per weight per token plus attention, compute-bound at "
        "any real prompt length.",
        "7", "Sampling, prefill and generation");
    const std::string weights = m_why.term(
        "prefill_weights_s", ph.weights, "weight_bytes_per_chip * pipeline / (hbm_bandwidth * hbm_efficiency)",
        {{"weight_bytes_per_chip", weightBytesPerChip(), "memory_per_chip.params", ""},
         {"pipeline", double(m_pp), "", "stages read their weights one after another"},
         hbmValue(), hbmEfficiencyValue()},
        "Reading every stage's weights once.", "7", "Sampling, prefill and generation");
    const std::string compute = m_why.term("prefill_compute_s", ph.compute, "max(flops_s, weights_s)",
                                           {{"flops_s", ph.flops, flops, ""}, {"weights_s", ph.weights, weights, ""}},
                                           "The longer of the FLOPs and the weight reads.", "1", "Where does the time go?");
    const std::string elementwise = explainElementwise("prefill_elementwise_s", ph.elementwise, tokens);
    std::vector<DerivationValue> parts;
    for (std::size_t i = firstCollective; i < m_out.collectives.size(); ++i)
        parts.push_back({"c" + std::to_string(i), m_out.collectives[i].exposedS, "collectives[" + std::to_string(i) + "].exposed_s", ""});
    const std::string comms = m_why.term("prefill_communication_s", ph.comms, DerivationRecorder::sum(parts), parts,
                                         "The prefill's collectives not hidden behind its compute.", "7", "Sharding prefill");
    std::vector<DerivationValue> phase{{"compute_s", ph.compute, compute, ""},
                                       {"elementwise_s", ph.elementwise, elementwise, ""},
                                       {"communication_s", ph.comms, comms, ""}};
    std::string formula = "compute_s + elementwise_s + communication_s";
    if (ph.overlapInterference > 0) {
        const double hidden = ph.overlapInterference / m_chip.achievable.collectiveSmShare;
        const std::string interference = m_why.term(
            "prefill_overlap_interference_s", ph.overlapInterference, "collective_sm_share * hidden_s",
            {{"collective_sm_share", m_chip.achievable.collectiveSmShare, "",
              "catalog: " + m_chip.figureOwner("collective_sm_share") + " achievable.collective_sm_share, the share of the SMs a collective's kernels hold"},
             {"hidden_s", hidden, "", "the expert all-to-alls' time hidden under the other micro-batch's compute"}},
            "The all-to-alls the other micro-batch hides still hold some of the SMs while they run, so the compute "
            "beside them runs on the rest.",
            "5", "What do we mean by scaling?");
        phase.push_back({"overlap_interference_s", ph.overlapInterference, interference, ""});
        formula += " + overlap_interference_s";
    }
    m_why.term("prefill_phase_s", ph.total(), formula, phase,
               "The prefill of these sequences: its matmuls and attention, the work beside them and its exposed "
               "collectives.",
               "7", "Sampling, prefill and generation");
}

double InferenceCost::prefillAttentionSlowdown() const
{
    // A prefill's attention is one fused kernel per layer, as a training step's forward: it runs
    // at the kernel's measured forward rate for the prompt's length (short prompts waste the
    // causal diagonal and the pipeline fill), in 16 bits even under an 8-bit recipe (fp8 context
    // attention is an opt-in of some engines), keeping the share of its benchmark that an engine's
    // 16-bit matmuls keep. The serving stacks call their own or FlashAttention's kernels: with no
    // published curve of theirs, the fastest kernel with one on the chip.
    const auto found = m_chip.attentionKernels.find(attentionKernelFor(m_chip, m_spec.stack));
    const double derate = inferenceKernelShare();
    if (m_chip.isTpu() || found == m_chip.attentionKernels.end() || derate <= 0 || !(m_peak > 0))
        return 1.0;
    const double T = double(m_spec.promptLen) / m_cp;
    const double rate = m_chip.peakFlops(DType::Bf16) * attentionKernelShare(found->second, m_model, T, double(m_spec.promptLen), false) * derate;
    return rate > 0 ? std::max(1.0, m_peak / rate) : 1.0;
}

double InferenceCost::matmulShape() const
{
    if (m_mode == CostMode::Ideal)
        return 1.0;
    const ModelSpec &m = m_model;
    const double tp = m_tp;
    const double d = double(m.dModel);
    const double attnOut = double(m.heads) * attentionHeadDims(m).second / tp;
    const double width = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
    const double f = (m.moe ? double(m.moe->dFfExpert) : double(m.dFf)) / tp;
    // One layer's matmuls per token, forward: q/k/v and the MLP's up projection reduce over
    // d_model, the output projection over the attention output, the down projection over d_ff.
    const double qkv = 2.0 * d * (double(m.heads) + 2.0 * m.kvHeads) * double(m.headDim) / tp;
    const double gemms[4][2] = {{qkv, d}, {2.0 * attnOut * d, attnOut}, {2.0 * (width - 1.0) * d * f, d}, {2.0 * f * d, f}};
    double flops = 0, weighted = 0;
    for (const auto &g : gemms) {
        flops += g[0];
        weighted += g[0] / m_chip.matmulShapeEfficiency(g[1], m_spec.computeDtype);
    }
    return weighted / flops;
}

double InferenceCost::activeMatmulWeights() const
{
    return double(m_params.active - m_params.embedding - m_params.unembedding) + double(m_model.vocab * m_model.dModel);
}

double InferenceCost::routedShare() const
{
    const ModelSpec &m = m_model;
    if (m_mode == CostMode::Ideal || !m.moe || m.moeLayerCount() == 0)
        return 0.0;
    return double(m.moeLayerCount()) * m.moe->expertsPerToken * double(m_params.expertParams) / activeMatmulWeights();
}

DerivationValue InferenceCost::routedShareValue() const
{
    return {"routed_share", routedShare(), "", "the routed experts' share of a token's matmul FLOPs (top-k experts of each MoE layer)"};
}

double InferenceCost::busiestRankLoad(double tokens) const
{
    if (m_mode == CostMode::Ideal || !m_model.moe || m_ep <= 1)
        return 1.0;
    return busiestExpertRankLoad(m_ep, tokens * m_model.moe->expertsPerToken / m_ep);
}

namespace {

// The spread at the precision it was derived to (formatNumber keeps two digits below 0.1).
std::string spreadText(double spread)
{
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%.3g", spread);
    return buffer;
}

} // namespace

DerivationValue InferenceCost::busiestRankLoadValue(double tokens) const
{
    return {"busiest_rank_load", busiestRankLoad(tokens), "",
            "the busiest of " + std::to_string(m_ep) + " expert ranks' routed tokens over the mean, each receiving "
                + formatCount(tokens * m_model.moe->expertsPerToken / m_ep)
                + " (token, expert) pairs on average, experts placed by load (EPLB): "
                + "1 + z(ranks) · √(spread² + (1 − 1/ranks) / pairs), z the expected largest of that many normal "
                  "draws, spread " + spreadText(placedExpertLoadSpread())
                + " from TensorRT-LLM's wide-EP table (DeepSeek-R1, EP32 with EPLB: 1.109× the mean)"};
}

InferenceCost::ExpertSorting InferenceCost::prefillExpertSorting(double tokens) const
{
    // Routed tokens are sorted to their experts and back around the grouped matmuls, as in a
    // training step's forward (softwarestack.cpp); the rest of the layer is untouched. The sorting
    // is priced against the layer's mean shape factor, not the experts' own (a few points apart).
    const double share = routedShare();
    if (share <= 0)
        return {};
    return {share, forwardExpertDispatchEfficiency(m_chip, m_peak / m_hbm, double(m_model.moe->dFfExpert)),
            m_expertKernelShare, busiestRankLoad(prefillMicroBatchTokens(tokens))};
}

std::optional<Error> InferenceCost::run()
{
    if (auto error = validate())
        return error;
    // Room for the prefill's and the decode step's operations and collectives, so the result is
    // filled without regrowing.
    m_out.operations.reserve(24);
    m_out.collectives.reserve(16);
    const ModelSpec &m = m_model;
    const bool ideal = m_mode == CostMode::Ideal;
    m_peak = m_chip.peakFlops(m_spec.computeDtype) * inferenceFlopsFraction();
    m_hbm = m_chip.hbmBandwidth * (ideal ? 1.0 : m_chip.achievable.hbmEfficiency);
    m_weightBytes = bytesPerElement(m_spec.weightDtype);
    if (!ideal && m_spec.weightDtype == DType::Int4)
        m_weightBytes += kInt4GroupBytes / kInt4GroupSize;
    // A decode step reads its weights in a train of small matrix-vector kernels (a few MB each at
    // batch 1), which fill HBM less well than a streaming copy; its attention reads the KV cache
    // at the decode kernel's share for the bytes a call reads (decodeKvEfficiency).
    m_decodeWeightHbm = m_hbm;
    if (!ideal && !m_chip.isTpu()) {
        const double decodeHbm = m_chip.achievable.decodeHbmEfficiency > 0
                                     ? m_chip.hbmBandwidth * m_chip.achievable.decodeHbmEfficiency
                                     : m_hbm;
        const DType w = m_spec.weightDtype;
        const double lowPrecision = w == DType::Int4                      ? kFourBitDecodeEfficiency
                                    : (w == DType::Int8 || w == DType::Fp8) ? kEightBitDecodeEfficiency
                                                                            : 1.0;
        m_decodeWeightHbm = decodeHbm * lowPrecision;
        m_layerLatency = kDecodeKernelsPerLayer * kGpuKernelLatencyS;
    }
    m_prefillAttentionSlowdown = ideal ? 1.0 : prefillAttentionSlowdown();
    m_expertKernelShare = ideal ? 1.0 : expertKernelShare(m_chip, m_spec.stack, m_spec.computeDtype);
    m_kvBytes = bytesPerElement(m_spec.kvDtype);
    m_actBytes = std::min(2.0, bytesPerElement(m_spec.computeDtype));
    m_kvPerToken = kvCacheBytesPerToken(m, m_spec.kvDtype);

    const std::int64_t chips = m_t.chipCount();
    const std::int64_t perReplica = chips / m_dp;
    const bool disaggregated = m_spec.serving == Serving::Disaggregated;
    const double prefillReplicas = disaggregated ? double(m_spec.prefillChips / perReplica) : 0.0;
    const double decodeReplicas = double(m_dp) - prefillReplicas;
    const double batch = std::ceil(double(m_spec.batch) / decodeReplicas); // per decoding replica
    const double prompt = double(m_spec.promptLen);
    const double generate = double(m_spec.generateLen);

    // Memory: weights, the KV cache at the longest context, and a prefill working set.
    MemoryBreakdown mem;
    mem.params = weightBytesPerChip();
    const double maxContext = prompt + generate;
    const double kvPerSequence = sequenceKvBytes(maxContext);
    mem.kvCache = batch * kvPerSequence / kvShards(batch);
    mem.activations = prompt / m_cp * (4.0 * double(m.dModel) + 3.0 * double(std::max(m.dFf, m.moe ? m.moe->dFfExpert : 0)) / m_tp)
                      * m_actBytes;
    mem.total = mem.params + mem.kvCache + mem.activations;
    mem.capacity = double(m_chip.hbmBytes);
    mem.fits = mem.total <= mem.capacity;
    m_out.memory = mem;
    if (m_why.on())
        explainMemory(mem, batch, maxContext);
    m_out.perChip.push_back({disaggregated ? "decode chips" : "every chip", std::int64_t(decodeReplicas) * perReplica, mem});
    if (disaggregated) {
        MemoryBreakdown pre = mem;
        pre.kvCache = sequenceKvBytes(prompt) / kvShards(1.0);
        pre.total = pre.params + pre.kvCache + pre.activations;
        pre.fits = pre.total <= pre.capacity;
        m_out.perChip.push_back({"prefill chips", m_spec.prefillChips, pre});
    }

    // The largest batch per replica whose KV cache fits next to the weights.
    const double freeBytes = mem.capacity - mem.params - mem.activations;
    double maxBatch = 0;
    if (freeBytes > 0) {
        // kvShards grows with the batch until every chip holds a share: solve in two regimes.
        const double full = double(m_pp) * m_cp * m_tp * m_ep;
        maxBatch = std::floor(freeBytes * full / kvPerSequence);
        if (kvShards(maxBatch) < full)
            maxBatch = std::floor(freeBytes * kvShards(1.0) / kvPerSequence);
    }

    // Decode: the mean step over the generation (context grows from prompt to prompt + generate).
    const Phase decode = decodeStep(batch, prompt, prompt + generate, true);
    const Phase first = decodeStep(batch, prompt, prompt, false);
    const Phase onePrefill = prefill(1.0, false);
    double prefillAll = 0;
    double ttft = 0;
    double kvTransfer = 0;
    if (disaggregated) {
        // The prompt's KV cache travels from a prefill replica to a decode replica.
        const double link = m_chip.isTpu() ? m_chip.dcnBandwidth * double(perReplica)
                                           : m_chip.scaleOut->nodeEgressBandwidth / m_t.axes()[0].size * double(perReplica);
        kvTransfer = sequenceKvBytes(prompt) / link;
        prefillAll = std::ceil(double(m_spec.batch) / prefillReplicas) * onePrefill.total();
        prefill(std::ceil(double(m_spec.batch) / prefillReplicas), true);
        ttft = onePrefill.total() + kvTransfer + first.total();
    } else {
        const Phase all = prefill(batch, true);
        prefillAll = all.total();
        ttft = prefillAll + first.total();
    }

    InferenceResult r;
    r.prefillS = prefillAll;
    r.timeToFirstTokenS = ttft;
    r.decodeStepS = decode.total();
    r.kvCacheBytesPerToken = m_kvPerToken;
    const double totalBatch = double(m_spec.batch);
    r.tokensPerS = totalBatch * generate / (ttft + (generate - 1.0) * r.decodeStepS);
    r.tokensPerSPerChip = r.tokensPerS / double(chips);
    m_out.inference = r;
    m_out.tokensPerS = r.tokensPerS; // the format's top-level tokens_per_s, for every plan
    if (m_why.on()) {
        const std::string firstStep = m_why.term(
            "first_decode_step_s", first.total(), "step_s",
            {{"step_s", first.total(), "", "a decode step as inference.decode_step_s, at the prompt's length instead of the mean context"}},
            "The step that produces the first token reads the cache at the prompt's length.", "7",
            "Latency and throughput bounds");
        if (m.mla)
            m_why.record("inference.kv_cache_bytes_per_token", m_kvPerToken, "(kv_lora_rank + rope_dim) * layers * kv_bytes",
                         {{"kv_lora_rank", double(m.mla->kvLoraRank), "", "model: MLA's latent width"},
                          {"rope_dim", double(m.mla->qkRopeHeadDim), "", "model: the decoupled rope key's width"},
                          {"layers", double(m.layers), "", "model: layers"},
                          {"kv_bytes", m_kvBytes, "", "plan: inference.kv_dtype"}},
                         "Multi-head latent attention caches one compressed latent and a rope key per token and layer.",
                         "7", "Tricks that shrink the KV cache");
        else
            m_why.record("inference.kv_cache_bytes_per_token", m_kvPerToken, "2 * kv_heads * head_dim * layers * kv_bytes",
                         {{"kv_heads", double(m.kvHeads), "", "model: key/value heads (GQA shares them between query heads)"},
                          {"head_dim", double(m.headDim), "", "model: head dimension"},
                          {"layers", double(m.layers), "", "model: layers"},
                          {"kv_bytes", m_kvBytes, "", "plan: inference.kv_dtype"}},
                         "Each token keeps a key and a value per KV head and layer: 2·L·K·H bytes per element.", "7",
                         "KV cache");
        if (disaggregated) {
            m_why.record("inference.prefill_s", prefillAll, "ceil(batch / prefill_replicas) * one_prefill_s",
                         {{"batch", double(m_spec.batch), "", "plan: inference.batch"},
                          {"prefill_replicas", prefillReplicas, "", "plan: prefill_chips / chips per replica"},
                          {"one_prefill_s", onePrefill.total(), "", "one prompt's prefill on a prefill replica"}},
                         "Disaggregated serving prefills prompts on their own replicas, one after another on each.", "7",
                         "Designing an effective inference engine");
            m_why.record("inference.time_to_first_token_s", ttft, "one_prefill_s + kv_transfer_s + first_step_s",
                         {{"one_prefill_s", onePrefill.total(), "", "one prompt's prefill on a prefill replica"},
                          {"kv_transfer_s", kvTransfer, "", "the prompt's KV cache from the prefill to the decode replica"},
                          {"first_step_s", first.total(), firstStep, ""}},
                         "A request waits for its prefill, the transfer of its KV cache, and the first decode step.", "7",
                         "Designing an effective inference engine");
        } else {
            m_why.record("inference.prefill_s", prefillAll, "prefill_s",
                         {{"prefill_s", prefillAll, "terms.prefill_phase_s", ""}},
                         "The prompt's forward pass for the whole batch of a replica.", "7", "Sampling, prefill and generation");
            m_why.record("inference.time_to_first_token_s", ttft, "prefill_s + first_step_s",
                         {{"prefill_s", prefillAll, "inference.prefill_s", ""}, {"first_step_s", first.total(), firstStep, ""}},
                         "The first token comes after the batch's prefill and one decode step.", "7",
                         "Latency and throughput bounds");
        }
        m_why.record("inference.tokens_per_s", r.tokensPerS, "batch * generate / (ttft_s + (generate - 1) * decode_step_s)",
                     {{"batch", totalBatch, "", "plan: inference.batch (the whole deployment)"},
                      {"generate", generate, "", "plan: inference.generate_len"},
                      {"ttft_s", ttft, "inference.time_to_first_token_s", ""},
                      {"decode_step_s", r.decodeStepS, "inference.decode_step_s", ""}},
                     "Generated tokens per second of a static batch: every sequence's tokens over the time to the first "
                     "token and the remaining decode steps.",
                     "7", "Latency and throughput bounds");
        m_why.record("tokens_per_s", r.tokensPerS, "tokens_per_s",
                     {{"tokens_per_s", r.tokensPerS, "inference.tokens_per_s", ""}},
                     "A serving plan's tokens per second are the tokens it generates.", "7",
                     "Latency and throughput bounds");
        m_why.record("inference.tokens_per_s_per_chip", r.tokensPerSPerChip, "tokens_per_s / chips",
                     {{"tokens_per_s", r.tokensPerS, "inference.tokens_per_s", ""},
                      {"chips", double(chips), "", "the plan's mesh"}},
                     "Throughput per chip, for comparing deployments of different sizes.", "8", "Serving LLaMA 3-70B on TPUs");
    }

    // Steady state with continuous batching: finished sequences are replaced by new prompts.
    double steady = 0;
    if (disaggregated) {
        const double decodeRate = decodeReplicas * batch / r.decodeStepS;
        const double prefillRate = prefillReplicas / (onePrefill.total() + kvTransfer) * generate;
        steady = std::min(decodeRate, prefillRate);
    } else {
        const double stepWithPrefills = r.decodeStepS + batch / generate * onePrefill.total();
        steady = decodeReplicas * batch / stepWithPrefills;
    }
    // The book's decode critical batch: B > bytes/param x C / (2 W_hbm), x E/k for MoE (ch. 7).
    double critical = m_weightBytes * m_chip.peakFlops(m_spec.computeDtype) / (2.0 * m_chip.hbmBandwidth);
    if (m.moe)
        critical *= double(m.moe->experts) / m.moe->expertsPerToken;
    ServingExtras &x = m_out.serving;
    x.maxBatch = maxBatch * decodeReplicas;
    x.criticalBatch = critical;
    x.steadyTokensPerS = steady;
    x.costPerMillionTokens = m_plan.pricePerChipHour > 0 ? m_plan.pricePerChipHour * double(chips) / (steady * 3600.0) * 1e6 : 0.0;
    x.kvTransferS = kvTransfer;
    x.kvCacheBytesPerSequence = kvPerSequence;
    x.decodeWeightsS = decode.weights;
    x.decodeKvS = decode.kv;
    x.decodeComputeS = decode.flops;
    x.decodeCommunicationS = decode.comms;
    x.decodeBookStepS = decode.compute + decode.kv;
    if (const double listed = m_chip.peakFlops(m_spec.computeDtype); listed > 0 && r.decodeStepS > 0)
        x.decodeMfu = decode.flops * m_peak / (matmulShape() * r.decodeStepS * listed);
    x.prefillReplicas = prefillReplicas;
    x.decodeReplicas = decodeReplicas;
    x.batchPerReplica = batch;
    if (m_why.on()) {
        const DerivationValue fromMemory[] = {{"capacity", mem.capacity, "memory_per_chip.capacity", ""},
                                              {"params", mem.params, "memory_per_chip.params", ""},
                                              {"activations", mem.activations, "memory_per_chip.activations", ""}};
        if (freeBytes > 0) {
            const double full = double(m_pp) * m_cp * m_tp * m_ep;
            const bool spread = kvShards(std::floor(freeBytes * full / kvPerSequence)) >= full;
            m_why.record("serving.max_batch", x.maxBatch,
                         "floor((capacity - params - activations) * kv_shards / (max_context * kv_bytes_per_token)) * replicas",
                         {fromMemory[0], fromMemory[1], fromMemory[2],
                          {"kv_shards", spread ? full : kvShards(1.0), "",
                           spread ? "a batch this large spreads the cache over every chip of a replica"
                                  : "the cache of a batch this small is split over the KV heads only"},
                          {"max_context", cachedTokens(m, maxContext), "", maxContextNote()},
                          {"kv_bytes_per_token", m_kvPerToken, "inference.kv_cache_bytes_per_token", ""},
                          {"replicas", decodeReplicas, "", "decoding replicas"}},
                         "The largest batch whose KV cache fits in the HBM the weights and a prefill leave free: the "
                         "ceiling on how many sequences decode at once.",
                         "7", "Memory at inference");
        } else {
            m_why.record("serving.max_batch", x.maxBatch, "0", {},
                         "The weights and a prefill's working set leave no HBM for any KV cache.", "7",
                         "Memory at inference");
        }
        if (x.decodeMfu > 0)
            m_why.record("serving.decode_mfu", x.decodeMfu,
                         "flops_s * (peak_flops * flops_fraction) / (shape * decode_step_s * peak_flops)",
                         {{"flops_s", decode.flops, "terms.decode_flops_s", ""},
                          peakValue(), flopsFractionValue(), shapeValue(),
                          {"decode_step_s", r.decodeStepS, "inference.decode_step_s", ""}},
                         "Decode's model FLOPs utilization: one step's matmul FLOPs over what the chips could do at "
                         "their listed peak in the step. Small by nature below the critical batch, where each step "
                         "reads all the weights for few tokens.",
                         "7", "Linear operations: the critical batch size");
    }

    // What binds the decode step.
    if (!mem.fits) {
        m_out.bound = "memory-capacity";
        warn("does-not-fit", "needs " + formatBytes(mem.total, true) + " per chip (weights " + formatBytes(mem.params, true)
                                 + ", KV cache " + formatBytes(mem.kvCache, true) + " for " + formatNumber(batch)
                                 + " sequences of " + formatNumber(maxContext) + " tokens) but " + m_chip.id + " has "
                                 + formatBytes(mem.capacity, true) + "; at most " + formatNumber(x.maxBatch)
                                 + " sequences fit");
    } else {
        m_out.bound = bindingResource(m_out.collectives, "decode:", decode.compute + decode.kv + decode.elementwise,
                                      decode.flops >= std::max(decode.weights, decode.kv) ? "compute" : "hbm");
    }
    if (m_fs > 1)
        warn("fsdp-in-decode", "FSDP gathers every layer's weights for every decoded token: "
                                   + formatSeconds(decode.comms) + " of communication per step; generation is HBM-bound, "
                                   "so move activations, not weights (book ch. 7): use tensor parallelism instead");
    if (batch < critical && !m.moe) {
        // Long contexts make the KV reads, not the weights, the larger part of the step; a larger
        // batch then adds KV reads in proportion and buys little.
        if (decode.kv > decode.weights)
            warn("decode-below-critical-batch",
                 formatCount(batch) + " sequences per replica decode below the critical batch of " + formatCount(std::round(critical))
                     + ", but the step is bound by reading the KV cache (" + formatSeconds(decode.kv) + " against "
                     + formatSeconds(decode.weights) + " of weights): a larger batch adds KV reads in proportion; "
                       "a shorter context, grouped-query heads or an 8-bit KV cache would help");
        else
            warn("decode-below-critical-batch",
                 formatCount(batch) + " sequences per replica decode below the critical batch of " + formatCount(std::round(critical))
                     + ": the step is bound by reading weights, and a larger batch would raise throughput at little "
                       "cost in latency");
    }
    if ((m_spec.kvDtype == DType::Fp8 || m_spec.weightDtype == DType::Fp8) && m_chip.emulatesEightBit(DType::Fp8))
        warn("dtype-emulated", m_chip.id + " has no fp8 units: fp8 weights or KV are stored in fp8 and converted to "
                                   + std::string(dtypeName(m_spec.computeDtype)) + " on every read");
    if (m_spec.kvDtype == DType::Int4 || m_spec.kvDtype == DType::Fp4)
        warn("kv-dtype-lossy", "a 4-bit KV cache is not supported by common serving kernels; expect quality loss");
    if (m_spec.latencyTargetS > 0 && r.decodeStepS > m_spec.latencyTargetS)
        warn("misses-latency-target", "the decode step of " + formatSeconds(r.decodeStepS) + " misses the target of "
                                          + formatSeconds(m_spec.latencyTargetS));
    return std::nullopt;
}

} // namespace

std::optional<Error> evaluateInference(const Plan &plan, const Placement &placement, CostMode mode, Evaluation &out,
                                       Derivations *derivations)
{
    InferenceCost cost(plan, placement, mode, out, derivations);
    return cost.run();
}

} // namespace meshplan::model
