// The scenario library (resources/scenarios.json): every scenario loads, evaluates, round-trips
// through the plan writer, and shows in the model's numbers the phenomenon its note teaches. Each
// test states the hand derivation of the number it asserts (the book's formula, the plan's values).
#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "plan/planedits.h"
#include "plan/scenariocatalog.h"
#include "transformer/modelcatalog.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using nlohmann::json;
using namespace meshplan::model;

namespace {

Plan load(const json &planJson)
{
    auto plan = planFromJson(planJson, ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!plan)
        qFatal("plan does not load: %s", plan.error().toString().c_str());
    return std::move(plan).value();
}

const Scenario &scenario(const char *id)
{
    const Scenario *s = findScenario(id);
    if (!s)
        qFatal("no scenario %s", id);
    return *s;
}

Evaluation eval(const json &planJson, CostMode mode = CostMode::Achievable)
{
    auto e = evaluate(load(planJson), mode);
    if (!e)
        qFatal("evaluation failed: %s", e.error().toString().c_str());
    return std::move(e).value();
}

bool hasWarning(const Evaluation &e, const std::string &code)
{
    return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const Warning &w) { return w.code == code; });
}

const CollectiveUse &collective(const Evaluation &e, const std::string &purpose)
{
    for (const auto &c : e.collectives)
        if (c.purpose == purpose)
            return c;
    qFatal("no collective \"%s\"", purpose.c_str());
}

const OperationCost &operation(const Evaluation &e, const std::string &op)
{
    for (const auto &o : e.operations)
        if (o.op == op)
            return o;
    qFatal("no operation \"%s\"", op.c_str());
}

json edited(const json &plan, const char *pointer, const json &value)
{
    auto out = PlanEdits().withField(plan, pointer, value);
    if (!out)
        qFatal("edit %s refused: %s", pointer, out.error().toString().c_str());
    return std::move(out).value();
}

bool near(double actual, double expected, double relative)
{
    return std::abs(actual - expected) <= relative * std::abs(expected);
}

