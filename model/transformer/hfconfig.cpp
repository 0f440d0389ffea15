#include "transformer/hfconfig.h"

#include "base/jsonfields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <string_view>

namespace meshplan::model {

using nlohmann::json;
namespace jf = json_fields;

namespace {

constexpr std::int64_t kMaxDim = 1'000'000;
constexpr std::int64_t kMaxCount = 100'000;
constexpr std::int64_t kMaxWidth = 1'000'000'000;
constexpr std::size_t kMaxTextBytes = 16u << 20; // real configs are < 10 KB (platform notes 5.5)

// Not a stack of attention + MLP blocks with a per-layer KV cache: nothing we compute applies.
constexpr std::array<std::string_view, 18> kRecurrentTypes = {
    "mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2", "bamba", "nemotron_h", "falcon_h1",
    "granitemoehybrid", "rwkv", "rwkv5", "rwkv6", "rwkv7", "recurrent_gemma", "xlstm", "lfm2", "qwen3_next"};
// Decoders whose MLP is two matrices (no gate) and whose linear layers carry biases.
constexpr std::array<std::string_view, 7> kPlainBiasedTypes = {"phi",     "starcoder2", "gpt_bigcode", "gptj",
                                                                "codegen", "bloom",      "opt"};
constexpr std::array<std::string_view, 11> kEncoderTypes = {
    "bert", "roberta", "deberta", "deberta-v2", "distilbert", "electra", "t5", "mt5", "bart", "mbart", "whisper"};

template<std::size_t N>
bool contains(const std::array<std::string_view, N> &list, const std::string &value)
{
    return std::find(list.begin(), list.end(), value) != list.end();
}

bool startsWith(const std::string &s, std::string_view prefix)
{
    return s.compare(0, prefix.size(), prefix) == 0;
}

/// Reads one config object (the top level, or its `text_config`), remembering which alias of each
/// key it found so that errors found later still name the key the user actually wrote.
class HfReader
{
public:
    HfReader(const json &lm, std::string path, std::string modelType)
        : m_lm(lm), m_path(std::move(path)), m_type(std::move(modelType))
    {}

    ModelSpec read(const json &top)
    {
        ModelSpec m;
        m.layers = int(required({"num_hidden_layers", "n_layer"}, "layers", 1, kMaxCount));
        m.dModel = required({"hidden_size", "n_embd", "n_embed"}, "d_model", 1, kMaxDim);
        m.heads = int(required({"num_attention_heads", "n_head"}, "heads", 1, kMaxCount));
        m.vocab = required({"vocab_size"}, "vocab", 1, 100'000'000);
        m.kvHeads = readKvHeads(m.heads);
        m.tiedEmbeddings = readTied(top);

        const bool gpt2 = m_type == "gpt2";
        const bool neox = m_type == "gpt_neox";
        const bool falcon = m_type == "falcon" || startsWith(m_type, "RefinedWeb");
        // Two-matrix MLPs (GELU; ReLU in OPT) with biases (modeling_phi, modeling_starcoder2, modeling_gpt_bigcode,
        // modeling_gptj, modeling_codegen, modeling_bloom, modeling_opt in transformers); phi, GPT-J
        // and CodeGen run attention and the MLP side by side on one norm.
        const bool plainWithBiases = contains(kPlainBiasedTypes, m_type);
        if (gpt2 || neox || falcon || plainWithBiases)
            m.mlp = MlpKind::Plain;
        if (plainWithBiases) {
            m.biases = m_type == "starcoder2" ? jf::boolean(m_lm, "use_bias", m_path, true)
                       : m_type == "opt"      ? jf::boolean(m_lm, "enable_bias", m_path, true)
                                              : true;
            m.parallelBlock = m_type == "phi" || m_type == "gptj" || m_type == "codegen";
            // Learned absolute positions: StarCoder's table of n_positions; OPT's of
            // max_position_embeddings + 2 (OPTLearnedPositionalEmbedding's offset of 2).
            if (m_type == "gpt_bigcode")
                m.learnedPositions = required({"n_positions", "max_position_embeddings"}, "learned_positions", 1, kMaxWidth);
            else if (m_type == "opt")
                m.learnedPositions = required({"max_position_embeddings"}, "learned_positions", 1, kMaxWidth) + 2;
        }
        if (gpt2) {
            m.biases = true;
            m.learnedPositions = required({"n_positions", "n_ctx", "max_position_embeddings"}, "learned_positions", 1,
                                          kMaxWidth);
        } else if (neox) {
            m.biases = true;
            m.parallelBlock = jf::boolean(m_lm, "use_parallel_residual", m_path, true);
        } else if (falcon) {
            m.biases = jf::boolean(m_lm, "bias", m_path, false);
            m.parallelBlock = jf::boolean(m_lm, "parallel_attn", m_path, true)
                              || jf::boolean(m_lm, "new_decoder_architecture", m_path, false);
        }
        m.qkNorm = m_type == "qwen3" || m_type == "qwen3_moe" || startsWith(m_type, "gemma3");

        readMla(m);
        m.headDim = readHeadDim(m);
        readMoe(m);
        m.dFf = readFfWidth(m);
        readSlidingWindow(m);

        if (auto error = validateModel(m, m_path))
            throw FieldError(renamed(error->path), error->message);
        return m;
    }

private:
    const char *firstPresent(std::initializer_list<const char *> keys) const
    {
        for (const char *key : keys)
            if (jf::has(m_lm, key))
                return key;
        return nullptr;
    }

