#include "cli.h"
#include "plandocument.h"

#include "base/units.h"
#include "cost/calculator.h"
#include "cost/evaluation.h"
#include "cost/trackrecord.h"
#include "explore/servingsearch.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/hfconfig.h"
#include "transformer/modelcatalog.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <sstream>
#include <cmath>
#include <map>
#include <ostream>
#include <set>

namespace meshplan::app {

using nlohmann::json;
namespace m = meshplan::model;

namespace {

constexpr int kBadInput = 2;

const char *kUsage = R"(usage: meshplan-cli COMMAND [options]

Commands (the book's ideal model unless --achievable; --json for machine-readable output):
  hardware [ID] [--list]                       a chip's datasheet, or the catalog
  roofline --chip C --flops F --bytes B [--dtype bf16] [--link hbm|ici|ici-one-way|dcn|pcie|nvlink|scale-out]
                                               compute vs. communication time and which binds
  collective --chip C (--topology 4x4x4 [--slices N] | --nodes N --gpus-per-node G)
             --op all-gather|reduce-scatter|all-reduce|all-to-all --axes x,y --bytes V [--sharp]
                                               time of one collective (V: the book's full array)
  matmul --chip C --topology 4x4 'A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]' --dims I=4096,J=8192,K=8192 [--dtype bf16]
                                               the collectives a sharded matmul needs, and their cost
  slice --chip C --topology 16x20x28 [--slices N]
                                               chips, hosts, FLOPs/s, HBM and wraparound of a slice
  model ID | --hf-config FILE | --list [--seq-len T] [--kv-dtype bf16]
                                               parameters, FLOPs per token and KV cache of a model
  evaluate PLAN.meshplan [--json] [--repeat N] [--ideal] [--explain]
                                               memory, collectives, step time and MFU of a plan
                                               (--ideal: the book's model, no efficiency derating;
                                               --explain: every number's formula, values and source)
  sweep PLAN.meshplan [--batches 1,2,4,...] [--json]
                                               serving: latency against throughput across batch sizes
  cheapest PLAN.meshplan --latency SECONDS [--max-chips N] [--json]
                                               serving: the cheapest deployment within a per-token latency
  search PLAN.meshplan [--objective step-time|cost|tokens-per-chip] [--latency S] [--max-chips N]
         [--top K] [--json] [--save-best FILE] [--ideal]
                                               the best parallelizations of the plan's model on its
                                               cluster (serving: up to N chips), ranked, with the
                                               Pareto front; --save-best writes the best plan
  compare BASELINE.meshplan CANDIDATE.meshplan [--json] [--ideal]
                                               two plans side by side: every summary number with
                                               its difference and ratio, then what changed
  scenarios [ID [-o FILE.meshplan]] [--json]
                                               the book's worked examples as ready plans: the list,
                                               one scenario's note, or its plan written to FILE
  render PLAN.meshplan --chart roofline|memory|timeline|sweep|sweep-chips -o FILE.png|.pdf|.svg [--size WxH] [--dark] [--no-title]
                                               draws a chart of the plan (no display needed), titled
                                               with the plan; text grows with sizes past 1200x750
  report PLAN.meshplan|DECK.meshdeck -o FILE.pdf|FILE.html [--dark]
                                               a report to forward: model, cluster, plan, summary,
                                               every chart, warnings and the headline derivations
  --version                                    the version of meshplan-cli
Exit codes: 0 success, 2 bad input (one line on stderr naming the option).
)";

struct Option {
    std::string key;  ///< key in the calculator's args
    bool takesValue;
    bool numeric;
};

// Every option any command accepts; a command rejects those it does not use.
const std::map<std::string, Option> &options()
{
    static const std::map<std::string, Option> table{
        {"--chip", {"chip", true, false}},
        {"--topology", {"topology", true, false}},
        {"--slices", {"slices", true, true}},
        {"--nodes", {"nodes", true, true}},
        {"--gpus-per-node", {"gpus_per_node", true, true}},
        {"--op", {"op", true, false}},
        {"--axes", {"axes", true, false}},
        {"--bytes", {"bytes", true, true}},
        {"--flops", {"flops", true, true}},
        {"--dtype", {"dtype", true, false}},
        {"--link", {"link", true, false}},
        {"--ici-axes", {"axes", true, true}},
        {"--dims", {"dims", true, false}},
        {"--sharp", {"sharp", false, false}},
        {"--json", {"", false, false}},
        {"--achievable", {"", false, false}},
        {"--list", {"", false, false}},
        {"--hf-config", {"hf_config", true, false}},
        {"--seq-len", {"seq_len", true, true}},
        {"--kv-dtype", {"kv_dtype", true, false}},
        {"--repeat", {"repeat", true, true}},
        {"--ideal", {"", false, false}},
        {"--explain", {"explain", false, false}},
        {"--batches", {"batches", true, false}},
        {"--latency", {"latency", true, true}},
        {"--max-chips", {"max_chips", true, true}},
        {"--objective", {"objective", true, false}},
        {"--top", {"top", true, true}},
        {"--save-best", {"save_best", true, false}},
    };
    return table;
}

const std::map<std::string, std::set<std::string>> &commandOptions()
{
    static const std::map<std::string, std::set<std::string>> table{
        {"hardware", {"--chip", "--list", "--json"}},
        {"roofline", {"--chip", "--flops", "--bytes", "--dtype", "--link", "--ici-axes", "--json", "--achievable"}},
        {"collective", {"--chip", "--topology", "--slices", "--nodes", "--gpus-per-node", "--op", "--axes", "--bytes",
                        "--sharp", "--json", "--achievable"}},
        {"matmul", {"--chip", "--topology", "--slices", "--nodes", "--gpus-per-node", "--dims", "--dtype", "--json",
                    "--achievable"}},
        {"slice", {"--chip", "--topology", "--slices", "--nodes", "--gpus-per-node", "--json"}},
        {"model", {"--hf-config", "--seq-len", "--kv-dtype", "--list", "--json"}},
        {"evaluate", {"--json", "--repeat", "--ideal", "--explain"}},
        {"sweep", {"--json", "--batches", "--ideal"}},
        {"cheapest", {"--json", "--latency", "--max-chips", "--ideal"}},
        {"search", {"--json", "--objective", "--latency", "--max-chips", "--top", "--save-best", "--ideal"}},
        {"compare", {"--json", "--ideal"}},
    };
    return table;
}

/// Thrown for a bad command line; carries the option it names.
struct UsageError {
    std::string path;
    std::string message;
};

json parseNumber(const std::string &flag, const std::string &text)
{
    std::int64_t i = 0;
    const char *begin = text.data();
    const char *end = text.data() + text.size();
    if (auto [p, ec] = std::from_chars(begin, end, i); ec == std::errc() && p == end)
        return i;
    double d = 0;
    if (auto [p, ec] = std::from_chars(begin, end, d); ec == std::errc() && p == end && std::isfinite(d))
        return d;
    throw UsageError{flag, "must be a number, got \"" + text + "\""};
}

std::string flagFor(const std::string &path)
{
    if (path.empty() || path == "notation" || path == "call")
        return path;
    const std::string head = path.substr(0, path.find_first_of(".["));
    for (const auto &[flag, option] : options())
        if (option.key == head && !option.key.empty())
            return flag + path.substr(head.size());
    return path;
}

std::string tableRow(const std::string &label, const std::string &value)
{
    // A label past the column keeps one space before its value.
    std::string padded = label;
    padded.resize(std::max<std::size_t>(24, label.size() + 1), ' ');
    return "  " + padded + value + "\n";
}

void printHardware(const json &r, std::ostream &out)
{
    if (r.contains("chips")) {
        out << "Chips in the built-in catalog:\n";
        for (const auto &c : r["chips"]) {
            std::string id = c["id"].get<std::string>();
            id.resize(12, ' ');
            out << "  " << id << c["name"].get<std::string>() << "  ("
                << m::formatFlopsPerSecond(c["peak_flops_bf16"].get<double>()) << " bf16, "
                << m::formatBytes(c["hbm_bytes"].get<double>(), true) << " HBM at "
                << m::formatBytesPerSecond(c["hbm_bandwidth"].get<double>()) << ")\n";
        }
        return;
    }
    out << r["name"].get<std::string>() << " (" << r["id"].get<std::string>() << ")\n";
    for (auto it = r["peak_flops"].begin(); it != r["peak_flops"].end(); ++it) {
        // Integer dtypes do operations, not floating-point ones: 918 TOP/s int8.
        std::string rate = m::formatFlopsPerSecond(it->get<double>());
        if (it.key().rfind("int", 0) == 0)
            if (const auto at = rate.find("FLOP/s"); at != std::string::npos)
                rate.replace(at, 6, "OP/s");
        out << tableRow("peak " + it.key(), rate);
    }
    out << tableRow("HBM", m::formatBytes(r["hbm_bytes"].get<double>(), true) + " at "
                               + m::formatBytesPerSecond(r["hbm_bandwidth"].get<double>()));
    if (r.contains("ici")) {
        const auto &ici = r["ici"];
        out << tableRow("ICI", m::formatBytesPerSecond(ici["link_bandwidth"].get<double>()) + " one way per link, "
                                   + std::to_string(ici["torus_dims"].get<int>()) + "D torus, "
                                   + m::formatSeconds(ici["hop_latency_s"].get<double>()) + " per hop");
        out << tableRow("DCN", m::formatBytesPerSecond(r["dcn_bandwidth"].get<double>()) + " per chip");
    }
    if (r.contains("nvlink")) {
        const auto &nv = r["nvlink"];
        out << tableRow("NVLink", m::formatBytesPerSecond(nv["bandwidth"].get<double>()) + " per GPU, domain of "
                                      + std::to_string(nv["domain_size"].get<int>()));
        out << tableRow("scale-out", m::formatBytesPerSecond(r["scale_out"]["node_egress_bandwidth"].get<double>())
                                         + " per node");
    }
    out << tableRow("PCIe", m::formatBytesPerSecond(r["pcie_bandwidth"].get<double>()));
    out << tableRow("achievable FLOPs", m::formatNumber(r["achievable"]["flops_fraction"].get<double>() * 100)
                                            + "% of peak in a training step");
    if (r.contains("sources"))
        for (auto it = r["sources"].begin(); it != r["sources"].end(); ++it)
            out << tableRow("source: " + it.key(), it->get<std::string>());
}

void printRoofline(const json &r, std::ostream &out)
{
    out << "Roofline on " << r["chip"].get<std::string>() << " (" << r["dtype"].get<std::string>() << ", "
        << r["link"].get<std::string>() << ")\n";
    out << tableRow("T_math", m::formatSeconds(r["t_math_s"].get<double>()));
    out << tableRow("T_comms", m::formatSeconds(r["t_comms_s"].get<double>()));
    out << tableRow("lower bound (overlap)", m::formatSeconds(r["t_lower_s"].get<double>()));
    out << tableRow("upper bound (serial)", m::formatSeconds(r["t_upper_s"].get<double>()));
    out << tableRow("intensity", r["intensity"].is_null() ? std::string("infinite (no bytes)")
                                                          : m::formatNumber(r["intensity"].get<double>()) + " FLOPs/byte");
    out << tableRow("critical intensity", m::formatNumber(r["critical_intensity"].get<double>()) + " FLOPs/byte");
    out << tableRow("bound", r["bound"].get<std::string>());
}

void printCollective(const json &r, std::ostream &out)
{
    std::string axes;
    for (const auto &a : r["axes"])
        axes += (axes.empty() ? "" : ",") + a.get<std::string>();
    out << r["op"].get<std::string>() << " of " << m::formatBytes(r["bytes"].get<double>()) << " over " << axes << " ("
        << r["participants"].get<double>() << " chips) on " << r["chip"].get<std::string>() << " "
        << r["topology"].get<std::string>() << "\n";
    out << tableRow("time", m::formatSeconds(r["time_s"].get<double>()));
    out << tableRow("bandwidth term", m::formatSeconds(r["bandwidth_time_s"].get<double>()) + " (" +
                                          r["link"].get<std::string>() + ")");
    out << tableRow("latency term", m::formatSeconds(r["latency_time_s"].get<double>()));
    out << tableRow("bound", r["bound"].get<std::string>());
    out << tableRow("bytes sent per chip", m::formatBytes(r["bytes_moved_per_chip"].get<double>()));
}

void printMatmul(const json &r, std::ostream &out)
{
    out << r["expr"].get<std::string>() << " on " << r["chip"].get<std::string>() << " " << r["topology"].get<std::string>()
        << "\n";
    out << tableRow("book case", std::to_string(r["case"].get<int>()));
    for (const auto &c : r["collectives"])
        out << tableRow(std::string(c["before_matmul"].get<bool>() ? "before: " : "after: ") + c["op"].get<std::string>()
                            + "_" + c["axes"].get<std::string>() + "(" + c["array"].get<std::string>() + ")",
                        m::formatSeconds(c["time_s"].get<double>()) + " for " + m::formatBytes(c["bytes"].get<double>())
                            + " (" + c["bound"].get<std::string>() + "-bound; " + c["reason"].get<std::string>() + ")");
    if (r["collectives"].empty())
        out << tableRow("collectives", "none: every chip multiplies its own shards");
    out << tableRow("local matmul", r["local_product"].get<std::string>());
    out << tableRow("compute", m::formatSeconds(r["compute_s"].get<double>()) + " ("
                                   + m::formatFlops(r["flops_per_chip"].get<double>()) + " per chip)");
    out << tableRow("HBM", m::formatSeconds(r["hbm_s"].get<double>()));
    out << tableRow("communication", m::formatSeconds(r["comms_s"].get<double>()));
    out << tableRow("total", m::formatSeconds(r["t_lower_s"].get<double>()) + " overlapped, "
                                 + m::formatSeconds(r["t_upper_s"].get<double>()) + " serial");
    out << tableRow("bound", r["bound"].get<std::string>());
}

void printSlice(const json &r, std::ostream &out)
{
    out << r["chip"].get<std::string>() << " " << r["topology"].get<std::string>() << "\n";
    out << tableRow("chips", std::to_string(r["chips"].get<std::int64_t>()));
    out << tableRow("hosts", std::to_string(r["hosts"].get<std::int64_t>()));
    out << tableRow("peak bf16", m::formatFlopsPerSecond(r["peak_flops"].get<double>()));
    out << tableRow("HBM", m::formatBytes(r["hbm_bytes"].get<double>()));
    for (const auto &axis : r["axes"])
        out << tableRow("axis " + axis["name"].get<std::string>(),
                        std::to_string(axis["size"].get<int>()) + " over " + axis["link"].get<std::string>()
                            + (axis["wraps"].get<bool>() ? ", wraparound" : ""));
}



/// JSON for stdout. Strings that are not UTF-8 (a command-line argument quoted in an error)
/// are written with U+FFFD rather than throwing, so an error report can never crash.
std::string dumpJson(const json &value)
{
    return value.dump(2, ' ', false, json::error_handler_t::replace);
}

/// A file that cannot be read; reported with the file's name, never mistaken for an option.
struct FileError {
    std::string file;
    std::string message;
};

/// Reads a whole regular file, as the window does (PlanDocument::readTextFile); a FileError names
/// why not.
std::string readFile(const std::string &path)
{
    auto text = PlanDocument::readTextFile(QString::fromStdString(path));
    if (!text)
        throw FileError{path, text.error().message};
    return std::move(text).value();
}

} // namespace

/// Reads and parses a plan file; the error's path is the JSON path ("" for a file problem).
m::Expected<m::Plan> loadPlan(const std::string &file)
{
    try {
        return m::planFromText(readFile(file), file, m::ChipCatalog::builtin(), m::ModelCatalog::builtin());
    } catch (const FileError &e) {
        return m::Error{"", e.message};
    }
}

namespace {

json modelSummary(const m::ModelSpec &model, std::int64_t seqLen, m::DType kvDtype)
{
    const auto counts = m::countParams(model);
    return {{"id", model.id},
            {"name", model.name},
            {"params", counts.total},
            {"active_params", counts.active},
            {"seq_len", seqLen},
            {"flops_per_token", m::trainingFlopsPerToken(model, seqLen)},
            {"forward_flops_per_token", m::forwardFlopsPerToken(model, seqLen)},
            {"kv_cache_bytes_per_token", static_cast<std::int64_t>(std::llround(m::kvCacheBytesPerToken(model, kvDtype)))},
            {"kv_cache_bytes_per_sequence",
             static_cast<std::int64_t>(std::llround(m::kvCacheBytesPerSequence(model, kvDtype, double(seqLen))))},
            {"kv_dtype", m::dtypeName(kvDtype)},
            {"architecture", m::modelToJson(model)}};
}

void printModel(const json &r, std::ostream &out)
{
    out << r["name"].get<std::string>() << " (" << r["id"].get<std::string>() << ")\n";
    out << tableRow("parameters", m::formatNumber(r["params"].get<double>()));
    out << tableRow("active per token", m::formatNumber(r["active_params"].get<double>()));
    out << tableRow("training FLOPs/token", m::formatFlops(r["flops_per_token"].get<double>()) + " at "
                                                + std::to_string(r["seq_len"].get<std::int64_t>()) + " tokens");
    out << tableRow("forward FLOPs/token", m::formatFlops(r["forward_flops_per_token"].get<double>()));
    out << tableRow("KV cache/token", m::formatBytes(r["kv_cache_bytes_per_token"].get<double>(), true) + " ("
                                          + r["kv_dtype"].get<std::string>() + ", all layers)");
    out << tableRow("KV cache/sequence", m::formatBytes(r["kv_cache_bytes_per_sequence"].get<double>(), true) + " at "
                                             + std::to_string(r["seq_len"].get<std::int64_t>()) + " tokens");
    const json &window = r["architecture"].value("sliding_window", json());
    if (window.is_object())
        out << tableRow("sliding window", std::to_string(window.at("window").get<std::int64_t>()) + " tokens in "
                                              + std::to_string(window.at("local_layers").get<int>()) + " of "
                                              + std::to_string(r["architecture"].at("layers").get<int>()) + " layers");
}

void printEvaluation(const m::Plan &plan, const json &r, std::ostream &out)
{
    out << (plan.title.empty() ? plan.model.name : plan.title) << "\n";
    out << tableRow("model", plan.model.name + ", " + m::formatNumber(r["model"]["params"].get<double>()) + " params");
    out << tableRow("hardware", std::to_string(r["chips"].get<std::int64_t>()) + " x " + plan.topology.chip().name + " ("
                                    + plan.topology.describe() + ")");
    std::string placement;
    for (auto it = r["placement"].begin(); it != r["placement"].end(); ++it) {
        std::string axes;
        for (const auto &a : *it)
            axes += (axes.empty() ? "" : ",") + a.get<std::string>();
        placement += (placement.empty() ? "" : "  ") + it.key() + " " +
                     std::to_string(plan.parallelism.degree(*m::parseRole(it.key()))) + " on " + axes;
    }
    out << tableRow("placement", placement.empty() ? std::string("one chip") : placement);
    const auto &mem = r["memory_per_chip"];
    out << tableRow("memory per chip", m::formatBytes(mem["total"].get<double>(), true) + " of "
                                           + m::formatBytes(mem["capacity"].get<double>(), true)
                                           + (mem["fits"].get<bool>() ? " (fits)" : " (DOES NOT FIT)"));
    out << tableRow("  params/grads/opt", m::formatBytes(mem["params"].get<double>(), true) + " / "
                                             + m::formatBytes(mem["grads"].get<double>(), true) + " / "
                                             + m::formatBytes(mem["optimizer"].get<double>(), true));
    out << tableRow("  activations", m::formatBytes(mem["activations"].get<double>(), true));
    if (r.contains("step")) {
        const auto &s = r["step"];
        out << tableRow("step time", m::formatSeconds(s["time_s"].get<double>()));
        out << tableRow("  compute", m::formatSeconds(s["compute_s"].get<double>()) + " (recompute "
                                         + m::formatSeconds(s["recompute_s"].get<double>()) + ")");
        out << tableRow("  exposed comms", m::formatSeconds(s["exposed_communication_s"].get<double>()) + " of "
                                               + m::formatSeconds(s["communication_s"].get<double>()));
        out << tableRow("  bubble", m::formatSeconds(s["bubble_s"].get<double>()));
        out << tableRow("  optimizer", m::formatSeconds(s["optimizer_s"].get<double>()));
        if (s.value("overlap_interference_s", 0.0) > 0)
            out << tableRow("  overlap slowdown", m::formatSeconds(s["overlap_interference_s"].get<double>()));
        out << tableRow("MFU", m::formatNumber(100.0 * r["mfu"].get<double>()) + "%");
        out << tableRow("tokens/s", m::formatNumber(r["tokens_per_s"].get<double>()));
        if (r.contains("train")) {
            const auto &t = r["train"];
            std::string run = m::formatNumber(t["days"].get<double>()) + " days for "
                              + m::formatNumber(t["tokens"].get<double>()) + " tokens ("
                              + m::formatNumber(t["steps"].get<double>()) + " steps)";
            if (t["cost"].get<double>() > 0)
                run += ", $" + m::formatNumber(t["cost"].get<double>());
            out << tableRow("training run", run);
        }
    }
    if (r.contains("inference")) {
        const auto &inf = r["inference"];
        out << tableRow("prefill", m::formatSeconds(inf["prefill_s"].get<double>()) + " (the whole batch)");
        out << tableRow("first token", m::formatSeconds(inf["time_to_first_token_s"].get<double>()));
        out << tableRow("decode step", m::formatSeconds(inf["decode_step_s"].get<double>()) + " per token (mean)");
        out << tableRow("tokens/s", m::formatNumber(inf["tokens_per_s"].get<double>()) + " ("
                                        + m::formatNumber(inf["tokens_per_s_per_chip"].get<double>()) + " per chip)");
    }
    out << tableRow("bound", r["bound"].get<std::string>());
    for (const auto &c : r["collectives"])
        out << tableRow(c["op"].get<std::string>(), c["purpose"].get<std::string>() + ": "
                                                       + std::to_string(c["count_per_step"].get<std::int64_t>()) + " x "
                                                       + m::formatBytes(c["bytes_per_chip"].get<double>()) + ", "
                                                       + m::formatSeconds(c["time_s"].get<double>()) + " ("
                                                       + m::formatSeconds(c["exposed_s"].get<double>()) + " exposed)");
    for (const auto &w : r["warnings"])
        out << "  warning: " << w["message"].get<std::string>() << "\n";
}

/// How far to trust the numbers above: the validation page's record on published runs like this
/// plan, one wrapped sentence per number it scores (and one for a training plan's stack).
void printTrackRecord(const m::Plan &plan, bool ideal, std::ostream &out)
{
    std::string label = tableRow("track record", "");
    label.pop_back(); // the newline: the sentence follows in the value column
    const std::string hanging(label.size(), ' ');
    if (ideal) {
        out << wrapLines("none for --ideal: docs/validation.md's families score the achievable model", label, hanging);
        return;
    }
    const auto records = m::TrackRecord::builtin().forPlan(plan);
    if (records.empty()) {
        out << wrapLines(std::string(m::TrackRecord::noRecordSentence()), label, hanging);
        return;
    }
    for (std::size_t i = 0; i < records.size(); ++i)
        out << wrapLines(records[i].sentence(), i == 0 ? label : hanging, hanging);
}

} // namespace

int runCli(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        (args.empty() ? err : out) << kUsage;
        return args.empty() ? kBadInput : 0;
    }
    const std::string command = args[0];
    if (command == "scenarios") // its own options (-o): cliscenarios.cpp
        return runScenarios(args, out, err);
    bool asJson = false;
    for (const auto &a : args)
        asJson = asJson || a == "--json";

    const auto fail = [&](const std::string &path, const std::string &message) {
        const std::string shown = flagFor(path);
        err << "meshplan-cli: " << (shown.empty() ? "" : shown + ": ") << message << "\n";
        if (asJson)
            out << dumpJson(json{{"error", {{"path", shown}, {"message", message}}}}) << "\n";
        return kBadInput;
    };

    // Errors inside a file name the file, then the JSON path of the field (plan-format.md).
    const auto failIn = [&](const std::string &file, const std::string &rawPath, const std::string &message) {
        // A whole-file error (not JSON, not UTF-8) carries the file as its path: name it once.
        const std::string path = rawPath == file ? std::string() : rawPath;
        err << "meshplan-cli: " << file << ": " << (path.empty() ? "" : path + ": ") << message << "\n";
        if (asJson)
            out << dumpJson(json{{"error", {{"file", file}, {"path", path}, {"message", message}}}}) << "\n";
        return kBadInput;
    };

    const auto allowed = commandOptions().find(command);
    if (allowed == commandOptions().end())
        return fail("", "unknown command \"" + command + "\" (try --help)");

    json callArgs = json::object();
    std::vector<std::string> positional;
    bool achievable = false;
    bool ideal = false;
    try {
        for (std::size_t i = 1; i < args.size(); ++i) {
            const std::string &a = args[i];
            if (a == "--help" || a == "-h") {
                out << kUsage;
                return 0;
            }
            if (a.rfind("--", 0) != 0) {
                positional.push_back(a);
                continue;
            }
            std::string flag = a;
            std::string value;
            bool hasInlineValue = false;
            if (const auto eq = a.find('='); eq != std::string::npos) {
                flag = a.substr(0, eq);
                value = a.substr(eq + 1);
                hasInlineValue = true;
            }
            const auto option = options().find(flag);
            if (option == options().end() || !allowed->second.count(flag))
                throw UsageError{flag, "is not an option of \"" + command + "\" (try --help)"};
            if (flag == "--achievable")
                achievable = true;
            if (flag == "--ideal")
                ideal = true;
            if (!option->second.takesValue) {
                if (!option->second.key.empty())
                    callArgs[option->second.key] = true;
                continue;
            }
            if (!hasInlineValue) {
                if (i + 1 >= args.size())
                    throw UsageError{flag, "needs a value"};
                value = args[++i];
            }
            callArgs[option->second.key] = option->second.numeric ? parseNumber(flag, value) : json(value);
        }
    } catch (const UsageError &e) {
        return fail(e.path, e.message);
    }

    if (command == "compare")
        return runCompare(positional, asJson, ideal, out, err);

    if (command == "model") {
        try {
            const auto &catalog = m::ModelCatalog::builtin();
            if (callArgs.contains("list") || (positional.empty() && !callArgs.contains("hf_config"))) {
                json list = json::array();
                for (const auto &model : catalog.models())
                    list.push_back({{"id", model.id}, {"name", model.name}, {"params", m::countParams(model).total}});
                if (asJson) {
                    out << dumpJson(json{{"models", list}}) << "\n";
                } else {
                    out << "Models in the built-in catalog:\n";
                    for (const auto &item : list) {
                        std::string id = item["id"].get<std::string>();
                        id.resize(18, ' ');
                        out << "  " << id << item["name"].get<std::string>() << "  ("
                            << m::formatNumber(item["params"].get<double>()) << " params)\n";
                    }
                }
                return 0;
            }
            m::ModelSpec model;
            if (callArgs.contains("hf_config")) {
                const std::string file = callArgs["hf_config"].get<std::string>();
                auto parsed = m::modelFromHfConfigText(readFile(file), file);
                if (!parsed)
                    return failIn(file, parsed.error().path, parsed.error().message);
                model = parsed.value();
            } else {
                if (positional.size() != 1)
                    return fail("", "model takes one model id (see model --list)");
                const m::ModelSpec *found = catalog.find(positional[0]);
                if (!found)
                    return fail("model", "unknown model \"" + positional[0] + "\" (known: " + catalog.idList() + ")");
                model = *found;
            }
            const std::int64_t seqLen = callArgs.contains("seq_len") && callArgs["seq_len"].is_number_integer()
                                            ? callArgs["seq_len"].get<std::int64_t>() : 4096;
            if (seqLen < 1 || seqLen > 100'000'000)
                return fail("seq_len", "must be an integer from 1 to 100000000");
            const auto kv = m::parseDType(callArgs.value("kv_dtype", std::string("bf16")));
            if (!kv)
                return fail("kv_dtype", "unknown dtype (expected one of " + m::dtypeList() + ")");
            const json r = modelSummary(model, seqLen, *kv);
            if (asJson)
                out << dumpJson(r) << "\n";
            else
                printModel(r, out);
            return 0;
        } catch (const FileError &e) {
            return failIn(e.file, "", e.message);
        }
    }
    if (command == "evaluate") {
        if (positional.size() != 1)
            return fail("", "evaluate takes one plan file");
        const std::string file = positional[0];
        int repeat = 0;
        if (callArgs.contains("repeat")) {
            if (!callArgs["repeat"].is_number_integer() || callArgs["repeat"].get<std::int64_t>() < 1
                || callArgs["repeat"].get<std::int64_t>() > 10'000'000)
                return fail("repeat", "must be an integer from 1 to 10000000");
            repeat = static_cast<int>(callArgs["repeat"].get<std::int64_t>());
        }
        const auto plan = loadPlan(file);
        if (!plan)
            return failIn(file, plan.error().path, plan.error().message);
        const auto evalMode = ideal ? m::CostMode::Ideal : m::CostMode::Achievable;
        const bool explain = callArgs.contains("explain");
        m::Derivations derivations;
        auto evaluation = m::evaluate(plan.value(), evalMode, explain ? &derivations : nullptr);
        if (!evaluation)
            return failIn(file, evaluation.error().path, evaluation.error().message);
        json r = m::evaluationToJson(evaluation.value(), plan->kind == m::WorkloadKind::Training);
        if (explain)
            r["derivations"] = m::derivationsToJson(derivations);
        if (repeat > 0) {
            std::vector<double> times;
            times.reserve(static_cast<std::size_t>(repeat));
            for (int i = 0; i < repeat; ++i) {
                const auto start = std::chrono::steady_clock::now();
                auto again = m::evaluate(plan.value(), evalMode);
                const auto stop = std::chrono::steady_clock::now();
                if (!again)
                    return fail(file, again.error().message);
                times.push_back(std::chrono::duration<double>(stop - start).count());
            }
            std::sort(times.begin(), times.end());
            r["timing"] = {{"evaluations", repeat}, {"median_s", times[times.size() / 2]}, {"min_s", times.front()}};
        }
        if (asJson) {
            out << dumpJson(r) << "\n";
        } else {
            printEvaluation(plan.value(), r, out);
            printTrackRecord(plan.value(), ideal, out);
            if (r.contains("timing"))
                out << tableRow("evaluation time", m::formatSeconds(r["timing"]["median_s"].get<double>()) + " median of "
                                                       + std::to_string(repeat));
            if (explain)
                printDerivations(derivations, r, out);
        }
        return 0;
    }

    if (command == "search")
        return runSearch(positional, callArgs, asJson, ideal, out, err);

    if (command == "sweep" || command == "cheapest") {
        if (positional.size() != 1)
            return fail("", command + " takes one inference plan file");
        const std::string file = positional[0];
        const auto plan = loadPlan(file);
        if (!plan)
            return failIn(file, plan.error().path, plan.error().message);
        const auto mode = ideal ? m::CostMode::Ideal : m::CostMode::Achievable;
        const auto pointJson = [](const m::ServingPoint &p) {
            return json{{"batch", p.batch},
                        {"decode_step_s", p.decodeStepS},
                        {"time_to_first_token_s", p.timeToFirstTokenS},
                        {"tokens_per_s", p.tokensPerS},
                        {"tokens_per_s_per_chip", p.tokensPerSPerChip},
                        {"cost_per_million_tokens", p.costPerMillionTokens},
                        {"fits", p.fits}};
        };
        if (command == "sweep") {
            std::vector<std::int64_t> batches;
            if (callArgs.contains("batches")) {
                std::stringstream list(callArgs["batches"].get<std::string>());
                std::string item;
                while (std::getline(list, item, ',')) {
                    std::int64_t b = 0;
                    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), b);
                    if (ec != std::errc() || p != item.data() + item.size() || b < 1 || b > 100'000'000)
                        return fail("batches", "must be a comma-separated list of positive batch sizes, got \"" + item + "\"");
                    batches.push_back(b);
                }
            } else {
                batches = m::batchLadder(1024);
            }
            const auto points = m::latencyThroughputSweep(plan.value(), batches, mode);
            if (!points)
                return failIn(file, points.error().path, points.error().message);
            json list = json::array();
            for (const auto &p : points.value())
                list.push_back(pointJson(p));
            if (asJson) {
                out << dumpJson(json{{"points", list}}) << "\n";
            } else {
                out << "batch   latency/token   tokens/s   per chip   $/M tokens\n";
                for (const auto &p : points.value()) {
                    char line[160];
                    std::snprintf(line, sizeof line, "%6lld   %13s   %8s   %8s   %10s%s\n", static_cast<long long>(p.batch),
                                  m::formatSeconds(p.decodeStepS).c_str(), m::formatNumber(p.tokensPerS).c_str(),
                                  m::formatNumber(p.tokensPerSPerChip).c_str(), m::formatNumber(p.costPerMillionTokens).c_str(),
                                  p.fits ? "" : "   does not fit");
                    out << line;
                }
            }
            return 0;
        }
        if (!callArgs.contains("latency"))
            return fail("latency", "is required (seconds per token)");
        const double latency = callArgs["latency"].get<double>();
        const std::int64_t maxChips = callArgs.contains("max_chips") && callArgs["max_chips"].is_number_integer()
                                          ? callArgs["max_chips"].get<std::int64_t>() : 256;
        if (maxChips < 1 || maxChips > m::kMaxChips)
            return fail("max_chips", "must be an integer from 1 to 10000000");
        const auto choice = m::cheapestServing(plan.value(), latency, maxChips, mode);
        if (!choice)
            return fail(choice.error().path, choice.error().message);
        if (asJson)
            out << dumpJson(json{{"description", choice->description}, {"point", pointJson(choice->point)},
                        {"plan", m::planToJson(choice->plan)}}) << "\n";
        else
            out << choice->description << "\n";
        return 0;
    }

