#pragma once
// A transformer's architecture (dense, GQA/MQA, gated MLP, MoE, MLA, parallel blocks) and the
// quantities the book derives from it: parameters, FLOPs per token, KV cache per token.

#include "base/dtype.h"
#include "base/expected.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <string>

namespace meshplan::model {

enum class MlpKind {
    Gated, ///< SwiGLU/GeGLU: gate, up and down matrices (3·D·F)
    Plain, ///< one up and one down matrix (2·D·F)
};

/// Mixture of experts: which layers route, how many experts and how wide.
struct MoeSpec {
    int experts = 0;          ///< routed experts per MoE layer (E)
    int expertsPerToken = 0;  ///< k
    std::int64_t dFfExpert = 0; ///< FFN width of one routed expert
    int sharedExperts = 0;    ///< always-active experts of width dFfExpert (DeepSeek)
    int firstDenseLayers = 0; ///< leading layers with a dense MLP of width dFf (DeepSeek)
    bool routerBias = false;  ///< a per-expert bias in the router (DeepSeek-V3's correction bias)
};

/// DeepSeek's multi-head latent attention.
struct MlaSpec {
    int qLoraRank = 0; ///< 0: queries projected directly (DeepSeek-V2-Lite)
    int kvLoraRank = 0;
    int qkNopeHeadDim = 0;
    int qkRopeHeadDim = 0;
    int vHeadDim = 0;
};

/// Local (sliding-window) attention: some layers let a query see only the last `window` tokens,
/// itself included (Mistral 7B v0.1 in every layer, Gemma 2 and gpt-oss in every other, Gemma 3 in
/// five of six). Costs are summed over layers, so only the count of local layers matters.
struct SlidingWindowSpec {
    std::int64_t window = 0; ///< keys a local layer's query attends to, at most
    int localLayers = 0;     ///< layers with the window; the others attend to the whole context
};

struct ModelSpec {
    std::string id;   ///< catalog id ("llama-3-70b"), or the name of an imported config
    std::string name; ///< for display ("LLaMA-3 70B")
    int layers = 0;
    std::int64_t dModel = 0;
    std::int64_t dFf = 0; ///< dense MLP width (per matrix)
    int heads = 0;
    int kvHeads = 0;
    int headDim = 0;
    std::int64_t vocab = 0;
    MlpKind mlp = MlpKind::Gated;
    bool tiedEmbeddings = false;
    bool parallelBlock = false;        ///< attention and MLP read the same input (PaLM, GPT-J)
    std::int64_t learnedPositions = 0; ///< rows of a learned position table (GPT-2/3), 0 for RoPE
    bool biases = false;               ///< biases on every projection and on layer norms (GPT-2/3)
    bool qkNorm = false;               ///< per-head RMSNorm on queries and keys (Qwen3)
    std::optional<MoeSpec> moe;
    std::optional<MlaSpec> mla;
    std::optional<SlidingWindowSpec> slidingWindow;

    bool isMoeLayer(int layer) const;
    int moeLayerCount() const;
};

/// Parameter counts, in elements.
struct ParamCounts {
    std::int64_t total = 0;
    std::int64_t active = 0;       ///< per token: k of E routed experts (router counted in full)
    std::int64_t embedding = 0;    ///< input embedding (+ learned positions): a lookup, not a matmul
    std::int64_t unembedding = 0;  ///< output projection (0 when tied: it reuses the embedding)
    std::int64_t attentionPerLayer = 0; ///< projections + norms of one layer
    std::int64_t denseMlpPerLayer = 0;  ///< a dense layer's MLP (+ its norm)
    std::int64_t expertParams = 0;      ///< one routed expert
    std::int64_t moeSharedPerLayer = 0; ///< router + shared experts (+ norm) of one MoE layer
    std::int64_t finalNorm = 0;
};

ParamCounts countParams(const ModelSpec &model);
/// An upper bound of countParams(model).total computed in doubles, so it cannot overflow: what
/// validation checks before counting in integers.
double paramCountBound(const ModelSpec &model);

/// Query-key and value widths of one head, as the attention matmuls see them (MLA's differ).
std::pair<double, double> attentionHeadDims(const ModelSpec &m);

/// Keys one query attends to, averaged over the layers, in a sequence of `seqLen` tokens: the book's
/// non-causal count (T in a global layer, min(T, window) in a local one).
double attendedKeys(const ModelSpec &model, double seqLen);
/// The same under a causal mask as a fused kernel visits it: T/2 in a global layer; in a local one
/// T/2 up to the window, then W − W²/(2T) (the first W queries see their prefix, the rest W keys).
/// `tileKeys`: a kernel that works in tiles of that many keys also computes the partly masked tile
/// at the window's far edge, about half a tile more per query in a local layer (never past T/2).
double causalAttendedKeys(const ModelSpec &model, double seqLen, double tileKeys = 0);
/// Tokens of keys and values one layer keeps for a context of `context` tokens, averaged over the
/// layers (a local layer keeps only its window).
double cachedTokens(const ModelSpec &model, double context);
/// The mean of cachedTokens while the context grows evenly from `from` to `to` (a decode phase).
double meanCachedTokens(const ModelSpec &model, double from, double to);

/// Training FLOPs per token: 6 x (active matmul parameters, unembedding included, input embedding
/// not) + attention 12·L·T·N·(d_qk + d_v)/2 (book ch. 4, non-causal, as the book counts it; a local
/// layer counts its window instead of T).
double trainingFlopsPerToken(const ModelSpec &model, std::int64_t seqLen);
/// The forward pass alone: one third of the above.
double forwardFlopsPerToken(const ModelSpec &model, std::int64_t seqLen);
/// Training FLOPs per token with attention counted as causal kernels run it (MFU's convention).
double causalTrainingFlopsPerToken(const ModelSpec &model, std::int64_t seqLen);
/// KV cache bytes per token for the whole model: 2·L·K·H (GQA/MQA/MHA) or L·(kv_lora + rope) (MLA).
double kvCacheBytesPerToken(const ModelSpec &model, DType kvDtype);
/// KV cache bytes of one sequence at a context of `context` tokens: per token, times the tokens
/// the layers keep (a local layer only its window).
double kvCacheBytesPerSequence(const ModelSpec &model, DType kvDtype, double context);

/// Checks that the numbers describe a model we can cost (positive sizes, heads divisible by KV
/// heads, experts_per_token <= experts, ...); errors name `path`.field.
std::optional<Error> validateModel(const ModelSpec &model, const std::string &path);

/// Reads an inline architecture object (plan-format.md keys: name, layers, d_model, d_ff, heads,
/// kv_heads, head_dim, vocab, mlp, tied_embeddings, moe{...}, mla{...}, sliding_window: a window
/// in tokens for every layer, or {window, local_layers}).
Expected<ModelSpec> modelFromJson(const nlohmann::json &object, const std::string &path);
nlohmann::json modelToJson(const ModelSpec &model);

} // namespace meshplan::model
