#include "transformer/modelspec.h"

#include "base/jsonfields.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace meshplan::model {

using nlohmann::json;
namespace jf = json_fields;

bool ModelSpec::isMoeLayer(int layer) const
{
    return moe.has_value() && layer >= moe->firstDenseLayers;
}

int ModelSpec::moeLayerCount() const
{
    return moe ? std::max(0, layers - moe->firstDenseLayers) : 0;
}

double paramCountBound(const ModelSpec &m)
{
    const double d = m.dModel;
    const double heads = m.heads;
    double attention = 0;
    if (m.mla) {
        const MlaSpec &a = *m.mla;
        const double qk = double(a.qkNopeHeadDim) + a.qkRopeHeadDim;
        attention = d * (double(a.qLoraRank) + heads * qk) + double(a.qLoraRank) * heads * qk
                    + d * (double(a.kvLoraRank) + a.qkRopeHeadDim) + double(a.kvLoraRank) * heads * (double(a.qkNopeHeadDim) + a.vHeadDim)
                    + heads * a.vHeadDim * d;
    } else {
        attention = 2 * d * (heads + double(m.kvHeads) + 1) * std::max(1.0, double(m.headDim)) + 4 * d;
    }
    double mlp = 3 * d * double(m.dFf) + 3 * double(m.dFf) + 3 * d;
    if (m.moe)
        mlp += (double(m.moe->experts) + m.moe->sharedExperts) * (3 * d * double(m.moe->dFfExpert) + 3 * double(m.moe->dFfExpert))
               + d * m.moe->experts;
    return double(m.layers) * (attention + mlp) + 2 * (double(m.vocab) + double(m.learnedPositions) + 2) * d;
}

ParamCounts countParams(const ModelSpec &m)
{
    ParamCounts c;
    const std::int64_t d = m.dModel;
    const std::int64_t norm = m.biases ? 2 * d : d; // LayerNorm has a bias, RMSNorm does not

    std::int64_t attention = 0;
    if (m.mla) {
        const MlaSpec &a = *m.mla;
        const std::int64_t qkDim = a.qkNopeHeadDim + a.qkRopeHeadDim;
        if (a.qLoraRank > 0)
            attention += d * a.qLoraRank + a.qLoraRank + std::int64_t(a.qLoraRank) * m.heads * qkDim;
        else
            attention += d * m.heads * qkDim;
        attention += d * (a.kvLoraRank + a.qkRopeHeadDim) + a.kvLoraRank;
        attention += std::int64_t(a.kvLoraRank) * m.heads * (a.qkNopeHeadDim + a.vHeadDim);
        attention += std::int64_t(m.heads) * a.vHeadDim * d;
    } else {
        const std::int64_t q = std::int64_t(m.heads) * m.headDim;
        const std::int64_t kv = std::int64_t(m.kvHeads) * m.headDim;
        attention += d * q + 2 * d * kv + q * d;
        if (m.biases)
            attention += q + 2 * kv + d;
        if (m.qkNorm)
            attention += 2 * std::int64_t(m.headDim);
    }
    attention += norm; // the block's input norm (shared with the MLP in a parallel block)
    c.attentionPerLayer = attention;

    const std::int64_t mlpNorm = m.parallelBlock ? 0 : norm;
    const auto mlpParams = [&](std::int64_t width) {
        std::int64_t p = (m.mlp == MlpKind::Gated ? 3 : 2) * d * width;
        if (m.biases)
            p += (m.mlp == MlpKind::Gated ? 2 : 1) * width + d;
        return p;
    };
    c.denseMlpPerLayer = mlpParams(m.dFf) + mlpNorm;

    c.embedding = m.vocab * d + m.learnedPositions * d;
    c.unembedding = m.tiedEmbeddings ? 0 : m.vocab * d;
    c.finalNorm = norm;
    c.total = c.embedding + c.unembedding + c.finalNorm + m.layers * attention;
    c.active = c.total;
    if (m.moe) {
        const MoeSpec &e = *m.moe;
        c.expertParams = mlpParams(e.dFfExpert);
        c.moeSharedPerLayer = d * e.experts + (e.routerBias ? e.experts : 0) + e.sharedExperts * c.expertParams + mlpNorm;
        const std::int64_t dense = m.layers - m.moeLayerCount();
        const std::int64_t sparse = m.moeLayerCount();
        c.total += dense * c.denseMlpPerLayer + sparse * (c.moeSharedPerLayer + e.experts * c.expertParams);
        c.active += dense * c.denseMlpPerLayer + sparse * (c.moeSharedPerLayer + e.expertsPerToken * c.expertParams);
    } else {
        c.total += m.layers * c.denseMlpPerLayer;
        c.active = c.total;
    }
    return c;
}

