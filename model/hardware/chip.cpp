#include "hardware/chip.h"

#include "base/jsonfields.h"
#include "base/units.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace meshplan::model {

using nlohmann::json;
namespace jf = json_fields;

bool IciSpec::wraps(const std::vector<int> &shape, std::size_t axis) const
{
    if (axis >= shape.size())
        return false;
    if (wrapRule == WrapRule::Full)
        return shape[axis] == wrapSize;
    if (static_cast<int>(shape.size()) < torusDims)
        return false;
    for (int size : shape)
        if (size % wrapSize != 0)
            return false;
    return true;
}

int IciSpec::chipsPerHost() const
{
    int n = 1;
    for (int s : hostShape)
        n *= s;
    return n;
}

double Chip::listedPeakFlops(DType type) const
{
    return peakFlopsByDType[static_cast<std::size_t>(type)];
}

double Chip::benchmarkDerating() const
{
    if (achievable.matmulBenchmarkFraction <= 0)
        return 0.0;
    return std::min(1.0, achievable.flopsFraction / achievable.matmulBenchmarkFraction);
}

double Chip::achievableFlopsFraction(DType type) const
{
    if (hasEightBitUnits(type)) {
        // An 8-bit matmul keeps the same share of its benchmark rate inside a step as a 16-bit one.
        if (achievable.eightBitMatmulBenchmarkFraction > 0 && benchmarkDerating() > 0)
            return achievable.eightBitMatmulBenchmarkFraction * benchmarkDerating();
        if (achievable.eightBitFlopsFraction > 0)
            return achievable.eightBitFlopsFraction;
    }
    return achievable.flopsFraction;
}

bool Chip::computesAtSixteenBitRate(DType type) const
{
    return type != DType::Fp32 && peakFlops(type) == peakFlops(DType::Bf16);
}

std::string Chip::figureOwner(const std::string &figure) const
{
    const bool inherited = std::find(inheritedFigures.begin(), inheritedFigures.end(), figure) != inheritedFigures.end();
    return inherited ? figuresFrom : id;
}

std::string Chip::achievableFlopsFractionNote(DType type) const
{
    const std::string catalog = "catalog: " + figureOwner("flops_fraction") + " achievable.";
    const double derate = benchmarkDerating();
    const std::string kept = formatShare(derate) + ", the share of its benchmark rate a matmul keeps inside a training step";
    if (hasEightBitUnits(type)) {
        if (achievable.eightBitMatmulBenchmarkFraction > 0 && derate > 0)
            return catalog + "fp8_matmul_benchmark_fraction " + formatShare(achievable.eightBitMatmulBenchmarkFraction)
                   + " (the best an 8-bit matmul reaches alone) x " + kept;
        if (achievable.eightBitFlopsFraction > 0)
            return catalog + "fp8_flops_fraction, set on whole 8-bit training steps";
    }
    if (derate > 0)
        return catalog + "flops_fraction = matmul_benchmark_fraction " + formatShare(achievable.matmulBenchmarkFraction)
               + " (the best a matmul reaches alone) x " + kept;
    return catalog + "flops_fraction, the share of peak matmuls reach in whole training steps";
}

double Chip::matmulTileOverhead(DType type) const
{
    const double overhead = achievable.matmulTileOverheadK;
    const double peak16 = peakFlops(DType::Bf16);
    if (overhead <= 0 || peak16 <= 0)
        return 0.0;
    return overhead * std::max(1.0, peakFlops(type) / peak16);
}

double Chip::matmulShapeEfficiency(double k, DType type) const
{
    return shapeEfficiency(k, matmulTileOverhead(type));
}

double Chip::peakFlops(DType type) const
{
    if (const double listed = listedPeakFlops(type); listed > 0)
        return listed;
    switch (type) {
    case DType::Int4:
        return peakFlops(DType::Int8);
    case DType::Fp4:
        return peakFlops(DType::Fp8);
    case DType::Int8:
    case DType::Fp8:
    case DType::Fp16:
        return listedPeakFlops(DType::Bf16);
    case DType::Fp32:
        return listedPeakFlops(DType::Bf16) / 4.0;
    case DType::Bf16:
        return 0.0;
    }
    return 0.0;
}

