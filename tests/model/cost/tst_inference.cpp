// Inference plans: the book's serving formulas (ch. 7-8) in ideal mode, serving behaviour, the
// sweep and the search, and bad inference plans refused with the field named.
#include "cost/evaluation.h"
#include "explore/servingsearch.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/expertload.h"
#include "transformer/modelcatalog.h"

#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using nlohmann::json;
using namespace meshplan::model;

namespace {

json servingPlan(const std::string &model, const json &topology, int tensor, std::int64_t batch, std::int64_t prompt,
                 std::int64_t generate, const char *weights = "bf16", const char *kv = "bf16")
{
    return {{"format", "meshplan/plan"},
            {"version", 1},
            {"model", model},
            {"hardware", {{"chip", "tpu-v5e"}, {"topology", topology}}},
            {"parallelism", {{"tensor", tensor}}},
            {"workload",
             {{"kind", "inference"}, {"batch", batch}, {"prompt_len", prompt}, {"generate_len", generate},
              {"weight_dtype", weights}, {"kv_dtype", kv}}}};
}

Plan parse(const json &doc)
{
    auto p = planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    return p.value();
}

Evaluation run(const json &doc, CostMode mode = CostMode::Ideal)
{
    auto e = evaluate(parse(doc), mode);
    if (!e)
        qFatal("%s", e.error().toString().c_str());
    return e.value();
}

/// The plan's evaluation with every number's derivation recorded.
Derivations explained(const json &doc, CostMode mode = CostMode::Achievable)
{
    Derivations why;
    if (!evaluate(parse(doc), mode, &why))
        qFatal("cannot evaluate the plan");
    return why;
}

/// One inference plan on `gpus` GPUs of one H100 node, tensor- (or expert-) parallel.
// The decode step's tensor all-reduce among an evaluation's collectives, or null.
const CollectiveUse *decodeAllReduce(const Evaluation &e)
{
    for (const auto &c : e.collectives)
        if (c.purpose == "decode: tensor activations")
            return &c;
    return nullptr;
}

json gpuPlan(const std::string &model, int gpus, std::int64_t batch, std::int64_t prompt, std::int64_t generate,
             const char *weights = "bf16", const char *parallel = "tensor")
{
    json doc = servingPlan(model, {{"nodes", 1}, {"gpus_per_node", gpus}}, 1, batch, prompt, generate, weights, "bf16");
    doc["hardware"]["chip"] = "h100-sxm";
    doc["parallelism"] = {{parallel, gpus}};
    return doc;
}

#define QVERIFY_NEAR(got, want, rtol)                                                                                  \
    QVERIFY2(std::fabs((got) - (want)) <= (rtol) * std::fabs(want),                                                    \
             qPrintable(QStringLiteral("got %1, want %2").arg(got, 0, 'g', 8).arg(want, 0, 'g', 8)))

} // namespace

class TestInference : public QObject
{
    Q_OBJECT

private slots:
    // Below the critical batch a short decode is bound by its weight reads, and the warning says
    // so. LLaMA-2 13B keeps every head's keys and values (819,200 B per token): at batch 4 and
    // 32k tokens of context over 2 H100s that is 54 GB of KV per chip against 13 GB of weights,
    // and the warning names the KV reads instead.
    void decodeBelowCriticalBatchNamesWhatBindsIt()
    {
        const auto text = [](const Evaluation &e) {
            for (const auto &w : e.warnings)
                if (w.code == "decode-below-critical-batch")
                    return w.message;
            return std::string();
        };
        const Evaluation shortContext = run(gpuPlan("llama-2-13b", 2, 4, 512, 128), CostMode::Achievable);
        QVERIFY(text(shortContext).find("bound by reading weights") != std::string::npos);
        const Evaluation longContext = run(gpuPlan("llama-2-13b", 2, 4, 32768, 128), CostMode::Achievable);
        QVERIFY(longContext.memory.fits);
        QVERIFY2(text(longContext).find("bound by reading the KV cache") != std::string::npos, text(longContext).c_str());
    }

    // Book ch. 7 table: LLaMA-2 13B on 8 v5e, 8k context, bf16: step = (B x KV + 26e9) / (8 x 8.2e11).
    void llama2TableStepTimes_data()
    {
        QTest::addColumn<int>("batch");
        QTest::addColumn<double>("bookMs");
        QTest::newRow("1") << 1 << 4.98;
        QTest::newRow("8") << 8 << 12.13;
        QTest::newRow("16") << 16 << 20.30;
    }
    void llama2TableStepTimes()
    {
        QFETCH(int, batch);
        QFETCH(double, bookMs);
        const auto e = run(servingPlan("llama-2-13b", {4, 2}, 8, batch, 8192, 1));
        // Every weight is read per step except the input embedding, of which only B rows are.
        const double params = double(countParams(*ModelCatalog::builtin().find("llama-2-13b")).total) - 32000.0 * 5120;
        const double kv = 2.0 * 2 * 40 * 40 * 128 * 8192.5; // bytes per sequence at the mean context
        const double exact = (batch * kv + 2 * params) / (8 * 8.2e11);
        QVERIFY(std::fabs(e.serving.decodeBookStepS - exact) < 1e-6 * exact);
        QVERIFY(std::fabs(e.serving.decodeBookStepS * 1e3 - bookMs) < 0.015 * bookMs); // book counts the embedding table too
        // Reality adds the tensor-parallel all-reduces, latency-bound at this batch.
        QVERIFY(e.inference->decodeStepS > e.serving.decodeBookStepS);
        QVERIFY(e.memory.fits);
    }

    void llama2TableRunsOutOfMemoryPast16()
    {
        const auto fits = run(servingPlan("llama-2-13b", {4, 2}, 8, 16, 8192, 1));
        const auto oom = run(servingPlan("llama-2-13b", {4, 2}, 8, 32, 8192, 1));
        QVERIFY(fits.memory.fits);
        QVERIFY(!oom.memory.fits);
        QCOMPARE(oom.bound, std::string("memory-capacity"));
        QCOMPARE(oom.serving.maxBatch, 16.0);
    }

    // Book ch. 8 Q2-Q3: LLaMA-3 70B, int8 weights and KV, batch 32 at 8k on a v5e 4x2: 112 GB in
    // all, 17 ms per step (book with 8.1e11), 8.5 ms on a 4x4; decode is below the critical 120.
    void llama3_70bOnV5e()
    {
        const auto small = run(servingPlan("llama-3-70b", {4, 2}, 8, 32, 8192, 1, "int8", "int8"));
        QVERIFY(small.memory.fits);
        QVERIFY(std::fabs(small.serving.decodeBookStepS - 112e9 / (8 * 8.2e11)) < 0.03 * 112e9 / (8 * 8.2e11));
        QVERIFY(std::fabs(small.serving.criticalBatch - 1.97e14 / (2 * 8.2e11)) < 1e-6); // int8 weights, bf16 FLOPs: 120
        const auto large = run(servingPlan("llama-3-70b", {4, 4}, 16, 32, 8192, 1, "int8", "int8"));
        QVERIFY(std::fabs(large.serving.decodeBookStepS / small.serving.decodeBookStepS - 0.5) < 0.01);
        QVERIFY(std::fabs(small.kvCacheBytesPerToken - 163840) < 1e-9);
    }