    static std::string aliasNote(std::initializer_list<const char *> keys)
    {
        if (keys.size() < 2)
            return "";
        std::string note = " (also read as";
        for (auto it = keys.begin() + 1; it != keys.end(); ++it)
            note += std::string(it == keys.begin() + 1 ? " " : ", ") + *it;
        return note + ")";
    }

    /// The first of `keys` present and not null; its absence is reported under the first (canonical) key.
    std::int64_t required(std::initializer_list<const char *> keys, const std::string &planKey, std::int64_t minimum,
                          std::int64_t maximum)
    {
        const char *key = firstPresent(keys);
        if (!key)
            throw FieldError(jf::join(m_path, *keys.begin()), "is required" + aliasNote(keys));
        m_source[planKey] = key;
        return jf::integer(m_lm, key, m_path, minimum, maximum);
    }

    std::int64_t optional(std::initializer_list<const char *> keys, const std::string &planKey, std::int64_t minimum,
                          std::int64_t maximum, std::int64_t fallback)
    {
        const char *key = firstPresent(keys);
        if (!key)
            return fallback;
        m_source[planKey] = key;
        return jf::integer(m_lm, key, m_path, minimum, maximum);
    }

    int readKvHeads(int heads)
    {
        // Old Falcon files and StarCoder's (gpt_bigcode, multi_query by default) say multi_query
        // instead of giving a KV head count.
        const bool falconMqa = ((m_type == "falcon" || startsWith(m_type, "RefinedWeb"))
                                && jf::boolean(m_lm, "multi_query", m_path, true)
                                && !jf::boolean(m_lm, "new_decoder_architecture", m_path, false))
                               || (m_type == "gpt_bigcode" && jf::boolean(m_lm, "multi_query", m_path, true));
        const int kv = int(optional({"num_key_value_heads", "n_head_kv", "num_kv_heads"}, "kv_heads", 1, kMaxCount,
                                    falconMqa ? 1 : heads));
        if (kv > heads || heads % kv != 0) {
            const std::string key = m_source.count("kv_heads") ? m_source["kv_heads"] : "num_key_value_heads";
            throw FieldError(jf::join(m_path, key), "must divide the " + std::to_string(heads)
                                                        + " attention heads, got " + std::to_string(kv));
        }
        return kv;
    }

    bool readTied(const json &top) const
    {
        // transformers' own defaults: Gemma, GPT-2, Falcon, BLOOM, OPT and StarCoder (gpt_bigcode)
        // tie; the Llama-like families do not.
        const bool byType = startsWith(m_type, "gemma") || m_type == "gpt2" || m_type == "falcon"
                            || startsWith(m_type, "RefinedWeb") || m_type == "bloom" || m_type == "opt"
                            || m_type == "gpt_bigcode";
        if (jf::has(m_lm, "tie_word_embeddings"))
            return jf::boolean(m_lm, "tie_word_embeddings", m_path, byType);
        return jf::boolean(top, "tie_word_embeddings", "config", byType);
    }