namespace {

std::vector<int> shapeField(const json &object, const std::string &key, const std::string &path)
{
    std::vector<int> shape;
    if (!jf::has(object, key))
        return shape;
    const json &v = object.at(key);
    const std::string p = jf::join(path, key);
    if (!v.is_array() || v.empty() || v.size() > 3)
        throw FieldError(p, "must be an array of 1 to 3 chip counts, got " + jf::describe(v));
    for (std::size_t i = 0; i < v.size(); ++i)
        shape.push_back(static_cast<int>(jf::integerValue(v[i], p + "[" + std::to_string(i) + "]", 1, 4096)));
    return shape;
}

// Rates past these are typos or hostile, not hardware: a chip below 1 GFLOP/s or a link below
// 1 MB/s would "compute" a step in years (or, at 1e-320, in an infinity shown as 0).
constexpr double kMinFlops = 1e9, kMaxFlops = 1e20;
constexpr double kMinBandwidth = 1e6, kMaxBandwidth = 1e16;
constexpr double kMaxLatency = 1.0;

double inRange(double value, const std::string &path, double low, double high, const char *unit)
{
    if (value < low || value > high)
        throw FieldError(path, "is " + formatNumber(value) + " " + unit + "; a real chip has " + formatNumber(low)
                                   + " to " + formatNumber(high));
    return value;
}

double rate(const json &o, const std::string &key, const std::string &path, double low, double high, const char *unit)
{
    return inRange(jf::positiveNumber(o, key, path), jf::join(path, key), low, high, unit);
}

/// An optional rate: `fallback` when absent; an absent or zero rate whose fallback is 0 means none.
double rateOr(const json &o, const std::string &key, const std::string &path, double fallback, double low, double high,
              const char *unit)
{
    const double v = jf::positiveNumberOr(o, key, path, fallback, true);
    return v == 0 && fallback == 0 ? 0.0 : inRange(v, jf::join(path, key), low, high, unit);
}

Chip readChip(const json &o, const std::string &path, const Chip *reference)
{
    if (!o.is_object())
        throw FieldError(path, "must be a chip object or a catalog id, got " + jf::describe(o));
    Chip c;
    c.id = jf::string(o, "id", path);
    if (c.id.empty())
        throw FieldError(jf::join(path, "id"), "must not be empty");
    c.name = jf::stringOr(o, "name", path, c.id);
    const std::string family = jf::string(o, "family", path);
    if (family == "tpu")
        c.family = ChipFamily::Tpu;
    else if (family == "gpu")
        c.family = ChipFamily::Gpu;
    else
        throw FieldError(jf::join(path, "family"), "must be \"tpu\" or \"gpu\", got \"" + family + "\"");

    const json &peaks = jf::require(o, "peak_flops", path);
    const std::string peaksPath = jf::join(path, "peak_flops");
    if (!peaks.is_object() || peaks.empty())
        throw FieldError(peaksPath, "must be an object of FLOPs/s per dtype, e.g. {\"bf16\": 1.97e14}");
    for (auto it = peaks.begin(); it != peaks.end(); ++it) {
        const auto type = parseDType(it.key());
        if (!type)
            throw FieldError(jf::join(peaksPath, it.key()), "is not a dtype (expected one of " + dtypeList() + ")");
        c.peakFlopsByDType[static_cast<std::size_t>(*type)] = rate(peaks, it.key(), peaksPath, kMinFlops, kMaxFlops, "FLOP/s");
    }
    if (c.listedPeakFlops(DType::Bf16) <= 0)
        throw FieldError(jf::join(peaksPath, "bf16"), "is required");

    c.hbmBytes = jf::integer(o, "hbm_bytes", path, 1, std::int64_t(1) << 50);
    c.hbmBandwidth = rate(o, "hbm_bandwidth", path, kMinBandwidth, kMaxBandwidth, "B/s");
    c.cores = static_cast<int>(jf::integerOr(o, "cores", path, 1, 1024, 1));
    c.dcnBandwidth = rateOr(o, "dcn_bandwidth", path, 0.0, kMinBandwidth, kMaxBandwidth, "B/s");
    c.dcnLatency = rateOr(o, "dcn_latency_s", path, 1e-5, 0.0, kMaxLatency, "s");
    c.pcieBandwidth = rateOr(o, "pcie_bandwidth", path, 0.0, kMinBandwidth, kMaxBandwidth, "B/s");
    c.pricePerHour = jf::positiveNumberOr(o, "price_per_hour", path, 0.0, true);

    if (c.family == ChipFamily::Tpu) {
        const json &ici = jf::require(o, "ici", path);
        const std::string ip = jf::join(path, "ici");
        IciSpec spec;
        spec.linkBandwidth = rate(ici, "link_bandwidth", ip, kMinBandwidth, kMaxBandwidth, "B/s");
        spec.torusDims = static_cast<int>(jf::integer(ici, "torus_dims", ip, 1, 3));
        const std::string rule = jf::stringOr(ici, "wrap_rule", ip, "multiple");
        if (rule == "full")
            spec.wrapRule = WrapRule::Full;
        else if (rule == "multiple")
            spec.wrapRule = WrapRule::Multiple;
        else
            throw FieldError(jf::join(ip, "wrap_rule"), "must be \"full\" or \"multiple\", got \"" + rule + "\"");
        spec.wrapSize = static_cast<int>(jf::integerOr(ici, "wrap_size", ip, 1, 4096, 4));
        spec.maxShape = shapeField(ici, "max_shape", ip);
        spec.hostShape = shapeField(ici, "host_shape", ip);
        if (spec.hostShape.empty())
            spec.hostShape = {2, 2};
        spec.hopLatency = rateOr(ici, "hop_latency_s", ip, 1e-6, 0.0, kMaxLatency, "s");
        c.ici = spec;
        if (c.dcnBandwidth <= 0)
            c.dcnBandwidth = 6.25e9;
    } else {
        const json &nv = jf::require(o, "nvlink", path);
        const std::string np = jf::join(path, "nvlink");
        NvlinkSpec spec;
        spec.bandwidth = rate(nv, "bandwidth", np, kMinBandwidth, kMaxBandwidth, "B/s");
        spec.domainSize = static_cast<int>(jf::integer(nv, "domain_size", np, 1, 576));
        spec.latency = rateOr(nv, "latency_s", np, 3e-6, 0.0, kMaxLatency, "s");
        spec.sharp = jf::boolean(nv, "sharp", np, false);
        c.nvlink = spec;
        const json &so = jf::require(o, "scale_out", path);
        const std::string sp = jf::join(path, "scale_out");
        ScaleOutSpec out;
        out.nodeEgressBandwidth = rate(so, "node_egress_bandwidth", sp, kMinBandwidth, kMaxBandwidth, "B/s");
        out.nodesPerLeaf = static_cast<int>(jf::integerOr(so, "nodes_per_leaf", sp, 1, 4096, 32));
        out.latency = rateOr(so, "latency_s", sp, 6e-6, 0.0, kMaxLatency, "s");
        c.scaleOut = out;
    }

    if (jf::has(o, "achievable") && !o.at("achievable").is_object())
        throw FieldError(jf::join(path, "achievable"),
                         "must be an object of measured fractions (flops_fraction, hbm_efficiency, ...), got "
                             + jf::describe(o.at("achievable")));
    if (reference) {
        // Start from the reference's measured figures; the object's own keys override them below.
        c.achievable = reference->achievable;
        const json listed = jf::has(o, "achievable") ? o.at("achievable") : json::object();
        // A chip that states its own flops_fraction keeps it everywhere: the benchmark fractions
        // would otherwise set its serving and 8-bit rates from the reference's benchmark instead.
        const bool ownRate = listed.contains("flops_fraction");
        if (ownRate) {
            c.achievable.matmulBenchmarkFraction = 0;
            c.achievable.eightBitMatmulBenchmarkFraction = 0;
        }
        const json theirs = chipToJson(*reference).at("achievable");
        for (const auto &item : theirs.items()) {
            const bool benchmark = item.key() == "matmul_benchmark_fraction" || item.key() == "fp8_matmul_benchmark_fraction";
            if (!listed.contains(item.key()) && !(ownRate && benchmark))
                c.inheritedFigures.push_back(item.key());
        }
        if (!jf::has(o, "attention_kernels") && !reference->attentionKernels.empty()) {
            c.attentionKernels = reference->attentionKernels;
            c.inheritedFigures.emplace_back("attention_kernels");
        }
        if (!jf::has(o, "decode_attention") && reference->decodeAttention) {
            c.decodeAttention = reference->decodeAttention;
            c.inheritedFigures.emplace_back("decode_attention");
        }
        if (!c.inheritedFigures.empty())
            c.figuresFrom = reference->id;
    }
    if (jf::has(o, "achievable")) {
        const json &a = o.at("achievable");
        const std::string ap = jf::join(path, "achievable");
        const auto fraction = [&](const char *key, double &target) {
            if (!jf::has(a, key))
                return;
            const double v = jf::positiveNumber(a, key, ap);
            if (v > 1.0)
                throw FieldError(jf::join(ap, key), "must be a fraction in (0, 1], got " + jf::describe(a.at(key)));
            target = v;
        };
        fraction("flops_fraction", c.achievable.flopsFraction);
        fraction("fp8_flops_fraction", c.achievable.eightBitFlopsFraction);
        fraction("matmul_benchmark_fraction", c.achievable.matmulBenchmarkFraction);
        fraction("fp8_matmul_benchmark_fraction", c.achievable.eightBitMatmulBenchmarkFraction);
        if (jf::has(a, "matmul_tile_overhead_k"))
            c.achievable.matmulTileOverheadK = jf::positiveNumber(a, "matmul_tile_overhead_k", ap);
        fraction("hbm_efficiency", c.achievable.hbmEfficiency);
        fraction("collective_sm_share", c.achievable.collectiveSmShare);
        fraction("decode_hbm_efficiency", c.achievable.decodeHbmEfficiency);
        fraction("legacy_kernel_share", c.achievable.legacyKernelShare);
        fraction("ici_efficiency", c.achievable.iciEfficiency);
        fraction("dcn_efficiency", c.achievable.dcnEfficiency);
        fraction("nvlink_efficiency", c.achievable.nvlinkEfficiency);
        fraction("scale_out_efficiency", c.achievable.scaleOutEfficiency);
    }
    if (jf::has(o, "attention_kernels")) {
        const json &kernels = o.at("attention_kernels");
        const std::string kp = jf::join(path, "attention_kernels");
        if (!kernels.is_object())
            throw FieldError(kp, "must be an object of kernel curves by name");
        for (auto it = kernels.begin(); it != kernels.end(); ++it)
            c.attentionKernels[it.key()] = attentionKernelCurveFromJson(*it, jf::join(kp, it.key()));
    }
    if (jf::has(o, "decode_attention"))
        c.decodeAttention = decodeAttentionCurveFromJson(o.at("decode_attention"), jf::join(path, "decode_attention"));
    if (jf::has(o, "sources") && o.at("sources").is_object()) {
        for (auto it = o.at("sources").begin(); it != o.at("sources").end(); ++it)
            if (it->is_string())
                c.sources[it.key()] = it->get<std::string>();
    }
    return c;
}

} // namespace