    // Decode MFU: one step's matmul FLOPs per chip, 2 x (params - input embedding) x B / chips,
    // over (step x listed peak). LLaMA-2 13B, batch 16 on 8 v5e (ideal): 2 x 12.85e9 x 16 / 8 =
    // 5.14e10 FLOPs in a step of ~20 ms at 1.97e14: ~1.3%, the book's point that decode far below
    // the critical batch (240) wastes the MXUs. Doubling the batch nearly doubles it.
    void decodeMfuIsMatmulFlopsOverStepTimesPeak()
    {
        const auto e = run(servingPlan("llama-2-13b", {4, 2}, 8, 16, 8192, 1));
        const double matmulParams = double(countParams(*ModelCatalog::builtin().find("llama-2-13b")).total) - 32000.0 * 5120;
        const double flopsPerChip = 2.0 * matmulParams * 16 / 8;
        const double want = flopsPerChip / (e.inference->decodeStepS * 1.97e14);
        QVERIFY2(std::fabs(e.serving.decodeMfu - want) < 0.02 * want,
                 qPrintable(QStringLiteral("%1 vs %2").arg(e.serving.decodeMfu).arg(want)));
        QVERIFY(e.serving.decodeMfu > 0.005 && e.serving.decodeMfu < 0.03);
        const auto half = run(servingPlan("llama-2-13b", {4, 2}, 8, 8, 8192, 1));
        QVERIFY(half.serving.decodeMfu < e.serving.decodeMfu);
    }

    void criticalBatchDependsOnWeightDtype()
    {
        const auto bf16 = run(servingPlan("llama-3-8b", {2, 2}, 4, 8, 1024, 16));
        QVERIFY(std::fabs(bf16.serving.criticalBatch - 1.97e14 / 8.2e11) < 1e-6); // 240
        const auto mixtral = run(servingPlan("mixtral-8x7b", {4, 4}, 16, 8, 1024, 16));
        QVERIFY(std::fabs(mixtral.serving.criticalBatch - 240.2439 * 8 / 2) < 0.01); // x E/k
    }

    void largerBatchRaisesThroughputAndLatency()
    {
        const Plan plan = parse(servingPlan("llama-3-8b", {2, 2}, 4, 1, 2048, 256));
        const auto points = latencyThroughputSweep(plan, batchLadder(64));
        QVERIFY(points.hasValue());
        for (std::size_t i = 1; i < points->size(); ++i) {
            QVERIFY((*points)[i].decodeStepS >= (*points)[i - 1].decodeStepS);
            QVERIFY((*points)[i].tokensPerS > (*points)[i - 1].tokensPerS);
        }
    }

    // Four decoding replicas (data 4) cannot run one or two sequences: the sweep leaves those
    // batches out instead of failing, and says why when no batch remains.
    void sweepSkipsBatchesBelowTheReplicaCount()
    {
        json doc = servingPlan("llama-3-8b", {4, 2}, 2, 8, 2048, 256);
        doc["parallelism"]["data"] = 4;
        const Plan plan = parse(doc);
        const auto points = latencyThroughputSweep(plan, {1, 2, 4, 8});
        QVERIFY(points.hasValue());
        QCOMPARE(points->size(), std::size_t(2));
        QCOMPARE(points->front().batch, std::int64_t(4));
        QCOMPARE(points->back().batch, std::int64_t(8));
        const auto none = latencyThroughputSweep(plan, {1, 2});
        QVERIFY(!none.hasValue());
        QCOMPARE(none.error().path, std::string("workload.batch"));
        QVERIFY(none.error().message.find("4 decoding replicas") != std::string::npos);
    }

    void cheapestMeetsTheTarget()
    {
        const Plan plan = parse(servingPlan("llama-3-70b", {4, 2}, 8, 32, 2048, 512, "int8", "int8"));
        const auto choice = cheapestServing(plan, 0.030, 64);
        QVERIFY2(choice.hasValue(), choice ? "" : choice.error().message.c_str());
        QVERIFY(choice->point.decodeStepS <= 0.030);
        QVERIFY(choice->point.fits);
        // A tighter target can only cost more.
        const auto tight = cheapestServing(plan, 0.015, 64);
        QVERIFY(tight.hasValue());
        QVERIFY(tight->point.costPerMillionTokens >= choice->point.costPerMillionTokens);
        QVERIFY(!cheapestServing(plan, 1e-5, 64).hasValue());
    }

    void disaggregatedServingTransfersTheKvCache()
    {
        json doc = servingPlan("llama-3-8b", {4, 4}, 4, 64, 4096, 256);
        doc["parallelism"]["data"] = 4;
        doc["workload"]["serving"] = "disaggregated";
        doc["workload"]["prefill_chips"] = 4;
        const auto e = run(doc, CostMode::Achievable);
        QCOMPARE(e.serving.prefillReplicas, 1.0);
        QCOMPARE(e.serving.decodeReplicas, 3.0);
        QVERIFY(e.serving.kvTransferS > 0);
        QVERIFY(std::isfinite(e.inference->tokensPerS) && e.inference->tokensPerS > 0);
    }

