#include "explore/trainingbound.h"

#include "cost/softwarestack.h"
#include "cost/weightstate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace meshplan::model {

// The formulas below mirror cost/trainingcost.cpp term by term for the on-chip work and the
// memory, and leave out the collectives and the optimizer, which only add time.

namespace {

// The cost model's constants (cost/trainingcost.cpp), with their reasons there.
constexpr double kNaiveAttentionPasses = 4.0;
constexpr double kFlashBackwardFactor = 2.5;

} // namespace

TrainingBound::TrainingBound(const Plan &plan, CostMode mode)
    : m_plan(plan)
    , m_params(countParams(plan.model))
    , m_mode(mode)
{
    const Chip &chip = plan.topology.chip();
    const DType compute = plan.training.computeDtype;
    const bool ideal = mode == CostMode::Ideal;
    m_peak = chip.peakFlops(compute) * (ideal ? 1.0 : chip.achievableFlopsFraction(compute));
    m_peak16 = m_peak;
    // As the cost model: 8-bit matmuls on a chip without such units run as 16-bit ones.
    const bool emulated = chip.emulatesEightBit(compute);
    const bool eightBit = chip.hasEightBitUnits(compute);
    if (!ideal && eightBit)
        m_peak16 = chip.peakFlops(DType::Bf16) * chip.achievable.flopsFraction;
    m_actBytes = emulated ? bytesPerElement(DType::Bf16) : bytesPerElement(compute);
    m_flowBytes = ideal || chip.isTpu() ? m_actBytes : std::max(m_actBytes, bytesPerElement(DType::Bf16));
    m_hbm = chip.hbmBandwidth * (ideal ? 1.0 : chip.achievable.hbmEfficiency);
    if (ideal)
        return; // the book's model: matmul FLOPs at the peak, nothing else
    const ModelSpec &m = plan.model;
    if (m.moe)
        m_expertEfficiency = expertDispatchEfficiency(chip, m_peak / m_hbm, double(m.moe->dFfExpert));
    const bool compiled = compilesBlocks(chip, plan.training.stack, plan.training.computeDtype, plan.training.compile);
    m_elementwiseTraffic = elementwiseTrafficShare(plan.training.stack, compiled);
    m_lossBytes = lossBytesPerLogit(chip, plan.training.stack, plan.training.lossFusion, compiled);
    m_stackShardsActivations = shardsActivationsOverTensor(chip, plan.training.stack);
    m_naivePasses = kNaiveAttentionPasses;
    m_castBytes = eightBitCastBytes(chip, plan.training.stack, compute);
    if (plan.training.flashAttention) {
        m_attnBackwardFactor = kFlashBackwardFactor;
        const auto found = chip.attentionKernels.find(attentionKernelFor(chip, plan.training.stack));
        if (found != chip.attentionKernels.end() && chip.benchmarkDerating() > 0)
            m_kernel = &found->second;
    }
}

StepRemat TrainingBound::stepRematOf(const TrainingShape &shape) const
{
    return m_mode == CostMode::Ideal ? StepRemat{shape.remat}
                                     : stepRemat(m_plan.topology.chip(), m_plan.training, *shape.remat, m_plan.model);
}

std::pair<double, double> TrainingBound::attentionRates(int context) const
{
    if (!m_kernel)
        return {m_peak16, m_peak16};
    const Chip &chip = m_plan.topology.chip();
    const double peak16 = chip.peakFlops(DType::Bf16);
    const double derate = chip.benchmarkDerating();
    const double s = double(m_plan.training.seqLen);
    const double t = attentionKernelLength(chip, m_plan.training.stack, s, context);
    return {peak16 * attentionKernelShare(*m_kernel, m_plan.model, t, s, false) * derate,
            peak16 * attentionKernelShare(*m_kernel, m_plan.model, t, s, true) * derate};
}

