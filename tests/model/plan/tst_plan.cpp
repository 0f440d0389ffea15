// Plan files: every shipped plan parses and round-trips, every kind of bad plan is refused with
// the JSON path of the offending field, evaluation obeys the book's invariants, and the results
// of a few plans stay equal to their golden files.
//
// Regenerate the golden results (from the repository root, after building) with:
//   for f in tests/data/golden/*.result.json; do n=$(basename "$f" .result.json); build/app/meshplan-cli evaluate tests/data/plans/$n.meshplan --json > "$f"; done
#include "cost/calculator.h"
#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

using nlohmann::json;
using namespace meshplan::model;

namespace {

const QString kData = QStringLiteral(MESHPLAN_TEST_DATA);

std::string readText(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll().toStdString();
}

Expected<Plan> parsePlan(const json &document)
{
    return planFromJson(document, ChipCatalog::builtin(), ModelCatalog::builtin());
}

Expected<Plan> parsePlanText(const std::string &text, const std::string &label = "plan.json")
{
    return planFromText(text, label, ChipCatalog::builtin(), ModelCatalog::builtin());
}

// The contract's example plan (plan-format.md): LLaMA-3 70B on 8192 TPU v5p chips.
const char *kBasePlan = R"({
  "format": "meshplan/plan",
  "version": 1,
  "title": "base",
  "model": "llama-3-70b",
  "hardware": { "chip": "tpu-v5p", "topology": [16, 16, 32], "slices": 1 },
  "parallelism": {
    "data": 1, "fsdp": 1024, "tensor": 4, "pipeline": 1, "expert": 1, "context": 2,
    "placement": {},
    "zero_stage": 3,
    "sequence_parallel": false,
    "pipeline_schedule": "1f1b",
    "microbatches": 1,
    "virtual_stages": 1
  },
  "workload": {
    "kind": "training",
    "seq_len": 4096,
    "global_batch": 1024,
    "param_dtype": "bf16", "compute_dtype": "bf16", "optimizer": "adam", "optimizer_dtype": "fp32",
    "remat": "full"
  }
})";

json basePlan()
{
    return json::parse(kBasePlan);
}

// LLaMA-3 70B on TPU v5p 16x16x16 (4096 chips), for the invariants.
json invariantPlan()
{
    json plan = basePlan();
    plan.merge_patch(json::parse(R"({
        "hardware": { "topology": [16, 16, 16] },
        "parallelism": { "data": 1, "fsdp": 1024, "tensor": 4, "context": 1, "zero_stage": 0 },
        "workload": { "global_batch": 1024 }
    })"));
    return plan;
}

/// Every finite-looking number in a result: no NaN, no infinity, no null anywhere.
void collectNonFinite(const json &value, const std::string &path, QStringList &bad)
{
    if (value.is_null()) {
        bad << QString::fromStdString(path + " is null");
    } else if (value.is_number_float()) {
        if (!std::isfinite(value.get<double>()))
            bad << QString::fromStdString(path + " is " + std::to_string(value.get<double>()));
    } else if (value.is_object()) {
        for (auto it = value.begin(); it != value.end(); ++it)
            collectNonFinite(it.value(), path + "." + it.key(), bad);
    } else if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i)
            collectNonFinite(value[i], path + "[" + std::to_string(i) + "]", bad);
    }
}

/// The numbers evaluationToJson would silently turn into 0 if they were NaN or infinite.
void collectNonFinite(const Evaluation &e, QStringList &bad)
{
    const auto check = [&](const char *name, double v) {
        if (!std::isfinite(v))
            bad << QStringLiteral("%1 = %2").arg(QString::fromLatin1(name)).arg(v);
    };
    check("flopsPerToken", e.flopsPerToken);
    check("forwardFlopsPerToken", e.forwardFlopsPerToken);
    check("memory.params", e.memory.params);
    check("memory.grads", e.memory.grads);
    check("memory.optimizer", e.memory.optimizer);
    check("memory.activations", e.memory.activations);
    check("memory.kvCache", e.memory.kvCache);
    check("memory.total", e.memory.total);
    check("step.time", e.step.time);
    check("step.compute", e.step.compute);
    check("step.recompute", e.step.recompute);
    check("step.communication", e.step.communication);
    check("step.exposedCommunication", e.step.exposedCommunication);
    check("step.bubble", e.step.bubble);
    check("step.optimizer", e.step.optimizer);
    check("step.flops", e.step.flops);
    check("step.tokens", e.step.tokens);
    check("mfu", e.mfu);
    check("tokensPerS", e.tokensPerS);
    for (const auto &c : e.collectives) {
        check(("collective " + c.purpose + " bytes").c_str(), c.bytes);
        check(("collective " + c.purpose + " bytesPerChip").c_str(), c.bytesPerChip);
        check(("collective " + c.purpose + " timeS").c_str(), c.timeS);
        check(("collective " + c.purpose + " exposedS").c_str(), c.exposedS);
    }
    for (const auto &k : e.perChip)
        check(("perChip " + k.name + " total").c_str(), k.memory.total);
}

/// The contract's numeric fields of a training result, each present and a number.
void collectMissingNumbers(const json &r, QStringList &bad)
{
    const auto need = [&](const json &object, const std::string &path, std::initializer_list<const char *> keys) {
        for (const char *key : keys)
            if (!object.is_object() || !object.contains(key) || !object.at(key).is_number())
                bad << QString::fromStdString(path + "." + key + " is not a number");
    };
    need(r, "", {"version", "chips", "mfu", "tokens_per_s"});
    need(r.value("model", json()), "model", {"params", "active_params", "flops_per_token"});
    need(r.value("memory_per_chip", json()), "memory_per_chip",
         {"params", "grads", "optimizer", "activations", "kv_cache", "total", "capacity"});
    need(r.value("step", json()), "step",
         {"time_s", "compute_s", "communication_s", "exposed_communication_s", "bubble_s", "flops", "tokens"});
    for (std::size_t i = 0; i < r.value("collectives", json::array()).size(); ++i)
        need(r["collectives"][i], "collectives[" + std::to_string(i) + "]",
             {"bytes_per_chip", "count_per_step", "time_s", "exposed_s"});
}

/// Evaluates and checks the result is sane: every number finite, no null, MFU in (0, 1].
void checkEvaluation(const Plan &plan)
{
    const auto e = evaluate(plan);
    QVERIFY2(e.hasValue(), e.hasValue() ? "" : qPrintable(QString::fromStdString(e.error().toString())));
    QStringList bad;
    collectNonFinite(e.value(), bad);
    const json r = evaluationToJson(e.value(), plan.kind == WorkloadKind::Training);
    collectNonFinite(r, "", bad);
    if (plan.kind == WorkloadKind::Training)
        collectMissingNumbers(r, bad);
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QStringLiteral("; "))));
    if (plan.kind == WorkloadKind::Training) {
        QVERIFY2(r["step"]["time_s"].get<double>() > 0, r.dump().c_str());
        QVERIFY2(r["mfu"].get<double>() > 0 && r["mfu"].get<double>() <= 1.0,
                 qPrintable(QStringLiteral("mfu %1").arg(r["mfu"].get<double>())));
    }
}

/// `original` is contained in `written`: every key with the same value (numbers compared by value).
void collectLost(const json &original, const json &written, const std::string &path, QStringList &lost)
{
    if (original.is_object() && written.is_object()) {
        for (auto it = original.begin(); it != original.end(); ++it) {
            const std::string p = path.empty() ? it.key() : path + "." + it.key();
            if (!written.contains(it.key()))
                lost << QString::fromStdString(p + " missing");
            else
                collectLost(it.value(), written.at(it.key()), p, lost);
        }
        return;
    }
    if (original != written)
        lost << QString::fromStdString(path + ": " + original.dump() + " became " + written.dump());
}