    if (command == "hardware") {
        if (positional.size() > 1)
            return fail("", "hardware takes at most one chip id");
        if (positional.size() == 1)
            callArgs["chip"] = positional[0];
    } else if (command == "matmul") {
        if (positional.size() != 1)
            return fail("notation", "matmul takes one expression, e.g. 'A[I_X, J] . B[J, K_Y] -> C[I_X, K_Y]'");
        callArgs["expr"] = positional[0];
    } else if (!positional.empty()) {
        return fail("", "unexpected argument \"" + positional[0] + "\"");
    }
    if (command == "collective" && !callArgs.contains("bytes"))
        return fail("bytes", "is required");

    const auto mode = achievable ? m::CostMode::Achievable : m::CostMode::Ideal;
    const auto result = m::calculate(command == "hardware" ? "hardware" : command, callArgs, mode,
                                     m::ChipCatalog::builtin());
    if (!result)
        return fail(result.error().path, result.error().message);

    const json &r = result.value();
    if (asJson) {
        out << dumpJson(r) << "\n";
        return 0;
    }
    if (command == "hardware")
        printHardware(r, out);
    else if (command == "roofline")
        printRoofline(r, out);
    else if (command == "collective")
        printCollective(r, out);
    else if (command == "matmul")
        printMatmul(r, out);
    else if (command == "slice")
        printSlice(r, out);
    return 0;
}

} // namespace meshplan::app
