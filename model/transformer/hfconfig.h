#pragma once
// Reads a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE, Gemma 1-3, DeepSeek
// V2/V3, GPT-2, and best effort GPT-NeoX and Falcon) into a ModelSpec.

#include "base/expected.h"
#include "transformer/modelspec.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace meshplan::model {

/// Imports a parsed config.json. Errors name the offending key under `path` ("config.hidden_size").
/// Key aliases, null fields, `text_config` nesting and transformers-version differences follow
/// /work/shared/fixtures/hf-configs/README.md. Refused: state-space and hybrid models (mamba, rwkv,
/// ...), encoders, and MoE layouts other than "every layer after the first k" (Qwen3-MoE
/// `mlp_only_layers` / `decoder_sparse_step`, DeepSeek `moe_layer_freq`).
/// Not modelled, so counts are slightly low or high for: Gemma 2/3's extra post-norms, Qwen2's
/// q/k/v-only biases, the second layer norm of GPT-NeoX and Falcon-40B parallel blocks.
Expected<ModelSpec> modelFromHfConfig(const nlohmann::json &config, const std::string &path);

/// Parses `text` (nesting-limited, size-capped) and imports it with root path "config"; a text that
/// is not JSON is reported against `what` (usually the file name). Never throws.
Expected<ModelSpec> modelFromHfConfigText(const std::string &text, const std::string &what);

} // namespace meshplan::model