std::pair<double, double> TrainingBound::layerTime(const Layer &l, const TrainingShape &shape, double tokens,
                                                   double attnFwd, double attnBwd) const
{
    const double flopsTime = (l.matmulFlops + l.expertFlops / m_expertEfficiency) * tokens / m_peak
                             + l.attentionFlops * tokens / attnFwd;
    const double weightTime = l.weightElements * bytesPerElement(m_plan.training.paramDtype) / m_hbm;
    const double overhead = 2.0 * m_elementwiseTraffic * l.elementwise * tokens * m_flowBytes / m_hbm
                            + m_naivePasses * l.scoreElements * tokens * m_flowBytes / m_hbm
                            + m_castBytes / 3.0 * l.linearInputs * tokens / m_hbm;
    const double forward = std::max(flopsTime, weightTime) + overhead;
    const double core = l.attentionFlops * tokens / attnFwd;
    // Twice the forward's FLOPs and overheads (not the weight reads: the cost model's backward
    // matmuls may run at a better shape than the forward's, which only its FLOP term carries).
    const double backward = 2.0 * (flopsTime + overhead) - 2.0 * core + l.attentionFlops * tokens * m_attnBackwardFactor / attnBwd;
    double recompute = 0;
    switch (stepRematOf(shape).policy->kind) {
    case Remat::None:
        break;
    case Remat::Selective:
        recompute = core;
        break;
    case Remat::Full:
        recompute = forward;
        break;
    case Remat::Custom:
        recompute = (l.recomputeFlops + l.recomputeExpert / m_expertEfficiency) * tokens / m_peak
                    + l.recomputeAttention * tokens / attnFwd;
        break;
    }
    return {forward, backward + recompute};
}

int TrainingBound::layersOnStage(int stage, int pipeline) const
{
    const int layers = m_plan.model.layers;
    return layers / pipeline + (stage < layers % pipeline ? 1 : 0);
}

int TrainingBound::moeLayersOnStage(int stage, int pipeline) const
{
    const ModelSpec &m = m_plan.model;
    if (!m.moe)
        return 0;
    const int base = m.layers / pipeline;
    const int extra = m.layers % pipeline;
    const int first = stage * base + std::min(stage, extra);
    const int last = first + layersOnStage(stage, pipeline);
    return std::max(0, last - std::max(first, m.moe->firstDenseLayers));
}

