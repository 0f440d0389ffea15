#include "cost/evaluation.h"

#include "cost/derivationrecorder.h"

#include "base/units.h"
#include "cost/inferencecost.h"
#include "cost/trainingcost.h"
#include "plan/plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace meshplan::model {

using nlohmann::json;

namespace {

/// The first number of the result that is not finite (or a byte count past what 64 bits hold),
/// as an error naming its result key: a result shows numbers or says why not, never a masked 0.
/// Names are built only for the number at fault: this runs on every evaluation.
std::optional<Error> checkNumbers(const Evaluation &e, bool training)
{
    constexpr double kMaxBytes = 4.0e18; // below 2^63, so every byte count converts exactly enough
    std::optional<Error> error;
    const auto number = [&](const char *key, double value, const std::string &prefix = {}) {
        if (!error && !std::isfinite(value))
            error = Error{"", "the result's " + prefix + key + " is not a finite number (" + std::to_string(value)
                                  + "): the chip's rates or the model's sizes are out of any real range"};
    };
    const auto byteCount = [&](const char *key, double value, const std::string &prefix = {}) {
        if (!error && !(std::abs(value) <= kMaxBytes))
            error = Error{"", "the result's " + prefix + key + " is " + formatNumber(value)
                                  + " bytes, more than Meshplan counts (4e18): check the model's sizes and the batch"};
    };
    const auto memory = [&](const std::string &prefix, const MemoryBreakdown &m) {
        byteCount(".params", m.params, prefix);
        byteCount(".grads", m.grads, prefix);
        byteCount(".optimizer", m.optimizer, prefix);
        byteCount(".activations", m.activations, prefix);
        byteCount(".kv_cache", m.kvCache, prefix);
        byteCount(".total", m.total, prefix);
    };
    memory("memory_per_chip", e.memory);
    for (const ChipKind &kind : e.perChip)
        memory("per_chip[" + kind.name + "].memory", kind.memory);
    number("model.flops_per_token", e.flopsPerToken);
    number("model.forward_flops_per_token", e.forwardFlopsPerToken);
    byteCount("model.kv_cache_bytes_per_token", e.kvCacheBytesPerToken);
    if (training) {
        const StepTime &st = e.step;
        number("step.time_s", st.time);
        number("step.compute_s", st.compute);
        number("step.recompute_s", st.recompute);
        number("step.communication_s", st.communication);
        number("step.exposed_communication_s", st.exposedCommunication);
        number("step.bubble_s", st.bubble);
        number("step.optimizer_s", st.optimizer);
        number("step.overlap_interference_s", st.overlapInterference);
        number("step.flops", st.flops);
        number("mfu", e.mfu);
        number("tokens_per_s", e.tokensPerS);
        byteCount("step.tokens", st.tokens);
    }
    if (e.inference) {
        const InferenceResult &i = *e.inference;
        number("inference.prefill_s", i.prefillS);
        number("inference.time_to_first_token_s", i.timeToFirstTokenS);
        number("inference.decode_step_s", i.decodeStepS);
        number("inference.tokens_per_s", i.tokensPerS);
        number("inference.tokens_per_s_per_chip", i.tokensPerSPerChip);
        number("serving.steady_tokens_per_s", e.serving.steadyTokensPerS);
        number("serving.max_batch", e.serving.maxBatch);
        byteCount("inference.kv_cache_bytes_per_token", i.kvCacheBytesPerToken);
    }
    for (std::size_t i = 0; i < e.collectives.size() && !error; ++i) {
        const CollectiveUse &c = e.collectives[i];
        if (std::isfinite(c.timeS) && std::isfinite(c.exposedS) && std::abs(c.bytes) <= kMaxBytes
            && std::abs(c.bytesPerChip) <= kMaxBytes)
            continue;
        const std::string p = "collectives[" + std::to_string(i) + "]";
        number(".time_s", c.timeS, p);
        number(".exposed_s", c.exposedS, p);
        byteCount(".bytes_per_chip", c.bytes, p);
        byteCount(".bytes_sent_per_chip", c.bytesPerChip, p);
    }
    return error;
}

/// The derivations of the result's model block (book ch. 4), checked against the counts they
/// explain: a sum that does not reproduce its count is recorded as the count itself.
void explainModel(const Plan &plan, Evaluation &e, std::int64_t seqLen, DType kvType, Derivations &out)
{
    DerivationRecorder why(&out, e.terms);
    const ModelSpec &m = plan.model;
    const ParamCounts &c = e.params;
    const double moeLayers = double(m.moeLayerCount());
    const double experts = m.moe ? double(m.moe->experts) : 0.0;
    const double k = m.moe ? double(m.moe->expertsPerToken) : 0.0;
    const std::vector<DerivationValue> counts{
        {"layers", double(m.layers), "", "model: layers"},
        {"attention_per_layer", double(c.attentionPerLayer), "", "one layer's q, k, v and output projections and its norm (4·D·N·H for MHA)"},
        {"dense_layers", double(m.layers) - moeLayers, "", "layers with a dense MLP"},
        {"mlp_per_layer", double(c.denseMlpPerLayer), "", "a dense MLP and its norm (3·D·F gated, 2·D·F otherwise)"},
        {"moe_layers", moeLayers, "", "layers with routed experts"},
        {"shared_per_layer", double(c.moeSharedPerLayer), "", "an MoE layer's router, shared experts and norm"},
        {"experts", experts, "", "model: routed experts per MoE layer"},
        {"expert_params", double(c.expertParams), "", "one routed expert's weights"},
        {"embedding", double(c.embedding), "", "the input embedding (D·V)"},
        {"unembedding", double(c.unembedding), "", "the output layer (D·V; 0 when tied to the embedding)"},
        {"final_norm", double(c.finalNorm), "", "the final norm"}};
    const std::string perLayers =
        "layers * attention_per_layer + dense_layers * mlp_per_layer + moe_layers * (shared_per_layer + %E * expert_params)";
    const auto withExperts = [&](const std::string &n) {
        std::string s = perLayers;
        s.replace(s.find("%E"), 2, n);
        return s + " + embedding + unembedding + final_norm";
    };
    std::vector<DerivationValue> totalValues = counts;
    const std::string totalExpression = withExperts("experts");
    const double total = double(m.layers) * double(c.attentionPerLayer) + (double(m.layers) - moeLayers) * double(c.denseMlpPerLayer)
                         + moeLayers * (double(c.moeSharedPerLayer) + experts * double(c.expertParams)) + double(c.embedding)
                         + double(c.unembedding) + double(c.finalNorm);
    if (total == double(c.total))
        why.record("model.params", double(c.total), totalExpression, totalValues,
                   "Every weight of the model: per layer the attention projections and the MLP (or the router, shared and "
                   "routed experts), plus the embeddings and the final norm.",
                   "4", "Per-layer parameters and training FLOPs");
    std::vector<DerivationValue> activeValues = counts;
    activeValues[6] = {"experts_per_token", k, "", "model: routed experts each token visits (k)"};
    const double active = double(m.layers) * double(c.attentionPerLayer) + (double(m.layers) - moeLayers) * double(c.denseMlpPerLayer)
                          + moeLayers * (double(c.moeSharedPerLayer) + k * double(c.expertParams)) + double(c.embedding)
                          + double(c.unembedding) + double(c.finalNorm);
    if (active == double(c.active))
        why.record("model.active_params", double(c.active), withExperts("experts_per_token"), activeValues,
                   "The weights one token meets: a mixture of experts routes it through k of its E experts.", "4",
                   "Mixture of Experts (MoE)");
    const auto [qk, v] = attentionHeadDims(m);
    const double matmulParams = double(c.active - c.embedding - c.unembedding) + double(m.vocab * m.dModel);
    // A sliding window caps a local layer's keys; without one the book's count stands as it is.
    std::vector<DerivationValue> forwardValues{
        {"matmul_params", matmulParams, "", "active weights in matmuls: all but the embedding lookup, the output layer included"},
        {"seq_len", double(seqLen), "", "plan: the sequence (or prompt) length"},
        {"heads", double(m.heads), "", "model: query heads"},
        {"d_qk", qk, "", "model: query/key head dimension"},
        {"d_v", v, "", "model: value head dimension"},
        {"layers", double(m.layers), "", "model: layers"}};
    if (m.slidingWindow) {
        forwardValues.push_back({"local_layers", double(m.slidingWindow->localLayers), "", "model: layers that attend through the window"});
        forwardValues.push_back({"window", double(m.slidingWindow->window), "", "model: the sliding window, in tokens"});
    }
    why.record("model.forward_flops_per_token", e.forwardFlopsPerToken,
               m.slidingWindow ? "2 * matmul_params + 2 * heads * (d_qk + d_v) * ((layers - local_layers) * seq_len + "
                                 "local_layers * min(seq_len, window))"
                               : "2 * matmul_params + 2 * seq_len * heads * (d_qk + d_v) * layers",
               forwardValues,
               std::string("A forward pass does 2 FLOPs per weight per token (a multiply and an add), plus attention's Q·Kᵀ and "
                           "weighted sum")
                   + (m.slidingWindow ? ": over the whole sequence in a global layer, over the window in a local one."
                                      : " over the sequence."),
               "4", "Counting FLOPs of contractions");
    why.record("model.flops_per_token", e.flopsPerToken, "3 * forward_flops_per_token",
               {{"forward_flops_per_token", e.forwardFlopsPerToken, "model.forward_flops_per_token", ""}},
               "Training: the backward pass costs twice the forward (gradients of the inputs and of the weights), so "
               "6·N per token in all.",
               "4", "Forward vs backward FLOPs");
    const double perLayer = m.mla ? double(m.mla->kvLoraRank + m.mla->qkRopeHeadDim) : 2.0 * m.kvHeads * m.headDim;
    why.record("model.kv_cache_bytes_per_token", e.kvCacheBytesPerToken, "per_layer * layers * kv_bytes",
               {{"per_layer", perLayer, "", m.mla ? "MLA: the latent and the rope key" : "2 · KV heads · head dimension (a key and a value)"},
                {"layers", double(m.layers), "", "model: layers"},
                {"kv_bytes", bytesPerElement(kvType), "", "the KV cache's dtype"}},
               "The KV cache of one token over every layer.", "7", "KV cache");
}

// A key the plan format does not define was read past: name it, since a misspelling leaves the
// setting it meant at its default.
void warnUnknownKeys(const Plan &plan, Evaluation &out)
{
    for (const std::string &path : plan.unknownKeys)
        out.warnings.push_back({"unknown-key", path + " is not a key of the plan format: it was ignored"});
}

// An inline chip that lists none of some measured figures runs at a catalog chip's: say so, since
// every achievable number then rests on another chip's measurements.
void warnInheritedFigures(const Plan &plan, CostMode mode, Evaluation &out)
{
    const Chip &chip = plan.topology.chip();
    if (mode != CostMode::Achievable || chip.figuresFrom.empty())
        return;
    std::string figures;
    for (const auto &name : chip.inheritedFigures)
        figures += (figures.empty() ? "" : ", ") + name;
    out.warnings.push_back({"chip-figures-inherited",
                            "hardware.chip \"" + chip.id + "\" does not list " + figures + ": it runs at catalog chip "
                                + chip.figuresFrom + "'s" + (chip.figuresFrom == chip.id ? "" : " (its family's nearest by bf16 peak)")
                                + "; list them under hardware.chip to use measurements of its own"});
}

} // namespace

