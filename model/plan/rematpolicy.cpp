#include "plan/rematpolicy.h"

#include "base/jsonfields.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace meshplan::model {

using nlohmann::json;

namespace {

using T = RematTensor;

constexpr std::array kTensors{T::QueryProj, T::KeyProj, T::ValueProj, T::Context,
                               T::OutProj,   T::MlpWi,  T::MlpWo,     T::LayerInput};

struct NamedPolicy {
    const char *name;
    Remat kind;
    std::vector<RematTensor> save;
    std::vector<RematTensor> offload;
};

// MaxText's policies (Decoder.get_remat_policy and minimal_policy in layers/decoders.py), which
// save_only_these_names / save_and_offload_only_these_names over these checkpoint names. MaxText
// also names "qkv_proj" (a fused projection) and "mlpwi_0"/"mlpwi_1" (gate and up) in each list;
// here they are the three projections and mlpwi. `minimal` was once
// checkpoint_dots_with_no_batch_dims, which keeps the same matmul outputs.
const std::vector<NamedPolicy> &namedPolicies()
{
    static const std::vector<NamedPolicy> policies{
        {"none", Remat::None, {}, {}},
        {"selective", Remat::Selective, {}, {}}, // Megatron's selective recomputation
        {"full", Remat::Full, {}, {}},
        {"minimal", Remat::Custom, {T::QueryProj, T::KeyProj, T::ValueProj, T::OutProj, T::MlpWi, T::MlpWo}, {}},
        {"minimal_with_context", Remat::Custom,
         {T::QueryProj, T::KeyProj, T::ValueProj, T::Context, T::OutProj, T::MlpWi, T::MlpWo}, {}},
        {"save_dot_with_context_except_mlp", Remat::Custom,
         {T::QueryProj, T::KeyProj, T::ValueProj, T::Context, T::OutProj}, {}},
        {"save_dot_except_mlpwi", Remat::Custom, {T::QueryProj, T::KeyProj, T::ValueProj, T::OutProj, T::MlpWo}, {}},
        {"save_dot_except_mlp", Remat::Custom, {T::QueryProj, T::KeyProj, T::ValueProj, T::OutProj}, {}},
        {"save_qkv_proj", Remat::Custom, {T::QueryProj, T::KeyProj, T::ValueProj}, {}},
        {"save_out_proj", Remat::Custom, {T::OutProj}, {}},
        {"qkv_proj_offloaded", Remat::Custom, {}, {T::QueryProj, T::KeyProj, T::ValueProj}},
        {"minimal_offloaded", Remat::Custom, {},
         {T::QueryProj, T::KeyProj, T::ValueProj, T::OutProj, T::MlpWi, T::MlpWo}},
        {"nothing_saveable", Remat::Full, {}, {}},    // jax.checkpoint_policies.nothing_saveable
        {"everything_saveable", Remat::None, {}, {}}, // jax.checkpoint_policies.everything_saveable
    };
    return policies;
}

/// The tensors a name stands for: one, three for the qkv_proj alias, none for an unknown name.
/// MaxText's custom policy also names the gated MLP's two halves, mlpwi_0 (gate) and mlpwi_1 (up):
/// either stands for mlpwi, since the activation's backward reads both.
std::vector<RematTensor> tensorsNamed(const std::string &name)
{
    if (name == "qkv_proj")
        return {T::QueryProj, T::KeyProj, T::ValueProj};
    if (name == "mlpwi_0" || name == "mlpwi_1")
        return {T::MlpWi};
    for (RematTensor t : kTensors)
        if (rematTensorName(t) == name)
            return {t};
    return {};
}

std::set<RematTensor> readTensorList(const json &object, const std::string &key, const std::string &path)
{
    std::set<RematTensor> tensors;
    if (!object.contains(key))
        return tensors;
    const std::string listPath = path + "." + key;
    const json &list = object.at(key);
    if (!list.is_array())
        throw FieldError(listPath, "must list tensor names (" + rematTensorNames() + "), got "
                                       + json_fields::describe(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string itemPath = listPath + "[" + std::to_string(i) + "]";
        if (!list[i].is_string())
            throw FieldError(itemPath, "must be a tensor name (" + rematTensorNames() + "), got "
                                           + json_fields::describe(list[i]));
        const std::string name = list[i].get<std::string>();
        const std::vector<RematTensor> named = tensorsNamed(name);
        if (named.empty())
            throw FieldError(itemPath, "unknown tensor \"" + name + "\" (known: " + rematTensorNames() + ")");
        // A list may name a tensor twice (MaxText's own lists name qkv_proj beside query_proj).
        tensors.insert(named.begin(), named.end());
    }
    return tensors;
}

RematPolicy readPolicy(const json &value, const std::string &path)
{
    if (value.is_string()) {
        const std::string name = value.get<std::string>();
        for (const NamedPolicy &p : namedPolicies())
            if (name == p.name)
                return RematPolicy{p.kind, name, {p.save.begin(), p.save.end()}, {p.offload.begin(), p.offload.end()}};
        throw FieldError(path, "must be " + rematPolicyNames()
                                   + " or {\"save\": [...], \"offload\": [...]}, got \"" + name + "\"");
    }
    if (!value.is_object())
        throw FieldError(path, "must be a policy name (" + rematPolicyNames()
                                   + ") or {\"save\": [...], \"offload\": [...]}, got " + json_fields::describe(value));
    for (auto it = value.begin(); it != value.end(); ++it)
        if (it.key() != "save" && it.key() != "offload")
            throw FieldError(path + "." + it.key(), "is not a key of a remat policy (save, offload)");
    RematPolicy policy{Remat::Custom, "custom", readTensorList(value, "save", path),
                       readTensorList(value, "offload", path)};
    if (value.contains("offload")) {
        const json &list = value.at("offload");
        for (std::size_t i = 0; i < list.size(); ++i)
            for (RematTensor t : tensorsNamed(list[i].get<std::string>()))
                if (policy.saved.count(t))
                    throw FieldError(path + ".offload[" + std::to_string(i) + "]",
                                     "\"" + std::string(rematTensorName(t))
                                         + "\" is also in save: a tensor is kept in HBM or offloaded, not both");
    }
    return policy;
}

} // namespace

bool RematPolicy::rebuilds(RematTensor t) const
{
    return std::find(kRematBackwardReads.begin(), kRematBackwardReads.end(), t) != kRematBackwardReads.end()
           && !saved.count(t) && !offloaded.count(t);
}

RematPolicy RematPolicy::legacy(Remat kind)
{
    return RematPolicy{kind, std::string(rematName(kind)), {}, {}};
}

std::string_view rematName(Remat remat)
{
    switch (remat) {
    case Remat::None:
        return "none";
    case Remat::Selective:
        return "selective";
    case Remat::Full:
        return "full";
    case Remat::Custom:
        return "custom";
    }
    return "?";
}

std::string_view rematTensorName(RematTensor tensor)
{
    switch (tensor) {
    case RematTensor::QueryProj:
        return "query_proj";
    case RematTensor::KeyProj:
        return "key_proj";
    case RematTensor::ValueProj:
        return "value_proj";
    case RematTensor::Context:
        return "context";
    case RematTensor::OutProj:
        return "out_proj";
    case RematTensor::MlpWi:
        return "mlpwi";
    case RematTensor::MlpWo:
        return "mlpwo";
    case RematTensor::LayerInput:
        return "decoder_layer_input";
    }
    return "?";
}

std::string rematPolicyNames()
{
    std::string names;
    for (const NamedPolicy &p : namedPolicies())
        names += (names.empty() ? "" : ", ") + std::string(p.name);
    return names;
}

std::vector<std::string_view> rematPolicyChoices()
{
    std::vector<std::string_view> names;
    for (const NamedPolicy &p : namedPolicies())
        if (std::string_view(p.name) != "nothing_saveable" && std::string_view(p.name) != "everything_saveable")
            names.push_back(p.name);
    return names;
}

std::string rematTensorNames()
{
    std::string names = "query_proj, key_proj, value_proj, qkv_proj (the three)";
    for (RematTensor t : kTensors)
        if (t != T::QueryProj && t != T::KeyProj && t != T::ValueProj)
            names += ", " + std::string(rematTensorName(t)) + (t == T::MlpWi ? " (or mlpwi_0, mlpwi_1)" : "");
    return names;
}

Expected<RematPolicy> rematPolicyFromJson(const json &value, const std::string &path)
{
    try {
        return readPolicy(value, path);
    } catch (const FieldError &e) {
        return e.error;
    }
}

json rematPolicyToJson(const RematPolicy &policy)
{
    if (policy.kind != Remat::Custom) {
        // An alias (nothing_saveable) is written as read, unless the kind was changed since.
        for (const NamedPolicy &p : namedPolicies())
            if (policy.name == p.name && p.kind == policy.kind)
                return policy.name;
        return rematName(policy.kind);
    }
    for (const NamedPolicy &p : namedPolicies())
        if (policy.name == p.name && std::set<RematTensor>(p.save.begin(), p.save.end()) == policy.saved
            && std::set<RematTensor>(p.offload.begin(), p.offload.end()) == policy.offloaded)
            return policy.name;
    const auto names = [](const std::set<RematTensor> &tensors) {
        json list = json::array();
        for (RematTensor t : tensors)
            list.push_back(rematTensorName(t));
        return list;
    };
    return {{"save", names(policy.saved)}, {"offload", names(policy.offloaded)}};
}

} // namespace meshplan::model