TrainingBound::Layer TrainingBound::layer(const TrainingShape &shape, bool moe) const
{
    const ModelSpec &m = m_plan.model;
    const TrainingSpec &train = m_plan.training;
    const double tp = shape.degrees[static_cast<std::size_t>(Role::Tensor)];
    const double d = double(m.dModel);
    const double T = double(train.seqLen);
    const double shardD = sequenceParallel(shape) ? tp : 1.0;
    const auto [qkDim, vDim] = attentionHeadDims(m);
    const double kvHeadsLocal = std::max(1.0, m.kvHeads / tp);
    const double heads = m.heads / tp;
    const bool flash = train.flashAttention;
    const double width = m.mlp == MlpKind::Gated ? 3.0 : 2.0;

    Layer l;
    const double attention = double(m_params.attentionPerLayer) / tp;
    // A fused kernel skips the masked blocks (and, in a local layer, the keys past the window); an
    // unfused one computes every score and masks them afterwards.
    l.attentionFlops = 2.0 * (flash ? causalAttendedKeys(m, T, kAttentionTileKeys) : T) * heads * (qkDim + vDim);
    l.scoreElements = flash ? 0.0 : heads * T;
    l.weightElements = attention;
    l.matmulFlops = 2.0 * attention;
    const double qkv = m.mla ? heads * (2 * qkDim + vDim) : (heads + 2 * kvHeadsLocal) * m.headDim;
    const double attnOut = heads * vDim;
    const double outW = double(m.heads) * vDim * d / tp;
    const double qkvFlops = m.mla ? 2.0 * (attention - outW) : 2.0 * d * qkv;
    std::array<double, kRematTensorCount> widths{};
    std::array<double, kRematTensorCount> rebuild{};
    std::array<double, kRematTensorCount> rebuildExpert{};
    const auto at = [](RematTensor t) { return static_cast<std::size_t>(t); };
    widths[at(RematTensor::QueryProj)] = heads * (m.mla ? qkDim : double(m.headDim));
    widths[at(RematTensor::KeyProj)] = m.mla ? heads * qkDim : kvHeadsLocal * m.headDim;
    widths[at(RematTensor::ValueProj)] = m.mla ? heads * vDim : kvHeadsLocal * m.headDim;
    widths[at(RematTensor::Context)] = attnOut;
    widths[at(RematTensor::OutProj)] = d / shardD;
    for (RematTensor t : {RematTensor::QueryProj, RematTensor::KeyProj, RematTensor::ValueProj})
        rebuild[at(t)] = qkvFlops * widths[at(t)] / qkv;
    rebuild[at(RematTensor::Context)] = l.attentionFlops;
    rebuild[at(RematTensor::OutProj)] = 2.0 * outW;
    double mlpSaved = 0;
    const double ep = shape.degrees[static_cast<std::size_t>(Role::Expert)];
    if (moe) {
        const MoeSpec &e = *m.moe;
        const double fe = double(e.dFfExpert);
        const double expert = double(m_params.expertParams) / tp;
        l.expertFlops = 2.0 * e.expertsPerToken * expert;
        l.matmulFlops += 2.0 * double(m_params.moeSharedPerLayer) / tp;
        l.weightElements += double(m_params.moeSharedPerLayer) / tp + double(e.experts) / ep * expert;
        mlpSaved = e.expertsPerToken * (d + width * fe / tp) + e.sharedExperts * width * fe / tp + e.experts;
        widths[at(RematTensor::MlpWi)] = (e.expertsPerToken + e.sharedExperts) * (width - 1.0) * fe / tp;
        rebuild[at(RematTensor::MlpWi)] = 2.0 * (d * e.experts + e.sharedExperts * (width - 1.0) * d * fe) / tp;
        rebuildExpert[at(RematTensor::MlpWi)] = l.expertFlops * (width - 1.0) / width;
    } else {
        const double mlp = double(m_params.denseMlpPerLayer) / tp;
        l.matmulFlops += 2.0 * mlp;
        l.weightElements += mlp;
        mlpSaved = width * double(m.dFf) / tp;
        widths[at(RematTensor::MlpWi)] = (width - 1.0) * double(m.dFf) / tp;
        rebuild[at(RematTensor::MlpWi)] = 2.0 * (width - 1.0) * d * double(m.dFf) / tp;
    }
    const double norms = m.parallelBlock ? 1.0 : 2.0;
    const double base = norms * 2.0 * d / shardD + qkv + attnOut + mlpSaved;
    l.selective = base;
    l.elementwise = base;
    l.linearInputs = matmulInputsPerToken(m, m_plan.training.stack, tp, moe, ep > 1);
    const StepRemat remat = stepRematOf(shape);
    const RematPolicy &policy = *remat.policy;
    switch (policy.kind) {
    case Remat::None:
        l.saved = base + (flash ? 2.0 * heads : 1.5 * heads * T);
        break;
    case Remat::Selective:
        l.saved = base;
        break;
    case Remat::Full:
        l.saved = d / shardD;
        break;
    case Remat::Custom:
        l.saved = policy.offloaded.count(RematTensor::LayerInput) ? 0.0 : d / shardD;
        for (RematTensor t : policy.saved)
            if (t != RematTensor::MlpWo && t != RematTensor::LayerInput)
                l.saved += widths[at(t)];
        // What the backward reads and the policy neither keeps nor offloads is rebuilt (what it
        // rebuilds in part keeps the rest).
        for (RematTensor t : kRematBackwardReads)
            if (policy.rebuilds(t)) {
                const double rebuilt = remat.rebuiltShare(t);
                (t == RematTensor::Context ? l.recomputeAttention : l.recomputeFlops) += rebuilt * rebuild[at(t)];
                l.recomputeExpert += rebuilt * rebuildExpert[at(t)];
                l.saved += (1.0 - rebuilt) * widths[at(t)];
            }
        break;
    }
    return l;
}

double TrainingBound::stageExpertElements(int stage, const TrainingShape &shape) const
{
    const ModelSpec &m = m_plan.model;
    const int moeLayers = moeLayersOnStage(stage, shape.degrees[static_cast<std::size_t>(Role::Pipeline)]);
    if (moeLayers == 0)
        return 0.0;
    const double tp = shape.degrees[static_cast<std::size_t>(Role::Tensor)];
    const double ep = shape.degrees[static_cast<std::size_t>(Role::Expert)];
    return moeLayers * double(m.moe->experts) / ep * double(m_params.expertParams) / tp;
}