Expected<Evaluation> evaluate(const Plan &plan, CostMode mode, Derivations *derivations)
{
    if (auto error = checkModelSharding(plan))
        return *error;
    auto placement = placeRoles(plan.topology, plan.parallelism.degrees, plan.parallelism.placement);
    if (!placement)
        return placement.error();
    Evaluation out;
    out.chips = plan.topology.chipCount();
    out.placement = placement->axisNames(plan.topology);
    out.params = countParams(plan.model);
    if (plan.kind == WorkloadKind::Training) {
        out.flopsPerToken = trainingFlopsPerToken(plan.model, plan.training.seqLen);
        out.forwardFlopsPerToken = forwardFlopsPerToken(plan.model, plan.training.seqLen);
        out.kvCacheBytesPerToken = kvCacheBytesPerToken(plan.model, plan.training.computeDtype);
        if (auto error = evaluateTraining(plan, placement.value(), mode, out, derivations))
            return *error;
        warnInheritedFigures(plan, mode, out);
        warnUnknownKeys(plan, out);
        if (derivations)
            explainModel(plan, out, plan.training.seqLen, plan.training.computeDtype, *derivations);
        if (auto error = checkNumbers(out, true))
            return *error;
        out.costPerStep = double(out.chips) * out.step.time / 3600.0 * plan.pricePerChipHour;
        if (plan.training.trainTokens > 0 && out.step.tokens > 0) {
            TrainingRun run;
            run.tokens = double(plan.training.trainTokens);
            run.steps = run.tokens / out.step.tokens;
            run.timeS = run.steps * out.step.time;
            run.days = run.timeS / 86400.0;
            run.cost = double(out.chips) * run.timeS / 3600.0 * plan.pricePerChipHour;
            out.run = run;
        }
        return out;
    }
    out.flopsPerToken = trainingFlopsPerToken(plan.model, plan.inference.promptLen);
    out.forwardFlopsPerToken = forwardFlopsPerToken(plan.model, plan.inference.promptLen);
    out.kvCacheBytesPerToken = kvCacheBytesPerToken(plan.model, plan.inference.kvDtype);
    if (auto error = evaluateInference(plan, placement.value(), mode, out, derivations))
        return *error;
    warnInheritedFigures(plan, mode, out);
    warnUnknownKeys(plan, out);
    if (derivations)
        explainModel(plan, out, plan.inference.promptLen, plan.inference.kvDtype, *derivations);
    if (auto error = checkNumbers(out, false))
        return *error;
    return out;
}