    void readMla(ModelSpec &m)
    {
        if (!jf::has(m_lm, "kv_lora_rank"))
            return;
        MlaSpec a;
        // DeepSeek-V2-Lite projects queries directly and says so with q_lora_rank: null.
        a.qLoraRank = int(optional({"q_lora_rank"}, "mla.q_lora_rank", 0, kMaxDim, 0));
        a.kvLoraRank = int(required({"kv_lora_rank"}, "mla.kv_lora_rank", 1, kMaxDim));
        a.qkNopeHeadDim = int(required({"qk_nope_head_dim"}, "mla.qk_nope_head_dim", 0, kMaxCount));
        a.qkRopeHeadDim = int(required({"qk_rope_head_dim"}, "mla.qk_rope_head_dim", 0, kMaxCount));
        a.vHeadDim = int(required({"v_head_dim"}, "mla.v_head_dim", 1, kMaxCount));
        m.mla = a;
    }

    int readHeadDim(const ModelSpec &m)
    {
        // transformers sets an MLA model's head_dim to the RoPE part; the query-key width is what
        // the attention matmuls see, and the counts use the MLA fields anyway.
        if (m.mla)
            return m.mla->qkNopeHeadDim + m.mla->qkRopeHeadDim;
        // Never derive when given: Qwen3-30B-A3B has 2048 / 32 heads but head_dim 128 (notes, finding 16).
        if (jf::has(m_lm, "head_dim"))
            return int(required({"head_dim"}, "head_dim", 1, kMaxCount));
        // Absent (not null) takes the family's transformers default.
        if (!m_lm.contains("head_dim")) {
            if (m_type == "qwen3" || m_type == "qwen3_moe")
                return 128;
            if (startsWith(m_type, "gemma"))
                return 256;
        }
        if (m.dModel % m.heads != 0)
            throw FieldError(jf::join(m_path, "head_dim"),
                             "is required: " + m_source["d_model"] + " (" + std::to_string(m.dModel)
                                 + ") is not a multiple of the " + std::to_string(m.heads) + " attention heads");
        return int(m.dModel / m.heads);
    }

    void readMoe(ModelSpec &m)
    {
        const char *expertsKey = firstPresent({"num_local_experts", "num_experts", "n_routed_experts"});
        if (!expertsKey)
            return;
        MoeSpec e;
        e.experts = int(required({expertsKey}, "moe.experts", 0, kMaxCount));
        if (e.experts == 0)
            return; // some dense configs carry num_experts: 0
        e.expertsPerToken = int(required({"num_experts_per_tok"}, "moe.experts_per_token", 1, kMaxCount));
        if (e.expertsPerToken > e.experts)
            throw FieldError(jf::join(m_path, "num_experts_per_tok"),
                             "must not exceed " + std::string(expertsKey) + " (" + std::to_string(e.experts)
                                 + "), got " + std::to_string(e.expertsPerToken));
        // Mixtral's experts are as wide as its intermediate_size; the others say moe_intermediate_size.
        e.dFfExpert = required({"moe_intermediate_size", "intermediate_size"}, "moe.d_ff_expert", 1, kMaxWidth);
        e.sharedExperts = int(optional({"n_shared_experts"}, "moe.shared_experts", 0, kMaxCount, 0));
        // Qwen2-MoE gives its shared expert as one wide MLP; it is k experts of the routed width when
        // it divides evenly. (Its sigmoid gate, D parameters per layer, is not counted.)
        if (jf::has(m_lm, "shared_expert_intermediate_size")) {
            const std::int64_t width = jf::integer(m_lm, "shared_expert_intermediate_size", m_path, 0, kMaxWidth);
            if (width % e.dFfExpert != 0)
                throw FieldError(jf::join(m_path, "shared_expert_intermediate_size"),
                                 "is not supported unless it is a multiple of the expert width ("
                                     + std::to_string(e.dFfExpert) + ")");
            e.sharedExperts += int(width / e.dFfExpert);
        }
        e.firstDenseLayers = int(optional({"first_k_dense_replace"}, "moe.first_dense_layers", 0, m.layers, 0));
        if (jf::integerOr(m_lm, "moe_layer_freq", m_path, 1, kMaxCount, 1) != 1)
            throw FieldError(jf::join(m_path, "moe_layer_freq"),
                             "is not supported: only every layer after the first k dense ones may be MoE");
        if (jf::integerOr(m_lm, "decoder_sparse_step", m_path, 1, kMaxCount, 1) != 1)
            throw FieldError(jf::join(m_path, "decoder_sparse_step"),
                             "is not supported: only configs where every layer is MoE (step 1) can be costed");
        if (jf::has(m_lm, "mlp_only_layers")) {
            const json &dense = m_lm.at("mlp_only_layers");
            if (!dense.is_array())
                throw FieldError(jf::join(m_path, "mlp_only_layers"), "must be an array, got " + jf::describe(dense));
            if (!dense.empty())
                throw FieldError(jf::join(m_path, "mlp_only_layers"),
                                 "is not supported: only configs where every layer is MoE (an empty list) "
                                 "can be costed");
        }
        // DeepSeek-V3's aux-loss-free routing adds a per-expert correction bias to the router.
        e.routerBias = m_type == "deepseek_v3" || jf::stringOr(m_lm, "topk_method", m_path, "") == "noaux_tc";
        m.moe = e;
    }

