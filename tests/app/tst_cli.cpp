// meshplan-cli: results through the same model API, --json shapes, and exit code 2 with one
// clear line for every kind of bad input.
#include "cli.h"
#include "clirunner.h"
#include "fulldisk.h"
#include "cost/trackrecord.h"
#include "explore/plancomparison.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <sys/stat.h>

using meshplan::testing::cli;
using meshplan::testing::cliRow;
using meshplan::testing::CliRun;
using meshplan::model::TrackRecord;
using nlohmann::json;

namespace {

// The contract's example plan (plan-format.md), as a merge-patch target for the evaluate rows.
const char *kPlan = R"({
  "format": "meshplan/plan", "version": 1,
  "title": "LLaMA-3 70B on 8192 TPU v5p chips",
  "model": "llama-3-70b",
  "hardware": { "chip": "tpu-v5p", "topology": [16, 16, 32], "slices": 1 },
  "parallelism": { "data": 1, "fsdp": 1024, "tensor": 4, "pipeline": 1, "expert": 1, "context": 2,
                   "placement": {}, "zero_stage": 3, "sequence_parallel": false, "pipeline_schedule": "1f1b",
                   "microbatches": 1, "virtual_stages": 1 },
  "workload": { "kind": "training", "seq_len": 4096, "global_batch": 1024, "param_dtype": "bf16",
                "compute_dtype": "bf16", "optimizer": "adam", "optimizer_dtype": "fp32", "remat": "full" }
})";

std::string patchedPlan(const QString &patch)
{
    json plan = json::parse(kPlan);
    if (!patch.isEmpty())
        plan.merge_patch(json::parse(patch.toStdString()));
    return plan.dump(2);
}

/// Writes `text` to `name` in `dir`; returns the file's path.
std::string writeFile(const QTemporaryDir &dir, const QString &name, const std::string &text)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return {};
    file.write(text.data(), qint64(text.size()));
    return path.toStdString();
}