CollectiveUse collectiveUse(const Topology &topology, CollectiveOp op, std::string purpose, Role role,
                            const std::vector<AxisSpan> &spans, double bytes, double count, double timeEach,
                            double exposed, const CollectiveCost &one)
{
    CollectiveUse use;
    use.op = op;
    use.purpose = std::move(purpose);
    use.role = role;
    use.axes.reserve(spans.size());
    for (const auto &s : spans)
        use.axes.push_back(topology.axes()[static_cast<std::size_t>(s.axis)].name);
    use.bytes = bytes;
    use.bytesPerChip = one.bytesPerChip;
    use.countPerStep = static_cast<std::int64_t>(std::llround(count));
    use.timeS = timeEach * count;
    use.exposedS = std::min(use.timeS, exposed);
    use.link = one.bindingLink;
    use.latencyBound = one.latencyBound;
    return use;
}

std::string bindingResource(const std::vector<CollectiveUse> &collectives, std::string_view purposePrefix,
                            double localTime, const std::string &localBound)
{
    std::map<LinkKind, double> byLink;
    for (const auto &c : collectives)
        if (c.purpose.rfind(purposePrefix, 0) == 0)
            byLink[c.link] += c.exposedS;
    std::string bound = localBound;
    double best = localTime;
    for (const auto &[link, t] : byLink)
        if (t > best) {
            best = t;
            bound = std::string(linkName(link));
        }
    return bound;
}