double TrainingBound::stageElements(int stage, const TrainingShape &shape) const
{
    const ModelSpec &m = m_plan.model;
    const int pipeline = shape.degrees[static_cast<std::size_t>(Role::Pipeline)];
    const double tp = shape.degrees[static_cast<std::size_t>(Role::Tensor)];
    const int moeLayers = moeLayersOnStage(stage, pipeline);
    double elements = (layersOnStage(stage, pipeline) - moeLayers)
                          * double(m_params.attentionPerLayer + m_params.denseMlpPerLayer) / tp
                      + moeLayers * double(m_params.attentionPerLayer + m_params.moeSharedPerLayer) / tp;
    elements += stageExpertElements(stage, shape);
    const bool first = stage == 0;
    const bool last = stage == pipeline - 1;
    if (first)
        elements += double(m_params.embedding) / tp;
    if (last && !(first && m.tiedEmbeddings))
        elements += double(m.vocab * m.dModel) / tp;
    if (last)
        elements += double(m_params.finalNorm);
    return elements;
}

TrainingBound::Layers TrainingBound::layers(const TrainingShape &shape) const
{
    Layers out;
    out.dense = layer(shape, false);
    out.sparse = m_plan.model.moe ? layer(shape, true) : out.dense;
    std::tie(out.attentionForward, out.attentionBackward) =
        attentionRates(shape.degrees[static_cast<std::size_t>(Role::Context)]);
    const int pipeline = shape.degrees[static_cast<std::size_t>(Role::Pipeline)];
    const std::array<int, 3> stages{0, pipeline / 2, pipeline - 1};
    for (std::size_t i = 0; i < stages.size(); ++i) {
        out.stageElements[i] = stageElements(stages[i], shape);
        out.dualStageElements[i] = out.stageElements[i] + stageElements(pipeline - 1 - stages[i], shape);
        out.stageExpertElements[i] = stageExpertElements(stages[i], shape);
        out.dualStageExpertElements[i] =
            out.stageExpertElements[i] + stageExpertElements(pipeline - 1 - stages[i], shape);
    }
    out.fewestDense = m_plan.model.layers;
    out.fewestMoe = m_plan.model.layers;
    for (int s = 0; s < pipeline; ++s) {
        const int moe = moeLayersOnStage(s, pipeline);
        out.fewestDense = std::min(out.fewestDense, layersOnStage(s, pipeline) - moe);
        out.fewestMoe = std::min(out.fewestMoe, moe);
    }
    return out;
}

TrainingBound::Microbatch TrainingBound::microbatch(const TrainingShape &shape, const Layers &layers) const
{
    const ModelSpec &m = m_plan.model;
    const TrainingSpec &train = m_plan.training;
    const auto degree = [&](Role r) { return shape.degrees[static_cast<std::size_t>(r)]; };
    const int pipeline = degree(Role::Pipeline);
    const double tp = degree(Role::Tensor);
    const double shards = double(degree(Role::Data)) * degree(Role::Fsdp) * degree(Role::Expert);
    const double perReplica = std::ceil(double(train.globalBatch) / shards);
    Microbatch out;
    // Timed at the mean microbatch, as the cost model times uneven ones.
    out.tokens = perReplica / shape.microbatches * double(train.seqLen) / degree(Role::Context);

    // The busiest stage's work per microbatch.
    const double attnFwd = layers.attentionForward;
    const double attnBwd = layers.attentionBackward;
    std::tie(out.denseForward, out.denseBackward) = layerTime(layers.dense, shape, out.tokens, attnFwd, attnBwd);
    if (m.moe)
        std::tie(out.sparseForward, out.sparseBackward) = layerTime(layers.sparse, shape, out.tokens, attnFwd, attnBwd);
    else
        std::tie(out.sparseForward, out.sparseBackward) = std::pair{out.denseForward, out.denseBackward};
    const double denseTime = out.denseForward + out.denseBackward;
    const double sparseTime = out.sparseForward + out.sparseBackward;
    // The logits matmul at the 16-bit rate (no shape factors: they only slow it), and the loss
    // streaming the logits through HBM as the stack's kernels do.
    const double logitsTime = 3.0 * 2.0 * double(m.vocab * m.dModel) / tp * out.tokens / m_peak16
                              + m_lossBytes * double(m.vocab) / tp * out.tokens / m_hbm;
    const auto stageTime = [&](int s) {
        const int moe = moeLayersOnStage(s, pipeline);
        return (layersOnStage(s, pipeline) - moe) * denseTime + moe * sparseTime + (s == pipeline - 1 ? logitsTime : 0.0);
    };
    // Stages differ only in their layer counts (which change once along the pipeline), the dense
    // layers before the first MoE layer and the logits: the first, the last and the stages where
    // a count changes hold the largest. Any of them bounds the busiest from below.
    const int extra = m.layers % pipeline;
    int firstMoe = 0; // the stage holding the first MoE layer
    if (m.moe) {
        const int base = m.layers / pipeline;
        const int dense = m.moe->firstDenseLayers;
        firstMoe = dense < extra * (base + 1) ? dense / (base + 1) : extra + (base > 0 ? (dense - extra * (base + 1)) / base : 0);
        firstMoe = std::clamp(firstMoe, 0, pipeline - 1);
    }
    const bool mirrored = pipeline > 1 && pipeline % 2 == 0;
    for (int s : {0, std::max(0, extra - 1), std::min(pipeline - 1, extra), firstMoe, std::min(pipeline - 1, firstMoe + 1),
                  pipeline - 1}) {
        const double t = stageTime(s);
        out.busiest = std::max(out.busiest, t);
        if (mirrored) // a DualPipe rank runs its stage and the mirror one
            out.busiestDual = std::max(out.busiestDual, 0.5 * (t + stageTime(pipeline - 1 - s)));
    }
    if (mirrored) { // the mean over a pair can peak elsewhere: some rank is at least the average
        double sum = 0;
        for (int s = 0; s < pipeline; ++s)
            sum += stageTime(s);
        out.busiestDual = std::max(out.busiestDual, sum / pipeline);
    }
    return out;
}