Expected<Chip> chipFromJson(const json &object, const std::string &path, const Chip *reference)
{
    try {
        return readChip(object, path, reference);
    } catch (const FieldError &e) {
        return e.error;
    } catch (const json::exception &e) {
        return Error{path, e.what()};
    }
}

json chipToJson(const Chip &c)
{
    json peaks = json::object();
    for (std::size_t i = 0; i < c.peakFlopsByDType.size(); ++i)
        if (c.peakFlopsByDType[i] > 0)
            peaks[std::string(dtypeName(static_cast<DType>(i)))] = c.peakFlopsByDType[i];
    json o = {
        {"id", c.id},
        {"name", c.name},
        {"family", c.isTpu() ? "tpu" : "gpu"},
        {"peak_flops", peaks},
        {"hbm_bytes", c.hbmBytes},
        {"hbm_bandwidth", c.hbmBandwidth},
        {"cores", c.cores},
        {"pcie_bandwidth", c.pcieBandwidth},
        {"price_per_hour", c.pricePerHour},
    };
    if (c.ici) {
        o["ici"] = {{"link_bandwidth", c.ici->linkBandwidth},
                    {"torus_dims", c.ici->torusDims},
                    {"wrap_rule", c.ici->wrapRule == WrapRule::Full ? "full" : "multiple"},
                    {"wrap_size", c.ici->wrapSize},
                    {"max_shape", c.ici->maxShape},
                    {"host_shape", c.ici->hostShape},
                    {"hop_latency_s", c.ici->hopLatency}};
        o["dcn_bandwidth"] = c.dcnBandwidth;
        o["dcn_latency_s"] = c.dcnLatency;
    }
    if (c.nvlink)
        o["nvlink"] = {{"bandwidth", c.nvlink->bandwidth},
                       {"domain_size", c.nvlink->domainSize},
                       {"latency_s", c.nvlink->latency},
                       {"sharp", c.nvlink->sharp}};
    if (c.scaleOut)
        o["scale_out"] = {{"node_egress_bandwidth", c.scaleOut->nodeEgressBandwidth},
                          {"nodes_per_leaf", c.scaleOut->nodesPerLeaf},
                          {"latency_s", c.scaleOut->latency}};
    json a = {{"flops_fraction", c.achievable.flopsFraction},
              {"hbm_efficiency", c.achievable.hbmEfficiency}};
    if (c.achievable.eightBitFlopsFraction > 0)
        a["fp8_flops_fraction"] = c.achievable.eightBitFlopsFraction;
    if (c.achievable.matmulBenchmarkFraction > 0)
        a["matmul_benchmark_fraction"] = c.achievable.matmulBenchmarkFraction;
    if (c.achievable.eightBitMatmulBenchmarkFraction > 0)
        a["fp8_matmul_benchmark_fraction"] = c.achievable.eightBitMatmulBenchmarkFraction;
    if (c.achievable.matmulTileOverheadK > 0)
        a["matmul_tile_overhead_k"] = c.achievable.matmulTileOverheadK;
    if (c.achievable.collectiveSmShare > 0)
        a["collective_sm_share"] = c.achievable.collectiveSmShare;
    if (c.achievable.decodeHbmEfficiency > 0)
        a["decode_hbm_efficiency"] = c.achievable.decodeHbmEfficiency;
    if (c.achievable.legacyKernelShare > 0)
        a["legacy_kernel_share"] = c.achievable.legacyKernelShare;
    if (c.ici) {
        a["ici_efficiency"] = c.achievable.iciEfficiency;
        a["dcn_efficiency"] = c.achievable.dcnEfficiency;
    } else {
        a["nvlink_efficiency"] = c.achievable.nvlinkEfficiency;
        a["scale_out_efficiency"] = c.achievable.scaleOutEfficiency;
    }
    o["achievable"] = a;
    if (!c.attentionKernels.empty()) {
        json kernels = json::object();
        for (const auto &[name, curve] : c.attentionKernels)
            kernels[name] = attentionKernelCurveToJson(curve);
        o["attention_kernels"] = kernels;
    }
    if (c.decodeAttention)
        o["decode_attention"] = decodeAttentionCurveToJson(*c.decodeAttention);
    if (!c.sources.empty())
        o["sources"] = c.sources;
    return o;
}

} // namespace meshplan::model
