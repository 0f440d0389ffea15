#include "cost/calculator.h"

#include "base/jsonfields.h"
#include "cost/evaluation.h"
#include "cost/shardedmatmul.h"
#include "hardware/chipcatalog.h"
#include "hardware/roofline.h"
#include "plan/plan.h"
#include "transformer/hfconfig.h"
#include "transformer/modelcatalog.h"

#include <cmath>

namespace meshplan::model {

using nlohmann::json;
namespace jf = json_fields;

const std::vector<std::string> &calculatorCalls()
{
    static const std::vector<std::string> calls{"hardware", "critical_intensity", "roofline", "collective", "slice",
                                                "matmul", "model", "training_budget", "memory", "evaluate"};
    return calls;
}

namespace {

Chip resolveChip(const json &args, const ChipCatalog &catalog)
{
    const json &chip = jf::require(args, "chip", "");
    if (chip.is_object()) {
        auto parsed = chipFromJson(chip, "chip", catalog.referenceFor(chip));
        if (!parsed)
            throw FieldError(parsed.error().path, parsed.error().message);
        return parsed.value();
    }
    if (!chip.is_string())
        throw FieldError("chip", "must be a catalog id or a chip object, got " + jf::describe(chip));
    const Chip *found = catalog.find(chip.get<std::string>());
    if (!found)
        throw FieldError("chip", "unknown chip \"" + chip.get<std::string>() + "\" (known: " + catalog.idList() + ")");
    return *found;
}

DType resolveDType(const json &args, const std::string &key = "dtype")
{
    const std::string name = jf::stringOr(args, key, "", "bf16");
    const auto type = parseDType(name);
    if (!type)
        throw FieldError(key, "unknown dtype \"" + name + "\" (expected one of " + dtypeList() + ")");
    return *type;
}

template<typename T>
T unwrap(Expected<T> value)
{
    if (!value)
        throw FieldError(value.error().path, value.error().message);
    return std::move(value).value();
}

std::vector<std::string> splitList(const json &args, const std::string &key)
{
    const json &v = jf::require(args, key, "");
    std::vector<std::string> out;
    if (v.is_array()) {
        for (const auto &item : v) {
            if (!item.is_string())
                throw FieldError(key, "must list axis names, got " + jf::describe(item));
            out.push_back(item.get<std::string>());
        }
    } else if (v.is_string()) {
        const std::string text = v.get<std::string>();
        std::size_t start = 0;
        while (start <= text.size()) {
            const std::size_t end = std::min(text.find(',', start), text.size());
            std::string part = text.substr(start, end - start);
            while (!part.empty() && part.front() == ' ')
                part.erase(part.begin());
            while (!part.empty() && part.back() == ' ')
                part.pop_back();
            if (part.empty())
                throw FieldError(key, "must be a comma-separated list of axis names, got \"" + text + "\"");
            out.push_back(part);
            start = end + 1;
        }
    } else {
        throw FieldError(key, "must be a comma-separated list of axis names, got " + jf::describe(v));
    }
    if (out.empty())
        throw FieldError(key, "must name at least one axis");
    return out;
}

json hardware(const json &args, const ChipCatalog &catalog)
{
    if (!jf::has(args, "chip")) {
        json list = json::array();
        for (const auto &chip : catalog.chips())
            list.push_back({{"id", chip.id}, {"name", chip.name}, {"family", chip.isTpu() ? "tpu" : "gpu"},
                            {"peak_flops_bf16", chip.listedPeakFlops(DType::Bf16)}, {"hbm_bytes", chip.hbmBytes},
                            {"hbm_bandwidth", chip.hbmBandwidth}});
        return {{"chips", list}};
    }
    const Chip chip = resolveChip(args, catalog);
    json out = chipToJson(chip);
    // An inline chip's left-out measured figures are another chip's: say whose, as evaluate warns.
    if (!chip.inheritedFigures.empty()) {
        out["figures_from"] = chip.figuresFrom;
        out["inherited_figures"] = chip.inheritedFigures;
    }
    return out;
}

Resource resolveResource(const json &args, const Chip &chip)
{
    const std::string name = jf::stringOr(args, "link", "", "hbm");
    const auto resource = parseResource(name);
    if (!resource)
        throw FieldError("link", "unknown link \"" + name
                                     + "\" (expected hbm, ici, ici-one-way, dcn, pcie, nvlink or scale-out)");
    if (resourceBandwidth(chip, *resource) <= 0)
        throw FieldError("link", chip.id + " has no " + name + " link");
    return *resource;
}

json criticalIntensity(const json &args, const ChipCatalog &catalog)
{
    const Chip chip = resolveChip(args, catalog);
    const DType dtype = resolveDType(args);
    const Resource resource = resolveResource(args, chip);
    const int axes = static_cast<int>(jf::integerOr(args, "axes", "", 1, 3, 1));
    const double bandwidth = resourceBandwidth(chip, resource, axes);
    return {{"chip", chip.id}, {"dtype", dtypeName(dtype)}, {"link", resourceName(resource)},
            {"bandwidth", bandwidth}, {"peak_flops", chip.peakFlops(dtype)},
            {"value", chip.peakFlops(dtype) / bandwidth}};
}

json rooflineCall(const json &args, CostMode mode, const ChipCatalog &catalog)
{
    const Chip chip = resolveChip(args, catalog);
    const DType dtype = resolveDType(args);
    const Resource resource = resolveResource(args, chip);
    const double flops = jf::positiveNumber(args, "flops", "", true);
    const double bytes = jf::positiveNumber(args, "bytes", "", true);
    const int axes = static_cast<int>(jf::integerOr(args, "axes", "", 1, 3, 1));
    double peak = chip.peakFlops(dtype);
    double bandwidth = resourceBandwidth(chip, resource, axes);
    if (mode == CostMode::Achievable) {
        peak *= chip.achievableFlopsFraction(dtype);
        const Achievable &a = chip.achievable;
        switch (resource) {
        case Resource::Hbm:
            bandwidth *= a.hbmEfficiency;
            break;
        case Resource::Ici:
        case Resource::IciOneWay:
            bandwidth *= a.iciEfficiency;
            break;
        case Resource::Dcn:
            bandwidth *= a.dcnEfficiency;
            break;
        case Resource::Nvlink:
            bandwidth *= a.nvlinkEfficiency;
            break;
        case Resource::ScaleOut:
            bandwidth *= a.scaleOutEfficiency;
            break;
        case Resource::Pcie:
            break;
        }
    }
    const Roofline r = roofline(flops, bytes, peak, bandwidth);
    json out = {{"chip", chip.id},
                {"dtype", dtypeName(dtype)},
                {"link", resourceName(resource)},
                {"peak_flops", peak},
                {"bandwidth", bandwidth},
                {"t_math_s", r.tMath},
                {"t_comms_s", r.tComms},
                {"t_lower_s", r.tLower},
                {"t_upper_s", r.tUpper},
                {"critical_intensity", r.criticalIntensity},
                {"bound", r.computeBound ? std::string("compute") : std::string(resourceName(resource))}};
    // JSON has no infinity: an operation that moves no bytes has no intensity to report.
    out["intensity"] = std::isfinite(r.intensity) ? json(r.intensity) : json(nullptr);
    return out;
}

json sliceCall(const json &args, const ChipCatalog &catalog)
{
    const Chip chip = resolveChip(args, catalog);
    const Topology t = unwrap(topologyFromArgs(chip, args));
    json axes = json::array();
    json wraps = json::object();
    for (const auto &axis : t.axes()) {
        axes.push_back({{"name", axis.name}, {"size", axis.size}, {"link", linkName(axis.link)}, {"wraps", axis.wraps}});
        if (axis.link == LinkKind::Ici)
            wraps[axis.name] = axis.wraps;
    }
    const double chips = static_cast<double>(t.chipCount());
    return {{"chip", chip.id},
            {"topology", t.describe()},
            {"chips", t.chipCount()},
            {"hosts", t.hostCount()},
            {"cores", t.chipCount() * chip.cores},
            {"peak_flops", chips * chip.listedPeakFlops(DType::Bf16)},
            {"hbm_bytes", t.chipCount() * chip.hbmBytes},
            {"hbm_bandwidth", chips * chip.hbmBandwidth},
            {"axes", axes},
            {"wraps", wraps}};
}

json collectiveJson(const CollectiveCost &c)
{
    return {{"time_s", c.time},
            {"bound", c.latencyBound ? "latency" : "bandwidth"},
            {"bandwidth_time_s", c.bandwidthTime},
            {"latency_time_s", c.latencyTime},
            {"bytes_moved_per_chip", c.bytesPerChip},
            {"link", linkName(c.bindingLink)}};
}

json collectiveCall(const json &args, CostMode mode, const ChipCatalog &catalog)
{
    const Chip chip = resolveChip(args, catalog);
    const Topology t = unwrap(topologyFromArgs(chip, args));
    const std::string opName = jf::string(args, "op", "");
    const auto op = parseCollective(opName);
    if (!op)
        throw FieldError("op", "unknown collective \"" + opName
                                   + "\" (expected all-gather, reduce-scatter, all-reduce or all-to-all)");
    const auto names = splitList(args, "axes");
    const auto spans = unwrap(wholeAxes(t, names, "axes"));
    const double bytes = jf::positiveNumber(args, "bytes", "");
    CollectiveOptions options;
    options.mode = mode;
    options.sharp = jf::boolean(args, "sharp", "", false);
    if (options.sharp && (chip.isTpu() || !chip.nvlink->sharp))
        throw FieldError("sharp", chip.id + " has no in-network reduction");
    const CollectiveCost cost = collectiveCost(t, *op, spans, bytes, options);
    json out = collectiveJson(cost);
    double participants = 1;
    for (const auto &s : spans)
        participants *= s.size;
    out["op"] = collectiveName(*op);
    out["axes"] = names;
    out["participants"] = participants;
    out["bytes"] = bytes;
    out["chip"] = chip.id;
    out["topology"] = t.describe();
    return out;
}

json matmulCall(const json &args, CostMode mode, const ChipCatalog &catalog)
{
    const Chip chip = resolveChip(args, catalog);
    const Topology t = unwrap(topologyFromArgs(chip, args));
    const DType dtype = resolveDType(args);
    const auto expression = unwrap(parseMatmul(jf::string(args, "expr", "")));
    std::map<std::string, std::int64_t> dims;
    const json &d = jf::require(args, "dims", "");
    if (d.is_object()) {
        for (auto it = d.begin(); it != d.end(); ++it)
            dims[it.key()] = jf::integerValue(it.value(), "dims." + it.key(), 1, std::int64_t(1) << 40);
    } else if (d.is_string()) {
        // "I=4096,J=8192" as typed on the command line.
        const std::string text = d.get<std::string>();
        std::size_t start = 0;
        while (start < text.size()) {
            const std::size_t end = std::min(text.find(',', start), text.size());
            const std::string part = text.substr(start, end - start);
            const std::size_t eq = part.find('=');
            if (eq == std::string::npos || eq == 0)
                throw FieldError("dims", "must look like I=4096,J=8192, got \"" + text + "\"");
            const std::string name = part.substr(0, eq);
            json value;
            try {
                value = json::parse(part.substr(eq + 1));
            } catch (const json::exception &) {
                throw FieldError("dims." + name, "must be a positive integer, got \"" + part.substr(eq + 1) + "\"");
            }
            dims[name] = jf::integerValue(value, "dims." + name, 1, std::int64_t(1) << 40);
            start = end + 1;
        }
    } else {
        throw FieldError("dims", "must map dimension names to sizes");
    }
    const MatmulAnalysis a = unwrap(analyzeMatmul(t, expression, dims, dtype, mode));
    json collectives = json::array();
    for (const auto &c : a.collectives) {
        json item = collectiveJson(c.cost);
        std::string axes;
        for (const auto &x : c.axes)
            axes += (axes.empty() ? "" : ",") + x;
        item["op"] = collectiveName(c.op);
        item["array"] = c.array;
        item["axes"] = axes;
        item["bytes"] = c.bytes;
        item["before_matmul"] = c.beforeMatmul;
        item["reason"] = c.reason;
        collectives.push_back(item);
    }
    return {{"chip", chip.id},
            {"topology", t.describe()},
            {"expr", expression.toString()},
            {"case", a.bookCase},
            {"local_product", a.localProduct},
            {"flops_per_chip", a.flopsPerChip},
            {"compute_s", a.computeTime},
            {"hbm_bytes_per_chip", a.hbmBytesPerChip},
            {"hbm_s", a.hbmTime},
            {"comms_s", a.commsTime},
            {"t_lower_s", a.lowerBound},
            {"t_upper_s", a.upperBound},
            {"bound", a.bound},
            {"collectives", collectives}};
}


ModelSpec resolveModelArg(const json &args)
{
    const json &ref = jf::require(args, "model", "");
    if (ref.is_string()) {
        const ModelSpec *m = ModelCatalog::builtin().find(ref.get<std::string>());
        if (!m)
            throw FieldError("model", "unknown model \"" + ref.get<std::string>() + "\" (known: "
                                          + ModelCatalog::builtin().idList() + ")");
        return *m;
    }
    auto m = ref.is_object() && ref.contains("hf_config") ? modelFromHfConfig(ref.at("hf_config"), "model.hf_config")
                                                          : modelFromJson(ref, "model");
    if (!m)
        throw FieldError(m.error().path, m.error().message);
    return m.value();
}

json modelCall(const json &args)
{
    const ModelSpec model = resolveModelArg(args);
    const std::int64_t seqLen = jf::integerOr(args, "seq_len", "", 1, 100'000'000, 4096);
    const DType kv = resolveDType(args, "kv_dtype");
    const ParamCounts c = countParams(model);
    const double kvToken = kvCacheBytesPerToken(model, kv);
    const double training = trainingFlopsPerToken(model, seqLen);
    const double matmulOnly = trainingFlopsPerToken(model, 0);
    return {{"id", model.id},
            {"name", model.name},
            {"params", c.total},
            {"active_params", c.active},
            {"embedding_params", c.embedding},
            {"unembedding_params", c.unembedding},
            {"attention_params_per_layer", c.attentionPerLayer},
            {"mlp_params_per_layer", c.denseMlpPerLayer},
            {"expert_params", c.expertParams},
            {"seq_len", seqLen},
            {"flops_per_token", training},
            {"forward_flops_per_token", forwardFlopsPerToken(model, seqLen)},
            {"attention_flops_fraction", (training - matmulOnly) / training},
            {"kv_cache_bytes_per_token", kvToken},
            {"kv_cache_bytes_per_sequence", kvCacheBytesPerSequence(model, kv, double(seqLen))}};
}

// The book's budget arithmetic (ch. 4-6): 6 x N x D FLOPs at a given MFU on a number of chips.
json trainingBudgetCall(const json &args, const ChipCatalog &catalog)
{
    double params = 0;
    std::string source;
    if (jf::has(args, "model")) {
        params = double(countParams(resolveModelArg(args)).active);
        source = "active parameters of the model";
    } else {
        params = jf::positiveNumber(args, "params", "");
        source = "given";
    }
    const double tokens = jf::positiveNumber(args, "tokens", "");
    const double flopsPerToken = jf::positiveNumberOr(args, "flops_per_token", "", 6.0 * params);
    const double total = flopsPerToken * tokens;
    json out = {{"params", params}, {"params_source", source}, {"tokens", tokens}, {"flops_per_token", flopsPerToken},
                {"flops", total}};
    if (jf::has(args, "chip")) {
        const Chip chip = resolveChip(args, catalog);
        const DType dtype = resolveDType(args);
        const double chips = jf::positiveNumberOr(args, "chips", "", 1.0);
        const double mfu = jf::positiveNumberOr(args, "mfu", "", 1.0);
        if (mfu > 1.0)
            throw FieldError("mfu", "must be a fraction in (0, 1]");
        const double rate = chips * chip.peakFlops(dtype) * mfu;
        out["chip"] = chip.id;
        out["chips"] = chips;
        out["mfu"] = mfu;
        out["time_s"] = total / rate;
        out["days"] = total / rate / 86400.0;
        out["years"] = total / rate / (365.0 * 86400.0);
        out["chip_hours"] = total / rate / 3600.0 * chips;
    } else if (jf::has(args, "chip_hours")) {
        // Utilisation from a budget of chip-hours at a peak rate (book ch. 4 Q7).
        const double hours = jf::positiveNumber(args, "chip_hours", "");
        const double peak = jf::positiveNumber(args, "peak_flops", "");
        out["available_flops"] = hours * 3600.0 * peak;
        out["utilisation"] = total / (hours * 3600.0 * peak);
    }
    return out;
}

// The book's memory accounting (ch. 4-6): weights, optimizer state and checkpointed activations
// for the whole model, and how many chips that needs.
json memoryCall(const json &args, const ChipCatalog &catalog)
{
    ModelSpec model;
    double params = 0;
    const bool haveModel = jf::has(args, "model");
    if (haveModel) {
        model = resolveModelArg(args);
        params = double(countParams(model).total);
    } else {
        params = jf::positiveNumber(args, "params", "");
    }
    const DType paramType = resolveDType(args, "param_dtype");
    const std::string optimizer = jf::stringOr(args, "optimizer", "", "adam");
    double states = 0;
    if (optimizer == "adam" || optimizer == "adamw")
        states = 2;
    else if (optimizer == "sgd")
        states = 1;
    else if (optimizer != "none")
        throw FieldError("optimizer", "must be adam, sgd or none, got \"" + optimizer + "\"");
    const DType optType = jf::has(args, "optimizer_dtype") ? resolveDType(args, "optimizer_dtype") : DType::Fp32;
    const bool master = jf::boolean(args, "master_weights", "", false);
    const bool grads = jf::boolean(args, "gradients", "", false);
    const double paramBytes = params * bytesPerElement(paramType);
    const double optimizerBytes = params * (states + (master ? 1.0 : 0.0)) * bytesPerElement(optType);
    const double gradBytes = grads ? params * bytesPerElement(paramType) : 0.0;

    double activationBytes = 0;
    std::string policy = "none";
    if (jf::has(args, "tokens")) {
        if (!haveModel)
            throw FieldError("model", "is needed to size activations");
        const double tokens = jf::positiveNumber(args, "tokens", "");
        const double d = double(model.dModel);
        const double f = double(model.dFf);
        const double act = bytesPerElement(resolveDType(args, "activation_dtype"));
        policy = jf::stringOr(args, "checkpoints", "", "block");
        double perTokenPerLayer = 0;
        if (policy == "block")
            perTokenPerLayer = d; // each layer's input (book ch. 4 block remat)
        else if (policy == "three_matmuls")
            perTokenPerLayer = d + 2.0 * f; // after the three big FFW matmuls (ch. 5 Q2)
        else if (policy == "big_matmuls")
            perTokenPerLayer = 7.0 * d; // the 7 large matmul outputs (ch. 4)
        else if (policy == "all")
            perTokenPerLayer = 20.0 * d; // ~20 intermediates per layer (ch. 4)
        else if (policy == "per_layer")
            perTokenPerLayer = d * double(jf::integer(args, "checkpoints_per_layer", "", 1, 1000));
        else
            throw FieldError("checkpoints", "must be block, three_matmuls, big_matmuls, all or per_layer, got \"" + policy + "\"");
        activationBytes = act * perTokenPerLayer * model.layers * tokens;
    }
    const double total = paramBytes + optimizerBytes + gradBytes + activationBytes;
    json out = {{"params", params},
                {"param_bytes", paramBytes},
                {"optimizer_bytes", optimizerBytes},
                {"gradient_bytes", gradBytes},
                {"activation_bytes", activationBytes},
                {"checkpoints", policy},
                {"total_bytes", total}};
    if (jf::has(args, "chips"))
        out["bytes_per_chip"] = total / jf::positiveNumber(args, "chips", "");
    if (jf::has(args, "chip") || jf::has(args, "hbm_bytes")) {
        const double hbm = jf::has(args, "hbm_bytes") ? jf::positiveNumber(args, "hbm_bytes", "")
                                                      : double(resolveChip(args, catalog).hbmBytes);
        out["hbm_bytes"] = hbm;
        out["min_chips"] = std::ceil(total / hbm);
    }
    return out;
}

json evaluateCall(const json &args, CostMode mode, const ChipCatalog &catalog)
{
    const auto plan = planFromJson(jf::require(args, "plan", ""), catalog, ModelCatalog::builtin());
    if (!plan)
        throw FieldError("plan." + plan.error().path, plan.error().message);
    const auto e = evaluate(plan.value(), mode);
    if (!e)
        throw FieldError("plan." + e.error().path, e.error().message);
    json out = evaluationToJson(e.value(), plan->kind == WorkloadKind::Training);
    std::string codes;
    for (const auto &w : e->warnings)
        codes += (codes.empty() ? "" : ",") + w.code;
    out["warning_codes"] = codes;
    return out;
}

} // namespace

Expected<Topology> topologyFromArgs(const Chip &chip, const json &args)
{
    try {
        if (chip.isTpu()) {
            const json &topo = jf::require(args, "topology", "");
            std::vector<int> shape;
            if (topo.is_string()) {
                auto parsed = parseShape(topo.get<std::string>(), "topology");
                if (!parsed)
                    return parsed.error();
                shape = parsed.value();
            } else if (topo.is_array()) {
                for (std::size_t i = 0; i < topo.size(); ++i)
                    shape.push_back(static_cast<int>(
                        jf::integerValue(topo[i], "topology[" + std::to_string(i) + "]", 1, kMaxChips)));
            } else {
                return Error{"topology", "must be a slice shape like 4x4x4, got " + jf::describe(topo)};
            }
            const int slices = static_cast<int>(jf::integerOr(args, "slices", "", 1, kMaxChips, 1));
            auto t = Topology::tpuSlice(chip, shape, slices);
            if (!t)
                return Error{t.error().path == "hardware.slices" ? "slices" : "topology", t.error().message};
            return t;
        }
        const int nodes = static_cast<int>(jf::integerOr(args, "nodes", "", 1, kMaxChips, 1));
        const int gpus = static_cast<int>(
            jf::integerOr(args, "gpus_per_node", "", 1, kMaxChips, chip.nvlink ? chip.nvlink->domainSize : 8));
        auto t = Topology::gpuCluster(chip, nodes, gpus);
        if (!t)
            return Error{t.error().path.find("gpus_per_node") != std::string::npos ? "gpus_per_node" : "nodes",
                         t.error().message};
        return t;
    } catch (const FieldError &e) {
        return e.error;
    }
}

Expected<json> calculate(const std::string &call, const json &args, CostMode mode, const ChipCatalog &catalog)
{
    try {
        if (!args.is_object())
            return Error{"", "arguments must be an object"};
        if (call == "hardware")
            return hardware(args, catalog);
        if (call == "critical_intensity")
            return criticalIntensity(args, catalog);
        if (call == "roofline")
            return rooflineCall(args, mode, catalog);
        if (call == "collective")
            return collectiveCall(args, mode, catalog);
        if (call == "slice")
            return sliceCall(args, catalog);
        if (call == "matmul")
            return matmulCall(args, mode, catalog);
        if (call == "model")
            return modelCall(args);
        if (call == "training_budget")
            return trainingBudgetCall(args, catalog);
        if (call == "memory")
            return memoryCall(args, catalog);
        if (call == "evaluate")
            return evaluateCall(args, mode, catalog);
        return Error{"call", "unknown calculator \"" + call + "\""};
    } catch (const FieldError &e) {
        return e.error;
    } catch (const json::exception &e) {
        return Error{"", e.what()};
    }
}

} // namespace meshplan::model