TrainingBounds TrainingBound::bounds(const TrainingShape &shape, const Layers &layers, const Microbatch &micro) const
{
    const ModelSpec &m = m_plan.model;
    const TrainingSpec &train = m_plan.training;
    const auto degree = [&](Role r) { return shape.degrees[static_cast<std::size_t>(r)]; };
    const int pipeline = degree(Role::Pipeline);
    const double pp = pipeline;
    const double tp = degree(Role::Tensor);
    const double mb = shape.microbatches;
    const double tokensMb = micro.tokens;
    const bool dualPipe = shape.schedule == PipelineSchedule::DualPipe && pipeline > 1;
    const double busiest = dualPipe ? micro.busiestDual : micro.busiest;
    const Layer &dense = layers.dense;
    const Layer &sparse = layers.sparse;

    double bubble = 0;
    if (pipeline > 1) {
        switch (shape.schedule) {
        case PipelineSchedule::GPipe:
        case PipelineSchedule::OneFOneB:
            bubble = pp - 1.0;
            break;
        case PipelineSchedule::Interleaved1F1B:
            bubble = (pp - 1.0) / shape.virtualStages;
            break;
        case PipelineSchedule::ZeroBubble:
            bubble = (pp - 1.0) / 3.0;
            break;
        case PipelineSchedule::DualPipe:
            bubble = std::max(0.0, pp / 2.0 - 1.0) * 2.0 / 3.0;
            break;
        }
    }
    TrainingBounds out;
    // A hair below, so that rounding in a different order never lifts it above the evaluation.
    out.computeS = mb * busiest * (1.0 - 1e-9);
    out.stepTimeS = (mb + bubble) * busiest * (1.0 - 1e-9);

    // Memory: the chip kinds the evaluation reports (first, middle and last stage).
    const WeightStateShards shards{double(degree(Role::Fsdp)), double(degree(Role::Data)) * degree(Role::Context),
                                   double(degree(Role::Expert))};
    const Remat rematKind = stepRematOf(shape).policy->kind;
    const bool keepsOne = rematKind == Remat::Full || rematKind == Remat::Custom;
    const auto stageMemory = [&](int s, std::size_t kind) {
        const double expertElements = (dualPipe ? layers.dualStageExpertElements : layers.stageExpertElements)[kind];
        const double denseElements = (dualPipe ? layers.dualStageElements : layers.stageElements)[kind] - expertElements;
        const bool last = s == pipeline - 1 || (dualPipe && s == 0);
        const WeightStateBytes state = weightStateBytes(train, shape.zeroStage, denseElements, expertElements, shards);
        double memory = state.params + state.grads + state.optimizer;
        double inFlight = mb;
        switch (shape.schedule) {
        case PipelineSchedule::GPipe:
            break;
        case PipelineSchedule::OneFOneB:
        case PipelineSchedule::ZeroBubble:
            inFlight = std::min(mb, pp - s);
            break;
        case PipelineSchedule::Interleaved1F1B:
            inFlight = std::min(mb, pp - s) * (1.0 + (pp - 1.0) / (pp * shape.virtualStages));
            break;
        case PipelineSchedule::DualPipe:
            inFlight = std::min(mb, pp + 1.0);
            break;
        }
        const int moe = moeLayersOnStage(s, pipeline);
        memory += inFlight * ((layersOnStage(s, pipeline) - moe) * dense.saved + moe * sparse.saved) * tokensMb * m_actBytes;
        if (keepsOne)
            memory += std::max(dense.selective, sparse.selective) * tokensMb * m_actBytes;
        if (last)
            memory += tokensMb * double(m.vocab) / tp * m_flowBytes;
        return memory;
    };
    out.memory = stageMemory(0, 0);
    if (pipeline > 2)
        out.memory = std::max(out.memory, stageMemory(pipeline / 2, 1));
    if (pipeline > 1)
        out.memory = std::max(out.memory, stageMemory(pipeline - 1, 2));
    out.memory *= 1.0 - 1e-9;
    return out;
}

} // namespace meshplan::model