    /// Which layers attend through a window, as transformers builds them: an explicit layer_types
    /// list wins; use_sliding_window false (Qwen and its derivatives) turns the window off; else
    /// Gemma 2 and gpt-oss window their even layers, Gemma 3 and Cohere 2 all but one layer in
    /// sliding_window_pattern (6, 5 for Gemma 3n, 4 for Cohere 2), the Qwen families the layers from
    /// max_window_layers (default 28) on, as their configs document it, and the rest (Mistral,
    /// Phi-3, Starcoder2) every layer.
    void readSlidingWindow(ModelSpec &m)
    {
        const char *key = firstPresent({"sliding_window", "sliding_window_size"});
        if (!key)
            return;
        if (jf::has(m_lm, "use_sliding_window") && !jf::boolean(m_lm, "use_sliding_window", m_path, false))
            return;
        SlidingWindowSpec w;
        w.window = optional({key}, "sliding_window", 1, kMaxWidth, 0);
        const auto maxWindowLayers = [&] {
            return int(optional({"max_window_layers"}, "max_window_layers", 0, kMaxCount, 28));
        };
        const auto pattern = [&](std::int64_t fallback) {
            return optional({"sliding_window_pattern", "_sliding_window_pattern"}, "sliding_window_pattern", 1, kMaxCount,
                            fallback);
        };
        if (jf::has(m_lm, "layer_types")) {
            const json &types = m_lm.at("layer_types");
            const std::string tp = jf::join(m_path, "layer_types");
            if (!types.is_array() || types.size() != std::size_t(m.layers))
                throw FieldError(tp, "must list one type for each of the " + std::to_string(m.layers) + " layers");
            for (std::size_t i = 0; i < types.size(); ++i) {
                if (!types[i].is_string())
                    throw FieldError(tp + "[" + std::to_string(i) + "]", "must be a string, got " + jf::describe(types[i]));
                if (types[i].get<std::string>() == "sliding_attention")
                    ++w.localLayers;
            }
        } else if (m_type == "gemma2" || m_type == "gpt_oss") {
            w.localLayers = (m.layers + 1) / 2;
        } else if (m_type == "cohere2" || startsWith(m_type, "gemma3")) {
            const std::int64_t every = pattern(m_type == "cohere2" ? 4 : startsWith(m_type, "gemma3n") ? 5 : 6);
            w.localLayers = m.layers - int(m.layers / every);
        } else if (startsWith(m_type, "qwen2") || startsWith(m_type, "qwen3")) {
            w.localLayers = std::max(0, m.layers - maxWindowLayers());
        } else {
            w.localLayers = m.layers;
        }
        if (w.localLayers > 0)
            m.slidingWindow = w;
    }