std::pair<double, double> attentionHeadDims(const ModelSpec &m)
{
    if (m.mla)
        return {double(m.mla->qkNopeHeadDim + m.mla->qkRopeHeadDim), double(m.mla->vHeadDim)};
    return {double(m.headDim), double(m.headDim)};
}

namespace {

/// The share of layers with a window, and the window (0 when every layer is global).
std::pair<double, double> localShare(const ModelSpec &m)
{
    if (!m.slidingWindow || m.slidingWindow->window <= 0 || m.layers <= 0)
        return {0.0, 0.0};
    return {double(std::clamp(m.slidingWindow->localLayers, 0, m.layers)) / m.layers, double(m.slidingWindow->window)};
}

/// Forward FLOPs per token of the weight matmuls: every active parameter is touched by one
/// multiply-add per token, except the embedding lookup; the output projection is a matmul even
/// when its weights are tied.
double matmulFlopsPerToken(const ModelSpec &m)
{
    const ParamCounts c = countParams(m);
    return 2.0 * (double(c.active - c.embedding - c.unembedding) + double(m.vocab * m.dModel));
}

double attentionFlopsPerKey(const ModelSpec &m)
{
    const auto [qk, v] = attentionHeadDims(m);
    return 2.0 * m.heads * (qk + v) * m.layers;
}

} // namespace

double attendedKeys(const ModelSpec &m, double seqLen)
{
    const auto [local, window] = localShare(m);
    return (1.0 - local) * seqLen + local * std::min(seqLen, window);
}

double causalAttendedKeys(const ModelSpec &m, double seqLen, double tileKeys)
{
    const auto [local, window] = localShare(m);
    const double inWindow = seqLen <= window ? seqLen / 2.0 : window - window * window / (2.0 * seqLen);
    return (1.0 - local) * seqLen / 2.0 + local * std::min(seqLen / 2.0, inWindow + tileKeys / 2.0);
}

double cachedTokens(const ModelSpec &m, double context)
{
    return attendedKeys(m, context);
}

double meanCachedTokens(const ModelSpec &m, double from, double to)
{
    const auto [local, window] = localShare(m);
    const double mean = (from + to) / 2.0;
    if (local <= 0 || !(to > from))
        return cachedTokens(m, mean);
    // A local layer keeps min(c, W) while c runs from `from` to `to`: the context itself below the
    // window, the window above it.
    double inWindow = window;
    if (to <= window)
        inWindow = mean;
    else if (from < window)
        inWindow = ((window * window - from * from) / 2.0 + window * (to - window)) / (to - from);
    return (1.0 - local) * mean + local * inWindow;
}

double forwardFlopsPerToken(const ModelSpec &m, std::int64_t seqLen)
{
    return matmulFlopsPerToken(m) + attentionFlopsPerKey(m) * attendedKeys(m, double(seqLen));
}

double trainingFlopsPerToken(const ModelSpec &m, std::int64_t seqLen)
{
    return 3.0 * forwardFlopsPerToken(m, seqLen);
}

double causalTrainingFlopsPerToken(const ModelSpec &m, std::int64_t seqLen)
{
    return 3.0 * (matmulFlopsPerToken(m) + attentionFlopsPerKey(m) * causalAttendedKeys(m, double(seqLen)));
}

double kvCacheBytesPerToken(const ModelSpec &m, DType kvDtype)
{
    const double perLayer = m.mla ? double(m.mla->kvLoraRank + m.mla->qkRopeHeadDim)
                                  : 2.0 * m.kvHeads * m.headDim;
    return perLayer * m.layers * bytesPerElement(kvDtype);
}

double kvCacheBytesPerSequence(const ModelSpec &m, DType kvDtype, double context)
{
    return kvCacheBytesPerToken(m, kvDtype) * cachedTokens(m, context);
}