    void badInferencePlans_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("path");
        QTest::newRow("zero generation") << R"({"workload": {"generate_len": 0}})" << "workload.generate_len";
        QTest::newRow("negative batch") << R"({"workload": {"batch": -3}})" << "workload.batch";
        QTest::newRow("unknown kv dtype") << R"({"workload": {"kv_dtype": "fp6"}})" << "workload.kv_dtype";
        QTest::newRow("disaggregated without prefill chips")
            << R"({"workload": {"serving": "disaggregated"}})" << "workload.prefill_chips";
        QTest::newRow("prefill chips not a replica")
            << R"({"workload": {"serving": "disaggregated", "prefill_chips": 3}})" << "workload.prefill_chips";
        QTest::newRow("tensor not dividing heads") << R"({"parallelism": {"tensor": 3, "data": 1}})" << "parallelism.tensor";
    }
    void badInferencePlans()
    {
        QFETCH(QString, patch);
        QFETCH(QString, path);
        json doc = servingPlan("llama-3-8b", {2, 2}, 4, 8, 1024, 16);
        doc.merge_patch(json::parse(patch.toStdString()));
        auto p = planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin());
        std::string got;
        if (!p) {
            got = p.error().path;
        } else {
            auto e = evaluate(p.value());
            QVERIFY(!e.hasValue());
            got = e.error().path;
        }
        QCOMPARE(QString::fromStdString(got), path);
    }

    // Mechanism: a GPU decode step reads its weights at the decode share of HBM (0.70 on H100), its
    // KV cache at the decode attention kernel's measured share for the bytes one layer reads, and
    // pays 10 kernels x 2 us per layer. Exact to rounding.
    void gpuDecodeReadsAtDecodeBandwidthPlusKernelLatency()
    {
        const json doc = gpuPlan("llama-3-8b", 1, 1, 128, 2);
        const auto ideal = run(doc, CostMode::Ideal);
        const auto real = run(doc, CostMode::Achievable);
        // The ideal mode reads at the full 3.35e12 B/s; the decode share is 0.70 of it.
        QVERIFY(std::fabs(real.serving.decodeWeightsS - ideal.serving.decodeWeightsS / 0.70) < 1e-9 * real.serving.decodeWeightsS);
        // One sequence of 128 + 1 tokens (the mean context) x 8 KV heads x 128 x 2 x 2 B = 528,384 B a
        // layer: just past the single-request curve's first point (0.02 at 524 kB; 0.03 at 1,049 kB,
        // whose time is held to the 2,097 kB read's, 0.06). One request's time is log-log between.
        const double f = std::log(528.384 / 524.0) / std::log(1049.0 / 524.0);
        const double kvShare = 528.384 / ((524.0 / 0.02) * std::pow((2097.0 / 0.06) / (524.0 / 0.02), f));
        QVERIFY(std::fabs(real.serving.decodeKvS - ideal.serving.decodeKvS / kvShare) < 1e-9 * real.serving.decodeKvS);
        // Step = weights and KV + elementwise traffic + 32 layers x 10 kernels x 2 us (no collectives at tp 1).
        const double elementwise = 20.0 * 1 * 4096 * 2.0 * 32 / (3.35e12 * 0.85);
        const double expected = real.serving.decodeBookStepS + elementwise + 32 * 10 * 2e-6;
        QVERIFY2(std::fabs(real.inference->decodeStepS - expected) < 1e-9 * expected,
                 qPrintable(QString::number(real.inference->decodeStepS) + " vs " + QString::number(expected)));
        // TPUs keep the catalog's hbm_efficiency and no kernel latency (no source for either).
        const auto tpu = run(servingPlan("llama-3-8b", {1, 1}, 1, 1, 128, 2), CostMode::Achievable);
        const auto tpuIdeal = run(servingPlan("llama-3-8b", {1, 1}, 1, 1, 128, 2), CostMode::Ideal);
        QVERIFY(std::fabs(tpu.serving.decodeWeightsS - tpuIdeal.serving.decodeWeightsS / 0.9) < 1e-9 * tpu.serving.decodeWeightsS);
    }

    // Mechanism: a decode step's weight matmuls pay their reduction depth as a prefill's do (the same
    // matmuls: XLA's H100 GEMM table, K0 = 137 at bf16). Hand-derived for Llama-3-8B at TP1, FLOPs
    // per token and layer: q/k/v 2 x 4096 x 48 x 128 and the output 2 x 4096 x 4096 and up/gate
    // 2 x 2 x 4096 x 14336 reduce over 4096; down 2 x 14336 x 4096 over 14336. At batch 512 the
    // step is compute-bound, and its FLOP time is the ideal one x shape / flops_fraction: an
    // engine's 16-bit matmuls on H100, 0.803 (MAMF) x 0.845 = 0.67854.
    void decodeMatmulsPayTheirDepth()
    {
        const double overDModel = 2.0 * 4096 * 48 * 128 + 2.0 * 4096 * 4096 + 4.0 * 4096 * 14336;
        const double down = 2.0 * 14336 * 4096;
        const double shape = (overDModel * (4096.0 + 137.0) / 4096.0 + down * (14336.0 + 137.0) / 14336.0) / (overDModel + down);
        QVERIFY(std::fabs(shape - 1.027015) < 1e-6);
        const json doc = gpuPlan("llama-3-8b", 1, 512, 128, 2);
        const auto ideal = run(doc, CostMode::Ideal);
        const auto real = run(doc, CostMode::Achievable);
        const double ratio = real.serving.decodeComputeS / ideal.serving.decodeComputeS;
        const double fraction = 0.803 * 0.845;
        QVERIFY2(std::fabs(ratio - shape / fraction) < 1e-9 * ratio, qPrintable(QString::number(ratio, 'g', 12)));
        // MFU counts the model's FLOPs, not the depth's overhead.
        QVERIFY(std::fabs(real.serving.decodeMfu - real.serving.decodeComputeS * fraction / shape / real.inference->decodeStepS) < 1e-9);
    }

    // Mechanism: a decode attention kernel fills HBM only when one layer's call reads enough bytes
    // (FlashInfer's decode benchmarks, catalog decode_attention). Hand-derived on H100 for Llama-3-8B
    // (8 KV heads x 128 x 2 x 2 B = 4,096 B per token and layer):
    //  - batch 64, context 1,024 + 512: 64 x 1,536 x 4,096 B = 402.7 MB a layer, between the batched
    //    curve's 268,435 kB (0.76) and 536,871 kB (0.835), log-linear in the bytes;
    //  - batch 4 at about the same bytes (mean context 24,576 + 1: 402.7 MB a layer): half of the
    //    way (log 4 / log 16) from the single-request curve (0.73 .. 0.825 there, its time log-log
    //    between the points) to the batched one;
    //  - past the largest point (batch 64 x 8,192 tokens: 2.1 GB a layer) the share stays 0.885.
    // The cache is then read slower than at the streaming share (0.85) below about 0.66 GB a layer.
    void decodeAttentionShareGrowsWithTheBytesALayerReads()
    {
        const auto kvShare = [](std::int64_t batch, std::int64_t prompt, std::int64_t generate) {
            const json doc = gpuPlan("llama-3-8b", 1, batch, prompt, generate);
            return run(doc, CostMode::Ideal).serving.decodeKvS / run(doc, CostMode::Achievable).serving.decodeKvS;
        };
        const double octave = std::log(536871.0 / 268435.0); // the curve's points, in kB as listed
        const double batched = 0.76 + 0.075 * std::log(402653.184 / 268435.0) / octave;
        QVERIFY2(std::fabs(kvShare(64, 1024, 1024) - batched) < 1e-9, qPrintable(QString::number(kvShare(64, 1024, 1024), 'g', 12)));
        // One request's time, log-log between the points' (268,435 kB / 0.73, 536,871 kB / 0.825).
        const double single = 402669.568 / ((268435.0 / 0.73)
                                            * std::pow((536871.0 / 0.825) / (268435.0 / 0.73),
                                                       std::log(402669.568 / 268435.0) / octave));
        const double batchedThere = 0.76 + 0.075 * std::log(402669.568 / 268435.0) / octave;
        const double four = single + (batchedThere - single) * std::log(4.0) / std::log(16.0);
        QVERIFY2(std::fabs(kvShare(4, 24576, 2) - four) < 1e-9, qPrintable(QString::number(kvShare(4, 24576, 2))));
        QVERIFY(std::fabs(kvShare(64, 8192, 2) - 0.885) < 1e-9);
        QVERIFY(kvShare(64, 1024, 1024) < 0.85);
        // TPUs have no such curve: the cache streams at hbm_efficiency whatever its size.
        const json tpu = servingPlan("llama-3-8b", {1, 1}, 1, 4, 128, 2);
        QVERIFY(std::fabs(run(tpu, CostMode::Ideal).serving.decodeKvS / run(tpu, CostMode::Achievable).serving.decodeKvS - 0.9) < 1e-9);
    }

    // Mechanism: a prefill moves its intermediates through HBM beside the matmuls, as a decode step
    // does: about 20 d_model-wide tensors a token and layer, written and read in the activation
    // dtype, split over the tensor ranks. LLaMA-3 8B, 4 prompts of 2048 tokens (8192 tokens), 32
    // layers, d_model 4096, bf16, at 0.85 of H100's 3.35 TB/s: 15.1 ms on one GPU, half on two.
    // The book's ideal model has none.
    void prefillMovesItsElementwiseTraffic()
    {
        const auto elementwise = [](int gpus, CostMode mode) {
            Derivations why;
            const auto e = evaluate(parse(gpuPlan("llama-3-8b", gpus, 4, 2048, 128)), mode, &why);
            if (!e)
                qFatal("%s", e.error().toString().c_str());
            if (mode == CostMode::Achievable && !e->terms.count("prefill_elementwise_s"))
                qFatal("no terms.prefill_elementwise_s");
            return e->terms.count("prefill_elementwise_s") ? e->terms.at("prefill_elementwise_s") : 0.0;
        };
        const double one = 20.0 * 8192 * 4096 * 2.0 * 32 / (0.85 * 3.35e12);
        QVERIFY_NEAR(elementwise(1, CostMode::Achievable), one, 1e-12);
        QVERIFY_NEAR(elementwise(2, CostMode::Achievable), one / 2.0, 1e-12);
        QCOMPARE(elementwise(1, CostMode::Ideal), 0.0);
    }

    // Mechanism: a prefill's attention runs at the fused kernel's measured forward rate for the
    // prompt's length, in 16 bits, keeping the share of its benchmark an engine's 16-bit matmuls
    // keep (0.845); weight matmuls at the matmul rate. Hand-derived from the catalog: H100
    // FlashAttention-3 forward 0.527 of peak at 2k tokens and 0.623 from 16k (flat beyond),
    // matmuls 0.803 x 0.845 in bf16 and 1979 x 0.709 x (0.5729 / 0.803) in fp8 (the step's share).
    void prefillAttentionRunsAtTheKernelsForwardRate()
    {
        const auto rate = [](const json &doc, CostMode mode) {
            Derivations why;
            auto e = evaluate(parse(doc), mode, &why);
            if (!e)
                qFatal("%s", e.error().toString().c_str());
            const DerivationValue *v = why.at("terms.prefill_flops_s").find("attention_factor");
            return v ? v->value : -1.0;
        };
        const auto near = [](double got, double want) { return std::fabs(got - want) < 1e-3 * want; };
        const double kept = 0.845;
        QVERIFY(near(rate(gpuPlan("llama-3-8b", 1, 1, 32768, 2), CostMode::Achievable), 0.803 * kept / (0.623 * kept)));
        QVERIFY(near(rate(gpuPlan("llama-3-8b", 1, 1, 2048, 2), CostMode::Achievable), 0.803 * kept / (0.527 * kept)));
        // fp8 matmuls, bf16 attention: more than twice slower than the matmuls.
        json fp8 = gpuPlan("llama-3-8b", 1, 1, 32768, 2, "fp8");
        fp8["workload"]["compute_dtype"] = "fp8";
        QVERIFY(near(rate(fp8, CostMode::Achievable), 1979.0 * 0.709 * (0.5729 / 0.803) / (989.0 * 0.623 * kept)));
        // The book's model, and TPUs (no kernel curve), run attention at the matmul rate.
        QCOMPARE(rate(gpuPlan("llama-3-8b", 1, 1, 32768, 2), CostMode::Ideal), 1.0);
        QCOMPARE(rate(servingPlan("llama-3-8b", {1, 1}, 1, 1, 32768, 2), CostMode::Achievable), 1.0);
        // So a 32k-token prefill of LLaMA-3 8B, where attention is about half the FLOPs, takes
        // longer than at the matmul rate by about a seventh.
        const auto longPrompt = run(gpuPlan("llama-3-8b", 1, 1, 32768, 2), CostMode::Achievable);
        const auto ideal = run(gpuPlan("llama-3-8b", 1, 1, 32768, 2), CostMode::Ideal);
        QVERIFY(longPrompt.inference->prefillS > ideal.inference->prefillS / (0.803 * kept));
    }

    // Mechanism: an inference engine's 16-bit matmuls keep 0.845 of their benchmark rate (Vidur's
    // kernel timings: 0.815 of A100's MAMF, 0.875 of H100's net of its shape term), more than a
    // training step's 0.7135; other formats keep the chip's fraction (8-bit the step's share, fp4
    // its own), TPUs their calibrated one, and training is untouched. Hand-derived: A100
    // 0.869 x 0.845 = 0.73431, H100 0.803 x 0.845 = 0.67854, H100 fp8 0.709 x 0.5729 / 0.803 =
    // 0.50584, A100 int8 0.62 (no 8-bit benchmark), B200 fp4 0.5536, TPU v5e 0.8.
    void sixteenBitInferenceKeepsMoreOfItsBenchmark()
    {
        const auto fraction = [](const json &doc, CostMode mode = CostMode::Achievable) {
            const Derivations why = explained(doc, mode);
            const DerivationValue *v = why.at("terms.prefill_flops_s").find("flops_fraction");
            return v ? v->value : -1.0;
        };
        const auto onChip = [](json doc, const char *chip, const char *weights, const char *compute) {
            doc["hardware"]["chip"] = chip;
            doc["workload"]["weight_dtype"] = weights;
            doc["workload"]["compute_dtype"] = compute;
            return doc;
        };
        const json base = gpuPlan("llama-3-8b", 1, 1, 2048, 2);
        const json a100 = onChip(base, "a100-80gb", "bf16", "bf16");
        QVERIFY(std::fabs(fraction(a100) - 0.869 * 0.845) < 1e-12);
        QVERIFY(std::fabs(fraction(base) - 0.803 * 0.845) < 1e-12);
        QVERIFY(std::fabs(fraction(onChip(base, "h100-sxm", "fp8", "fp8")) - 0.709 * 0.5729 / 0.803) < 1e-12);
        // fp8 on a chip without fp8 units runs as bf16, so it keeps the 16-bit share; int8, which
        // A100 runs on its int8 units, and fp4 on B200 keep the chip's own fraction.
        QVERIFY(std::fabs(fraction(onChip(base, "a100-80gb", "fp8", "fp8")) - 0.869 * 0.845) < 1e-12);
        QCOMPARE(fraction(onChip(base, "a100-80gb", "int8", "int8")), 0.62);
        QCOMPARE(fraction(onChip(base, "b200", "fp4", "fp4")), 0.5536);
        QCOMPARE(fraction(servingPlan("llama-3-8b", {1, 1}, 1, 1, 2048, 2)), 0.8);
        QCOMPARE(fraction(a100, CostMode::Ideal), 1.0);
        // So an A100 prefill's matmuls run 0.845 / 0.7135 = 1.184x faster than at the training
        // step's fraction, and the chip's fraction for training stays 0.62.
        QVERIFY(std::fabs(fraction(a100) / 0.62 - 1.1844) < 1e-3);
        const Chip &a100Chip = *ChipCatalog::builtin().find("a100-80gb");
        QCOMPARE(a100Chip.achievableFlopsFraction(DType::Bf16), 0.62);
        const Derivations why = explained(a100);
        const DerivationValue *v = why.at("terms.prefill_flops_s").find("flops_fraction");
        QVERIFY(v);
        QVERIFY2(QString::fromStdString(v->source).contains(QStringLiteral("0.869")) && QString::fromStdString(v->source).contains(QStringLiteral("x 0.845")),
                 v->source.c_str());
    }

    // The inference kernel share against the kernel timings it comes from
    // (tests/data/kernel-benchmarks/vidur-linear-layers.json, a sample of Vidur's fp16 linear
    // layers at M >= 1024): the median share of MAMF is 0.815 on A100, which has no shape term,
    // and 0.877 on H100 with its shape factor K / (K + 137) divided out; the share is their mean,
    // within 0.01, and each chip's median lies within 0.04 of it.
    void inferenceShareFollowsVidursKernelTimings()
    {
        QFile file(QStringLiteral(MESHPLAN_TEST_DATA "/kernel-benchmarks/vidur-linear-layers.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const json data = json::parse(file.readAll().toStdString());
        const auto &catalog = ChipCatalog::builtin();
        const auto medianShare = [&](const char *gpu, const char *chipId) {
            const Chip &chip = *catalog.find(chipId);
            std::vector<double> shares;
            for (const json &p : data["points"]) {
                if (p["gpu"] != gpu)
                    continue;
                const double m = p["m"], n = p["n"], k = p["k"], seconds = p["time_ms"].get<double>() * 1e-3;
                const double benchmark = chip.peakFlops(DType::Fp16) * chip.achievable.matmulBenchmarkFraction;
                shares.push_back(2.0 * m * n * k / seconds / benchmark / chip.matmulShapeEfficiency(k, DType::Fp16));
            }
            std::sort(shares.begin(), shares.end());
            return shares.empty() ? 0.0 : shares[shares.size() / 2];
        };
        const double a100 = medianShare("a100", "a100-80gb");
        const double h100 = medianShare("h100", "h100-sxm");
        QVERIFY2(std::fabs(a100 - 0.815) < 0.005, qPrintable(QString::number(a100)));
        QVERIFY2(std::fabs(h100 - 0.877) < 0.005, qPrintable(QString::number(h100)));
        // The share the model uses, read off an A100 serving plan's flops_fraction.
        json doc = gpuPlan("llama-3-8b", 1, 1, 2048, 2);
        doc["hardware"]["chip"] = "a100-80gb";
        const Derivations why = explained(doc);
        const DerivationValue *fraction = why.at("terms.prefill_flops_s").find("flops_fraction");
        QVERIFY(fraction);
        const double share = fraction->value / 0.869;
        QVERIFY2(std::fabs(share - (a100 + h100) / 2) < 0.01, qPrintable(QString::number(share)));
        QVERIFY(std::fabs(share - a100) < 0.04 && std::fabs(share - h100) < 0.04);
    }

    // Mechanism: int4 stores an fp16 scale and a 4-bit zero per 128 weights (2.5 bytes a group),
    // and low-precision weights are read at a lower share of HBM (8-bit 0.80, 4-bit 0.50).
    void weightOnlyQuantizationPaysScalesAndDequantization()
    {
        const auto bf16 = run(gpuPlan("llama-3-8b", 1, 1, 128, 2, "bf16"), CostMode::Achievable);
        const auto int8 = run(gpuPlan("llama-3-8b", 1, 1, 128, 2, "int8"), CostMode::Achievable);
        const auto int4 = run(gpuPlan("llama-3-8b", 1, 1, 128, 2, "int4"), CostMode::Achievable);
        const auto int4Ideal = run(gpuPlan("llama-3-8b", 1, 1, 128, 2, "int4"), CostMode::Ideal);
        const double int4Bytes = 0.5 + 2.5 / 128.0;
        QVERIFY(std::fabs(int4.memory.params / int4Ideal.memory.params - int4Bytes / 0.5) < 1e-9);
        QVERIFY(std::fabs(int8.serving.decodeWeightsS / bf16.serving.decodeWeightsS - 0.5 / 0.80) < 1e-9);
        QVERIFY(std::fabs(int4.serving.decodeWeightsS / bf16.serving.decodeWeightsS - int4Bytes / 2.0 / 0.50) < 1e-9);
        // So the batch-1 gains stay well short of 2x and 4x.
        const double gain8 = bf16.inference->decodeStepS / int8.inference->decodeStepS;
        const double gain4 = bf16.inference->decodeStepS / int4.inference->decodeStepS;
        QVERIFY2(gain8 > 1.3 && gain8 < 1.7, qPrintable(QString::number(gain8)));
        QVERIFY2(gain4 > 1.5 && gain4 < 2.1, qPrintable(QString::number(gain4)));
    }

    // Mechanism: expert-parallel prefill overlaps each micro-batch's all-to-alls with the other's
    // compute, and dispatches fp8 when the experts are fp8 (combine stays bf16).
    void expertPrefillAllToAllHidesBehindTheOtherMicroBatch()
    {
        const auto e = run(gpuPlan("mixtral-8x7b", 8, 1, 4096, 2, "fp8", "expert"), CostMode::Achievable);
        const CollectiveUse *dispatch = nullptr;
        const CollectiveUse *combine = nullptr;
        for (const auto &c : e.collectives) {
            if (c.purpose == "prefill: expert dispatch")
                dispatch = &c;
            if (c.purpose == "prefill: expert combine")
                combine = &c;
        }
        QVERIFY(dispatch && combine);
        QVERIFY(std::fabs(dispatch->bytes - combine->bytes / 2.0) < 1e-9 * combine->bytes); // fp8 vs bf16
        // 4096 tokens of a layer's compute outlast the two all-to-alls over NVLink: nothing exposed.
        QVERIFY(dispatch->timeS > 0 && combine->timeS > 0);
        QCOMPARE(dispatch->exposedS, 0.0);
        QCOMPARE(combine->exposedS, 0.0);
        // The book's ideal mode leaves them exposed, both in bf16.
        const auto book = run(gpuPlan("mixtral-8x7b", 8, 1, 4096, 2, "fp8", "expert"), CostMode::Ideal);
        for (const auto &c : book.collectives)
            if (c.purpose == "prefill: expert dispatch")
                QVERIFY(c.exposedS > 0);
    }

    // A prefill batch goes through each MoE layer together: one dispatch and one combine per
    // micro-batch and layer carry all its routed tokens, so sequences of 1k or 4k tokens cost the
    // same all-to-alls at the same tokens per step. DeepSeek-V3 (58 MoE layers, top-8, d 7168)
    // over EP32 on 4 H100 nodes, 524,288 tokens, fp8: each dispatch carries half the step's tokens,
    // 262,144 x 8 x 7168 x 1 byte; each combine the same in bf16. The book's mode sends the whole
    // batch at once in the matmul dtype: half as many, each twice the tokens.
    void expertPrefillDispatchesTheBatchOncePerLayer()
    {
        const auto plan = [](std::int64_t sequences, std::int64_t prompt) {
            json doc = gpuPlan("deepseek-v3", 8, sequences, prompt, 1, "fp8", "expert");
            doc["hardware"]["topology"] = {{"nodes", 4}, {"gpus_per_node", 8}};
            doc["parallelism"] = {{"expert", 32}};
            return doc;
        };
        const auto find = [](const Evaluation &e, const char *purpose) {
            for (const auto &c : e.collectives)
                if (c.purpose == purpose)
                    return c;
            qFatal("no %s", purpose);
        };
        const auto longPrompts = run(plan(128, 4096), CostMode::Achievable);
        const auto shortPrompts = run(plan(512, 1024), CostMode::Achievable);
        for (const auto *purpose : {"prefill: expert dispatch", "prefill: expert combine"}) {
            const auto a = find(longPrompts, purpose);
            const auto b = find(shortPrompts, purpose);
            QCOMPARE(a.countPerStep, std::int64_t(2 * 58));
            QCOMPARE(b.countPerStep, a.countPerStep);
            QCOMPARE(b.timeS, a.timeS);
        }
        // The busiest of the 32 ranks receives its load's share of each micro-batch: 65,536
        // routed pairs per rank, 1 + z(32) sqrt(0.0427^2 + (31/32)/65536) = 1.08863 of the mean
        // (expertload.cpp).
        const double load = busiestExpertRankLoad(32, 65536.0);
        QVERIFY(std::fabs(load - 1.08863) < 1e-5);
        const double dispatch = 262144.0 * 8 * 7168;
        QCOMPARE(find(longPrompts, "prefill: expert dispatch").bytes, dispatch * load);
        QCOMPARE(find(longPrompts, "prefill: expert combine").bytes, 2.0 * dispatch * load);
        // The all-to-alls the other micro-batch hides still hold H100's collective_sm_share (0.152)
        // of the SMs: the prefill pays that share of their hidden time (here all of it is hidden).
        Derivations why;
        const auto explained = evaluate(parse(plan(128, 4096)), CostMode::Achievable, &why);
        QVERIFY(explained.hasValue());
        const double hidden = find(longPrompts, "prefill: expert dispatch").timeS
                              + find(longPrompts, "prefill: expert combine").timeS;
        QCOMPARE(find(longPrompts, "prefill: expert dispatch").exposedS, 0.0);
        QVERIFY(std::fabs(explained->terms.at("prefill_overlap_interference_s") - 0.152 * hidden) < 1e-9 * hidden);
        const auto book = run(plan(128, 4096), CostMode::Ideal);
        QCOMPARE(find(book, "prefill: expert dispatch").countPerStep, std::int64_t(58));
        QCOMPARE(find(book, "prefill: expert dispatch").bytes, 2.0 * dispatch);
    }

    // parallelism.expert_dispatch in serving: DeepEP's prefill kernels forward over NVLink and its
    // low-latency decode kernels send every copy straight to its rank, unless the plan says
    // otherwise. DeepSeek-V3 over EP32 on 4 nodes: a token's 8 experts lie on 4(1 - (3/4)^8) =
    // 3.5995 nodes on average, so a deduplicated dispatch sends 4(1 - (3/4)^8)/8 = 0.44994 of the
    // plain all-to-all's network bytes, V x 3/16 over the node's 400 GB/s x 0.8.
    // Decode over expert ranks waits for the busiest one too. DeepSeek-V3 over EP32 on 4 H100
    // nodes, 4,096 sequences: each rank receives 4096 x 8 / 32 = 1,024 routed pairs a step, the
    // point TensorRT-LLM's table measures (1.109x the mean). The routed experts' FLOPs and the
    // busiest rank's dispatch (fp8, 1 byte) and combine (bf16) bytes carry the load; the book's
    // ideal model splits them evenly.
    void expertDecodeWaitsForTheBusiestRank()
    {
        json doc = gpuPlan("deepseek-v3", 8, 4096, 1024, 16, "fp8", "expert");
        doc["hardware"]["topology"] = {{"nodes", 4}, {"gpus_per_node", 8}};
        doc["parallelism"] = {{"expert", 32}};
        doc["workload"]["compute_dtype"] = "fp8";
        const double load = busiestExpertRankLoad(32, 1024.0);
        QVERIFY(std::fabs(load - 1.1088) < 1e-4);
        const Derivations why = explained(doc);
        const DerivationValue *busiest = why.at("terms.decode_flops_s").find("busiest_rank_load");
        QVERIFY(busiest);
        QCOMPARE(busiest->value, load);
        const auto bytes = [](const Evaluation &e, const char *purpose) {
            for (const auto &c : e.collectives)
                if (c.purpose == purpose)
                    return c.bytes;
            qFatal("no %s", purpose);
        };
        const double elements = 4096.0 * 8 * 7168;
        const Evaluation e = run(doc, CostMode::Achievable);
        QCOMPARE(bytes(e, "decode: expert dispatch"), elements * load);
        QCOMPARE(bytes(e, "decode: expert combine"), 2.0 * elements * load);
        const Evaluation book = run(doc, CostMode::Ideal);
        QCOMPARE(bytes(book, "decode: expert dispatch"), elements); // the matmul dtype (fp8), evenly split
        QVERIFY(!explained(doc, CostMode::Ideal).at("terms.decode_flops_s").find("busiest_rank_load"));
    }

    void servingExpertDispatchFollowsThePlan()
    {
        const auto plan = [](const char *dispatch) {
            json doc = gpuPlan("deepseek-v3", 8, 128, 4096, 64, "fp8", "expert");
            doc["hardware"]["topology"] = {{"nodes", 4}, {"gpus_per_node", 8}};
            doc["parallelism"] = {{"expert", 32}};
            if (*dispatch)
                doc["parallelism"]["expert_dispatch"] = dispatch;
            return run(doc, CostMode::Achievable);
        };
        const auto find = [](const Evaluation &e, const char *purpose) {
            for (const auto &c : e.collectives)
                if (c.purpose == purpose)
                    return c;
            qFatal("no %s", purpose);
        };
        const auto each = [&](const Evaluation &e, const char *purpose) {
            const CollectiveUse c = find(e, purpose);
            return c.timeS / double(c.countPerStep);
        };
        const double share = 4.0 * (1.0 - std::pow(0.75, 8)) / 8.0;
        const double network = 400e9 * 0.8;
        const Evaluation byDefault = plan("");
        const Evaluation plain = plan("all-to-all");
        const Evaluation deduplicated = plan("deduplicated");
        for (const char *purpose : {"prefill: expert dispatch", "prefill: expert combine"}) {
            const double v = find(plain, purpose).bytes;
            QCOMPARE(each(byDefault, purpose), each(deduplicated, purpose));
            QVERIFY_NEAR(each(plain, purpose) - each(deduplicated, purpose), (1.0 - share) * v * 3.0 / 16.0 / network,
                         1e-12);
        }
        for (const char *purpose : {"decode: expert dispatch", "decode: expert combine"}) {
            const double v = find(plain, purpose).bytes;
            QCOMPARE(each(byDefault, purpose), each(plain, purpose));
            QVERIFY_NEAR(each(plain, purpose) - each(deduplicated, purpose), (1.0 - share) * v * 3.0 / 16.0 / network,
                         1e-12);
        }
        QVERIFY(plain.inference->prefillS > byDefault.inference->prefillS);
        QVERIFY(deduplicated.inference->decodeStepS < byDefault.inference->decodeStepS);
    }

    // Mechanism: a MoE prefill sorts each routed token to its experts and back around the grouped
    // matmuls (8 x d_model bytes a token through HBM against the forward's 6 x d_model x d_ff_expert
    // FLOPs), as a training step's forward does. DeepSeek-V3 fp8 on H100: the matmul rate is
    // 1979 x 0.709 x (0.5729 / 0.803) TFLOP/s against 3.35 x 0.85 TB/s, a ridge of 351.6 FLOPs per
    // byte, so the routed experts keep 1 / (1 + 4/3 x 351.6 / 2048) = 0.814 of their rate. Their
    // share of a token's matmul FLOPs is 58 MoE layers x top-8 x 3 x 7168 x 2048 weights.
    void prefillSortsRoutedTokensToTheirExperts()
    {
        json doc = gpuPlan("deepseek-v3", 8, 128, 4096, 1, "fp8", "expert");
        doc["hardware"]["topology"] = {{"nodes", 4}, {"gpus_per_node", 8}};
        doc["parallelism"] = {{"expert", 32}};
        doc["workload"]["compute_dtype"] = "fp8";
        const Derivations why = explained(doc);
        const Derivation &flops = why.at("terms.prefill_flops_s");
        const DerivationValue *efficiency = flops.find("dispatch_efficiency");
        const DerivationValue *share = flops.find("routed_share");
        const DerivationValue *params = flops.find("matmul_params");
        QVERIFY(efficiency && share && params);
        const double ridge = 1979e12 * 0.709 * (0.5729 / 0.803) / (3.35e12 * 0.85);
        QVERIFY(std::fabs(ridge - 351.6) < 0.1);
        QVERIFY(std::fabs(efficiency->value - 1.0 / (1.0 + 4.0 / 3.0 * ridge / 2048.0)) < 1e-9);
        QVERIFY(std::fabs(efficiency->value - 0.814) < 1e-3);
        const double routed = 58.0 * 8 * 3 * 7168 * 2048;
        QVERIFY(std::fabs(share->value * params->value - routed) < 1e-6 * routed);
        // The routed experts wait for the busiest of the 32 ranks in each of the two micro-batches
        // (65,536 pairs each: 1.08863 of the mean), so the prefill's matmuls take
        // 1 + share x (1.08863 / 0.814 - 1) of their time with balanced experts and no sorting.
        const DerivationValue *busiest = flops.find("busiest_rank_load");
        QVERIFY(busiest);
        QVERIFY(std::fabs(busiest->value - 1.08863) < 1e-5);
        const double matmuls = 1.0 + share->value * (busiest->value / efficiency->value - 1.0);
        QVERIFY(matmuls > 1.15 && matmuls < 1.25);
        // Without expert ranks every chip holds a slice of every expert: no busiest rank.
        json tensorOnly = doc;
        tensorOnly["parallelism"] = {{"tensor", 8}, {"pipeline", 4}};
        QVERIFY(!explained(tensorOnly).at("terms.prefill_flops_s").find("busiest_rank_load"));
        // A dense model sorts nothing, and the book's ideal model leaves the sorting out.
        const Derivations dense = explained(gpuPlan("llama-3-8b", 1, 1, 4096, 1));
        QVERIFY(!dense.at("terms.prefill_flops_s").find("routed_share"));
        const Derivations book = explained(doc, CostMode::Ideal);
        QVERIFY(!book.at("terms.prefill_flops_s").find("dispatch_efficiency"));
    }

    // Mechanism: TensorRT-LLM's 16-bit MoE grouped GEMMs are CUTLASS 2.x kernels built for SM80
    // (v0.9 dispatches SM90 to them), so on Hopper the routed experts run at the chip's
    // legacy_kernel_share, 0.583 of its matmul rate (FlashAttention-2's 1.709x A100 speed over
    // H100's 2.93x larger achievable rate). Mixtral 8x7B, TP2 on H100, a 2048-token prefill: the
    // routed experts' share of the matmul FLOPs is 32 layers x top-2 x 3 x 4096 x 14336 weights.
    void tensorRtLlmRunsHopperExpertsOnAmpereKernels()
    {
        json doc = gpuPlan("mixtral-8x7b", 2, 1, 2048, 1);
        doc["workload"]["stack"] = "tensorrt-llm";
        const Derivations why = explained(doc);
        const Derivation &flops = why.at("terms.prefill_flops_s");
        const DerivationValue *kernel = flops.find("expert_kernel_share");
        const DerivationValue *share = flops.find("routed_share");
        const DerivationValue *params = flops.find("matmul_params");
        const DerivationValue *dispatch = flops.find("dispatch_efficiency");
        QVERIFY(kernel && share && params && dispatch);
        QCOMPARE(kernel->value, 0.583);
        const double routed = 32.0 * 2 * 3 * 4096 * 14336;
        QVERIFY(std::fabs(share->value * params->value - routed) < 1e-6 * routed);
        // The prefill's FLOP time from its values: the routed experts at dispatch x kernel share.
        const auto v = [&](const char *name) { return flops.find(name)->value; };
        const double matmuls = 2.0 * v("matmul_params") * v("shape")
                               * (1.0 + v("routed_share") * (1.0 / (v("dispatch_efficiency") * 0.583) - 1.0));
        const double expected = (matmuls + v("attention_flops") * v("attention_factor")) * v("tokens")
                                / (v("lanes") * v("peak_flops") * v("flops_fraction")) * v("pipeline_factor");
        QVERIFY(std::fabs(flops.value - expected) < 1e-9 * expected);
        // Against a stack with Hopper-native grouped GEMMs (vLLM) the prefill takes 1.5-1.7x longer.
        json vllm = doc;
        vllm["workload"]["stack"] = "vllm";
        const Derivations native = explained(vllm);
        QVERIFY(!native.at("terms.prefill_flops_s").find("expert_kernel_share"));
        const double slower = flops.value / native.at("terms.prefill_flops_s").value;
        QVERIFY2(slower > 1.5 && slower < 1.7, qPrintable(QString::number(slower)));
        // A decode step's routed-expert FLOPs pay it too, unsorted.
        QVERIFY(why.at("terms.decode_flops_s").find("expert_kernel_share"));
        // Not in 8 bits (TensorRT-LLM's fp8 MoE GEMMs exist only as Hopper kernels), not on an A100
        // (the kernels are its own), not for a dense model, not in the book's ideal model.
        json fp8 = doc;
        fp8["workload"]["weight_dtype"] = "fp8";
        fp8["workload"]["compute_dtype"] = "fp8";
        json a100 = doc;
        a100["hardware"]["chip"] = "a100-80gb";
        json dense = gpuPlan("llama-3-8b", 2, 1, 2048, 1);
        dense["workload"]["stack"] = "tensorrt-llm";
        for (const json &plan : {fp8, a100, dense}) {
            const Derivations other = explained(plan);
            QVERIFY(!other.at("terms.prefill_flops_s").find("expert_kernel_share"));
        }
        const Derivations book = explained(doc, CostMode::Ideal);
        QVERIFY(!book.at("terms.prefill_flops_s").find("expert_kernel_share"));
    }

    // Book ch. 7: sharding KV past its heads splits the batch and costs two all-to-alls; one
    // sequence cannot be split, so its KV heads stay replicated and nothing moves.
    void kvAllToAllOnlyWhenTheBatchIsSplit()
    {
        const auto count = [](const Evaluation &e) {
            int n = 0;
            for (const auto &c : e.collectives)
                n += c.purpose == "decode: queries to batch-sharded KV";
            return n;
        };
        // llama-3-8b has 8 KV heads; tensor 16 is past them.
        QCOMPARE(count(run(servingPlan("llama-3-8b", {4, 4}, 16, 1, 1024, 16))), 0);
        QCOMPARE(count(run(servingPlan("llama-3-8b", {4, 4}, 16, 8, 1024, 16))), 1);
    }

    // Past K-way the engines replicate the KV heads on the tensor axis (vLLM's and TensorRT-LLM's
    // num_kv_head_replicas, jax-llm-examples' kv_heads rule): no all-to-all, and each chip holds
    // and reads 1/K of the cache, not 1/TP. The book's batch split stays the ideal model's.
    // llama-3-70b, 8 KV heads, TP16 on v5e 4x4, batch 8 at a 2048-token context.
    void achievableDecodeReplicatesKvHeadsPastTheTensorDegree()
    {
        const json doc = servingPlan("llama-3-70b", {4, 4}, 16, 8, 2048, 1, "int8", "int8");
        const auto count = [](const Evaluation &e) {
            int n = 0;
            for (const auto &c : e.collectives)
                n += c.purpose == "decode: queries to batch-sharded KV";
            return n;
        };
        const auto book = run(doc, CostMode::Ideal);
        const auto real = run(doc, CostMode::Achievable);
        QCOMPARE(count(book), 1);
        QCOMPARE(count(real), 0);
        // 163,840 B per token (int8) x 8 x 2049 tokens: / 16 in the book, / 8 replicated.
        const double cache = 163840.0 * 8 * 2049;
        QVERIFY(std::fabs(book.memory.kvCache - cache / 16) < 1e-6 * cache);
        QVERIFY(std::fabs(real.memory.kvCache - cache / 8) < 1e-6 * cache);
    }

    // On a TPU the tensor all-reduce runs fused with the row-parallel matmul that produces it and
    // hides behind that matmul's weight stream. Hand-derived for llama-3-70b int8 on v5e 4x4,
    // TP16, batch 8: the all-reduce of 8 x 8192 x 2 B is 12 hops x 1 us + 2 x 131,072 B over
    // 2 x 4.5e10 x 4/3 B/s / 0.9 = 14.43 us. The weights stream at 16 x 0.9 x 8.2e11 B/s (1 B
    // each): the attention output projection (64 x 128 x 8192) takes 5.69 us, so 8.74 us of
    // its all-reduce shows; the down projection (8192 x 28672) takes 19.9 us and hides the other.
    // Exposed: 80 x 8.74 us = 0.699 ms of 160 x 14.43 us = 2.31 ms. A GPU hides nothing.
    void tpuTensorAllReduceHidesBehindItsMatmul()
    {
        const auto e = run(servingPlan("llama-3-70b", {4, 4}, 16, 8, 2048, 1, "int8", "int8"), CostMode::Achievable);
        const CollectiveUse *ar = decodeAllReduce(e);
        QVERIFY(ar);
        QVERIFY(std::fabs(ar->timeS - 160 * 14.43e-6) < 0.005 * ar->timeS);
        const double stream = 16 * 0.9 * 8.2e11;
        const double each = ar->timeS / 160;
        const double exposed = 80 * (each - 64.0 * 128 * 8192 / stream);
        QVERIFY(std::fabs(ar->exposedS - exposed) < 0.01 * exposed);
        QVERIFY(std::fabs(ar->exposedS - 0.699e-3) < 0.01 * 0.699e-3);
        // The book's model and a GPU keep every microsecond on the path.
        const auto book = run(servingPlan("llama-3-70b", {4, 4}, 16, 8, 2048, 1, "int8", "int8"), CostMode::Ideal);
        for (const auto &c : book.collectives)
            QCOMPARE(c.exposedS, c.timeS);
        const auto gpu = run(gpuPlan("llama-3-70b", 8, 8, 2048, 1), CostMode::Achievable);
        for (const auto &c : gpu.collectives)
            if (c.purpose == "decode: tensor activations")
                QCOMPARE(c.exposedS, c.timeS);
    }

    // Past the critical batch the fused matmul is paced by its FLOPs, not its weight stream, and
    // the all-reduce hides behind the longer matmul. The same plan at batch 256: each all-reduce
    // moves 256 x 8192 x 2 B. Every weight is read once (1 B, int8) and used by 256 tokens
    // (2 FLOPs each), so the matmuls take 2 x 256 / (1.97e14 x 0.8) s per weight against
    // 1 B / (0.9 x 8.2e11 B/s) for the stream: 2.398 times as long (v5e runs no shape factor).
    // The attention output projection then lasts 64 x 128 x 8192 / stream x 2.398 and the down
    // projection 8192 x 28672 / stream x 2.398. Read with the stream alone, more would show; and
    // int4 weights, streamed faster behind the same FLOPs, hide no less than int8.
    void tpuFusedAllReduceHidesBehindTheMatmulsFlops()
    {
        const auto e = run(servingPlan("llama-3-70b", {4, 4}, 16, 256, 2048, 1, "int8", "int8"), CostMode::Achievable);
        const CollectiveUse *ar = decodeAllReduce(e);
        QVERIFY(ar);
        const double stretch = 2.0 * 256 * 0.9 * 8.2e11 / (1.97e14 * 0.8);
        QVERIFY(std::fabs(e.serving.decodeComputeS / e.serving.decodeWeightsS - stretch) < 0.01 * stretch);
        const double stream = 16 * 0.9 * 8.2e11;
        const double each = ar->timeS / 160;
        const double out = 64.0 * 128 * 8192 / stream;
        const double down = 8192.0 * 28672 / stream;
        const double exposed = 80 * (std::max(0.0, each - out * stretch) + std::max(0.0, each - down * stretch));
        const double streamOnly = 80 * (std::max(0.0, each - out) + std::max(0.0, each - down));
        QVERIFY(std::fabs(ar->exposedS - exposed) < 0.01 * exposed);
        QVERIFY(ar->exposedS < 0.9 * streamOnly);
        const auto int4 = run(servingPlan("llama-3-70b", {4, 4}, 16, 256, 2048, 1, "int4", "int8"), CostMode::Achievable);
        QVERIFY(int4.inference->decodeStepS <= e.inference->decodeStepS * (1 + 1e-12));
    }

    void batchThatCannotFitIsAWarningNotACrash()
    {
        const auto e = run(servingPlan("llama-3-70b", {2, 2}, 4, 512, 32768, 1024), CostMode::Achievable);
        QVERIFY(!e.memory.fits);
        bool warned = false;
        for (const auto &w : e.warnings)
            warned = warned || w.code == "does-not-fit";
        QVERIFY(warned);
        const std::string text = evaluationToJson(e, false).dump();
        QVERIFY(text.find("null") == std::string::npos);
    }

    // A sliding-window layer keeps and reads only its window. Gemma 2 9B (4096 tokens in 21 of 42
    // layers) on one H100 at a 30,720-token prompt plus 2,048 generated: the cache per sequence is
    // (32768 + 4096) / 2 = 18,432 tokens per layer instead of 32,768 (0.5625 of it); the mean decode
    // step reads (31744 + 4096) / 2 = 17,920 instead of 31,744. kv_cache_bytes_per_token stays the
    // whole model's per token, as the contract defines it.
    void slidingWindowCachesOnlyItsWindow()
    {
        const auto gemma = [](bool windowed) {
            json doc = gpuPlan("gemma-2-9b", 1, 4, 30720, 2048);
            json model = modelToJson(*ModelCatalog::builtin().find("gemma-2-9b"));
            if (!windowed)
                model.erase("sliding_window");
            doc["model"] = model;
            return doc;
        };
        const Evaluation local = run(gemma(true));
        const Evaluation global = run(gemma(false));
        QCOMPARE(local.inference->kvCacheBytesPerToken, global.inference->kvCacheBytesPerToken);
        QVERIFY(std::fabs(local.serving.kvCacheBytesPerSequence / global.serving.kvCacheBytesPerSequence - 18432.0 / 32768.0) < 1e-12);
        QVERIFY(std::fabs(local.memory.kvCache / global.memory.kvCache - 18432.0 / 32768.0) < 1e-12);
        QVERIFY(std::fabs(local.serving.decodeKvS / global.serving.decodeKvS - 17920.0 / 31744.0) < 1e-9);
        QVERIFY(local.serving.maxBatch > global.serving.maxBatch);
        QVERIFY(local.inference->prefillS < global.inference->prefillS);
        // A context inside the window costs the same either way.
        json shortDoc = gemma(true);
        shortDoc["workload"]["prompt_len"] = 2048;
        json shortGlobal = gemma(false);
        shortGlobal["workload"]["prompt_len"] = 2048;
        QCOMPARE(run(shortDoc).inference->tokensPerS, run(shortGlobal).inference->tokensPerS);
    }
};

QTEST_APPLESS_MAIN(TestInference)
#include "tst_inference.moc"