namespace {

// Byte counts are integers in the contract; NaN or infinity never reach a result.
std::int64_t bytesOut(double bytes)
{
    return std::isfinite(bytes) ? static_cast<std::int64_t>(std::llround(bytes)) : 0;
}

double finite(double value)
{
    return std::isfinite(value) ? value : 0.0;
}

json memoryJson(const MemoryBreakdown &m)
{
    return {{"params", bytesOut(m.params)},       {"grads", bytesOut(m.grads)},
            {"optimizer", bytesOut(m.optimizer)}, {"activations", bytesOut(m.activations)},
            {"kv_cache", bytesOut(m.kvCache)},    {"total", bytesOut(m.total)},
            {"capacity", bytesOut(m.capacity)},   {"fits", m.fits}};
}

} // namespace

json evaluationToJson(const Evaluation &e, bool training)
{
    json collectives = json::array();
    for (const auto &c : e.collectives)
        collectives.push_back({{"op", collectiveName(c.op)},
                               {"purpose", c.purpose},
                               {"role", roleName(c.role)},
                               {"axes", c.axes},
                               {"bytes_per_chip", bytesOut(c.bytes)},
                               {"bytes_sent_per_chip", bytesOut(c.bytesPerChip)},
                               {"count_per_step", c.countPerStep},
                               {"time_s", finite(c.timeS)},
                               {"exposed_s", finite(c.exposedS)},
                               {"link", linkName(c.link)},
                               {"latency_bound", c.latencyBound}});
    json perChip = json::array();
    for (const auto &k : e.perChip)
        perChip.push_back({{"name", k.name}, {"count", k.count}, {"memory", memoryJson(k.memory)}});
    json warnings = json::array();
    for (const auto &w : e.warnings)
        warnings.push_back({{"code", w.code}, {"message", w.message}});
    json out = {{"format", "meshplan/result"},
                {"version", 1},
                {"chips", e.chips},
                {"placement", e.placement},
                {"model",
                 {{"params", e.params.total},
                  {"active_params", e.params.active},
                  {"flops_per_token", finite(e.flopsPerToken)},
                  {"forward_flops_per_token", finite(e.forwardFlopsPerToken)},
                  {"kv_cache_bytes_per_token", bytesOut(e.kvCacheBytesPerToken)}}},
                {"memory_per_chip", memoryJson(e.memory)},
                {"per_chip", perChip},
                {"bound", e.bound},
                {"critical",
                 {{"tokens_per_chip", finite(e.critical.tokensPerChip)},
                  {"fsdp_tokens_per_chip", finite(e.critical.fsdpTokensPerChip)},
                  {"data_tokens_per_chip", finite(e.critical.dataTokensPerChip)},
                  {"tensor_max_degree", finite(e.critical.tensorMaxDegree)}}},
                {"collectives", collectives},
                {"warnings", warnings}};
    if (training) {
        const StepTime &s = e.step;
        out["step"] = {{"time_s", finite(s.time)},
                       {"compute_s", finite(s.compute)},
                       {"recompute_s", finite(s.recompute)},
                       {"communication_s", finite(s.communication)},
                       {"exposed_communication_s", finite(s.exposedCommunication)},
                       {"bubble_s", finite(s.bubble)},
                       {"optimizer_s", finite(s.optimizer)},
                       {"overlap_interference_s", finite(s.overlapInterference)},
                       {"flops", finite(s.flops)},
                       {"tokens", bytesOut(s.tokens)}};
        out["mfu"] = finite(e.mfu);
        out["tokens_per_s"] = finite(e.tokensPerS);
        if (e.run)
            out["train"] = {{"tokens", finite(e.run->tokens)},
                            {"steps", finite(e.run->steps)},
                            {"time_s", finite(e.run->timeS)},
                            {"days", finite(e.run->days)},
                            {"cost", finite(e.run->cost)},
                            {"cost_per_step", finite(e.costPerStep)}};
    }
    if (!e.terms.empty()) {
        json terms = json::object();
        for (const auto &[name, value] : e.terms)
            terms[name] = finite(value);
        out["terms"] = terms;
    }
    if (e.inference) {
        const InferenceResult &i = *e.inference;
        out["inference"] = {{"prefill_s", finite(i.prefillS)},
                            {"time_to_first_token_s", finite(i.timeToFirstTokenS)},
                            {"decode_step_s", finite(i.decodeStepS)},
                            {"tokens_per_s", finite(i.tokensPerS)},
                            {"tokens_per_s_per_chip", finite(i.tokensPerSPerChip)},
                            {"kv_cache_bytes_per_token", bytesOut(i.kvCacheBytesPerToken)}};
        // The format lists tokens_per_s at the top for every plan: a serving plan's is its
        // generated tokens per second, as inference.tokens_per_s.
        out["tokens_per_s"] = finite(e.tokensPerS);
        const ServingExtras &x = e.serving;
        out["serving"] = {{"max_batch", finite(x.maxBatch)},
                          {"critical_batch", finite(x.criticalBatch)},
                          {"steady_tokens_per_s", finite(x.steadyTokensPerS)},
                          {"cost_per_million_tokens", finite(x.costPerMillionTokens)},
                          {"kv_transfer_s", finite(x.kvTransferS)},
                          {"kv_cache_bytes_per_sequence", bytesOut(x.kvCacheBytesPerSequence)},
                          {"batch_per_replica", finite(x.batchPerReplica)},
                          {"prefill_replicas", finite(x.prefillReplicas)},
                          {"decode_replicas", finite(x.decodeReplicas)},
                          {"decode_mfu", finite(x.decodeMfu)},
                          {"decode_step",
                           {{"weights_s", finite(x.decodeWeightsS)},
                            {"kv_s", finite(x.decodeKvS)},
                            {"compute_s", finite(x.decodeComputeS)},
                            {"communication_s", finite(x.decodeCommunicationS)},
                            {"book_step_s", finite(x.decodeBookStepS)}}}};
    }
    return out;
}

} // namespace meshplan::model