/// Keys of `object` that are missing, as "prefix.key".
QStringList missingKeys(const json &object, const std::string &prefix, std::initializer_list<const char *> keys)
{
    QStringList missing;
    for (const char *key : keys)
        if (!object.is_object() || !object.contains(key))
            missing << QString::fromStdString(prefix + key);
    return missing;
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT

private slots:
    void collectiveJsonMatchesTheBook()
    {
        // Book ch. 12 quiz 2 Q3: AllGather of bf16[4096, 65536] in one 8xH100 node: 1.04 ms.
        const auto r = cli({"collective", "--chip", "h100-sxm", "--nodes", "1", "--gpus-per-node", "8", "--op",
                            "all-gather", "--axes", "gpu", "--bytes", "536870912", "--json"});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out);
        QVERIFY(std::fabs(j["time_s"].get<double>() - 536870912.0 * 7 / (8 * 450e9)) < 1e-9);
        QCOMPARE(j["bound"].get<std::string>(), std::string("bandwidth"));
        QVERIFY(j.contains("bytes_moved_per_chip"));
    }

    void rooflineJsonKeys()
    {
        const auto r = cli({"roofline", "--chip", "tpu-v5e", "--flops", "2e12", "--bytes", "1e9", "--json"});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out);
        for (const char *key : {"t_math_s", "t_comms_s", "t_lower_s", "t_upper_s", "intensity", "critical_intensity", "bound"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["intensity"].get<double>(), 2000.0);
        QCOMPARE(j["bound"].get<std::string>(), std::string("compute"));
    }

    void achievableIsSlower()
    {
        const std::vector<std::string> base{"collective", "--chip", "tpu-v5p", "--topology", "4x4x4", "--op", "all-reduce",
                                            "--axes", "x,y", "--bytes", "1e9", "--json"};
        auto withFlag = base;
        withFlag.push_back("--achievable");
        const double ideal = json::parse(cli(base).out)["time_s"].get<double>();
        const double real = json::parse(cli(withFlag).out)["time_s"].get<double>();
        QVERIFY(real > ideal);
    }

    void matmulFromTheIssue()
    {
        const auto r = cli({"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]",
                            "--dims", "I=4096,J=8192,K=8192", "--json"});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out);
        QCOMPARE(j["case"].get<int>(), 3);
        QCOMPARE(j["collectives"].size(), std::size_t(1));
        QCOMPARE(j["collectives"][0]["op"].get<std::string>(), std::string("all-reduce"));
        // AllReduce_Y of bf16[1024, 8192] on a 4-long line: 2 x (3/4) x 16.8 MB / 45 GB/s = 559 us,
        // against 174 us of matmul: communication binds.
        QVERIFY(std::fabs(j["comms_s"].get<double>() - 2 * 0.75 * 2 * 1024 * 8192 / 4.5e10) < 1e-9);
        QCOMPARE(j["bound"].get<std::string>(), std::string("ici"));
        const auto human = cli({"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]",
                                "--dims", "I=4096,J=8192,K=8192"});
        QCOMPARE(human.code, 0);
        QVERIFY(human.out.find("all-reduce_y(C)") != std::string::npos);
    }

    void hardwareListAndSpec()
    {
        const auto list = cli({"hardware", "--list", "--json"});
        QCOMPARE(list.code, 0);
        QCOMPARE(json::parse(list.out)["chips"].size(), std::size_t(12));
        const auto spec = cli({"hardware", "tpu-v5p", "--json"});
        QCOMPARE(json::parse(spec.out)["hbm_bytes"].get<std::int64_t>(), std::int64_t(102005473280));
        QVERIFY(cli({"hardware", "gb200"}).out.find("domain of 72") != std::string::npos);
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("unknown chip") << QStringList{"roofline", "--chip", "tpu-v9", "--flops", "1", "--bytes", "1"} << "--chip";
        QTest::newRow("negative bytes") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                       "all-gather", "--axes", "x", "--bytes", "-5"} << "--bytes";
        QTest::newRow("axis not in topology") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                             "all-gather", "--axes", "z", "--bytes", "5"} << "--axes";
        QTest::newRow("unknown op") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                   "broadcast", "--axes", "x", "--bytes", "5"} << "--op";
        QTest::newRow("bytes not a number") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                           "all-gather", "--axes", "x", "--bytes", "lots"} << "--bytes";
        QTest::newRow("nan bytes") << QStringList{"roofline", "--chip", "tpu-v5e", "--flops", "1", "--bytes", "nan"} << "--bytes";
        QTest::newRow("missing value") << QStringList{"roofline", "--chip"} << "--chip";
        QTest::newRow("unknown option") << QStringList{"roofline", "--chips", "x"} << "--chips";
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
        QTest::newRow("gpu too big a node") << QStringList{"collective", "--chip", "h100-sxm", "--nodes", "2",
                                                           "--gpus-per-node", "16", "--op", "all-gather", "--axes",
                                                           "gpu", "--bytes", "1e6"} << "--gpus-per-node";
        QTest::newRow("absurd slices") << QStringList{"collective", "--chip", "tpu-v5p", "--topology", "4x4x4", "--slices",
                                                      "1e30", "--op", "all-reduce", "--axes", "slice", "--bytes", "1e6"}
                                       << "--slices";
        QTest::newRow("bad shape") << QStringList{"slice", "--chip", "tpu-v5p", "--topology", "4xx4"} << "--topology";
        QTest::newRow("bad notation") << QStringList{"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I_X, J_X] . B[J, K] -> C[I, K]",
                                                     "--dims", "I=8,J=8,K=8"} << "notation";
        QTest::newRow("bad dims") << QStringList{"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I, J] . B[J, K] -> C[I, K]",
                                                 "--dims", "I=8,J=x,K=8"} << "--dims.J";
        QTest::newRow("unknown dtype") << QStringList{"roofline", "--chip", "tpu-v5e", "--flops", "1", "--bytes", "1",
                                                      "--dtype", "fp6"} << "--dtype";
        QTest::newRow("sharp on a TPU") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                       "all-reduce", "--axes", "x", "--bytes", "5", "--sharp"} << "--sharp";
    }
    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const auto plain = cliRow(args);
        QCOMPARE(plain.code, 2);
        QVERIFY2(plain.err.find(mentions.toStdString()) != std::string::npos, plain.err.c_str());
        QCOMPARE(std::count(plain.err.begin(), plain.err.end(), '\n'), 1L); // one line
        const auto asJson = cliRow(args + QStringList{"--json"});
        QCOMPARE(asJson.code, 2);
        if (mentions != QStringLiteral("unknown command") && mentions != QStringLiteral("--chips")) {
            const json j = json::parse(asJson.out);
            QVERIFY(j["error"].contains("path"));
            QVERIFY(j["error"].contains("message"));
        }
    }

    void theBinaryExitsWithTwo()
    {
        QProcess process;
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("roofline"), QStringLiteral("--chip"),
                                                          QStringLiteral("nope"), QStringLiteral("--flops"),
                                                          QStringLiteral("1"), QStringLiteral("--bytes"), QStringLiteral("1")});
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(process.readAllStandardError().contains("--chip: unknown chip"));
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("hardware"), QStringLiteral("--list")});
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 0);
        QVERIFY(process.readAllStandardOutput().contains("tpu-v5p"));
    }

    // evaluate: a good plan exits 0 with every key of the result contract.
    void evaluateHasTheContractKeys_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<bool>("warns"); // must warn (others may)
        QTest::newRow("contract example") << QString() << false;
        QTest::newRow("does not fit (warnings)")
            << QStringLiteral(R"({"parallelism": {"context": 8, "fsdp": 256}, "workload": {"seq_len": 32768, "remat": "none", "global_batch": 1024}})")
            << true;
        QTest::newRow("GPU pipeline")
            << QStringLiteral(R"({"hardware": {"chip": "h100-sxm", "topology": {"nodes": 1024, "gpus_per_node": 8}, "slices": null},
                                  "parallelism": {"pipeline": 8, "fsdp": 128, "tensor": 8, "context": 1, "microbatches": 8}})")
            << false;
    }
    void evaluateHasTheContractKeys()
    {
        QFETCH(QString, patch);
        QFETCH(bool, warns);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string file = writeFile(dir, QStringLiteral("good.meshplan"), patchedPlan(patch));
        const auto r = cli({"evaluate", file, "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.empty(), r.err.c_str());
        const json j = json::parse(r.out);
        QStringList missing = missingKeys(j, "", {"format", "version", "chips", "placement", "model", "memory_per_chip",
                                                  "step", "mfu", "tokens_per_s", "bound", "collectives", "warnings"});
        missing << missingKeys(j.value("model", json()), "model.", {"params", "active_params", "flops_per_token"});
        missing << missingKeys(j.value("memory_per_chip", json()), "memory_per_chip.",
                               {"params", "grads", "optimizer", "activations", "kv_cache", "total", "capacity", "fits"});
        missing << missingKeys(j.value("step", json()), "step.",
                               {"time_s", "compute_s", "communication_s", "exposed_communication_s", "bubble_s", "flops",
                                "tokens"});
        for (const auto &c : j.value("collectives", json::array()))
            missing << missingKeys(c, "collectives[].",
                                   {"op", "purpose", "axes", "bytes_per_chip", "count_per_step", "time_s", "exposed_s"});
        for (const auto &w : j.value("warnings", json::array()))
            missing << missingKeys(w, "warnings[].", {"code", "message"});
        missing.removeDuplicates();
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QStringLiteral(", "))));

        QCOMPARE(j["format"].get<std::string>(), std::string("meshplan/result"));
        QCOMPARE(j["version"].get<int>(), 1);
        QVERIFY(j["chips"].is_number_integer());
        QCOMPARE(j["chips"].get<std::int64_t>(), std::int64_t(8192));
        QVERIFY(j["placement"].is_object());
        QVERIFY(j["model"]["params"].is_number_integer());
        for (const char *key : {"params", "grads", "optimizer", "activations", "kv_cache", "total", "capacity"})
            QVERIFY2(j["memory_per_chip"][key].is_number_integer(), key); // byte counts are integers
        QVERIFY(j["memory_per_chip"]["fits"].is_boolean());
        QVERIFY(j["step"]["tokens"].is_number_integer());
        const json plan = json::parse(patchedPlan(patch));
        QCOMPARE(j["step"]["tokens"].get<std::int64_t>(),
                 plan["workload"]["global_batch"].get<std::int64_t>() * plan["workload"]["seq_len"].get<std::int64_t>());
        const double mfu = j["mfu"].get<double>();
        QVERIFY2(mfu > 0 && mfu <= 1, qPrintable(QString::number(mfu)));
        const std::vector<std::string> bounds{"compute", "hbm", "ici", "dcn", "nvlink", "scale-out", "memory-capacity"};
        QVERIFY2(std::find(bounds.begin(), bounds.end(), j["bound"].get<std::string>()) != bounds.end(),
                 j["bound"].get<std::string>().c_str());
        QVERIFY(!j["collectives"].empty());
        for (const auto &c : j["collectives"]) {
            QVERIFY(c["axes"].is_array() && !c["axes"].empty());
            QVERIFY(c["bytes_per_chip"].is_number_integer());
            QVERIFY(c["count_per_step"].is_number_integer());
        }
        if (warns) // a plan that does not fit must say so
            QVERIFY(!j["warnings"].empty() && !j["memory_per_chip"]["fits"].get<bool>());
        QVERIFY(!j.contains("timing"));

        // The human-readable form of the same plan.
        const auto human = cli({"evaluate", file});
        QCOMPARE(human.code, 0);
        QVERIFY(human.out.find("MFU") != std::string::npos);
    }

    // A serving plan's summary says what serving is judged by: first token, decode step and
    // throughput, the same numbers as its JSON (printed to three significant figures).
    void evaluateServingPrintsLatency()
    {
        const std::string file = MESHPLAN_TEST_DATA "/plans/llama-3-70b-int8-v5e-serving.meshplan";
        const auto asJson = cli({"evaluate", file, "--json"});
        QCOMPARE(asJson.code, 0);
        const json inf = json::parse(asJson.out).at("inference");
        const auto human = cli({"evaluate", file});
        QCOMPARE(human.code, 0);
        for (const char *row : {"prefill", "first token", "decode step", "tokens/s"})
            QVERIFY2(human.out.find(std::string("  ") + row) != std::string::npos, row);
        const double ms = inf.at("decode_step_s").get<double>() * 1e3;
        const std::string shown = QString::number(ms, 'f', 1).toStdString() + " ms per token";
        QVERIFY2(human.out.find(shown) != std::string::npos, (shown + "\n" + human.out).c_str());
    }

    // The summary ends with how far to trust it: the validation page's record on runs like the
    // plan, one sentence per number it scores and one for a training plan's stack, the same the
    // model's track record gives; nothing to quote for the ideal model or for a plan unlike every
    // run on the page.
    void evaluateQuotesTheTrackRecord()
    {
        const std::string file = MESHPLAN_TEST_DATA "/measured-runs/training/C1-full-korthikanti-gpt-22b.json";
        const auto plan = meshplan::app::loadPlan(file);
        QVERIFY(plan);
        const auto records = TrackRecord::builtin().forPlan(*plan);
        QCOMPARE(records.size(), std::size_t{2}); // its family's, then its stack's (megatron)
        QCOMPARE(records[0].family, std::string("A100, dense, sequences up to 16K"));
        QCOMPARE(records[1].family, std::string("megatron"));
        const auto human = cli({"evaluate", file});
        QCOMPARE(human.code, 0);
        QVERIFY2(human.out.find("  track record            On " + std::to_string(records[0].scored) + " published runs")
                     != std::string::npos,
                 human.out.c_str());
        QVERIFY2(human.out.find("(A100, dense, sequences up to") != std::string::npos, human.out.c_str());
        QVERIFY2(human.out.find("On " + std::to_string(records[1].scored) + " published runs under the same stack") != std::string::npos,
                 human.out.c_str());
        const auto ideal = cli({"evaluate", file, "--ideal"});
        QCOMPARE(ideal.code, 0);
        QVERIFY2(ideal.out.find("none for --ideal: docs/validation.md's families score the achievable model") != std::string::npos,
                 ideal.out.c_str());
        // No B200 serving run is on the page.
        const json unseen = {{"format", "meshplan/plan"},
                             {"version", 1},
                             {"model", "mixtral-8x7b"},
                             {"hardware", {{"chip", "b200"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 4}}}}},
                             {"parallelism", {{"tensor", 4}}},
                             {"workload", {{"kind", "inference"}, {"batch", 8}, {"prompt_len", 128}, {"generate_len", 16}}}};
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("unseen.meshplan")).toStdString();
        std::ofstream(path) << unseen.dump();
        const auto alone = cli({"evaluate", path});
        QCOMPARE(alone.code, 0);
        QVERIFY2(alone.out.find("No published run like this one is on the validation page") != std::string::npos,
                 alone.out.c_str());
    }

    void printedPlansEvaluateToThePrintedResult_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("latency");
        QTest::addColumn<bool>("ideal");
        // Issue 14.3: the printed plan kept the 4x4 slice of the input while its degrees were for 4x2.
        QTest::newRow("cheapest v5e") << QStringLiteral("llama-3-70b-int8-v5e-serving.meshplan") << QStringLiteral("0.05") << false;
        QTest::newRow("cheapest v5e ideal") << QStringLiteral("llama-3-70b-int8-v5e-serving.meshplan") << QStringLiteral("0.03") << true;
        // 2.5 ms: a GPU decode step of Qwen3's 48 layers carries about 1 ms of kernel latency, so the
        // fastest deployment decodes in about 2.1 ms.
        QTest::newRow("cheapest gb200") << QStringLiteral("qwen3-30b-a3b-gb200-serving.meshplan") << QStringLiteral("0.0025") << false;
    }

    // Every command that prints a plan (today: cheapest) prints one that loads and evaluates to
    // the result printed beside it.
    void printedPlansEvaluateToThePrintedResult()
    {
        QFETCH(QString, plan);
        QFETCH(QString, latency);
        QFETCH(bool, ideal);
        std::vector<std::string> args{"cheapest", MESHPLAN_TEST_DATA "/plans/" + plan.toStdString(), "--latency",
                                      latency.toStdString(), "--json"};
        if (ideal)
            args.push_back("--ideal");
        const auto printed = cli(args);
        QVERIFY2(printed.code == 0, printed.err.c_str());
        const json out = json::parse(printed.out);
        QTemporaryDir dir;
        const std::string file = writeFile(dir, QStringLiteral("printed.meshplan"), out.at("plan").dump(2));
        std::vector<std::string> evalArgs{"evaluate", file, "--json"};
        if (ideal)
            evalArgs.push_back("--ideal");
        const auto evaluated = cli(evalArgs);
        QVERIFY2(evaluated.code == 0, (evaluated.err + out.at("plan").dump(2)).c_str());
        const json r = json::parse(evaluated.out);
        const json &point = out.at("point");
        const auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::abs(b); };
        QVERIFY(near(r.at("inference").at("decode_step_s").get<double>(), point.at("decode_step_s").get<double>()));
        QVERIFY(near(r.at("inference").at("time_to_first_token_s").get<double>(),
                     point.at("time_to_first_token_s").get<double>()));
        QVERIFY(near(r.at("serving").at("steady_tokens_per_s").get<double>(), point.at("tokens_per_s").get<double>()));
        QCOMPARE(r.at("memory_per_chip").at("fits").get<bool>(), point.at("fits").get<bool>());
        QVERIFY(out.at("plan").at("workload").at("batch") == point.at("batch"));
    }

    void evaluateRepeatAddsTiming()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string file = writeFile(dir, QStringLiteral("good.meshplan"), patchedPlan(QString()));
        const auto r = cli({"evaluate", file, "--json", "--repeat", "50"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const json j = json::parse(r.out);
        QVERIFY(j.contains("timing"));
        QCOMPARE(j["timing"]["evaluations"].get<int>(), 50);
        const double median = j["timing"]["median_s"].get<double>();
        const double fastest = j["timing"]["min_s"].get<double>();
        QVERIFY2(fastest > 0 && fastest <= median && median < 1.0,
                 qPrintable(QStringLiteral("min %1 median %2").arg(fastest).arg(median)));
        // The result itself is the one without --repeat.
        json plain = json::parse(cli({"evaluate", file, "--json"}).out);
        json timed = j;
        timed.erase("timing");
        QCOMPARE(QString::fromStdString(timed.dump()), QString::fromStdString(plain.dump()));
        QCOMPARE(cli({"evaluate", file, "--repeat", "0"}).code, 2);
    }

    // evaluate: a bad plan file exits 2 with one line "meshplan-cli: FILE: PATH: message".
    void evaluateBadPlan_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("path");
        QTest::newRow("tensor -4") << QString::fromStdString(patchedPlan(QStringLiteral(R"({"parallelism": {"tensor": -4}})")))
                                   << "parallelism.tensor";
        QTest::newRow("tensor not dividing heads (found by evaluate)")
            << QString::fromStdString(patchedPlan(QStringLiteral(R"({"parallelism": {"tensor": 128, "fsdp": 32}})")))
            << "parallelism.tensor";
        QTest::newRow("unknown chip") << QString::fromStdString(patchedPlan(QStringLiteral(R"({"hardware": {"chip": "tpu-v9"}})")))
                                      << "hardware.chip";
        QTest::newRow("degree product mismatch")
            << QString::fromStdString(patchedPlan(QStringLiteral(R"({"parallelism": {"fsdp": 512}})"))) << "parallelism";
        QTest::newRow("version 2") << QString::fromStdString(patchedPlan(QStringLiteral(R"({"version": 2})"))) << "version";
        QTest::newRow("string for a number")
            << QString::fromStdString(patchedPlan(QStringLiteral(R"({"workload": {"global_batch": "1024"}})")))
            << "workload.global_batch";
        QTest::newRow("not JSON") << QStringLiteral("{\"format\": \"meshplan/plan\",") << QString();
    }
    void evaluateBadPlan()
    {
        QFETCH(QString, text);
        QFETCH(QString, path);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string file = writeFile(dir, QStringLiteral("bad.meshplan"), text.toStdString());
        const auto r = cli({"evaluate", file});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.empty(), r.out.c_str());
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        const std::string prefix = "meshplan-cli: " + file + ": " + (path.isEmpty() ? "" : path.toStdString() + ": ");
        QVERIFY2(r.err.rfind(prefix, 0) == 0, qPrintable(QStringLiteral("expected \"%1...\", got \"%2\"")
                                                             .arg(QString::fromStdString(prefix), QString::fromStdString(r.err))));
        QVERIFY2(r.err.size() > prefix.size() + 1, r.err.c_str());

        const auto asJson = cli({"evaluate", file, "--json"});
        QCOMPARE(asJson.code, 2);
        const json j = json::parse(asJson.out);
        QVERIFY(j.contains("error"));
        QVERIFY(j["error"].contains("path") && j["error"].contains("message"));
        QCOMPARE(QString::fromStdString(j["error"]["path"].get<std::string>()), path);
        QVERIFY(!j["error"]["message"].get<std::string>().empty());
    }

    // Issue 15: hostile files and arguments. Each gets its own message, on stderr and in --json,
    // and nothing throws (an invalid UTF-8 byte in a --json error used to abort the CLI).
    void hostileInput_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QByteArray>("content"); // "fifo" and "folder" make those instead of a file
        QTest::addColumn<QString>("says");
        const QByteArray plan = QByteArray::fromStdString(patchedPlan({}));
        QByteArray utf16("\xFF\xFE");
        for (char c : plan) {
            utf16 += c;
            utf16 += '\0';
        }
        QByteArray badKey = plan;
        badKey.replace("\"title\"", "\"ti\xFFtle\"");
        const QString ev = QStringLiteral("evaluate");
        const QString hf = QStringLiteral("hf-config");
        QTest::newRow("one byte 0xEF") << ev << QByteArray("\xEF") << QStringLiteral("is not UTF-8 at byte 0 (line 1, column 1)");
        QTest::newRow("UTF-16 plan") << ev << utf16 << QStringLiteral("is UTF-16 text; save it as UTF-8");
        QTest::newRow("invalid UTF-8 in a key") << ev << badKey << QStringLiteral("is not UTF-8 at byte");
        QTest::newRow("NUL after the document") << ev << plan + QByteArray(1, '\0') << QStringLiteral("holds a NUL byte at byte");
        QTest::newRow("a FIFO") << ev << QByteArray("fifo") << QStringLiteral("is not a regular file");
        QTest::newRow("a folder") << ev << QByteArray("folder") << QStringLiteral("is a folder, not a file");
        QTest::newRow("axis twice") << ev
                                    << QByteArray::fromStdString(patchedPlan(QStringLiteral(
                                           R"({"parallelism": {"placement": {"tensor": ["x", "x"]}}})")))
                                    << QStringLiteral("parallelism.placement.tensor: lists axis \"x\" twice");
        QTest::newRow("config not UTF-8") << hf << QByteArray("{\"model_type\": \"\xFF\"}") << QStringLiteral("is not UTF-8 at byte 16 (line 1, column 17)");
        QTest::newRow("config FIFO") << hf << QByteArray("fifo") << QStringLiteral("is not a regular file");
        QTest::newRow("config not JSON") << hf << QByteArray("{oops") << QStringLiteral("is not valid JSON");
    }

    void hostileInput()
    {
        QFETCH(QString, command);
        QFETCH(QByteArray, content);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("input"));
        if (content == "fifo") {
            QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
        } else if (content == "folder") {
            QVERIFY(QDir().mkpath(path));
        } else {
            writeFile(dir, QStringLiteral("input"), content.toStdString());
        }
        const std::string file = path.toStdString();
        const std::vector<std::string> args = command == QLatin1String("evaluate")
                                                  ? std::vector<std::string>{"evaluate", file}
                                                  : std::vector<std::string>{"model", "--hf-config", file};
        const auto human = cli(args);
        QCOMPARE(human.code, 2);
        // The file once, then the message: "meshplan-cli: F: is not UTF-8 ...", never "F: F: ...".
        const std::string expected = "meshplan-cli: " + file + ": ";
        QVERIFY2(human.err.rfind(expected, 0) == 0 && human.err.find(file + ": " + file) == std::string::npos,
                 human.err.c_str());
        QVERIFY2(QString::fromStdString(human.err).contains(says), human.err.c_str());
        std::vector<std::string> jsonArgs = args;
        jsonArgs.push_back("--json");
        const auto asJson = cli(jsonArgs);
        QCOMPARE(asJson.code, 2);
        const json j = json::parse(asJson.out);
        QVERIFY2(QString::fromStdString(j.at("error").at("message").get<std::string>()).contains(says.section(u':', -1).trimmed()),
                 asJson.out.c_str());
    }

    // Arguments are not files: an invalid UTF-8 byte in one is quoted as U+FFFD in --json.
    void invalidUtf8ArgumentDoesNotCrash()
    {
        const auto r = cli({"model", "\xFF", "--json"});
        QCOMPARE(r.code, 2);
        const json j = json::parse(r.out);
        QVERIFY2(j.at("error").at("message").get<std::string>().find("\xEF\xBF\xBD") != std::string::npos, r.out.c_str());
        const auto chip = cli({"hardware", "\xC3\x28", "--json"});
        QCOMPARE(chip.code, 2);
        QVERIFY(json::parse(chip.out).contains("error"));
    }

    // A plan file that is not there: exit 2, one line naming the file as given.
    void evaluateMissingFile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("relative");
        QTest::newRow("absolute path") << QStringLiteral("no-such-plan.meshplan") << false;
        QTest::newRow("relative path") << QStringLiteral("no-such-plan-8f3a.meshplan") << true;
        // A file name whose stem is also an option's key ("chip", "topology") is still a file name.
        QTest::newRow("relative path named like an option") << QStringLiteral("chip.no-such-plan-8f3a.meshplan") << true;
        QTest::newRow("relative path named like a field") << QStringLiteral("topology.no-such-plan-8f3a.meshplan") << true;
    }
    void evaluateMissingFile()
    {
        QFETCH(QString, file);
        QFETCH(bool, relative);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = relative ? file.toStdString() : dir.filePath(file).toStdString();
        QVERIFY(!QFile::exists(QString::fromStdString(path)));
        const auto r = cli({"evaluate", path});
        QCOMPARE(r.code, 2);
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        QVERIFY2(r.err.rfind("meshplan-cli: " + path + ": ", 0) == 0, r.err.c_str());
        const auto asJson = cli({"evaluate", path, "--json"});
        QCOMPARE(asJson.code, 2);
        const json j = json::parse(asJson.out);
        QVERIFY(j["error"].contains("message"));
        QCOMPARE(cli({"evaluate"}).code, 2);
    }

    void modelFromTheCatalog()
    {
        const auto r = cli({"model", "llama-3-70b", "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const json j = json::parse(r.out);
        QCOMPARE(j["params"].get<std::int64_t>(), std::int64_t(70553706496));
        for (const char *key : {"active_params", "flops_per_token", "forward_flops_per_token", "kv_cache_bytes_per_token"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(cli({"model", "llama-5", "--json"}).code, 2);
    }

    void modelFromAnHfConfig()
    {
        const std::string config = std::string(MESHPLAN_TEST_DATA) + "/hf-configs/llama-3-8b.json";
        const auto r = cli({"model", "--hf-config", config, "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const json j = json::parse(r.out);
        const json catalog = json::parse(cli({"model", "llama-3-8b", "--json"}).out);
        QCOMPARE(j["params"].get<std::int64_t>(), catalog["params"].get<std::int64_t>());
        QCOMPARE(j["params"].get<std::int64_t>(), std::int64_t(8030261248));
        QCOMPARE(j["flops_per_token"].get<double>(), catalog["flops_per_token"].get<double>());
        const auto missing = cli({"model", "--hf-config", config + ".missing", "--json"});
        QCOMPARE(missing.code, 2);
    }

    void theBinaryEvaluates()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString good = QString::fromStdString(writeFile(dir, QStringLiteral("good.meshplan"), patchedPlan(QString())));
        const QString bad = QString::fromStdString(
            writeFile(dir, QStringLiteral("bad.meshplan"), patchedPlan(QStringLiteral(R"({"parallelism": {"tensor": -4}})"))));
        QProcess process;
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("evaluate"), good, QStringLiteral("--json")});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 0);
        const json j = json::parse(process.readAllStandardOutput().toStdString());
        QCOMPARE(j["format"].get<std::string>(), std::string("meshplan/result"));
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("evaluate"), bad});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 2);
        const QByteArray err = process.readAllStandardError();
        QVERIFY2(err.startsWith(("meshplan-cli: " + bad + ": parallelism.tensor: ").toUtf8()), err.constData());
        QVERIFY2(err.contains("-4"), err.constData());
    }

    // search (issue 17): every plan the JSON prints, results and front alike, evaluates through
    // `evaluate` to the result printed beside it.
    void searchPrintsPlansThatEvaluateToTheirResults_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("training, GPT 22B on 8 A100s")
            << QStringLiteral("measured-runs/training/C1-full-korthikanti-gpt-22b.json") << QStringList{};
        QTest::newRow("training, ideal") << QStringLiteral("measured-runs/training/R1-llama-3.1-8b-v6e-8chips.json")
                                         << QStringList{QStringLiteral("--ideal")};
        QTest::newRow("serving, v5e up to 16 chips")
            << QStringLiteral("plans/llama-3-70b-int8-v5e-serving.meshplan")
            << QStringList{QStringLiteral("--max-chips"), QStringLiteral("16"), QStringLiteral("--latency"), QStringLiteral("0.05")};
    }

    void searchPrintsPlansThatEvaluateToTheirResults()
    {
        QFETCH(QString, plan);
        QFETCH(QStringList, options);
        const auto printed = cliRow(QStringList{"search", MESHPLAN_TEST_DATA "/" + plan, "--json", "--top", "3"} + options);
        QVERIFY2(printed.code == 0, printed.err.c_str());
        const json doc = json::parse(printed.out);
        QCOMPARE(doc.at("format").get<std::string>(), std::string("meshplan/search"));
        const json &space = doc.at("space");
        QCOMPARE(space.at("evaluated").get<std::int64_t>() + space.at("pruned").get<std::int64_t>(),
                 space.at("size").get<std::int64_t>());
        QVERIFY(doc.at("plans_per_s").get<double>() > 0);
        QCOMPARE(doc.at("results").size(), std::size_t(3));
        QVERIFY(!doc.at("pareto").empty());
        QTemporaryDir dir;
        int n = 0;
        for (const char *list : {"results", "pareto"})
            for (const json &entry : doc.at(list)) {
                const std::string file = writeFile(dir, QStringLiteral("p%1.meshplan").arg(n++), entry.at("plan").dump(2));
                std::vector<std::string> evalArgs{"evaluate", file, "--json"};
                if (options.contains(QStringLiteral("--ideal")))
                    evalArgs.push_back("--ideal");
                const auto evaluated = cli(evalArgs);
                QVERIFY2(evaluated.code == 0, evaluated.err.c_str());
                QCOMPARE(json::parse(evaluated.out).dump(), entry.at("result").dump());
            }
        // Ranked best first by the objective.
        const json &r = doc.at("results");
        if (plan.startsWith(QStringLiteral("plans/"))) {
            // Tokens/s per chip: the steady state (continuous batching) over the deployment's chips.
            const auto perChip = [](const json &result) {
                return result.at("serving").at("steady_tokens_per_s").get<double>() / result.at("chips").get<double>();
            };
            for (std::size_t i = 1; i < r.size(); ++i)
                QVERIFY(perChip(r[i - 1].at("result")) >= perChip(r[i].at("result")));
            for (const json &entry : r)
                QVERIFY(entry.at("result").at("inference").at("decode_step_s").get<double>() <= 0.05);
        } else {
            for (std::size_t i = 1; i < r.size(); ++i)
                QVERIFY(r[i - 1].at("result").at("step").at("time_s").get<double>()
                        <= r[i].at("result").at("step").at("time_s").get<double>());
        }
    }

    void searchPrintsARankedTable()
    {
        const auto r = cli({"search", MESHPLAN_TEST_DATA "/measured-runs/training/C1-full-korthikanti-gpt-22b.json", "--top", "2"});
        QVERIFY2(r.code == 0, r.err.c_str());
        for (const char *text : {"Searched ", " plans/s", " evaluated, ", " skipped by bounds, ", " do not fit", "memory",
                                 "step", "MFU", "\n1    ", "\n2    ", "why: ", "x the plan's speed",
                                 "Pareto front, memory per chip against step time"})
            QVERIFY2(r.out.find(text) != std::string::npos, (std::string(text) + "\n" + r.out).c_str());
        QVERIFY(r.out.find("\n3    ") == std::string::npos);
    }

    void searchSavesTheBestPlanAtomically()
    {
        QTemporaryDir dir;
        const std::string target = dir.filePath(QStringLiteral("best.meshplan")).toStdString();
        const std::string plan = MESHPLAN_TEST_DATA "/measured-runs/training/C1-full-korthikanti-gpt-22b.json";
        const auto r = cli({"search", plan, "--json", "--top", "1", "--save-best", target});
        QVERIFY2(r.code == 0, r.err.c_str());
        const json best = json::parse(r.out).at("results").at(0);
        const auto evaluated = cli({"evaluate", target, "--json"});
        QVERIFY2(evaluated.code == 0, evaluated.err.c_str());
        QCOMPARE(json::parse(evaluated.out).dump(), best.at("result").dump());
        // On a full disk the file that was there is untouched and the error names the option and the cause.
        QFile old(QString::fromStdString(target));
        QVERIFY(old.open(QIODevice::ReadOnly));
        const QByteArray before = old.readAll();
        old.close();
        CliRun full{};
        {
            meshplan::testing::FullDisk disk(16);
            QVERIFY(disk.isActive());
            full = cli({"search", plan, "--top", "1", "--save-best", target});
        }
        QCOMPARE(full.code, 2);
        QVERIFY2(full.err.find("--save-best: ") != std::string::npos, full.err.c_str());
        QVERIFY2(full.err.find("best.meshplan") != std::string::npos, full.err.c_str());
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), before);
    }

    void searchRefusesBadOptions_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("flag");
        const QString training = QStringLiteral(MESHPLAN_TEST_DATA "/measured-runs/training/C1-full-korthikanti-gpt-22b.json");
        const QString serving = QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-int8-v5e-serving.meshplan");
        QTest::newRow("unknown objective") << QStringList{training, QStringLiteral("--objective"), QStringLiteral("fastest")}
                                           << QStringLiteral("--objective");
        QTest::newRow("serving objective for training")
            << QStringList{training, QStringLiteral("--objective"), QStringLiteral("tokens-per-chip")} << QStringLiteral("--objective");
        QTest::newRow("training objective for serving")
            << QStringList{serving, QStringLiteral("--objective"), QStringLiteral("step-time")} << QStringLiteral("--objective");
        QTest::newRow("top 0") << QStringList{training, QStringLiteral("--top"), QStringLiteral("0")} << QStringLiteral("--top");
        QTest::newRow("latency for training") << QStringList{training, QStringLiteral("--latency"), QStringLiteral("0.1")}
                                              << QStringLiteral("--latency");
        QTest::newRow("negative latency") << QStringList{serving, QStringLiteral("--latency"), QStringLiteral("-1")}
                                          << QStringLiteral("--latency");
        QTest::newRow("max chips 0") << QStringList{serving, QStringLiteral("--max-chips"), QStringLiteral("0")}
                                     << QStringLiteral("--max-chips");
        QTest::newRow("unknown option") << QStringList{training, QStringLiteral("--batches"), QStringLiteral("1")}
                                        << QStringLiteral("--batches");
    }

    void searchRefusesBadOptions()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, flag);
        const auto r = cliRow(QStringList{"search"} + args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.rfind("meshplan-cli: " + flag.toStdString() + ": ", 0) == 0, r.err.c_str());
        QVERIFY(r.out.empty());
    }

    // compare (issue 17): every summary number of two plans with its difference and ratio, then
    // what changed; the numbers are those evaluate prints for each file.
    void compareListsDifferencesAndChanges()
    {
        namespace m = meshplan::model;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string a = writeFile(dir, QStringLiteral("a.meshplan"), patchedPlan(QString()));
        const std::string b = writeFile(dir, QStringLiteral("b.meshplan"),
                                        patchedPlan(QStringLiteral(R"({"parallelism": {"tensor": 8, "fsdp": 512},
                                                                       "workload": {"remat": "selective"}})")));
        const json ra = json::parse(cli({"evaluate", a, "--json"}).out);
        const json rb = json::parse(cli({"evaluate", b, "--json"}).out);
        const double ta = ra["step"]["time_s"].get<double>();
        const double tb = rb["step"]["time_s"].get<double>();
        QVERIFY(ta != tb);

        const auto human = cli({"compare", a, b});
        QVERIFY2(human.code == 0, human.err.c_str());
        QVERIFY(human.err.empty());
        const auto lineStarting = [&human](const std::string &prefix) {
            std::istringstream lines(human.out);
            for (std::string line; std::getline(lines, line);)
                if (line.rfind(prefix, 0) == 0)
                    return line;
            return std::string();
        };
        const std::string stepLine = lineStarting("  step time ");
        QVERIFY2(!stepLine.empty(), human.out.c_str());
        for (const std::string &want : {m::formatCompared(ta, "s"), m::formatCompared(tb, "s"),
                                        m::formatDifference(tb - ta, "s"), m::formatRatio(tb / ta),
                                        std::string(tb < ta ? "better" : "worse")})
            QVERIFY2(stepLine.find(want) != std::string::npos, (stepLine + " lacks " + want).c_str());
        QVERIFY2(human.out.find("B/A") != std::string::npos, human.out.c_str());
        const auto endsWith = [](const std::string &line, const std::string &tail) {
            return line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0;
        };
        QVERIFY2(endsWith(lineStarting("  parallelism.tensor "), " 4 -> 8"), human.out.c_str());
        QVERIFY2(endsWith(lineStarting("  workload.remat "), " full -> selective"), human.out.c_str());
        QVERIFY2(human.out.find("What changed (A -> B):") != std::string::npos, human.out.c_str());

        const auto asJson = cli({"compare", a, b, "--json"});
        QCOMPARE(asJson.code, 0);
        const json j = json::parse(asJson.out);
        QVERIFY((j["format"]) == (json("meshplan/comparison")));
        QVERIFY((j["version"]) == (json(1)));
        // The same results evaluate prints, whole.
        QVERIFY((j["baseline"]) == (ra));
        QVERIFY((j["candidate"]) == (rb));
        bool sawTime = false;
        for (const json &d : j["differences"]) {
            QVERIFY(d.contains("path") && d.contains("baseline") && d.contains("candidate") && d.contains("difference")
                    && d.contains("ratio"));
            if (d["path"] == "step.time_s") {
                sawTime = true;
                QCOMPARE(d["baseline"].get<double>(), ta);
                QCOMPARE(d["difference"].get<double>(), tb - ta);
                QCOMPARE(d["ratio"].get<double>(), tb / ta);
            }
        }
        QVERIFY(sawTime);
        std::set<std::string> changed;
        for (const json &c : j["changes"])
            changed.insert(c["path"].get<std::string>());
        QVERIFY(changed.count("parallelism.tensor") && changed.count("parallelism.fsdp") && changed.count("workload.remat"));
        QVERIFY(!changed.count("title"));
        // --ideal compares the book's ideal model's results.
        const json ideal = json::parse(cli({"compare", a, b, "--json", "--ideal"}).out);
        QVERIFY((ideal["baseline"]) == (json::parse(cli({"evaluate", a, "--json", "--ideal"}).out)));
    }

    void compareRefusesBadInput()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string good = writeFile(dir, QStringLiteral("good.meshplan"), patchedPlan(QString()));
        const std::string bad = writeFile(dir, QStringLiteral("bad.meshplan"),
                                          patchedPlan(QStringLiteral(R"({"parallelism": {"tensor": -4}})")));
        const std::string missing = dir.filePath(QStringLiteral("missing.meshplan")).toStdString();
        for (const std::string &file : {bad, missing}) {
            const auto r = cli({"compare", good, file});
            QCOMPARE(r.code, 2);
            QVERIFY(r.out.empty());
            QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
            QVERIFY2(r.err.rfind("meshplan-cli: " + file + ": ", 0) == 0, r.err.c_str());
            const auto asJson = cli({"compare", file, good, "--json"});
            QCOMPARE(asJson.code, 2);
            QVERIFY((json::parse(asJson.out)["error"]["file"]) == (json(file)));
        }
        QVERIFY(cli({"compare", bad, good}).err.find("parallelism.tensor: ") != std::string::npos);
        QCOMPARE(cli({"compare", good}).code, 2);
        QCOMPARE(cli({"compare", good, good, good}).code, 2);
        QCOMPARE(cli({"compare", good, good, "--chip", "tpu-v5p"}).code, 2);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