/// Compares a result against its golden: numbers within 1e-9 relative, everything else exactly.
void collectDifferences(const json &golden, const json &got, const std::string &path, QStringList &diffs)
{
    const std::string here = path.empty() ? "(root)" : path;
    if (golden.is_number() && got.is_number()) {
        const double a = golden.get<double>();
        const double b = got.get<double>();
        if (!(std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b))))
            diffs << QString::fromStdString(here + ": golden " + golden.dump() + ", got " + got.dump());
        return;
    }
    if (golden.type() != got.type()) {
        diffs << QString::fromStdString(here + ": golden " + golden.dump() + ", got " + got.dump());
        return;
    }
    if (golden.is_object()) {
        for (auto it = golden.begin(); it != golden.end(); ++it) {
            const std::string p = path.empty() ? it.key() : path + "." + it.key();
            if (!got.contains(it.key()))
                diffs << QString::fromStdString(p + ": missing");
            else
                collectDifferences(it.value(), got.at(it.key()), p, diffs);
        }
        for (auto it = got.begin(); it != got.end(); ++it)
            if (!golden.contains(it.key()))
                diffs << QString::fromStdString((path.empty() ? it.key() : path + "." + it.key()) + ": not in golden");
        return;
    }
    if (golden.is_array()) {
        if (golden.size() != got.size()) {
            diffs << QString::fromStdString(here + ": golden has " + std::to_string(golden.size()) + " items, got "
                                            + std::to_string(got.size()));
            return;
        }
        for (std::size_t i = 0; i < golden.size(); ++i)
            collectDifferences(golden[i], got[i], path + "[" + std::to_string(i) + "]", diffs);
        return;
    }
    if (golden != got)
        diffs << QString::fromStdString(here + ": golden " + golden.dump() + ", got " + got.dump());
}

/// Parses and evaluates; on failure `why` says which step refused and why.
std::optional<Evaluation> evaluated(const json &document, QString &why)
{
    const auto plan = parsePlan(document);
    if (!plan) {
        why = QStringLiteral("does not parse: ") + QString::fromStdString(plan.error().toString());
        return std::nullopt;
    }
    const auto e = evaluate(plan.value());
    if (!e) {
        why = QStringLiteral("does not evaluate: ") + QString::fromStdString(e.error().toString());
        return std::nullopt;
    }
    return e.value();
}

} // namespace

class TestPlan : public QObject
{
    Q_OBJECT

private slots:
    void defaultPlanRoundTrips()
    {
        const Plan plan = defaultPlan();
        const json written = planToJson(plan);
        QCOMPARE(QString::fromStdString(written.value("format", "")), QStringLiteral("meshplan/plan"));
        QCOMPARE(written.value("version", 0), kPlanVersion);
        const auto again = parsePlan(written);
        QVERIFY2(again.hasValue(), again.hasValue() ? "" : again.error().toString().c_str());
        QCOMPARE(QString::fromStdString(planToJson(again.value()).dump(2)), QString::fromStdString(written.dump(2)));
        checkEvaluation(plan);
    }

    // workload.remat: each named policy expands to the tensors MaxText's policy names; a custom
    // policy is written back as its lists, a named one as its name, and both read back equal.
    void rematPolicies_data()
    {
        QTest::addColumn<QString>("remat");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("saved");
        QTest::addColumn<QString>("offloaded");
        const auto row = [](const char *remat, Remat kind, const char *saved, const char *offloaded) {
            QTest::newRow(remat) << QString::fromUtf8(remat) << int(kind) << QString::fromUtf8(saved)
                                 << QString::fromUtf8(offloaded);
        };
        row(R"("none")", Remat::None, "", "");
        row(R"("selective")", Remat::Selective, "", "");
        row(R"("full")", Remat::Full, "", "");
        row(R"("nothing_saveable")", Remat::Full, "", "");
        row(R"("everything_saveable")", Remat::None, "", "");
        row(R"("minimal")", Remat::Custom, "query_proj key_proj value_proj out_proj mlpwi mlpwo", "");
        row(R"("minimal_with_context")", Remat::Custom, "query_proj key_proj value_proj context out_proj mlpwi mlpwo", "");
        row(R"("save_dot_with_context_except_mlp")", Remat::Custom, "query_proj key_proj value_proj context out_proj", "");
        row(R"("save_dot_except_mlpwi")", Remat::Custom, "query_proj key_proj value_proj out_proj mlpwo", "");
        row(R"("save_dot_except_mlp")", Remat::Custom, "query_proj key_proj value_proj out_proj", "");
        row(R"("save_qkv_proj")", Remat::Custom, "query_proj key_proj value_proj", "");
        row(R"("save_out_proj")", Remat::Custom, "out_proj", "");
        row(R"("qkv_proj_offloaded")", Remat::Custom, "", "query_proj key_proj value_proj");
        row(R"("minimal_offloaded")", Remat::Custom, "", "query_proj key_proj value_proj out_proj mlpwi mlpwo");
        row(R"({"save": ["out_proj", "qkv_proj"], "offload": ["mlpwi"]})", Remat::Custom,
            "query_proj key_proj value_proj out_proj", "mlpwi");
        row(R"({"save": ["context", "query_proj", "qkv_proj"]})", Remat::Custom, "query_proj key_proj value_proj context", "");
        row(R"({"offload": ["mlpwo"]})", Remat::Custom, "", "mlpwo");
        // MaxText's custom-policy vocabulary: the layer input (kept unless offloaded) and the gated
        // MLP's two halves, each standing for mlpwi.
        row(R"({"save": ["mlpwi_0", "mlpwi_1"], "offload": ["decoder_layer_input", "qkv_proj"]})", Remat::Custom,
            "mlpwi", "query_proj key_proj value_proj decoder_layer_input");
        row(R"({"save": ["decoder_layer_input", "mlpwi_1"]})", Remat::Custom, "mlpwi decoder_layer_input", "");
        row(R"({})", Remat::Custom, "", "");
    }
    void rematPolicies()
    {
        QFETCH(QString, remat);
        QFETCH(int, kind);
        QFETCH(QString, saved);
        QFETCH(QString, offloaded);
        json document = basePlan();
        const json written = json::parse(remat.toStdString());
        document["workload"]["remat"] = written;
        const auto plan = parsePlan(document);
        QVERIFY2(plan.hasValue(), plan.hasValue() ? "" : plan.error().toString().c_str());
        const RematPolicy &policy = plan->training.remat;
        QCOMPARE(int(policy.kind), kind);
        const auto names = [](const std::set<RematTensor> &tensors) {
            QStringList list;
            for (RematTensor t : tensors)
                list << QString::fromUtf8(rematTensorName(t).data(), qsizetype(rematTensorName(t).size()));
            return list.join(QLatin1Char(' '));
        };
        QCOMPARE(names(policy.saved), saved);
        QCOMPARE(names(policy.offloaded), offloaded);

        const json out = planToJson(plan.value());
        if (written.is_string()) {
            QVERIFY(out["workload"]["remat"] == written);
        } else {
            QCOMPARE(QString::fromStdString(policy.name), QStringLiteral("custom"));
            QVERIFY(out["workload"]["remat"].is_object());
        }
        const auto again = parsePlan(out);
        QVERIFY2(again.hasValue(), again.hasValue() ? "" : again.error().toString().c_str());
        QVERIFY(again->training.remat == policy);
        QCOMPARE(QString::fromStdString(planToJson(again.value()).dump()), QString::fromStdString(out.dump()));
        checkEvaluation(plan.value());
    }

