#pragma once
// What a training step keeps of each layer's activations for the backward pass: Meshplan's three
// legacy levels, a framework's named policy (MaxText's, Megatron's selective) or an explicit
// list of the per-layer tensors kept in HBM and offloaded to host memory (plan-format.md).

#include "base/expected.h"

#include <nlohmann/json.hpp>

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

enum class Remat {
    None,      ///< every intermediate kept (attention probabilities included)
    Selective, ///< attention core recomputed (Megatron); the rest kept
    Full,      ///< only each layer's input kept; the forward pass is recomputed
    Custom,    ///< the tensors of a RematPolicy kept or offloaded; the rest recomputed
};

/// A per-layer tensor a policy can keep, named as MaxText's checkpoint_name() calls name them.
enum class RematTensor {
    QueryProj, ///< the queries: heads x qk_dim per token (after tensor sharding)
    KeyProj,   ///< the keys: kv_heads x qk_dim
    ValueProj, ///< the values: kv_heads x v_dim
    Context,   ///< the attention output the output projection reads: heads x v_dim
    OutProj,   ///< the output projection's result: d_model
    MlpWi,     ///< the MLP's up (and gate) projection: 2 x d_ff gated, d_ff plain
    MlpWo,     ///< the MLP's down projection: d_model (only summed into the next layer's input)
    LayerInput, ///< the layer's input: d_model; always kept unless offloaded (it cannot be rebuilt)
};
inline constexpr std::size_t kRematTensorCount = 8;

/// What the backward pass of a layer reads besides the layer input: the queries, keys and values
/// (attention backward, and the input norm from the kept layer input), the attention output (the
/// output projection's weight gradient), the output projection (the residual h = input + out_proj
/// that the MLP's norm reads back) and the MLP's up projection (activation backward, down
/// projection's weight gradient). Each one's inputs are in this list or the layer input, so a
/// tensor that is neither saved nor offloaded is rebuilt exactly once. mlpwo only enters the next
/// layer's input, which is kept: jax.checkpoint never keeps it as a residual, so saving or
/// offloading it costs nothing and it is never recomputed.
inline constexpr std::array kRematBackwardReads{RematTensor::QueryProj, RematTensor::KeyProj, RematTensor::ValueProj,
                                                RematTensor::Context,   RematTensor::OutProj, RematTensor::MlpWi};

/// A remat policy as the plan names it. For the legacy strings (and their aliases) the sets are
/// empty and `kind` says what is kept; for Remat::Custom the sets do.
struct RematPolicy {
    Remat kind = Remat::Full;
    std::string name = "full";       ///< as written: "full", "save_qkv_proj", or "custom" for the object form
    std::set<RematTensor> saved;     ///< kept in HBM
    std::set<RematTensor> offloaded; ///< moved to host memory in the forward, back for the backward

    bool operator==(const RematPolicy &) const = default;

    /// Whether the backward rebuilds `t` under a custom policy: one it reads that is neither
    /// saved nor offloaded.
    bool rebuilds(RematTensor t) const;

    /// The policy a legacy string names (none, selective, full).
    static RematPolicy legacy(Remat kind);
};

std::string_view rematName(Remat remat);
std::string_view rematTensorName(RematTensor tensor);
/// "none, selective, full, minimal, ..." for messages.
std::string rematPolicyNames();
/// The policy names a plan can choose among: the legacy levels and the framework policies, without
/// JAX's aliases of the legacy levels (nothing_saveable, everything_saveable).
std::vector<std::string_view> rematPolicyChoices();
/// "query_proj, key_proj, ..." (with the qkv_proj alias) for messages.
std::string rematTensorNames();

/// Reads workload.remat: a policy name or {"save": [...], "offload": [...]}. Errors name `path`
/// (or path.save[i] for a tensor) and list the valid names.
Expected<RematPolicy> rematPolicyFromJson(const nlohmann::json &value, const std::string &path);
/// The name as written, or the object form for a custom policy; rematPolicyFromJson reads it back.
nlohmann::json rematPolicyToJson(const RematPolicy &policy);

} // namespace meshplan::model