    std::int64_t readFfWidth(const ModelSpec &m)
    {
        const bool fourTimes = m_type == "gpt2" || m_type == "gpt_neox" || m_type == "falcon"
                               || startsWith(m_type, "RefinedWeb") || m_type == "gpt_bigcode" || m_type == "gptj"
                               || m_type == "codegen" || m_type == "bloom";
        // GPT-2 writes n_inner: null for 4·n_embd; Falcon has no key at all.
        const std::int64_t fallback = fourTimes ? 4 * m.dModel : -1;
        const bool needsDense = !m.moe || m.moe->firstDenseLayers > 0;
        if (!needsDense) // only routed experts: the dense width is unused, and may be missing or 0
            return optional({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}, "d_ff", 0, kMaxWidth, 0);
        if (fallback > 0)
            return optional({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}, "d_ff", 1, kMaxWidth, fallback);
        return required({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}, "d_ff", 1, kMaxWidth);
    }

    /// validateModel names our own keys ("config.kv_heads"); point at the key the file used instead.
    std::string renamed(const std::string &errorPath) const
    {
        const std::string prefix = m_path + ".";
        if (!startsWith(errorPath, prefix))
            return errorPath;
        const auto it = m_source.find(errorPath.substr(prefix.size()));
        return it == m_source.end() ? errorPath : prefix + it->second;
    }

    const json &m_lm;
    std::string m_path;
    std::string m_type;
    std::map<std::string, std::string> m_source; ///< our key ("d_model") -> the file's key ("n_embd")
};

ModelSpec readHfConfig(const json &config, const std::string &path)
{
    if (!config.is_object())
        throw FieldError(path, "must be a config.json object, got " + jf::describe(config));
    const std::string topType = jf::stringOr(config, "model_type", path, "");

    // Multimodal wrappers (Gemma 3) nest the language model under text_config.
    const json *lm = &config;
    std::string lmPath = path;
    std::string type = topType;
    if (jf::has(config, "text_config")) {
        lm = &config.at("text_config");
        lmPath = jf::join(path, "text_config");
        if (!lm->is_object())
            throw FieldError(lmPath, "must be an object, got " + jf::describe(*lm));
        type = jf::stringOr(*lm, "model_type", lmPath, topType);
    }
    if (contains(kRecurrentTypes, topType) || contains(kRecurrentTypes, type))
        throw FieldError(jf::join(path, "model_type"),
                         "\"" + topType + "\" is a state-space or recurrent model; Meshplan costs transformers only");
    if (contains(kEncoderTypes, topType))
        throw FieldError(jf::join(path, "model_type"),
                         "\"" + topType + "\" is an encoder model; Meshplan costs decoder-only transformers");

    ModelSpec m = HfReader(*lm, lmPath, type).read(config);
    std::string id = jf::stringOr(config, "_name_or_path", path, "");
    if (id.empty())
        id = topType.empty() ? "imported" : topType;
    m.id = id;
    m.name = id;
    return m;
}

} // namespace

Expected<ModelSpec> modelFromHfConfig(const json &config, const std::string &path)
{
    try {
        return readHfConfig(config, path);
    } catch (const FieldError &e) {
        return e.error;
    } catch (const json::exception &e) {
        return Error{path, std::string("cannot be read (") + e.what() + ")"};
    }
}

Expected<ModelSpec> modelFromHfConfigText(const std::string &text, const std::string &what)
{
    if (text.size() > kMaxTextBytes)
        return Error{what, "is larger than 16 MiB; a config.json is a few kilobytes"};
    try {
        return modelFromHfConfig(jf::parse(text, what, 64, jf::DuplicateKeys::LastWins), "config");
    } catch (const FieldError &e) {
        return e.error;
    } catch (const std::exception &e) {
        return Error{what, std::string("cannot be read (") + e.what() + ")"};
    } catch (...) {
        return Error{what, "cannot be read"};
    }
}

} // namespace meshplan::model