std::optional<Error> validateModel(const ModelSpec &m, const std::string &path)
{
    const auto at = [&](const char *field, std::string message) {
        return Error{jf::join(path, field), std::move(message)};
    };
    if (m.layers < 1 || m.layers > 100000)
        return at("layers", "must be from 1 to 100000, got " + std::to_string(m.layers));
    if (m.dModel < 1 || m.dModel > 1'000'000)
        return at("d_model", "must be from 1 to 1000000, got " + std::to_string(m.dModel));
    if (m.heads < 1)
        return at("heads", "must be a positive integer");
    if (m.kvHeads < 1 || m.kvHeads > m.heads || m.heads % m.kvHeads != 0)
        return at("kv_heads", "must divide heads (" + std::to_string(m.heads) + "), got " + std::to_string(m.kvHeads));
    if (m.headDim < 1 && !m.mla)
        return at("head_dim", "must be a positive integer");
    if (m.vocab < 1 || m.vocab > 100'000'000)
        return at("vocab", "must be from 1 to 100000000, got " + std::to_string(m.vocab));
    const bool needsDense = !m.moe || m.moe->firstDenseLayers > 0;
    if (m.dFf < (needsDense ? 1 : 0) || m.dFf > 100'000'000)
        return at("d_ff", "must be a positive integer, got " + std::to_string(m.dFf));
    if (m.moe) {
        const MoeSpec &e = *m.moe;
        const std::string p = jf::join(path, "moe");
        if (e.experts < 1 || e.experts > 100000)
            return Error{p + ".experts", "must be from 1 to 100000, got " + std::to_string(e.experts)};
        if (e.expertsPerToken < 1 || e.expertsPerToken > e.experts)
            return Error{p + ".experts_per_token", "must be from 1 to experts (" + std::to_string(e.experts)
                                                        + "), got " + std::to_string(e.expertsPerToken)};
        if (e.dFfExpert < 1)
            return Error{p + ".d_ff_expert", "must be a positive integer"};
        if (e.sharedExperts < 0)
            return Error{p + ".shared_experts", "must not be negative"};
        if (e.firstDenseLayers < 0 || e.firstDenseLayers > m.layers)
            return Error{p + ".first_dense_layers", "must be from 0 to layers (" + std::to_string(m.layers) + ")"};
    }
    if (m.mla) {
        const MlaSpec &a = *m.mla;
        const std::string p = jf::join(path, "mla");
        if (a.kvLoraRank < 1)
            return Error{p + ".kv_lora_rank", "must be a positive integer"};
        if (a.vHeadDim < 1 || a.qkNopeHeadDim + a.qkRopeHeadDim < 1)
            return Error{p + ".v_head_dim", "head widths must be positive"};
    }
    if (m.slidingWindow) {
        const std::string p = jf::join(path, "sliding_window");
        if (m.slidingWindow->window < 1)
            return Error{p + ".window", "must be a positive number of tokens"};
        if (m.slidingWindow->localLayers < 0 || m.slidingWindow->localLayers > m.layers)
            return Error{p + ".local_layers", "must be from 0 to layers (" + std::to_string(m.layers) + "), got "
                                                   + std::to_string(m.slidingWindow->localLayers)};
    }
    // In doubles first: countParams counts in 64-bit integers, which a hostile size overflows
    // (to -9.2e18 bytes and a negative MFU).
    if (paramCountBound(m) > 1e15 || countParams(m).total > 1'000'000'000'000'000LL)
        return Error{path, "has more than 10^15 parameters; check the sizes"};
    return std::nullopt;
}

namespace {

ModelSpec readModel(const json &o, const std::string &path)
{
    if (!o.is_object())
        throw FieldError(path, "must be a model id or an architecture object, got " + jf::describe(o));
    ModelSpec m;
    m.name = jf::stringOr(o, "name", path, "");
    m.id = jf::stringOr(o, "id", path, m.name.empty() ? "custom" : m.name);
    if (m.name.empty())
        m.name = m.id;
    constexpr std::int64_t kBig = 1'000'000'000;
    m.layers = static_cast<int>(jf::integer(o, "layers", path, 1, 100000));
    m.dModel = jf::integer(o, "d_model", path, 1, 1'000'000);
    m.heads = static_cast<int>(jf::integer(o, "heads", path, 1, 100000));
    m.kvHeads = static_cast<int>(jf::integerOr(o, "kv_heads", path, 1, 100000, m.heads));
    m.headDim = static_cast<int>(jf::integerOr(o, "head_dim", path, 1, 100000, m.dModel / m.heads));
    m.vocab = jf::integer(o, "vocab", path, 1, 100'000'000);
    const std::string mlp = jf::stringOr(o, "mlp", path, "gated");
    if (mlp == "gated")
        m.mlp = MlpKind::Gated;
    else if (mlp == "plain")
        m.mlp = MlpKind::Plain;
    else
        throw FieldError(jf::join(path, "mlp"), "must be \"gated\" or \"plain\", got \"" + mlp + "\"");
    m.tiedEmbeddings = jf::boolean(o, "tied_embeddings", path, false);
    m.parallelBlock = jf::boolean(o, "parallel_block", path, false);
    m.learnedPositions = jf::integerOr(o, "learned_positions", path, 0, kBig, 0);
    m.biases = jf::boolean(o, "biases", path, false);
    m.qkNorm = jf::boolean(o, "qk_norm", path, false);
    if (jf::has(o, "moe")) {
        const json &e = o.at("moe");
        const std::string p = jf::join(path, "moe");
        MoeSpec spec;
        spec.experts = static_cast<int>(jf::integer(e, "experts", p, 1, 100000));
        spec.expertsPerToken = static_cast<int>(jf::integer(e, "experts_per_token", p, 1, 100000));
        spec.dFfExpert = jf::integer(e, "d_ff_expert", p, 1, kBig);
        spec.sharedExperts = static_cast<int>(jf::integerOr(e, "shared_experts", p, 0, 100000, 0));
        spec.firstDenseLayers = static_cast<int>(jf::integerOr(e, "first_dense_layers", p, 0, 100000, 0));
        spec.routerBias = jf::boolean(e, "router_bias", p, false);
        m.moe = spec;
    }
    const bool ffOptional = m.moe && m.moe->firstDenseLayers == 0;
    m.dFf = ffOptional ? jf::integerOr(o, "d_ff", path, 0, kBig, 0) : jf::integer(o, "d_ff", path, 1, kBig);
    if (jf::has(o, "mla")) {
        const json &a = o.at("mla");
        const std::string p = jf::join(path, "mla");
        MlaSpec spec;
        spec.qLoraRank = static_cast<int>(jf::integerOr(a, "q_lora_rank", p, 0, 1'000'000, 0));
        spec.kvLoraRank = static_cast<int>(jf::integer(a, "kv_lora_rank", p, 1, 1'000'000));
        spec.qkNopeHeadDim = static_cast<int>(jf::integer(a, "qk_nope_head_dim", p, 0, 100000));
        spec.qkRopeHeadDim = static_cast<int>(jf::integer(a, "qk_rope_head_dim", p, 0, 100000));
        spec.vHeadDim = static_cast<int>(jf::integer(a, "v_head_dim", p, 1, 100000));
        m.mla = spec;
    }
    if (jf::has(o, "sliding_window")) {
        const json &w = o.at("sliding_window");
        const std::string p = jf::join(path, "sliding_window");
        SlidingWindowSpec spec;
        if (w.is_object()) {
            for (auto it = w.begin(); it != w.end(); ++it)
                if (it.key() != "window" && it.key() != "local_layers")
                    throw FieldError(jf::join(p, it.key()), "is not a key of sliding_window (window, local_layers)");
            spec.window = jf::integer(w, "window", p, 1, kBig);
            spec.localLayers = static_cast<int>(jf::integerOr(w, "local_layers", p, 0, m.layers, m.layers));
        } else {
            spec.window = jf::integer(o, "sliding_window", path, 1, kBig);
            spec.localLayers = m.layers;
        }
        if (spec.localLayers > 0) // no local layer: no window to cost or report
            m.slidingWindow = spec;
    }
    if (auto error = validateModel(m, path))
        throw FieldError(error->path, error->message);
    return m;
}

} // namespace

Expected<ModelSpec> modelFromJson(const json &object, const std::string &path)
{
    try {
        return readModel(object, path);
    } catch (const FieldError &e) {
        return e.error;
    } catch (const json::exception &e) {
        return Error{path, e.what()};
    }
}

json modelToJson(const ModelSpec &m)
{
    json o = {{"id", m.id},
              {"name", m.name},
              {"layers", m.layers},
              {"d_model", m.dModel},
              {"d_ff", m.dFf},
              {"heads", m.heads},
              {"kv_heads", m.kvHeads},
              {"head_dim", m.headDim},
              {"vocab", m.vocab},
              {"mlp", m.mlp == MlpKind::Gated ? "gated" : "plain"},
              {"tied_embeddings", m.tiedEmbeddings}};
    if (m.parallelBlock)
        o["parallel_block"] = true;
    if (m.learnedPositions > 0)
        o["learned_positions"] = m.learnedPositions;
    if (m.biases)
        o["biases"] = true;
    if (m.qkNorm)
        o["qk_norm"] = true;
    if (m.moe)
        o["moe"] = {{"experts", m.moe->experts},
                    {"experts_per_token", m.moe->expertsPerToken},
                    {"d_ff_expert", m.moe->dFfExpert},
                    {"shared_experts", m.moe->sharedExperts},
                    {"first_dense_layers", m.moe->firstDenseLayers},
                    {"router_bias", m.moe->routerBias}};
    if (m.mla)
        o["mla"] = {{"q_lora_rank", m.mla->qLoraRank},
                    {"kv_lora_rank", m.mla->kvLoraRank},
                    {"qk_nope_head_dim", m.mla->qkNopeHeadDim},
                    {"qk_rope_head_dim", m.mla->qkRopeHeadDim},
                    {"v_head_dim", m.mla->vHeadDim}};
    if (m.slidingWindow)
        o["sliding_window"] = {{"window", m.slidingWindow->window}, {"local_layers", m.slidingWindow->localLayers}};
    return o;
}

} // namespace meshplan::model
