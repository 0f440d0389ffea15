#include "plan/plan.h"

#include "base/embeddedresources.h"
#include "base/jsonfields.h"
#include "hardware/chipcatalog.h"
#include "transformer/hfconfig.h"
#include "transformer/modelcatalog.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

namespace meshplan::model {

using nlohmann::json;
namespace jf = json_fields;

const std::vector<std::string_view> &trainingStacks()
{
    static const std::vector<std::string_view> stacks{"megatron", "nemo", "maxtext", "torchtitan", "deepspeed", "composer"};
    return stacks;
}

const std::vector<std::string_view> &servingStacks()
{
    static const std::vector<std::string_view> stacks{"tensorrt-llm", "vllm", "sglang", "jetstream"};
    return stacks;
}

std::string_view expertDispatchName(ExpertDispatch dispatch)
{
    switch (dispatch) {
    case ExpertDispatch::Stack:
        return "";
    case ExpertDispatch::AllToAll:
        return "all-to-all";
    case ExpertDispatch::Deduplicated:
        return "deduplicated";
    }
    return "";
}

std::string_view scheduleName(PipelineSchedule schedule)
{
    switch (schedule) {
    case PipelineSchedule::GPipe:
        return "gpipe";
    case PipelineSchedule::OneFOneB:
        return "1f1b";
    case PipelineSchedule::Interleaved1F1B:
        return "interleaved-1f1b";
    case PipelineSchedule::ZeroBubble:
        return "zero-bubble";
    case PipelineSchedule::DualPipe:
        return "dualpipe";
    }
    return "?";
}

std::string_view optimizerName(Optimizer optimizer)
{
    switch (optimizer) {
    case Optimizer::Adam:
        return "adam";
    case Optimizer::AdamW:
        return "adamw";
    case Optimizer::Sgd:
        return "sgd";
    case Optimizer::Adafactor:
        return "adafactor";
    }
    return "?";
}

namespace {

DType dtypeField(const json &o, const std::string &key, const std::string &path, DType fallback)
{
    if (!jf::has(o, key))
        return fallback;
    const std::string name = jf::string(o, key, path);
    const auto type = parseDType(name);
    if (!type)
        throw FieldError(jf::join(path, key), "unknown dtype \"" + name + "\" (expected one of " + dtypeList() + ")");
    return *type;
}

template<typename Enum, typename Names>
Enum enumField(const json &o, const std::string &key, const std::string &path, Enum fallback, const Names &names,
               const std::string &expected)
{
    if (!jf::has(o, key))
        return fallback;
    const std::string value = jf::string(o, key, path);
    for (const auto &[name, e] : names)
        if (value == name)
            return e;
    throw FieldError(jf::join(path, key), "must be " + expected + ", got \"" + value + "\"");
}

ModelSpec resolveModel(const json &ref, const ModelCatalog &models)
{
    if (ref.is_string()) {
        const ModelSpec *m = models.find(ref.get<std::string>());
        if (!m)
            throw FieldError("model", "unknown model \"" + ref.get<std::string>() + "\" (known: " + models.idList() + ")");
        return *m;
    }
    if (ref.is_object() && ref.contains("hf_config")) {
        auto m = modelFromHfConfig(ref.at("hf_config"), "model.hf_config");
        if (!m)
            throw FieldError(m.error().path, m.error().message);
        return m.value();
    }
    auto m = modelFromJson(ref, "model");
    if (!m)
        throw FieldError(m.error().path, m.error().message);
    return m.value();
}

Chip resolveChip(const json &ref, const ChipCatalog &chips)
{
    if (ref.is_string()) {
        const Chip *c = chips.find(ref.get<std::string>());
        if (!c)
            throw FieldError("hardware.chip", "unknown chip \"" + ref.get<std::string>() + "\" (known: " + chips.idList() + ")");
        return *c;
    }
    auto c = chipFromJson(ref, "hardware.chip", chips.referenceFor(ref));
    if (!c)
        throw FieldError(c.error().path, c.error().message);
    return c.value();
}

Topology resolveTopology(const Chip &chip, const json &hardware)
{
    const json &topo = jf::require(hardware, "topology", "hardware");
    Expected<Topology> t = Error{};
    if (chip.isTpu()) {
        std::vector<int> shape;
        if (topo.is_string()) {
            auto parsed = parseShape(topo.get<std::string>(), "hardware.topology");
            if (!parsed)
                throw FieldError(parsed.error().path, parsed.error().message);
            shape = parsed.value();
        } else if (topo.is_array() && !topo.empty() && topo.size() <= 3) {
            for (std::size_t i = 0; i < topo.size(); ++i)
                shape.push_back(static_cast<int>(
                    jf::integerValue(topo[i], "hardware.topology[" + std::to_string(i) + "]", 1, kMaxChips)));
        } else if (topo.is_array() && topo.size() > 3) {
            const int dims = chip.ici ? chip.ici->torusDims : 3;
            throw FieldError("hardware.topology", "has " + std::to_string(topo.size()) + " axes; a " + chip.id
                                                      + " slice has at most " + std::to_string(dims)
                                                      + " (join slices with \"slices\")");
        } else {
            throw FieldError("hardware.topology", "must be a slice shape such as [16, 16, 32] for " + chip.id
                                                      + ", got " + jf::describe(topo));
        }
        const int slices = static_cast<int>(jf::integerOr(hardware, "slices", "hardware", 1, kMaxChips, 1));
        t = Topology::tpuSlice(chip, shape, slices);
    } else {
        if (!topo.is_object())
            throw FieldError("hardware.topology", "must be {\"nodes\": N, \"gpus_per_node\": G} for " + chip.id
                                                      + ", got " + jf::describe(topo));
        const int nodes = static_cast<int>(jf::integer(topo, "nodes", "hardware.topology", 1, kMaxChips));
        const int gpus = static_cast<int>(jf::integerOr(topo, "gpus_per_node", "hardware.topology", 1, kMaxChips,
                                                        chip.nvlink->domainSize));
        t = Topology::gpuCluster(chip, nodes, gpus);
    }
    if (!t)
        throw FieldError(t.error().path, t.error().message);
    return t.value();
}

ParallelismSpec readParallelism(const json &o)
{
    const std::string path = "parallelism";
    ParallelismSpec p;
    if (!o.is_object())
        throw FieldError(path, "must be an object of degrees per role");
    for (Role role : kRoles)
        p.degrees[static_cast<std::size_t>(role)] =
            static_cast<int>(jf::integerOr(o, std::string(roleName(role)), path, 1, kMaxChips, 1));
    if (jf::has(o, "placement")) {
        const json &placement = o.at("placement");
        if (!placement.is_object())
            throw FieldError("parallelism.placement", "must map roles to lists of axis names");
        for (auto it = placement.begin(); it != placement.end(); ++it) {
            const auto role = parseRole(it.key());
            const std::string rp = "parallelism.placement." + it.key();
            if (!role)
                throw FieldError(rp, "is not a role (data, fsdp, tensor, pipeline, expert, context)");
            std::vector<std::string> names;
            const json &list = it.value();
            if (list.is_string()) {
                names.push_back(list.get<std::string>());
            } else if (list.is_array()) {
                for (const auto &item : list) {
                    if (!item.is_string())
                        throw FieldError(rp, "must list axis names, got " + jf::describe(item));
                    const std::string name = item.get<std::string>();
                    // ["gpu", "gpu"] would count the axis twice in the role's degree.
                    if (std::find(names.begin(), names.end(), name) != names.end())
                        throw FieldError(rp, "lists axis \"" + name + "\" twice");
                    names.push_back(name);
                }
            } else {
                throw FieldError(rp, "must list axis names, got " + jf::describe(list));
            }
            if (!names.empty())
                p.placement[*role] = names;
        }
    }
    p.zeroStage = static_cast<int>(jf::integerOr(o, "zero_stage", path, 0, 3, 0));
    p.sequenceParallel = jf::boolean(o, "sequence_parallel", path, false);
    if (jf::has(o, "tensor_overlap"))
        p.tensorOverlap = jf::boolean(o, "tensor_overlap", path, false);
    p.expertOverlap = jf::boolean(o, "expert_overlap", path, false);
    const std::vector<std::pair<std::string, ExpertDispatch>> dispatches{{"all-to-all", ExpertDispatch::AllToAll},
                                                                         {"deduplicated", ExpertDispatch::Deduplicated}};
    p.expertDispatch = enumField(o, "expert_dispatch", path, ExpertDispatch::Stack, dispatches,
                                 "all-to-all or deduplicated");
    const std::vector<std::pair<std::string, PipelineSchedule>> schedules{
        {"gpipe", PipelineSchedule::GPipe},
        {"1f1b", PipelineSchedule::OneFOneB},
        {"interleaved-1f1b", PipelineSchedule::Interleaved1F1B},
        {"zero-bubble", PipelineSchedule::ZeroBubble},
        {"dualpipe", PipelineSchedule::DualPipe}};
    p.schedule = enumField(o, "pipeline_schedule", path, PipelineSchedule::OneFOneB, schedules,
                           "gpipe, 1f1b, interleaved-1f1b, zero-bubble or dualpipe");
    p.microbatches = static_cast<int>(jf::integerOr(o, "microbatches", path, 1, 1'000'000, 1));
    p.virtualStages = static_cast<int>(jf::integerOr(o, "virtual_stages", path, 1, 1024, 1));
    if (p.schedule == PipelineSchedule::OneFOneB && p.virtualStages > 1)
        p.schedule = PipelineSchedule::Interleaved1F1B;
    return p;
}

/// A pipelined training plan that does not say how many microbatches it runs feeds its pipeline
/// one sequence at a time (micro-batch size 1, as Megatron-LM's and torchtitan's pipeline recipes
/// do): the smallest bubble and activation footprint. Read as one microbatch, its pipeline would
/// idle (stages - 1) / stages of the step and hold the whole local batch's activations.
void defaultPipelineMicrobatches(const json &doc, Plan &plan)
{
    const bool given = jf::has(doc, "parallelism") && jf::has(doc.at("parallelism"), "microbatches");
    if (given || plan.kind != WorkloadKind::Training || plan.parallelism.degree(Role::Pipeline) <= 1)
        return;
    plan.parallelism.microbatches = defaultMicrobatches(plan.parallelism, plan.training.globalBatch);
    plan.parallelism.microbatchesDefaulted = true;
}

/// workload.stack: one of `known` (the stacks of this kind of workload), or "" when absent.
std::string stackField(const json &o, const std::string &path, const std::vector<std::string_view> &known)
{
    const std::string stack = jf::stringOr(o, "stack", path, "");
    if (stack.empty() && !jf::has(o, "stack"))
        return stack;
    std::string names;
    for (std::string_view name : known) {
        if (stack == name)
            return stack;
        names += (names.empty() ? "" : ", ") + std::string(name);
    }
    throw FieldError(path + ".stack", "must be one of " + names + ", got \"" + stack + "\"");
}

void readWorkload(const json &o, Plan &plan)
{
    const std::string path = "workload";
    if (!o.is_object())
        throw FieldError(path, "must be an object");
    const std::string kind = jf::stringOr(o, "kind", path, "training");
    if (kind == "training") {
        plan.kind = WorkloadKind::Training;
        TrainingSpec &t = plan.training;
        t.seqLen = jf::integer(o, "seq_len", path, 1, 100'000'000);
        t.globalBatch = jf::integer(o, "global_batch", path, 1, 1'000'000'000);
        t.paramDtype = dtypeField(o, "param_dtype", path, DType::Bf16);
        t.computeDtype = dtypeField(o, "compute_dtype", path, DType::Bf16);
        t.optimizerDtype = dtypeField(o, "optimizer_dtype", path, DType::Fp32);
        t.gradDtype = dtypeField(o, "grad_dtype", path, t.paramDtype);
        const std::vector<std::pair<std::string, Optimizer>> optimizers{
            {"adam", Optimizer::Adam}, {"adamw", Optimizer::AdamW}, {"sgd", Optimizer::Sgd},
            {"adafactor", Optimizer::Adafactor}};
        t.optimizer = enumField(o, "optimizer", path, Optimizer::Adam, optimizers, "adam, adamw, sgd or adafactor");
        if (jf::has(o, "remat")) {
            auto remat = rematPolicyFromJson(o.at("remat"), jf::join(path, "remat"));
            if (!remat)
                throw FieldError(remat.error().path, remat.error().message);
            t.remat = std::move(remat).value();
        }
        t.masterWeights = jf::boolean(o, "master_weights", path,
                                      bytesPerElement(t.paramDtype) < bytesPerElement(t.optimizerDtype));
        const std::vector<std::pair<std::string, bool>> kernels{{"flash", true}, {"naive", false}};
        t.flashAttention = enumField(o, "attention", path, true, kernels, "flash or naive");
        t.stack = stackField(o, path, trainingStacks());
        t.trainTokens = jf::integerOr(o, "train_tokens", path, 1, std::int64_t(1) << 62, 0);
        if (jf::has(o, "loss_fusion"))
            t.lossFusion = jf::boolean(o, "loss_fusion", path, false);
        if (jf::has(o, "compile"))
            t.compile = jf::boolean(o, "compile", path, false);
    } else if (kind == "inference") {
        plan.kind = WorkloadKind::Inference;
        InferenceSpec &i = plan.inference;
        i.batch = jf::integer(o, "batch", path, 1, 1'000'000'000);
        i.promptLen = jf::integer(o, "prompt_len", path, 1, 100'000'000);
        i.generateLen = jf::integer(o, "generate_len", path, 1, 100'000'000);
        i.weightDtype = dtypeField(o, "weight_dtype", path, DType::Bf16);
        i.kvDtype = dtypeField(o, "kv_dtype", path, DType::Bf16);
        const std::vector<std::pair<std::string, Serving>> servings{
            {"interleaved", Serving::Interleaved}, {"disaggregated", Serving::Disaggregated}};
        i.serving = enumField(o, "serving", path, Serving::Interleaved, servings, "interleaved or disaggregated");
        i.prefillChips = jf::integerOr(o, "prefill_chips", path, 0, kMaxChips, 0);
        // fp8 weights on a chip with an fp8 rate multiply in fp8 (W8A8, as TensorRT-LLM's FP8
        // engines run); int8/int4 weights are weight-only, dequantized to bf16 (plan-format.md).
        const bool w8a8 = i.weightDtype == DType::Fp8 && plan.topology.chip().listedPeakFlops(DType::Fp8) > 0;
        i.computeDtype = dtypeField(o, "compute_dtype", path, w8a8 ? DType::Fp8 : DType::Bf16);
        i.stack = stackField(o, path, servingStacks());
        i.latencyTargetS = jf::positiveNumberOr(o, "latency_target_s", path, 0.0, true);
        if (i.serving == Serving::Disaggregated && i.prefillChips == 0)
            throw FieldError("workload.prefill_chips", "disaggregated serving needs a positive number of prefill chips");
    } else {
        throw FieldError("workload.kind", "must be \"training\" or \"inference\", got \"" + kind + "\"");
    }
}

/// Appends the keys of `object` not in `known` to `out` as paths under `path`.
void collectUnknownKeys(const json &object, const std::string &path, std::initializer_list<std::string_view> known,
                        std::vector<std::string> &out)
{
    if (!object.is_object())
        return;
    for (auto it = object.begin(); it != object.end(); ++it)
        if (std::find(known.begin(), known.end(), it.key()) == known.end())
            out.push_back(jf::join(path, it.key()));
}

/// The keys of a plan's objects that it does not define: a misspelt key would otherwise be read
/// as its default without a word (num_kv_heads for kv_heads, remat_policy for remat).
std::vector<std::string> unknownPlanKeys(const json &doc)
{
    std::vector<std::string> out;
    const json &model = doc.at("model");
    if (model.is_object() && !model.contains("hf_config")) {
        collectUnknownKeys(model, "model",
                           {"name", "id", "layers", "d_model", "d_ff", "heads", "kv_heads", "head_dim", "vocab", "mlp",
                            "tied_embeddings", "parallel_block", "learned_positions", "biases", "qk_norm", "moe", "mla",
                            "sliding_window"},
                           out);
        if (model.contains("moe"))
            collectUnknownKeys(model.at("moe"), "model.moe",
                               {"experts", "experts_per_token", "d_ff_expert", "shared_experts", "first_dense_layers",
                                "router_bias"},
                               out);
        if (model.contains("mla"))
            collectUnknownKeys(model.at("mla"), "model.mla",
                               {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}, out);
    }
    collectUnknownKeys(doc.at("hardware"), "hardware", {"chip", "topology", "slices", "price_per_hour"}, out);
    if (doc.contains("parallelism"))
        collectUnknownKeys(doc.at("parallelism"), "parallelism",
                           {"data", "fsdp", "tensor", "pipeline", "expert", "context", "placement", "zero_stage",
                            "sequence_parallel", "tensor_overlap", "expert_overlap", "expert_dispatch",
                            "pipeline_schedule", "microbatches", "virtual_stages"},
                           out);
    // Both kinds' keys: switching a plan between training and serving keeps the other kind's
    // settings (PlanEdits::withWorkloadKind), to come back to.
    collectUnknownKeys(doc.at("workload"), "workload",
                       {"kind", "seq_len", "global_batch", "param_dtype", "compute_dtype", "optimizer_dtype", "grad_dtype",
                        "optimizer", "remat", "master_weights", "attention", "stack", "train_tokens", "loss_fusion",
                        "compile", "batch", "prompt_len", "generate_len", "weight_dtype", "kv_dtype", "serving",
                        "prefill_chips", "latency_target_s"},
                       out);
    return out;
}

Plan readPlan(const json &doc, const ChipCatalog &chips, const ModelCatalog &models)
{
    if (!doc.is_object())
        throw FieldError("", "a plan must be a JSON object");
    const std::string format = jf::string(doc, "format", "");
    if (format != "meshplan/plan")
        throw FieldError("format", "must be \"meshplan/plan\", got \"" + format + "\"");
    const std::int64_t version = jf::integer(doc, "version", "", 1, 1'000'000);
    if (version > kPlanVersion)
        throw FieldError("version", "this file is version " + std::to_string(version)
                                        + "; this Meshplan reads versions up to " + std::to_string(kPlanVersion)
                                        + " (a newer Meshplan wrote it)");
    Plan plan;
    plan.title = jf::stringOr(doc, "title", "", "");
    plan.modelRef = jf::require(doc, "model", "");
    plan.model = resolveModel(plan.modelRef, models);
    const json &hardware = jf::require(doc, "hardware", "");
    if (!hardware.is_object())
        throw FieldError("hardware", "must be an object with chip and topology");
    plan.chipRef = jf::require(hardware, "chip", "hardware");
    const Chip chip = resolveChip(plan.chipRef, chips);
    plan.topology = resolveTopology(chip, hardware);
    plan.topologyRef = hardware;
    plan.topologyRef.erase("chip");
    plan.pricePerChipHour = jf::positiveNumberOr(hardware, "price_per_hour", "hardware", chip.pricePerHour, true);
    plan.parallelism = readParallelism(jf::has(doc, "parallelism") ? doc.at("parallelism") : json::object());
    readWorkload(jf::require(doc, "workload", ""), plan);
    defaultPipelineMicrobatches(doc, plan);
    plan.unknownKeys = unknownPlanKeys(doc);
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (it.key() != "format" && it.key() != "version" && it.key() != "title" && it.key() != "model"
            && it.key() != "hardware" && it.key() != "parallelism" && it.key() != "workload")
            plan.extra[it.key()] = it.value();
    return plan;
}

} // namespace

Expected<Plan> planFromJson(const json &document, const ChipCatalog &chips, const ModelCatalog &models)
{
    try {
        return readPlan(document, chips, models);
    } catch (const FieldError &e) {
        return e.error;
    } catch (const json::exception &e) {
        return Error{"", e.what()};
    }
}

Expected<Plan> planFromText(const std::string &text, const std::string &label, const ChipCatalog &chips,
                            const ModelCatalog &models)
{
    json doc;
    try {
        doc = jf::parse(text, label);
    } catch (const FieldError &e) {
        // Syntax errors are the text's (path ""); a repeated key names its field.
        return Error{e.error.path == label ? std::string() : e.error.path, e.error.message};
    }
    return planFromJson(doc, chips, models);
}

json planToJson(const Plan &plan)
{
    const ParallelismSpec &p = plan.parallelism;
    json parallelism = json::object();
    for (Role role : kRoles)
        parallelism[std::string(roleName(role))] = p.degree(role);
    json placement = json::object();
    for (const auto &[role, axes] : p.placement)
        placement[std::string(roleName(role))] = axes;
    parallelism["placement"] = placement;
    parallelism["zero_stage"] = p.zeroStage;
    parallelism["sequence_parallel"] = p.sequenceParallel;
    if (p.tensorOverlap)
        parallelism["tensor_overlap"] = *p.tensorOverlap;
    if (p.expertOverlap)
        parallelism["expert_overlap"] = true;
    if (p.expertDispatch != ExpertDispatch::Stack)
        parallelism["expert_dispatch"] = expertDispatchName(p.expertDispatch);
    parallelism["pipeline_schedule"] = scheduleName(p.schedule);
    parallelism["microbatches"] = p.microbatches;
    parallelism["virtual_stages"] = p.virtualStages;

    json workload;
    if (plan.kind == WorkloadKind::Training) {
        const TrainingSpec &t = plan.training;
        workload = {{"kind", "training"},
                    {"seq_len", t.seqLen},
                    {"global_batch", t.globalBatch},
                    {"param_dtype", dtypeName(t.paramDtype)},
                    {"compute_dtype", dtypeName(t.computeDtype)},
                    {"optimizer", optimizerName(t.optimizer)},
                    {"optimizer_dtype", dtypeName(t.optimizerDtype)},
                    {"grad_dtype", dtypeName(t.gradDtype)},
                    {"master_weights", t.masterWeights},
                    {"remat", rematPolicyToJson(t.remat)},
                    {"attention", t.flashAttention ? "flash" : "naive"}};
        if (!t.stack.empty())
            workload["stack"] = t.stack;
        if (t.trainTokens > 0)
            workload["train_tokens"] = t.trainTokens;
        if (t.lossFusion)
            workload["loss_fusion"] = *t.lossFusion;
        if (t.compile)
            workload["compile"] = *t.compile;
    } else {
        const InferenceSpec &i = plan.inference;
        workload = {{"kind", "inference"},
                    {"batch", i.batch},
                    {"prompt_len", i.promptLen},
                    {"generate_len", i.generateLen},
                    {"weight_dtype", dtypeName(i.weightDtype)},
                    {"kv_dtype", dtypeName(i.kvDtype)},
                    {"serving", i.serving == Serving::Interleaved ? "interleaved" : "disaggregated"},
                    {"prefill_chips", i.prefillChips},
                    {"compute_dtype", dtypeName(i.computeDtype)}};
        if (i.latencyTargetS > 0)
            workload["latency_target_s"] = i.latencyTargetS;
        if (!i.stack.empty())
            workload["stack"] = i.stack;
    }
    json hardware = plan.topologyRef;
    hardware["chip"] = plan.chipRef;
    json out = {{"format", "meshplan/plan"},
                {"version", kPlanVersion},
                {"title", plan.title},
                {"model", plan.modelRef},
                {"hardware", hardware},
                {"parallelism", parallelism},
                {"workload", workload}};
    if (plan.extra.is_object())
        for (auto it = plan.extra.begin(); it != plan.extra.end(); ++it)
            out[it.key()] = it.value();
    return out;
}

void setTopology(Plan &plan, const Topology &topology)
{
    plan.topology = topology;
    json &ref = plan.topologyRef;
    if (!ref.is_object())
        ref = json::object();
    ref.erase("slices");
    if (topology.chip().isTpu()) {
        ref["topology"] = topology.sliceShape();
        if (topology.sliceCount() > 1)
            ref["slices"] = topology.sliceCount();
    } else {
        int nodes = 1;
        int gpus = 1;
        for (const MeshAxis &axis : topology.axes())
            if (axis.link == LinkKind::Nvlink)
                gpus = axis.size;
            else if (axis.link == LinkKind::ScaleOut)
                nodes = axis.size;
        ref["topology"] = {{"nodes", nodes}, {"gpus_per_node", gpus}};
    }
}

std::optional<Error> checkModelSharding(const Plan &plan)
{
    const ModelSpec &m = plan.model;
    const ParallelismSpec &p = plan.parallelism;
    const int tensor = p.degree(Role::Tensor);
    const int expert = p.degree(Role::Expert);
    const int pipeline = p.degree(Role::Pipeline);
    if (m.heads % tensor != 0)
        return Error{"parallelism.tensor", "tensor parallelism of " + std::to_string(tensor) + " must divide the "
                                               + std::to_string(m.heads) + " attention heads of " + m.name};
    if (expert > 1 && !m.moe)
        return Error{"parallelism.expert", m.name + " has no experts to spread over " + std::to_string(expert) + " chips"};
    if (m.moe && m.moe->experts % expert != 0)
        return Error{"parallelism.expert", "expert parallelism of " + std::to_string(expert) + " must divide the "
                                               + std::to_string(m.moe->experts) + " experts of " + m.name};
    if (pipeline > m.layers)
        return Error{"parallelism.pipeline", "pipeline of " + std::to_string(pipeline) + " stages exceeds the "
                                                 + std::to_string(m.layers) + " layers of " + m.name};
    return std::nullopt;
}

Plan defaultPlan()
{
    static const Plan plan = [] {
        auto parsed = planFromText(std::string(embedded::defaultPlanJson()), "resources/default-plan.meshplan",
                                   ChipCatalog::builtin(), ModelCatalog::builtin());
        if (!parsed) {
            // Compiled in and covered by tests: failing here is a build defect.
            std::cerr << "meshplan: built-in default plan is invalid: " << parsed.error().toString() << '\n';
            std::abort();
        }
        return std::move(parsed).value();
    }();
    return plan;
}

int defaultMicrobatches(const ParallelismSpec &parallelism, std::int64_t globalBatch)
{
    // In doubles: the degrees of a plan being read are not yet checked against the mesh, and their
    // product may overflow.
    const double replicas = double(parallelism.degree(Role::Data)) * parallelism.degree(Role::Fsdp)
                            * parallelism.degree(Role::Expert);
    const double local = std::ceil(double(globalBatch) / std::max(1.0, replicas));
    return static_cast<int>(std::clamp(local, 1.0, 1'000'000.0));
}

} // namespace meshplan::model