namespace meshplan::model {

TrainingBound::LinkTimes TrainingBound::linkTimes(const TrainingShape &shape, const Placement &placement) const
{
    const ModelSpec &m = m_plan.model;
    const TrainingSpec &train = m_plan.training;
    const auto degree = [&](Role r) { return shape.degrees[static_cast<std::size_t>(r)]; };
    const double tp = degree(Role::Tensor);
    const double shards = double(degree(Role::Data)) * degree(Role::Fsdp) * degree(Role::Expert);
    const double tokensMb = std::ceil(double(train.globalBatch) / shards) / shape.microbatches
                            * double(train.seqLen) / degree(Role::Context);
    CollectiveOptions options;
    options.mode = m_mode;
    const Topology &topology = m_plan.topology;
    LinkTimes out;
    if (tp > 1) {
        const double v = tokensMb * double(m.dModel) * m_flowBytes;
        const auto &spans = placement.of(Role::Tensor);
        out.tensor = sequenceParallel(shape) ? collectiveCost(topology, CollectiveOp::AllGather, spans, v, options).time
                                                  + collectiveCost(topology, CollectiveOp::ReduceScatter, spans, v, options).time
                                            : collectiveCost(topology, CollectiveOp::AllReduce, spans, v, options).time;
    }
    if (degree(Role::Pipeline) > 1) {
        const double v = tokensMb * double(m.dModel) * m_flowBytes / (sequenceParallel(shape) ? tp : 1.0);
        out.pipeline = collectiveCost(topology, CollectiveOp::SendRecv, placement.of(Role::Pipeline), v, options).time;
    }
    if (degree(Role::Expert) > 1 && m.moe) {
        // As TrainingCost prices them (expertDispatchWire).
        const ExpertDispatchWire wire = expertDispatchWire(topology.chip(), train.stack, m_plan.parallelism.expertDispatch,
                                                           m_actBytes, m_flowBytes, m_mode == CostMode::Achievable);
        const double routed = tokensMb * m.moe->expertsPerToken * double(m.dModel) * wire.bytes
                              / (sequenceParallel(shape) ? tp : 1.0);
        CollectiveOptions dispatch = options;
        if (wire.deduplicated)
            dispatch.forwardedTopK = m.moe->expertsPerToken;
        out.expert = collectiveCost(topology, CollectiveOp::AllToAll, placement.of(Role::Expert),
                                    routed * degree(Role::Expert), dispatch).time;
    }
    // FSDP: a layer's weights gathered, its gradients reduce-scattered, over FSDP (and data and
    // context under ZeRO-3).
    const Layers l = layers(shape);
    for (int overData = 0; overData < 2; ++overData) {
        const bool withData = overData == 1 && degree(Role::Data) > 1;
        const bool withContext = overData == 1 && degree(Role::Context) > 1;
        if (degree(Role::Fsdp) * (withData ? degree(Role::Data) : 1) * (withContext ? degree(Role::Context) : 1) <= 1)
            continue;
        std::vector<Role> roles{Role::Fsdp};
        if (withData)
            roles.push_back(Role::Data);
        if (withContext)
            roles.push_back(Role::Context);
        const std::vector<AxisSpan> spans = placement.combined(roles);
        for (int moe = 0; moe < 2; ++moe) {
            const double elements = (moe ? l.sparse : l.dense).weightElements;
            const auto o = static_cast<std::size_t>(overData);
            const auto k = static_cast<std::size_t>(moe);
            out.gather[o][k] = collectiveCost(topology, CollectiveOp::AllGather, spans,
                                              elements * bytesPerElement(train.paramDtype), options).time;
            out.scatter[o][k] = collectiveCost(topology, CollectiveOp::ReduceScatter, spans,
                                               elements * bytesPerElement(train.gradDtype), options).time;
        }
    }
    return out;
}

double TrainingBound::exposedCommunication(const TrainingShape &shape, const Layers &layers, const LinkTimes &times,
                                           double layerTimeLimit) const
{
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    const ModelSpec &m = m_plan.model;
    const int pipeline = shape.degrees[static_cast<std::size_t>(Role::Pipeline)];
    double exposed = 2.0 * (pipeline - 1.0) * times.pipeline; // fill and drain
    // FSDP: a gather prefetched behind a layer's forward, gather and reduce-scatter behind its
    // backward; what outlasts them shows, per layer and microbatch. Their sum shows at least
    // what outlasts the layer's whole time, which `layerTimeLimit` bounds from above.
    const auto z = static_cast<std::size_t>(shape.zeroStage >= 3 ? 1 : 0);
    const auto fsdp = [&](std::size_t moe, double limit) {
        return std::max(0.0, 2.0 * times.gather[z][moe] + times.scatter[z][moe] - limit);
    };
    const double denseLimit = layers.fewestDense > 0 ? layerTimeLimit / layers.fewestDense : kInfinity;
    const double moeLimit = layers.fewestMoe > 0 ? layerTimeLimit / layers.fewestMoe : kInfinity;
    exposed += shape.microbatches * (layers.fewestDense * fsdp(0, denseLimit) + layers.fewestMoe * fsdp(1, moeLimit));
    // A stack may overlap the tensor collectives by itself (userbuffers: NeMo's recipes past
    // d_model 4096); the plan's tensor_overlap, true or false, decides over it.
    const bool tensorOverlap = m_plan.parallelism.tensorOverlap.value_or(
        m_mode == CostMode::Achievable
        && overlapsTensorCollectives(m_plan.topology.chip(), m_plan.training.stack,
                                     shape.degrees[static_cast<std::size_t>(Role::Tensor)], shape.sequenceParallel,
                                     double(m.dModel)));
    const double blocks = m.parallelBlock ? 1.0 : 2.0;
    const double tensorCollectives = blocks * (m.layers / pipeline) * shape.microbatches * times.tensor;
    if (!tensorOverlap) {
        // Forward and backward, again for a recomputed forward; the least loaded stage's layers.
        const RematPolicy &policy = *stepRematOf(shape).policy;
        double rounds = policy.kind == Remat::Full ? 1.0 : 0.0;
        if (policy.kind == Remat::Custom)
            rounds = policy.rebuilds(RematTensor::OutProj) ? 1.0 / blocks : 0.0;
        // A stack that overlaps the backward's round (XLA on TPUs) may hide all of it.
        const bool backward = m_mode == CostMode::Achievable
                              && overlapsTensorBackward(m_plan.topology.chip(), m_plan.training.stack);
        exposed += ((backward ? 1.0 : 2.0) + rounds) * tensorCollectives;
    } else if (m_mode == CostMode::Achievable && !tensorOverlapCoversBackward(m_plan.training.stack)) {
        // Collective matmuls that reach only the forward passes (torchtitan's async TP) leave the
        // backward's round in view whatever the compute.
        exposed += tensorCollectives;
    }
    return exposed * (1.0 - 1e-9);
}

} // namespace meshplan::model