    // Every shipped plan: parses, evaluates sanely, and round-trips without losing a key.
    void shippedPlansRoundTrip_data()
    {
        QTest::addColumn<QString>("file");
        int rows = 0;
        for (const char *dir : {"published", "plans"}) {
            const QDir d(kData + QLatin1Char('/') + QLatin1String(dir));
            for (const QFileInfo &info : d.entryInfoList({QStringLiteral("*.meshplan")}, QDir::Files, QDir::Name)) {
                QTest::newRow(qPrintable(QLatin1String(dir) + QLatin1Char('/') + info.fileName()))
                    << info.absoluteFilePath();
                ++rows;
            }
        }
        QVERIFY2(rows >= 11, "expected the published plans and at least 5 in tests/data/plans");
    }
    void shippedPlansRoundTrip()
    {
        QFETCH(QString, file);
        const std::string text = readText(file);
        QVERIFY2(!text.empty(), qPrintable(file));
        const json original = json::parse(text);
        const auto plan = parsePlanText(text, file.toStdString());
        QVERIFY2(plan.hasValue(), plan.hasValue() ? "" : plan.error().toString().c_str());

        // Writing, reading and writing again is a fixed point.
        const json written = planToJson(plan.value());
        const auto reread = parsePlan(written);
        QVERIFY2(reread.hasValue(), reread.hasValue() ? "" : reread.error().toString().c_str());
        const json rewritten = planToJson(reread.value());
        QCOMPARE(QString::fromStdString(rewritten.dump(2)), QString::fromStdString(written.dump(2)));

        // Nothing the file said is lost or changed (defaulted keys may be added).
        QStringList lost;
        collectLost(original, written, "", lost);
        QVERIFY2(lost.isEmpty(), qPrintable(lost.join(QStringLiteral("; "))));

        // The re-read plan evaluates to the same result as the original.
        const auto a = evaluate(plan.value());
        const auto b = evaluate(reread.value());
        QVERIFY2(a.hasValue(), a.hasValue() ? "" : a.error().toString().c_str());
        QVERIFY(b.hasValue());
        QCOMPARE(QString::fromStdString(evaluationToJson(b.value(), true).dump()),
                 QString::fromStdString(evaluationToJson(a.value(), true).dump()));
        checkEvaluation(plan.value());
        // A shipped plan writes only keys the plan format defines.
        for (const Warning &w : a->warnings)
            QVERIFY2(w.code != "unknown-key", w.message.c_str());
    }

    // A key the format does not define is read past, not misread in silence: the warning names
    // it, wherever it sits. Hugging Face's num_kv_heads in an inline model leaves kv_heads at its
    // default (every head), so the KV cache would be 8x too big without a word.
    void unknownKeysAreNamed()
    {
        json doc = json::parse(kBasePlan);
        doc["workload"]["remat_policy"] = "minimal";
        doc["parallelism"]["sequence-parallel"] = true;
        doc["hardware"]["nodes"] = 2;
        doc["model"] = {{"layers", 4},  {"d_model", 1024}, {"d_ff", 4096},   {"heads", 8},
                        {"vocab", 1024}, {"num_kv_heads", 1}, {"moe", {{"experts", 4}, {"experts_per_token", 2}, {"d_ff_expert", 512}, {"top_k", 2}}}};
        doc["extra_top_level"] = "kept"; // top-level extras are kept for the file, not warned about
        const auto plan = parsePlan(doc);
        QVERIFY2(plan.hasValue(), plan.hasValue() ? "" : plan.error().toString().c_str());
        const auto e = evaluate(plan.value());
        QVERIFY2(e.hasValue(), e.hasValue() ? "" : e.error().toString().c_str());
        QStringList named;
        for (const Warning &w : e->warnings)
            if (w.code == "unknown-key")
                named << QString::fromStdString(w.message.substr(0, w.message.find(' ')));
        named.sort();
        QCOMPARE(named.join(QLatin1Char(' ')),
                 QStringLiteral("hardware.nodes model.moe.top_k model.num_kv_heads parallelism.sequence-parallel "
                                "workload.remat_policy"));
        // Switching a plan to serving keeps its training settings to come back to: not unknown.
        json kept = json::parse(kBasePlan);
        kept["workload"]["batch"] = 64;
        kept["workload"]["prompt_len"] = 1024;
        const auto keptEval = evaluate(parsePlan(kept).value());
        QVERIFY(keptEval.hasValue());
        for (const Warning &w : keptEval->warnings)
            QVERIFY2(w.code != "unknown-key", w.message.c_str());
        // A serving plan's tokens/s stand at the top as for training (the format's result keys).
        json serving = json::parse(kBasePlan);
        serving["workload"] = {{"kind", "inference"}, {"batch", 8192}, {"prompt_len", 1024}, {"generate_len", 128}};
        serving["parallelism"] = {{"tensor", 8}, {"data", 1024}};
        const auto s = evaluate(parsePlan(serving).value());
        QVERIFY2(s.hasValue(), s.hasValue() ? "" : s.error().toString().c_str());
        const json result = evaluationToJson(s.value(), false);
        QVERIFY(result.at("tokens_per_s").get<double>() > 0);
        QCOMPARE(result.at("tokens_per_s").get<double>(), result.at("inference").at("tokens_per_s").get<double>());
    }

    // Bad plans: a merge patch on the base plan (or raw text), the stage expected to refuse it
    // ("parse", "evaluate", "any", or "ok" for a plan that must evaluate), the JSON path named,
    // and text the message must contain.
    void badPlans_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("raw");
        QTest::addColumn<QString>("stage");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("mentions");

        const auto row = [](const char *name, const char *patch, const char *stage, const char *path,
                            const char *mentions = "") {
            QTest::newRow(name) << QString::fromUtf8(patch) << QString() << QString::fromLatin1(stage)
                                << QString::fromLatin1(path) << QString::fromUtf8(mentions);
        };
        const auto raw = [](const char *name, const QString &text, const char *path, const char *mentions = "") {
            QTest::newRow(name) << QString() << text << QStringLiteral("parse") << QString::fromLatin1(path)
                                << QString::fromUtf8(mentions);
        };