#define QNEAR(actual, expected, relative)                                                                              \
    QVERIFY2(near((actual), (expected), (relative)),                                                                   \
             qPrintable(QStringLiteral("%1 = %2, expected %3 (relative %4)")                                           \
                            .arg(QString::fromLatin1(#actual)).arg((actual), 0, 'g', 10)                               \
                            .arg((expected), 0, 'g', 10).arg(relative)))

} // namespace

class TestScenarios : public QObject
{
    Q_OBJECT

private slots:
    void library()
    {
        const auto &all = builtInScenarios();
        QVERIFY(all.size() >= 10);
        std::set<std::string> ids;
        for (const auto &s : all) {
            QVERIFY2(ids.insert(s.id).second, s.id.c_str());
            const int chapter = std::stoi(s.chapter);
            QVERIFY2(chapter >= 1 && chapter <= 12 && std::to_string(chapter) == s.chapter, s.id.c_str());
            QVERIFY(!s.section.empty());
            QCOMPARE(s.plan.value("title", ""), s.title);
            // A teaching note of 2-5 sentences: look at, change, see.
            int sentences = 0;
            for (std::size_t i = 0; i < s.note.size(); ++i)
                sentences += s.note[i] == '.' && (i + 1 == s.note.size() || s.note[i + 1] == ' ');
            QVERIFY2(sentences >= 2 && sentences <= 6, s.id.c_str());
            QCOMPARE(findScenario(s.id), &s);
        }
        for (const char *id : {"llama-3-70b-v5p-training", "llama-3-70b-v5e-serving", "critical-batch-data-parallel",
                               "tensor-parallel-limit", "fsdp-vs-zero1-memory", "matmul-roofline",
                               "multislice-dcn-allreduce", "h100-node-vs-gb200-nvl72", "deepseek-v3-expert-parallel",
                               "prefill-vs-decode-kv-cache"})
            QVERIFY2(findScenario(id), id);
        QVERIFY(!findScenario("no-such-scenario"));
        QVERIFY(scenarioIdList().find("tensor-parallel-limit") != std::string::npos);
        // The book's chapter order.
        for (std::size_t i = 1; i < all.size(); ++i)
            QVERIFY(std::stoi(all[i - 1].chapter) <= std::stoi(all[i].chapter));
    }

    // Every scenario loads, evaluates in both modes, fits, and is written back as it was read.
    void everyScenario_data()
    {
        QTest::addColumn<QString>("id");
        for (const auto &s : builtInScenarios())
            QTest::newRow(s.id.c_str()) << QString::fromStdString(s.id);
    }
    void everyScenario()
    {
        QFETCH(QString, id);
        const Scenario &s = scenario(id.toStdString().c_str());
        const Plan plan = load(s.plan);
        for (const CostMode mode : {CostMode::Achievable, CostMode::Ideal}) {
            const auto e = evaluate(plan, mode);
            QVERIFY2(e.hasValue(), e ? "" : e.error().toString().c_str());
            QVERIFY2(e->memory.fits, s.id.c_str());
        }
        // The writer round-trips: written, read and written again gives the same document, and
        // the document names the same model, hardware and degrees as the scenario.
        const json written = planToJson(plan);
        QCOMPARE(QString::fromStdString(planToJson(load(written)).dump()), QString::fromStdString(written.dump()));
        const auto same = [&](const json &a, const json &b) {
            QCOMPARE(QString::fromStdString(a.dump()), QString::fromStdString(b.dump()));
        };
        same(written["hardware"], s.plan["hardware"]);
        for (const char *role : {"data", "fsdp", "tensor", "pipeline", "expert", "context"})
            same(written["parallelism"][role], s.plan["parallelism"][role]);
        same(written["workload"]["kind"], s.plan["workload"]["kind"]);
        same(written["title"], s.plan["title"]);
    }

    // Ch. 1: a bf16 [B, D] x [D, F] matmul does 2BDF FLOPs and reads 2DF weight bytes plus
    // 2B(D + F) of activations (the down projection reads [B, F] and writes [B, D]), so its
    // intensity is B·DF / (DF + B(D + F)). D = 8192, F = 28672: DF = 234,881,024, D + F = 36,864.
    // B = 64: 64·234,881,024 / (234,881,024 + 2,359,296) = 63.364 FLOPs/byte, below v5e's
    // C / W_hbm = 1.97e14 / 8.2e11 = 240.24, so the matmul is HBM-bound. B = 512:
    // 512·DF / (DF + 18,874,368) = 473.92 > 240.24: compute-bound.
    void matmulRoofline()
    {
        const Scenario &s = scenario("matmul-roofline");
        const Evaluation small = eval(s.plan, CostMode::Ideal);
        QNEAR(small.serving.criticalBatch, 1.97e14 / 8.2e11, 1e-9);
        const OperationCost &down = operation(small, "decode: mlp down");
        const double df = 8192.0 * 28672.0;
        QNEAR(down.flops / down.bytes, 64 * df / (df + 64 * 36864.0), 1e-9);
        QCOMPARE(down.timeS, down.memoryS); // on the HBM slope
        QVERIFY(hasWarning(small, "decode-below-critical-batch"));

        const Evaluation large = eval(edited(s.plan, "/workload/batch", 512), CostMode::Ideal);
        const OperationCost &down512 = operation(large, "decode: mlp down");
        QNEAR(down512.flops / down512.bytes, 512 * df / (df + 512 * 36864.0), 1e-9);
        QVERIFY(down512.timeS > down512.memoryS); // on the compute ceiling
        QVERIFY(!hasWarning(large, "decode-below-critical-batch"));
    }

    // Ch. 2 / 5 "Scaling across pods": the gradient all-reduce over DCN is the book's
    // T = 2·V / W_dcn with V the gradient shard one chip holds after 16-way FSDP:
    // V = 2 bytes · 8,030,261,248 params / 16 = 1,003,782,656 B; W_dcn(v5e) = 3.125e9 B/s per
    // chip, so T = 0.64242 s. The book hides it while the batch per slice exceeds C / W_dcn =
    // 1.97e14 / 3.125e9 = 63,040 tokens: 256 sequences of 2048 over 16 slices is 32,768 tokens
    // (exposed); 1024 sequences is 131,072 (hidden, in the book's ideal model).
    void multisliceDcnAllReduce()
    {
        const Scenario &s = scenario("multislice-dcn-allreduce");
        const Evaluation ideal = eval(s.plan, CostMode::Ideal);
        const CollectiveUse &ar = collective(ideal, "gradients");
        QCOMPARE(ar.link, LinkKind::Dcn);
        QCOMPARE(ar.axes, std::vector<std::string>{"slice"});
        QNEAR(ar.timeS, 2.0 * (2.0 * 8'030'261'248.0 / 16) / 3.125e9, 1e-3);
        QVERIFY(ar.exposedS > 0.2 * ar.timeS);
        QVERIFY(hasWarning(ideal, "data-parallel-communication-bound"));

        const Evaluation big = eval(edited(s.plan, "/workload/global_batch", 1024), CostMode::Ideal);
        QCOMPARE(collective(big, "gradients").exposedS, 0.0);
        QVERIFY(!hasWarning(big, "data-parallel-communication-bound"));
        // The realistic model, after measured multi-slice runs, adds it after the backward pass.
        QVERIFY(hasWarning(eval(s.plan), "cross-slice-gradients-exposed"));
    }

    // Ch. 5 data parallelism: the backward all-reduce of the bf16 gradients, 2 · 8,030,261,248 =
    // 16,060,522,496 B, does not shrink with the batch; the backward pass does. The book's
    // crossover on three v5p axes is C / (3 W) = 4.59e14 / (3 · 1.8e11) = 850 tokens per chip;
    // the scenario has 512 · 512 / 512 = 512 (exposed), doubling seq_len gives 1024 (hidden).
    void criticalBatchDataParallel()
    {
        const Scenario &s = scenario("critical-batch-data-parallel");
        const Evaluation e = eval(s.plan);
        const CollectiveUse &ar = collective(e, "gradients");
        // (The model leaves the final norm's 4096 gradients out of the all-reduce: 8 KB of 16 GB.)
        QNEAR(ar.bytes, 2.0 * 8'030'261'248.0, 1e-6);
        QVERIFY(ar.exposedS > 0.1 * ar.timeS);
        QVERIFY(hasWarning(e, "data-parallel-communication-bound"));
        QCOMPARE(e.critical.tokensPerChip, 512.0);
        // The model's own crossover lies between the two batches, where the book's 850 does.
        QVERIFY(e.critical.dataTokensPerChip > 512 && e.critical.dataTokensPerChip < 1024);

        const Evaluation longer = eval(edited(s.plan, "/workload/seq_len", 1024));
        QCOMPARE(collective(longer, "gradients").exposedS, 0.0);
        QVERIFY(!hasWarning(longer, "data-parallel-communication-bound"));
    }

    // Ch. 5 tensor parallelism: compute-bound iff Y < F·W_ici / C. On one v5p axis (a ring with
    // wraparound, both directions: W = 2 · 9e10) with F = 28,672: 28,672 · 1.8e11 / 4.59e14 =
    // 11.2-way. 16-way is past it; 4-way is well inside. The model derives its own limit from the
    // whole layer (attention too), so the test holds it to the book's within 25% (ideal model).
    void tensorParallelLimit()
    {
        const Scenario &s = scenario("tensor-parallel-limit");
        const Evaluation ideal = eval(s.plan, CostMode::Ideal);
        QVERIFY(hasWarning(ideal, "tensor-parallel-limit"));
        QNEAR(ideal.critical.tensorMaxDegree, 28672.0 * 1.8e11 / 4.59e14, 0.25);
        const Evaluation e = eval(s.plan);
        QVERIFY(hasWarning(e, "tensor-parallel-limit"));
        QVERIFY(collective(e, "tensor activations").exposedS > 0);

        auto four = PlanEdits().withDegree(s.plan, Role::Tensor, 4);
        QVERIFY(four.hasValue());
        QCOMPARE((*four)["parallelism"]["fsdp"].get<int>(), 1024);
        QVERIFY(!hasWarning(eval(*four), "tensor-parallel-limit"));
        QVERIFY(!hasWarning(eval(*four, CostMode::Ideal), "tensor-parallel-limit"));
    }

    // Ch. 5 FSDP / ZeRO, LLaMA-3 8B (N = 8,030,261,248) over 64 data-parallel chips:
    // ZeRO-1: params 2N = 16,060,522,496 B and grads 2N per chip, optimizer (fp32 m, v and
    // master weights) 12N / 64 = 1,505,673,984 B. ZeRO-3: params and grads 2N / 64 = 250,945,664 B
    // each, optimizer unchanged. So params(1) / params(3) = 64 and optimizer(1) / optimizer(3) = 1.
    // ZeRO-0 replicates 12N = 96.4 GB of optimizer state on a 95 GiB chip: it does not fit.
    void fsdpVsZero1Memory()
    {
        const Scenario &s = scenario("fsdp-vs-zero1-memory");
        const double n = 8'030'261'248.0;
        const Evaluation z1 = eval(s.plan);
        QCOMPARE(z1.memory.params, 2 * n);
        QCOMPARE(z1.memory.grads, 2 * n);
        QCOMPARE(z1.memory.optimizer, 12 * n / 64);
        const Evaluation z3 = eval(edited(s.plan, "/parallelism/zero_stage", 3));
        QCOMPARE(z3.memory.params, 2 * n / 64);
        QCOMPARE(z3.memory.grads, 2 * n / 64);
        QCOMPARE(z1.memory.params / z3.memory.params, 64.0);
        QCOMPARE(z1.memory.optimizer / z3.memory.optimizer, 1.0);
        // The gradient all-reduce becomes an all-gather of the weights and a reduce-scatter.
        QCOMPARE(collective(z3, "fsdp weights").op, CollectiveOp::AllGather);
        QCOMPARE(collective(z3, "fsdp gradients").op, CollectiveOp::ReduceScatter);
        const Evaluation z0 = eval(edited(s.plan, "/parallelism/zero_stage", 0));
        QCOMPARE(z0.memory.optimizer, 12 * n);
        QVERIFY(!z0.memory.fits);
    }

    // Ch. 6: the book's layout (1024-way FSDP x 2-way sequence x 4-way TP on 16x16x32 = 8192
    // chips, 4,194,304 tokens) is compute-bound: 512 tokens per chip and microbatch is above the
    // mixed bound α² / (2F) = 2550² / (2 · 28,672) = 113. FSDP over batch and sequence alone
    // (fsdp 1024 x context 8) is below C / (3 W) = 850 per chip: the weight gathers are exposed.
    void llama70bV5pTraining()
    {
        const Scenario &s = scenario("llama-3-70b-v5p-training");
        const Evaluation e = eval(s.plan);
        QCOMPARE(e.chips, std::int64_t(8192));
        QCOMPARE(e.step.tokens, 1024.0 * 4096.0);
        QVERIFY(!hasWarning(e, "fsdp-communication-bound"));
        QVERIFY(!hasWarning(e, "tensor-parallel-limit"));
        QCOMPARE(collective(e, "fsdp weights").exposedS, 0.0);
        // MFU = 6·N·tokens (+ attention) / (step · chips · peak): the model's own figure must be a
        // plausible share of the book's 40% assumption, not zero or above one.
        QVERIFY(e.mfu > 0.2 && e.mfu < 0.6);

        json fsdpOnly = s.plan;
        fsdpOnly["parallelism"]["tensor"] = 1;
        fsdpOnly["parallelism"]["context"] = 8;
        const Evaluation f = eval(fsdpOnly);
        QVERIFY(hasWarning(f, "fsdp-communication-bound"));
        QVERIFY(collective(f, "fsdp weights").exposedS > 0);
        QVERIFY(f.critical.fsdpTokensPerChip > f.critical.tokensPerChip);
    }

    // Ch. 7: the KV cache is 2 · L · K · H · bytes per token: LLaMA-2 13B (L = 40, K = 40,
    // H = 128) in bf16 is 2 · 40 · 40 · 128 · 2 = 819,200 B; one 8192-token sequence is the
    // book's 6,710,886,400 B. Prefill's matmuls are compute-bound (8192 tokens per sequence);
    // a decode step at batch 8 is bound by HBM, and its KV read (8 sequences at a mean context of
    // about 8448 tokens: 8 · 8448 · 819,200 = 55.4 GB) outweighs the weights (26.0 GB) by about
    // 2.1x. An int8 cache halves the KV part.
    void prefillVsDecodeKvCache()
    {
        const Scenario &s = scenario("prefill-vs-decode-kv-cache");
        const Evaluation e = eval(s.plan, CostMode::Ideal);
        QCOMPARE(e.kvCacheBytesPerToken, 2.0 * 40 * 40 * 128 * 2);
        QCOMPARE(e.kvCacheBytesPerToken * 8192, 6'710'886'400.0);
        const OperationCost &prefill = operation(e, "prefill: mlp down");
        QVERIFY(prefill.timeS > prefill.memoryS); // compute-bound
        const OperationCost &decode = operation(e, "decode: mlp down");
        QCOMPARE(decode.timeS, decode.memoryS); // HBM-bound
        QCOMPARE(e.bound, std::string("hbm"));
        const ServingExtras &x = e.serving;
        QVERIFY(x.decodeKvS > x.decodeWeightsS);
        QVERIFY(x.decodeWeightsS > x.decodeComputeS);
        const double weights = 2.0 * double(e.params.total);
        QNEAR(x.decodeKvS / x.decodeWeightsS, 8 * 8448.0 * 819200 / weights, 0.02);

        const Evaluation int8 = eval(edited(s.plan, "/workload/kv_dtype", "int8"), CostMode::Ideal);
        QCOMPARE(int8.kvCacheBytesPerToken, 2.0 * 40 * 40 * 128);
        QNEAR(int8.serving.decodeKvS, x.decodeKvS / 2, 1e-9);
    }

    // Ch. 8: int8 weights (70.55e9 B) and an int8 cache of 2 · 80 · 8 · 128 = 163,840 B per token
    // on a v5e 4x2. The decode step reads both: at the mean context of 7680 + 256 tokens the
    // book's bound is (32 · 7936 · 163,840 + 70.55e9) / (8 · 8.2e11) = 17.1 ms (the book: 17 ms).
    // The critical batch is 120 (int8 weights, bf16 math: 1.97e14 / 8.2e11 / 2).
    void llama70bV5eServing()
    {
        const Scenario &s = scenario("llama-3-70b-v5e-serving");
        const Evaluation e = eval(s.plan, CostMode::Ideal);
        QCOMPARE(e.kvCacheBytesPerToken, 2.0 * 80 * 8 * 128);
        QNEAR(e.serving.criticalBatch, 1.97e14 / 8.2e11 / 2, 1e-9);
        QCOMPARE(e.bound, std::string("hbm"));
        const double params = double(e.params.total);
        const double book = (32 * 7936.0 * 163840 + params) / (8 * 8.2e11);
        QNEAR(e.serving.decodeBookStepS, book, 0.05);
        QVERIFY(hasWarning(eval(s.plan), "decode-below-critical-batch"));
        QVERIFY(eval(s.plan).memory.fits);

        // A 4x4 with tensor 16: lower latency, no more throughput per chip.
        auto bigger = PlanEdits().withHardware(s.plan, json{{"chip", "tpu-v5e"}, {"topology", {4, 4}}, {"slices", 1}});
        QVERIFY(bigger.hasValue());
        auto sixteen = PlanEdits().withDegree(*bigger, Role::Tensor, 16);
        QVERIFY(sixteen.hasValue());
        const Evaluation b = eval(*sixteen);
        const Evaluation a = eval(s.plan);
        QVERIFY(b.inference->decodeStepS < a.inference->decodeStepS);
        QVERIFY(b.inference->tokensPerSPerChip < a.inference->tokensPerSPerChip);
    }

    // Ch. 12: the same 72 GPUs as nine H100 nodes and as one GB200 NVL72 rack. The 9-way FSDP
    // gather of V bytes is a ring costing V · (9 − 1) / 9 / W per occurrence: W is a node's
    // scale-out egress shared by its 8 GPUs on H100 (4e11 / 8 = 5e10 B/s) and NVLink on GB200
    // (9e11 B/s), so the gathers are 9e11 / 5e10 = 18x faster on the rack (ideal model, within
    // the per-hop latency: 1%).
    void h100VsGb200()
    {
        const Scenario &s = scenario("h100-node-vs-gb200-nvl72");
        auto rack = PlanEdits().withChip(s.plan, "gb200");
        QVERIFY(rack.hasValue());
        QCOMPARE((*rack)["hardware"]["topology"]["gpus_per_node"].get<int>(), 72);
        QCOMPARE((*rack)["parallelism"]["fsdp"].get<int>(), 9);
        QCOMPARE((*rack)["parallelism"]["tensor"].get<int>(), 8);

        const Evaluation h = eval(s.plan, CostMode::Ideal);
        const Evaluation g = eval(*rack, CostMode::Ideal);
        const CollectiveUse &hg = collective(h, "fsdp weights");
        const CollectiveUse &gg = collective(g, "fsdp weights");
        QCOMPARE(hg.link, LinkKind::ScaleOut);
        QCOMPARE(gg.link, LinkKind::Nvlink);
        QCOMPARE(hg.bytes, gg.bytes);
        QNEAR(hg.timeS / hg.countPerStep, hg.bytes * 8 / 9 / 5e10, 0.01);
        QNEAR(hg.timeS / gg.timeS, 9e11 / 5e10, 0.01);

        const Evaluation ha = eval(s.plan);
        const Evaluation ga = eval(*rack);
        QVERIFY(hasWarning(ha, "fsdp-communication-bound"));
        QVERIFY(!hasWarning(ga, "fsdp-communication-bound"));
        QCOMPARE(collective(ga, "fsdp weights").exposedS, 0.0);
    }

    // Ch. 12 DeepSeek-V3: 64-way expert parallelism spans 8 nodes, so the dispatch/combine
    // all-to-alls cross the scale-out network. One microbatch per pipeline is 4096 · 4096 /
    // (2 · 32) = 262,144 tokens, 4096 per expert-parallel rank; each sends its tokens to k = 8
    // experts in fp8 (D = 7168, 1 byte): 4096 · 8 · 7168 = 234,881,024 B, of which 63/64 leave
    // the chip: 231,211,008 B. Expert 8 keeps the all-to-alls on one node's NVLink.
    void deepseekExpertParallel()
    {
        const Scenario &s = scenario("deepseek-v3-expert-parallel");
        const Evaluation e = eval(s.plan, CostMode::Ideal);
        const CollectiveUse &a2a = collective(e, "expert dispatch and combine");
        QCOMPARE(a2a.op, CollectiveOp::AllToAll);
        QCOMPARE(a2a.link, LinkKind::ScaleOut);
        QCOMPARE(a2a.axes, (std::vector<std::string>{"gpu", "node"}));
        QNEAR(a2a.bytesPerChip, 4096.0 * 8 * 7168 * 63 / 64, 1e-9);
        QVERIFY(e.step.bubble > 0);

        // As the note says: expert 8 (the inspector gives the factor to fsdp), then data 16
        // (taken back from fsdp): 8 x 16 x 16 = 2048 with no FSDP.
        auto eight = PlanEdits().withDegree(s.plan, Role::Expert, 8);
        QVERIFY(eight.hasValue());
        eight = PlanEdits().withDegree(*eight, Role::Data, 16);
        QVERIFY(eight.hasValue());
        QCOMPARE((*eight)["parallelism"]["fsdp"].get<int>(), 1);
        const Evaluation n = eval(*eight, CostMode::Ideal);
        const CollectiveUse &inNode = collective(n, "expert dispatch and combine");
        QCOMPARE(inNode.link, LinkKind::Nvlink);
        QCOMPARE(inNode.axes, std::vector<std::string>{"gpu"});
        // The same tokens per rank go to the same k experts, now over NVLink (4.5e11 B/s per GPU
        // instead of a node's 4e11 shared by 8): more than 5x faster even with 7/8 leaving the chip.
        QVERIFY(inNode.timeS < a2a.timeS / 5);
        QVERIFY(n.step.time < e.step.time);
    }

    // Pipelining (ch. 5, 12): GPipe with p = 8 stages and m = 8 microbatches idles a share
    // (p − 1) / (m + p − 1) = 7 / 15 = 0.467 of the pipeline's time; 32 microbatches: 7 / 39 = 0.18.
    // The model's bubble is measured against the stage's compute (its step also has
    // communication), so the share is held to the formula within 10%.
    void pipelineBubble()
    {
        const Scenario &s = scenario("pipeline-bubble");
        const Evaluation e = eval(s.plan, CostMode::Ideal);
        QNEAR(e.step.bubble / (e.step.bubble + e.step.compute), 7.0 / 15, 0.10);
        const Evaluation more = eval(edited(s.plan, "/parallelism/microbatches", 32), CostMode::Ideal);
        QNEAR(more.step.bubble / (more.step.bubble + more.step.compute), 7.0 / 39, 0.10);
        QVERIFY(more.step.time < e.step.time);
    }
};

QTEST_APPLESS_MAIN(TestScenarios)
#include "tst_scenarios.moc"