        row("base plan is valid", "{}", "ok", "");
        row("unknown chip", R"({"hardware": {"chip": "tpu-v9"}})", "parse", "hardware.chip", "tpu-v9");
        row("unknown model", R"({"model": "llama-5-1t"})", "parse", "model", "llama-5-1t");
        // Issue 15.4-5: numbers that overflowed 64 bits or came out infinite and were shown as 0.
        row("parameters past 64 bits (were -6.4e18)",
            R"({"model": {"name": "huge", "layers": 100000, "d_model": 1000000, "d_ff": 1000000, "heads": 1000,
                "vocab": 1000, "moe": {"experts": 10000, "experts_per_token": 2, "d_ff_expert": 1000000}}})",
            "parse", "model", "10^15");
        row("degree product past 64 bits",
            R"({"parallelism": {"data": 10000000, "fsdp": 10000000, "context": 10000000, "tensor": 8}})", "evaluate",
            "parallelism", "more than 10000000 chips");
        row("activations past 2^62 bytes (were INT64_MIN)",
            R"({"hardware": {"chip": "h100-sxm", "topology": {"nodes": 1, "gpus_per_node": 1}, "slices": null},
                "parallelism": {"fsdp": 1, "tensor": 1, "context": 1},
                "workload": {"seq_len": 100000000, "global_batch": 1000000, "remat": "none"}})",
            "evaluate", "", "memory_per_chip.activations");
        row("a peak of 1e-320 FLOP/s",
            R"({"hardware": {"slices": null, "topology": {"nodes": 1024, "gpus_per_node": 8},
                "chip": {"id": "acme", "family": "gpu", "peak_flops": {"bf16": 1e-320}, "hbm_bytes": 85899345920,
                         "hbm_bandwidth": 3e12, "nvlink": {"bandwidth": 4.5e11, "domain_size": 8},
                         "scale_out": {"node_egress_bandwidth": 4e11}}}})",
            "parse", "hardware.chip.peak_flops.bf16", "a real chip has");
        row("an HBM bandwidth of 1e-320 B/s",
            R"({"hardware": {"slices": null, "topology": {"nodes": 1024, "gpus_per_node": 8},
                "chip": {"id": "acme", "family": "gpu", "peak_flops": {"bf16": 1e15}, "hbm_bytes": 85899345920,
                         "hbm_bandwidth": 1e-320, "nvlink": {"bandwidth": 4.5e11, "domain_size": 8},
                         "scale_out": {"node_egress_bandwidth": 4e11}}}})",
            "parse", "hardware.chip.hbm_bandwidth", "a real chip has");
        row("an ICI link of 1 B/s",
            R"({"hardware": {"chip": {"id": "acme-tpu", "family": "tpu", "peak_flops": {"bf16": 4.59e14},
                "hbm_bytes": 102005473280, "hbm_bandwidth": 2.76e12,
                "ici": {"link_bandwidth": 1, "torus_dims": 3}}}})",
            "parse", "hardware.chip.ici.link_bandwidth", "a real chip has");
        row("unknown stack", R"({"workload": {"stack": "jax-nightly"}})", "parse", "workload.stack", "maxtext");
        row("a serving stack for training", R"({"workload": {"stack": "vllm"}})", "parse", "workload.stack", "vllm");
        row("stack not a string", R"({"workload": {"stack": 3}})", "parse", "workload.stack");
        row("train_tokens zero", R"({"workload": {"train_tokens": 0}})", "parse", "workload.train_tokens");
        row("train_tokens fractional", R"({"workload": {"train_tokens": 1500.5}})", "parse", "workload.train_tokens");
        row("loss_fusion not a boolean", R"({"workload": {"loss_fusion": "te"}})", "parse", "workload.loss_fusion");
        row("compile not a boolean", R"({"workload": {"compile": "inductor"}})", "parse", "workload.compile");
        row("degree product mismatch", R"({"parallelism": {"fsdp": 512}})", "any", "parallelism", "8192");
        row("tensor does not divide heads", R"({"parallelism": {"tensor": 128, "fsdp": 32}})", "evaluate",
            "parallelism.tensor", "64");
        row("negative batch", R"({"workload": {"global_batch": -1024}})", "parse", "workload.global_batch", "-1024");
        row("zero seq_len", R"({"workload": {"seq_len": 0}})", "parse", "workload.seq_len");
        row("tensor -4", R"({"parallelism": {"tensor": -4}})", "parse", "parallelism.tensor", "-4");
        row("1e30 chips on a torus axis", R"({"hardware": {"topology": [1e30, 1, 1]}})", "parse",
            "hardware.topology[0]");
        row("1e30 GPU nodes", R"({"hardware": {"chip": "h100-sxm", "topology": {"nodes": 1e30, "gpus_per_node": 8}}})",
            "parse", "hardware.topology.nodes");
        row("1e30 slices", R"({"hardware": {"slices": 1e30}})", "parse", "hardware.slices");
        row("topology over the pod size", R"({"hardware": {"topology": [64, 64, 64]}})", "parse", "hardware.topology",
            "16x20x28");
        row("topology with 4 axes", R"({"hardware": {"topology": [4, 4, 4, 4]}})", "parse", "hardware.topology",
            "has 4 axes; a tpu-v5p slice has at most 3");
        row("topology with a zero axis", R"({"hardware": {"topology": [16, 0, 32]}})", "parse", "hardware.topology*");
        row("zero GPU nodes", R"({"hardware": {"chip": "h100-sxm", "topology": {"nodes": 0, "gpus_per_node": 8}}})",
            "parse", "hardware.topology.nodes");
        row("tensor 0", R"({"parallelism": {"tensor": 0}})", "any", "parallelism.tensor", "0");
        row("microbatches 0", R"({"parallelism": {"microbatches": 0}})", "parse", "parallelism.microbatches");
        row("global_batch 0", R"({"workload": {"global_batch": 0}})", "any", "workload.global_batch");
        row("GPU topology on a TPU", R"({"hardware": {"topology": {"nodes": 4, "gpus_per_node": 8}}})", "parse",
            "hardware.topology");
        row("16 GPUs in an 8-GPU node", R"({"hardware": {"chip": "h100-sxm", "topology": {"nodes": 1024, "gpus_per_node": 16}}})",
            "parse", "hardware.topology.gpus_per_node");
        row("missing topology", R"({"hardware": {"topology": null}})", "parse", "hardware.topology");
        row("microbatches over sequences per replica", R"({"parallelism": {"microbatches": 2}})", "evaluate",
            "parallelism.microbatches");
        row("global batch below the replica count", R"({"workload": {"global_batch": 512}})", "evaluate",
            "workload.global_batch");
        row("expert parallelism on a dense model", R"({"parallelism": {"expert": 2, "fsdp": 512}})", "any",
            "parallelism.expert");
        row("expert degree not dividing the experts",
            R"({"model": "mixtral-8x7b", "parallelism": {"expert": 16, "fsdp": 64}})", "any", "parallelism.expert", "8");
        row("pipeline over the layers", R"({"parallelism": {"pipeline": 128, "fsdp": 8}, "workload": {"global_batch": 1024}})",
            "any", "parallelism.pipeline", "80");
        row("context not dividing seq_len", R"({"workload": {"seq_len": 4095}})", "any", "parallelism.context", "4095");
        row("unknown pipeline_schedule", R"({"parallelism": {"pipeline_schedule": "2f2b"}})", "parse",
            "parallelism.pipeline_schedule", "2f2b");
        row("unknown expert_dispatch", R"({"parallelism": {"expert_dispatch": "deepep"}})", "parse",
            "parallelism.expert_dispatch", "all-to-all or deduplicated");
        row("zero_stage 4", R"({"parallelism": {"zero_stage": 4}})", "parse", "parallelism.zero_stage");
        row("virtual_stages 0",
            R"({"parallelism": {"virtual_stages": 0, "pipeline": 2, "fsdp": 512, "pipeline_schedule": "interleaved-1f1b"}})", "parse", "parallelism.virtual_stages");
        row("microbatches 1e30", R"({"parallelism": {"microbatches": 1e30}})", "parse", "parallelism.microbatches");
        row("sequence_parallel not a bool", R"({"parallelism": {"sequence_parallel": "yes"}})", "parse",
            "parallelism.sequence_parallel");
        row("parallelism not an object", R"({"parallelism": [1, 2]})", "parse", "parallelism");
        row("unknown remat", R"({"workload": {"remat": "partial"}})", "parse", "workload.remat", "partial");
        row("unknown remat lists the policies", R"({"workload": {"remat": "partial"}})", "parse", "workload.remat",
            "save_dot_except_mlpwi");
        row("remat custom needs its lists", R"({"workload": {"remat": "custom"}})", "parse", "workload.remat", "custom");
        row("remat not a name or object", R"({"workload": {"remat": 3}})", "parse", "workload.remat", "3");
        row("unknown remat tensor", R"({"workload": {"remat": {"save": ["query_proj", "mlp_out"]}}})", "parse",
            "workload.remat.save[1]", "mlp_out");
        row("unknown remat tensor lists the tensors", R"({"workload": {"remat": {"offload": ["wi"]}}})", "parse",
            "workload.remat.offload[0]", "mlpwi");
        row("remat tensor saved and offloaded", R"({"workload": {"remat": {"save": ["key_proj"], "offload": ["qkv_proj"]}}})",
            "parse", "workload.remat.offload[0]", "key_proj");
        row("remat tensor list not a list", R"({"workload": {"remat": {"save": "out_proj"}}})", "parse",
            "workload.remat.save", "out_proj");
        row("remat tensor not a string", R"({"workload": {"remat": {"save": [1]}}})", "parse", "workload.remat.save[0]");
        row("unknown remat key", R"({"workload": {"remat": {"keep": ["out_proj"]}}})", "parse", "workload.remat.keep");
        row("unknown dtype", R"({"workload": {"param_dtype": "fp12"}})", "parse", "workload.param_dtype", "fp12");
        row("unknown optimizer", R"({"workload": {"optimizer": "lion"}})", "parse", "workload.optimizer", "lion");
        row("unknown workload kind", R"({"workload": {"kind": "serving"}})", "parse", "workload.kind", "serving");
        row("format wrong", R"({"format": "meshplan/result"})", "parse", "format", "meshplan/result");
        row("format missing", R"({"format": null})", "parse", "format");
        row("version 2 (newer)", R"({"version": 2})", "parse", "version", "newer");
        row("version 0", R"({"version": 0})", "parse", "version");
        row("missing workload", R"({"workload": null})", "parse", "workload");
        row("missing model", R"({"model": null})", "parse", "model");
        row("missing hardware", R"({"hardware": null})", "parse", "hardware");
        row("string where a number is expected", R"({"workload": {"global_batch": "1024"}})", "parse",
            "workload.global_batch", "\"1024\"");
        row("fractional batch", R"({"workload": {"global_batch": 1024.5}})", "parse", "workload.global_batch");
        row("batch above int64", R"({"workload": {"global_batch": 18446744073709551615}})", "parse",
            "workload.global_batch");
        row("inference with generate_len 0",
            R"({"workload": {"kind": "inference", "batch": 64, "prompt_len": 2048, "generate_len": 0}})", "any",
            "workload.generate_len");
        row("placement on an axis that does not exist", R"({"parallelism": {"placement": {"tensor": ["w"]}}})", "any",
            "parallelism.placement.tensor", "\"w\"");
        row("placement that cannot fit",
            R"({"parallelism": {"tensor": 32, "fsdp": 128, "placement": {"tensor": ["x"]}}})", "any",
            "parallelism.placement.tensor", "32");
        row("placement of an unknown role", R"({"parallelism": {"placement": {"sharding": ["x"]}}})", "parse",
            "parallelism.placement.sharding");
        row("placement not a list", R"({"parallelism": {"placement": {"tensor": 4}}})", "parse",
            "parallelism.placement.tensor");
        row("inline model with kv_heads not dividing heads",
            R"({"model": {"name": "tiny", "layers": 2, "d_model": 512, "d_ff": 2048, "heads": 8, "kv_heads": 3, "vocab": 1000}})",
            "parse", "model.kv_heads", "3");
        row("inline model missing layers", R"({"model": {"name": "tiny", "d_model": 512, "d_ff": 2048, "heads": 8, "vocab": 1000}})",
            "parse", "model.layers");
        row("inline chip with negative bandwidth",
            R"({"hardware": {"slices": null, "topology": {"nodes": 1024, "gpus_per_node": 8},
                "chip": {"id": "acme", "family": "gpu", "peak_flops": {"bf16": 1e15}, "hbm_bytes": 85899345920,
                         "hbm_bandwidth": -3e12, "nvlink": {"bandwidth": 4.5e11, "domain_size": 8},
                         "scale_out": {"node_egress_bandwidth": 4e11}}}})",
            "parse", "hardware.chip.hbm_bandwidth", "-3");
        row("inline chip with zero peak FLOPs",
            R"({"hardware": {"slices": null, "topology": {"nodes": 1024, "gpus_per_node": 8},
                "chip": {"id": "acme", "family": "gpu", "peak_flops": {"bf16": 0}, "hbm_bytes": 85899345920,
                         "hbm_bandwidth": 3e12, "nvlink": {"bandwidth": 4.5e11, "domain_size": 8},
                         "scale_out": {"node_egress_bandwidth": 4e11}}}})",
            "parse", "hardware.chip.peak_flops.bf16");

        // hf_config import of LLaMA-3 8B (32 heads, 32 layers): valid with tensor 4.
        const std::string hf = readText(kData + QStringLiteral("/hf-configs/llama-3-8b.json"));
        QTest::newRow("hf_config inline model import")
            << QString::fromStdString(json{{"model", {{"hf_config", json::parse(hf)}}}}.dump()) << QString()
            << QStringLiteral("ok") << QString() << QString();
        row("hf_config that is not a config", R"({"model": {"hf_config": [1, 2, 3]}})", "parse", "model.hf_config");

        // Plans that must evaluate to finite numbers at the edges of the ranges.
        row("one chip", R"({"hardware": {"topology": [1, 1, 1]}, "model": "gpt-2",
            "parallelism": {"fsdp": 1, "tensor": 1, "context": 1}, "workload": {"global_batch": 1}})", "ok", "");
        row("seq_len 1", R"({"parallelism": {"context": 1, "fsdp": 2048}, "workload": {"seq_len": 1, "global_batch": 2048}})",
            "ok", "");
        row("a billion sequences", R"({"workload": {"global_batch": 1000000000}})", "ok", "");
        row("pipeline with one microbatch, zero-bubble",
            R"({"parallelism": {"pipeline": 16, "fsdp": 64, "pipeline_schedule": "zero-bubble"}})", "ok", "");
        row("gpipe with 8 microbatches",
            R"({"parallelism": {"pipeline": 16, "fsdp": 64, "microbatches": 8, "pipeline_schedule": "gpipe"}, "workload": {"global_batch": 2048}})",
            "ok", "");
        row("interleaved via virtual_stages",
            R"({"parallelism": {"pipeline": 8, "fsdp": 128, "microbatches": 8, "virtual_stages": 5}, "workload": {"global_batch": 2048}})",
            "ok", "");
        row("naive attention, no remat, 32k context",
            R"({"parallelism": {"context": 8, "fsdp": 256}, "workload": {"seq_len": 32768, "remat": "none", "attention": "naive", "global_batch": 256}})",
            "ok", "");
        row("fp8 compute on a chip without fp8", R"({"workload": {"compute_dtype": "fp8"}})", "ok", "");
        row("fp32 everything, sgd", R"({"workload": {"param_dtype": "fp32", "compute_dtype": "fp32", "optimizer": "sgd"}})",
            "ok", "");
        row("adafactor, int8 weights", R"({"workload": {"param_dtype": "int8", "optimizer": "adafactor"}})", "ok", "");
        row("MoE with expert parallelism", R"({"model": "deepseek-v3", "parallelism": {"expert": 64, "fsdp": 16}})", "ok", "");
        row("data over 2 slices", R"({"hardware": {"topology": [16, 16, 16], "slices": 2},
            "parallelism": {"data": 2, "fsdp": 512, "zero_stage": 1, "placement": {"data": "slice"}}})", "ok", "");

        // Raw text that is not a plan at all.
        QString plan = QString::fromUtf8(kBasePlan);
        raw("not JSON", QStringLiteral("this is not a plan {"), "");
        raw("empty file", QString(), "");
        raw("truncated JSON", plan.left(plan.size() / 2), "");
        raw("a JSON array", QStringLiteral("[1, 2, 3]"), "");
        raw("10000-deep nesting", QString(10000, QLatin1Char('[')) + QString(10000, QLatin1Char(']')), "");
        raw("10000-deep nesting inside a plan",
            QString(plan).replace(QStringLiteral("\"title\": \"base\""),
                                  QStringLiteral("\"title\": ") + QString(10000, QLatin1Char('['))
                                      + QString(10000, QLatin1Char(']'))),
            "");
        raw("1e400", QString(plan).replace(QStringLiteral("\"global_batch\": 1024"), QStringLiteral("\"global_batch\": 1e400")),
            "");
        // A duplicate key is refused, naming it: which one wins differs between JSON readers, and
        // a plan edited by hand must not lose a field silently (Hugging Face configs, which repeat
        // keys in the wild, keep the last one instead).
        raw("duplicate key", QString(plan).replace(QStringLiteral("\"seq_len\": 4096,"),
                                                   QStringLiteral("\"seq_len\": 4096, \"seq_len\": -1,")),
            "workload.seq_len");
    }
    void badPlans()
    {
        QFETCH(QString, patch);
        QFETCH(QString, raw);
        QFETCH(QString, stage);
        QFETCH(QString, path);
        QFETCH(QString, mentions);

        Expected<Plan> plan = Error{};
        if (!patch.isEmpty()) {
            json document = basePlan();
            document.merge_patch(json::parse(patch.toStdString()));
            plan = parsePlan(document);
        } else {
            plan = parsePlanText(raw.toStdString());
        }

        Error error;
        QString caughtAt;
        if (!plan) {
            error = plan.error();
            caughtAt = QStringLiteral("parse");
        } else {
            const auto e = evaluate(plan.value());
            if (!e) {
                error = e.error();
                caughtAt = QStringLiteral("evaluate");
            } else {
                caughtAt = QStringLiteral("ok");
            }
        }

        if (stage == QStringLiteral("ok")) {
            QVERIFY2(caughtAt == QStringLiteral("ok"),
                     qPrintable(QStringLiteral("refused at %1: %2").arg(caughtAt, QString::fromStdString(error.toString()))));
            checkEvaluation(plan.value());
            return;
        }
        QVERIFY2(caughtAt != QStringLiteral("ok"), "accepted a bad plan");
        if (stage != QStringLiteral("any"))
            QCOMPARE(caughtAt, stage);
        const QString message = QString::fromStdString(error.message);
        QVERIFY2(!message.trimmed().isEmpty(), "empty message");
        QVERIFY2(!message.contains(QLatin1Char('\n')), qPrintable(message));
        // A path ending in '*' names a prefix (e.g. "hardware.topology*" for hardware.topology[1]).
        const QString got = QString::fromStdString(error.path);
        const bool pathMatches = path.endsWith(QLatin1Char('*')) ? got.startsWith(path.chopped(1)) : got == path;
        QVERIFY2(pathMatches,
                 qPrintable(QStringLiteral("expected path \"%1\", got \"%2\": %3")
                                .arg(path, QString::fromStdString(error.path), message)));
        if (!mentions.isEmpty())
            QVERIFY2(message.contains(mentions), qPrintable(message));
    }

    // The book's invariants, through evaluate(), on LLaMA-3 70B on TPU v5p 16x16x16.
    void moreShardingNeverRaisesParams_data()
    {
        QTest::addColumn<QString>("more");  // patch with more sharding of the parameters
        QTest::addColumn<QString>("less");
        QTest::newRow("fsdp 1024 vs fsdp 512 x data 2")
            << R"({"parallelism": {"fsdp": 1024, "data": 1}})" << R"({"parallelism": {"fsdp": 512, "data": 2}})";
        QTest::newRow("fsdp 256 x data 4 vs fsdp 128 x data 8")
            << R"({"parallelism": {"fsdp": 256, "data": 4}})" << R"({"parallelism": {"fsdp": 128, "data": 8}})";
        QTest::newRow("tensor 8 vs tensor 4 (fsdp 512)")
            << R"({"parallelism": {"tensor": 8, "fsdp": 512, "data": 1}})"
            << R"({"parallelism": {"tensor": 4, "fsdp": 512, "data": 2}})";
        QTest::newRow("tensor 4 vs tensor 2 (fsdp 512)")
            << R"({"parallelism": {"tensor": 4, "fsdp": 512, "data": 2}, "workload": {"global_batch": 2048}})"
            << R"({"parallelism": {"tensor": 2, "fsdp": 512, "data": 4}, "workload": {"global_batch": 2048}})";
        QTest::newRow("tensor 16 vs tensor 8 (data 256)")
            << R"({"parallelism": {"tensor": 16, "fsdp": 1, "data": 256}, "workload": {"global_batch": 1024}})"
            << R"({"parallelism": {"tensor": 8, "fsdp": 1, "data": 512}, "workload": {"global_batch": 1024}})";
    }
    void moreShardingNeverRaisesParams()
    {
        QFETCH(QString, more);
        QFETCH(QString, less);
        json a = invariantPlan();
        a.merge_patch(json::parse(more.toStdString()));
        json b = invariantPlan();
        b.merge_patch(json::parse(less.toStdString()));
        QString why;
        const auto ra = evaluated(a, why);
        QVERIFY2(ra, qPrintable(why));
        const auto rb = evaluated(b, why);
        QVERIFY2(rb, qPrintable(why));
        const Evaluation &ea = *ra;
        const Evaluation &eb = *rb;
        const auto pa = evaluationToJson(ea, true)["memory_per_chip"]["params"].get<std::int64_t>();
        const auto pb = evaluationToJson(eb, true)["memory_per_chip"]["params"].get<std::int64_t>();
        QVERIFY2(pa <= pb, qPrintable(QStringLiteral("more sharding %1 B > less sharding %2 B").arg(pa).arg(pb)));
        QVERIFY2(ea.memory.params < eb.memory.params, "more sharding should strictly lower parameter memory");
    }

    void rematOrdersActivations()
    {
        double activations[3] = {};
        const char *remats[3] = {"full", "selective", "none"};
        for (int i = 0; i < 3; ++i) {
            json plan = invariantPlan();
            plan["workload"]["remat"] = remats[i];
            QString why;
            const auto e = evaluated(plan, why);
            QVERIFY2(e, qPrintable(why));
            activations[i] = e->memory.activations;
        }
        QVERIFY2(activations[0] <= activations[1] && activations[1] <= activations[2],
                 qPrintable(QStringLiteral("full %1, selective %2, none %3")
                                .arg(activations[0])
                                .arg(activations[1])
                                .arg(activations[2])));
        QVERIFY(activations[0] < activations[2]);
    }

    // The keys plan-format.md added (issue 14): stack and train_tokens are read and written back;
    // a training run's days and cost follow from the step by hand.
    void stackAndTrainTokens()
    {
        json doc = invariantPlan();
        doc["workload"]["stack"] = "maxtext";
        doc["workload"]["train_tokens"] = 15'000'000'000'000; // LLaMA-3's 15T tokens
        doc["hardware"]["price_per_hour"] = 4.2;
        const auto plan = parsePlan(doc);
        QVERIFY2(plan, plan ? "" : plan.error().toString().c_str());
        QCOMPARE(plan->training.stack, std::string("maxtext"));
        QCOMPARE(plan->training.trainTokens, std::int64_t{15'000'000'000'000});
        const json written = planToJson(*plan);
        QVERIFY(written["workload"]["stack"] == json("maxtext"));
        QVERIFY(written["workload"]["train_tokens"] == json(15'000'000'000'000));
        const auto e = evaluate(*plan);
        QVERIFY(e && e->run);
        // 1024 x 4096 = 4,194,304 tokens a step: 15e12 / 4194304 = 3,576,278.7 steps.
        QVERIFY(std::abs(e->run->steps - 15e12 / 4194304.0) < 1e-6);
        QVERIFY(std::abs(e->run->days - e->run->steps * e->step.time / 86400.0) <= 1e-9 * e->run->days);
        // 4096 chips x hours x $4.20.
        QVERIFY(std::abs(e->run->cost - 4096.0 * e->run->steps * e->step.time / 3600.0 * 4.2) <= 1e-9 * e->run->cost);
        const json r = evaluationToJson(*e, true);
        QVERIFY(r.contains("train") && r["train"]["days"].get<double>() > 0);
        QVERIFY(!evaluationToJson(*evaluate(*parsePlan(invariantPlan())), true).contains("train"));

        // parallelism.expert_dispatch: absent it is the stack's and is not written; named, it is
        // read and written back.
        QVERIFY(!written["parallelism"].contains("expert_dispatch"));
        QVERIFY(plan->parallelism.expertDispatch == ExpertDispatch::Stack);
        for (const char *name : {"all-to-all", "deduplicated"}) {
            json named = doc;
            named["parallelism"]["expert_dispatch"] = name;
            const auto withDispatch = parsePlan(named);
            QVERIFY2(withDispatch, withDispatch ? "" : withDispatch.error().toString().c_str());
            QCOMPARE(QString::fromStdString(std::string(expertDispatchName(withDispatch->parallelism.expertDispatch))),
                     QString::fromLatin1(name));
            QVERIFY(planToJson(*withDispatch)["parallelism"]["expert_dispatch"] == json(name));
        }

        // Serving stacks on serving plans.
        json serve = basePlan();
        serve["workload"] = {{"kind", "inference"}, {"batch", 2048}, {"prompt_len", 2048}, {"generate_len", 512}, {"stack", "vllm"}};
        serve["parallelism"] = {{"data", 2048}, {"tensor", 4}};
        const auto served = parsePlan(serve);
        QVERIFY2(served, served ? "" : served.error().toString().c_str());
        QCOMPARE(served->inference.stack, std::string("vllm"));
        QVERIFY(planToJson(*served)["workload"]["stack"] == json("vllm"));
    }

    // parallelism.microbatches, absent on a pipelined training plan, is micro-batch size 1: the
    // local batch (global batch over data x fsdp x expert, rounded up), not one microbatch that
    // would leave the pipeline idle (stages - 1) / stages of the step. Given, it stays as given.
    void pipelineMicrobatchesDefaultToOneSequence()
    {
        json doc = invariantPlan();
        doc["parallelism"] = {{"fsdp", 128}, {"tensor", 4}, {"pipeline", 8}};
        doc["workload"]["global_batch"] = 1000; // 1000 / 128 = 7.8: 8 sequences a replica
        const auto pipelined = parsePlan(doc);
        QVERIFY2(pipelined, pipelined ? "" : pipelined.error().toString().c_str());
        QCOMPARE(pipelined->parallelism.microbatches, 8);
        QVERIFY(pipelined->parallelism.microbatchesDefaulted);
        QCOMPARE(planToJson(*pipelined)["parallelism"]["microbatches"].get<int>(), 8);
        doc["parallelism"]["microbatches"] = 2;
        QCOMPARE(parsePlan(doc)->parallelism.microbatches, 2);
        QVERIFY(!parsePlan(doc)->parallelism.microbatchesDefaulted);
        // Without a pipeline, absent still means one microbatch: no gradient accumulation.
        json unpipelined = invariantPlan();
        unpipelined["parallelism"].erase("microbatches");
        QVERIFY(!unpipelined["parallelism"].contains("microbatches"));
        QCOMPARE(parsePlan(unpipelined)->parallelism.microbatches, 1);
        // 1F1B's bubble is (stages - 1) passes of one microbatch: here of an eighth of the local
        // batch, read literally of all of it.
        doc["parallelism"].erase("microbatches");
        const auto defaulted = evaluate(*parsePlan(doc));
        doc["parallelism"]["microbatches"] = 1;
        const auto single = evaluate(*parsePlan(doc));
        QVERIFY(defaulted && single);
        QVERIFY(defaulted->step.bubble < 0.5 * single->step.bubble);
    }

    // workload.loss_fusion is optional: absent it stays absent (the stack decides), given it is
    // written back as given, so an edit in the window never changes what the loss costs.
    void lossFusionRoundTrips()
    {
        const auto absent = parsePlan(invariantPlan());
        QVERIFY(absent && !absent->training.lossFusion);
        QVERIFY(!planToJson(*absent)["workload"].contains("loss_fusion"));
        for (const bool fused : {true, false}) {
            json doc = invariantPlan();
            doc["workload"]["loss_fusion"] = fused;
            const auto plan = parsePlan(doc);
            QVERIFY2(plan, plan ? "" : plan.error().toString().c_str());
            QCOMPARE(plan->training.lossFusion, std::optional<bool>(fused));
            QVERIFY(planToJson(*plan)["workload"]["loss_fusion"] == json(fused));
        }
    }

    // workload.compile, likewise: absent stays absent (the stack's default), given round-trips.
    void compileRoundTrips()
    {
        const auto absent = parsePlan(invariantPlan());
        QVERIFY(absent && !absent->training.compile);
        QVERIFY(!planToJson(*absent)["workload"].contains("compile"));
        for (const bool compiled : {true, false}) {
            json doc = invariantPlan();
            doc["workload"]["compile"] = compiled;
            const auto plan = parsePlan(doc);
            QVERIFY2(plan, plan ? "" : plan.error().toString().c_str());
            QCOMPARE(plan->training.compile, std::optional<bool>(compiled));
            QVERIFY(planToJson(*plan)["workload"]["compile"] == json(compiled));
        }
    }

    // An inline chip with the datasheet keys alone runs at the measured figures of the catalog chip
    // nearest it, not at 100% of its peak: the H100's own datasheet written inline costs exactly
    // what the catalog's H100 costs, training and serving, and the result says whose figures ran.
    void inlineChipRunsAtItsReferenceFigures()
    {
        const auto hasWarning = [](const Evaluation &e, const std::string &code) {
            return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const auto &w) { return w.code == code; });
        };
        json bare = chipToJson(*ChipCatalog::builtin().find("h100-sxm"));
        bare["id"] = "my-h100";
        for (const char *measured : {"achievable", "attention_kernels", "decode_attention", "sources"})
            bare.erase(measured);
        json training = basePlan();
        training["hardware"] = {{"chip", "h100-sxm"}, {"topology", {{"nodes", 8}, {"gpus_per_node", 8}}}};
        training["parallelism"] = {{"fsdp", 8}, {"tensor", 8}, {"sequence_parallel", true}};
        training["workload"]["global_batch"] = 64;
        json serving = training;
        serving["workload"] = {{"kind", "inference"}, {"batch", 64}, {"prompt_len", 2048}, {"generate_len", 256}};
        serving["parallelism"] = {{"data", 8}, {"tensor", 8}};
        for (const json &doc : {training, serving}) {
            json inlined = doc;
            inlined["hardware"]["chip"] = bare;
            const auto catalogPlan = parsePlan(doc);
            const auto inlinePlan = parsePlan(inlined);
            QVERIFY2(catalogPlan && inlinePlan, inlinePlan ? "" : inlinePlan.error().toString().c_str());
            for (const CostMode mode : {CostMode::Achievable, CostMode::Ideal}) {
                const auto reference = evaluate(*catalogPlan, mode);
                const auto mine = evaluate(*inlinePlan, mode);
                QVERIFY(reference && mine);
                const bool isTraining = catalogPlan->kind == WorkloadKind::Training;
                const double a = isTraining ? reference->step.time : reference->inference->decodeStepS;
                const double b = isTraining ? mine->step.time : mine->inference->decodeStepS;
                QVERIFY2(std::abs(a - b) <= 1e-12 * a, qPrintable(QStringLiteral("%1 vs %2").arg(a).arg(b)));
                // The book's ideal model reads no measured figure, so there is nothing to warn of.
                QCOMPARE(hasWarning(*mine, "chip-figures-inherited"), mode == CostMode::Achievable);
                QVERIFY(!hasWarning(*reference, "chip-figures-inherited"));
            }
        }
        // Read with no reference, the same object claims 100% of its datasheet (what this guards).
        const Chip literal = chipFromJson(bare, "hardware.chip").value();
        QCOMPARE(literal.achievable.flopsFraction, 1.0);
        // The calculator's hardware call shows the same chip and says whose figures it carries.
        const auto shown = calculate("hardware", {{"chip", bare}}, CostMode::Achievable, ChipCatalog::builtin());
        QVERIFY2(shown, shown ? "" : shown.error().toString().c_str());
        QCOMPARE(shown->at("figures_from").get<std::string>(), std::string("h100-sxm"));
        const auto figures = shown->at("inherited_figures").get<std::vector<std::string>>();
        QVERIFY(std::find(figures.begin(), figures.end(), "flops_fraction") != figures.end());
        QVERIFY(std::find(figures.begin(), figures.end(), "attention_kernels") != figures.end());
        const auto catalogChip = calculate("hardware", {{"chip", "h100-sxm"}}, CostMode::Achievable, ChipCatalog::builtin());
        QVERIFY(catalogChip && !catalogChip->contains("figures_from"));
    }

    // Inference compute_dtype defaults to fp8 for fp8 weights on a chip with an fp8 rate (W8A8),
    // else bf16 (weight-only int8/int4), as plan-format.md says.
    void inferenceComputeDtypeDefault()
    {
        const auto computeFor = [](const char *chip, json topology, const char *weights) {
            json doc = basePlan();
            doc["hardware"] = {{"chip", chip}, {"topology", topology}};
            doc["parallelism"] = {{"tensor", 8}};
            doc["workload"] = {{"kind", "inference"}, {"batch", 8}, {"prompt_len", 2048}, {"generate_len", 512}, {"weight_dtype", weights}};
            const auto plan = parsePlan(doc);
            return plan ? std::string(dtypeName(plan->inference.computeDtype)) : plan.error().toString();
        };
        const json node = {{"nodes", 1}, {"gpus_per_node", 8}};
        QCOMPARE(computeFor("h100-sxm", node, "fp8"), std::string("fp8"));
        QCOMPARE(computeFor("h100-sxm", node, "int8"), std::string("bf16"));
        QCOMPARE(computeFor("h100-sxm", node, "bf16"), std::string("bf16"));
        QCOMPARE(computeFor("a100-80gb", node, "fp8"), std::string("bf16")); // no fp8 rate on A100
    }

    void doublingTheBatch()
    {
        json one = invariantPlan();
        json two = invariantPlan();
        two["workload"]["global_batch"] = 2 * one["workload"]["global_batch"].get<int>();
        QString why;
        const auto ra = evaluated(one, why);
        QVERIFY2(ra, qPrintable(why));
        const auto rb = evaluated(two, why);
        QVERIFY2(rb, qPrintable(why));
        const Evaluation &a = *ra;
        const Evaluation &b = *rb;
        QCOMPARE(b.step.tokens, 2 * a.step.tokens);
        QCOMPARE(evaluationToJson(b, true)["step"]["tokens"].get<std::int64_t>(),
                 2 * evaluationToJson(a, true)["step"]["tokens"].get<std::int64_t>());
        QVERIFY2(b.step.time >= a.step.time, qPrintable(QStringLiteral("%1 s < %2 s").arg(b.step.time).arg(a.step.time)));
    }

    void evaluationIsDeterministic_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("invariant plan") << QString();
        const QDir d(kData + QStringLiteral("/plans"));
        for (const QFileInfo &info : d.entryInfoList({QStringLiteral("*.meshplan")}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(info.fileName())) << info.absoluteFilePath();
    }
    void evaluationIsDeterministic()
    {
        QFETCH(QString, file);
        const json document = file.isEmpty() ? invariantPlan() : json::parse(readText(file));
        const auto plan = parsePlan(document);
        QVERIFY(plan.hasValue());
        const auto a = evaluate(plan.value());
        const auto b = evaluate(plan.value());
        QVERIFY(a.hasValue() && b.hasValue());
        QCOMPARE(QString::fromStdString(evaluationToJson(b.value(), true).dump(2)),
                 QString::fromStdString(evaluationToJson(a.value(), true).dump(2)));
    }

    // Golden results: tests/data/golden/<name>.result.json is `meshplan-cli evaluate
    // tests/data/plans/<name>.meshplan --json` (see the top of this file to regenerate).
    void goldenResults_data()
    {
        QTest::addColumn<QString>("golden");
        QTest::addColumn<QString>("plan");
        const QDir d(kData + QStringLiteral("/golden"));
        const auto files = d.entryInfoList({QStringLiteral("*.result.json")}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 3, "expected at least 3 golden results");
        for (const QFileInfo &info : files) {
            const QString name = info.fileName().chopped(int(qstrlen(".result.json")));
            QTest::newRow(qPrintable(name)) << info.absoluteFilePath()
                                            << kData + QStringLiteral("/plans/") + name + QStringLiteral(".meshplan");
        }
    }
    void goldenResults()
    {
        QFETCH(QString, golden);
        QFETCH(QString, plan);
        const std::string goldenText = readText(golden);
        QVERIFY2(!goldenText.empty(), qPrintable(golden));
        const json expected = json::parse(goldenText);
        const auto parsed = parsePlanText(readText(plan), plan.toStdString());
        QVERIFY2(parsed.hasValue(), parsed.hasValue() ? "" : parsed.error().toString().c_str());
        const auto e = evaluate(parsed.value());
        QVERIFY2(e.hasValue(), e.hasValue() ? "" : e.error().toString().c_str());
        const json got = evaluationToJson(e.value(), parsed->kind == WorkloadKind::Training);
        QStringList diffs;
        collectDifferences(expected, got, "", diffs);
        QVERIFY2(diffs.isEmpty(), qPrintable(diffs.join(QStringLiteral("\n  "))));
    }
};

QTEST_APPLESS_MAIN(TestPlan)
#include "tst_plan.moc"
