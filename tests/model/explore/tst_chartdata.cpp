// Chart data: the step laid out in time (steptimeline.h), the operations on the chip's roofline
// (oproofline.h) and the scaling sweeps (scalingsweep.h), against hand-derived numbers: the
// book's per-chip matmul intensity, its FSDP and data-parallel critical batches, and the step
// cost's own figures, which every chart must add up to.
#include "cost/evaluation.h"
#include "cost/oproofline.h"
#include "cost/steptimeline.h"
#include "explore/scalingsweep.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "plan/planedits.h"
#include "transformer/modelcatalog.h"

#include <QDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

using nlohmann::json;
using namespace meshplan::model;

namespace {

const QString kPlans = QStringLiteral(MESHPLAN_TEST_DATA "/plans");

#define QVERIFY_NEAR(got, want, rtol)                                                                                  \
    QVERIFY2(std::fabs((got) - (want)) <= (rtol) * std::fabs(want),                                                    \
             qPrintable(QStringLiteral("%1 = %2, want %3 (rtol %4)")                                                   \
                            .arg(QStringLiteral(#got))                                                                 \
                            .arg(double(got), 0, 'g', 12)                                                              \
                            .arg(double(want), 0, 'g', 12)                                                             \
                            .arg(double(rtol))))

Plan parse(const json &doc)
{
    auto p = planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!p)
        qFatal("plan: %s", p.error().toString().c_str());
    return p.value();
}

Plan load(const QString &name)
{
    // A shipped plan by name, or a measured run's file (.json) by its path from the plans.
    QFile f(kPlans + QLatin1Char('/') + name + (name.endsWith(QLatin1String(".json")) ? QString() : QStringLiteral(".meshplan")));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return parse(json::parse(f.readAll().toStdString()));
}

Evaluation run(const Plan &plan, CostMode mode = CostMode::Achievable)
{
    auto e = evaluate(plan, mode);
    if (!e)
        qFatal("evaluate: %s", e.error().toString().c_str());
    return e.value();
}

json unwrap(const Expected<json> &edited)
{
    if (!edited)
        qFatal("edit: %s", edited.error().toString().c_str());
    return edited.value();
}

/// The default plan (LLaMA-3 70B on a v5p 16x16x32) made pure FSDP over all three axes, the book's
/// ch. 5 setting: fsdp 8192, with 256-token sequences so that the per-chip batch can go below
/// the critical one (whole sequences, one per chip at least).
Plan pureFsdpDefault()
{
    const PlanEdits edits;
    json doc = planToJson(defaultPlan());
    doc = unwrap(edits.withField(doc, "/workload/seq_len", 256));
    doc = unwrap(edits.withField(doc, "/workload/global_batch", 32768)); // 1024 tokens per chip
    doc = unwrap(edits.withDegree(doc, Role::Tensor, 1));
    doc = unwrap(edits.withDegree(doc, Role::Context, 1));
    return parse(doc);
}

/// tst_training's MLP-heavy model (attention and vocabulary small next to the MLP, so the book's
/// MLP-only formulas hold) trained data-parallel over 16 H100 nodes: the book's ch. 12 setting.
Plan gpuDataParallel()
{
    return parse({{"format", "meshplan/plan"},
                  {"version", 1},
                  {"model",
                   {{"name", "mlp-heavy"}, {"layers", 8}, {"d_model", 2048}, {"d_ff", 65536}, {"heads", 16},
                    {"vocab", 1024}, {"mlp", "plain"}, {"tied_embeddings", true}}},
                  {"hardware", {{"chip", "h100-sxm"}, {"topology", {{"nodes", 16}, {"gpus_per_node", 8}}}}},
                  {"parallelism", {{"data", 128}, {"zero_stage", 1}}},
                  {"workload",
                   {{"kind", "training"}, {"seq_len", 128}, {"global_batch", 1024}, {"remat", "none"},
                    {"master_weights", false}}}});
}

json servingPlan(const json &hardware, const json &parallelism, const json &workload)
{
    json w = workload;
    w["kind"] = "inference";
    return {{"format", "meshplan/plan"}, {"version", 1}, {"model", w.value("model", std::string("llama-3-70b"))},
            {"hardware", hardware},      {"parallelism", parallelism}, {"workload", w}};
}

/// LLaMA-3 70B on a v5e 4x4, tensor 16, int8 weights and KV (book ch. 8), interleaved serving.
Plan servingV5e()
{
    return parse(servingPlan({{"chip", "tpu-v5e"}, {"topology", {4, 4}}}, {{"tensor", 16}},
                             {{"batch", 32}, {"prompt_len", 2048}, {"generate_len", 256}, {"weight_dtype", "int8"},
                              {"kv_dtype", "int8"}}));
}

/// Mixtral on two H100 nodes, one replica prefilling for the other (disaggregated).
Plan servingDisaggregated()
{
    json workload = {{"model", "mixtral-8x7b"}, {"batch", 64}, {"prompt_len", 1024}, {"generate_len", 128},
                     {"serving", "disaggregated"}, {"prefill_chips", 8}};
    return parse(servingPlan({{"chip", "h100-sxm"}, {"topology", {{"nodes", 2}, {"gpus_per_node", 8}}}},
                             {{"tensor", 2}, {"expert", 4}, {"data", 2}}, workload));
}

/// The plans in tests/data/plans of one workload kind.
QStringList shippedPlans(WorkloadKind kind)
{
    QStringList names;
    for (const QString &file : QDir(kPlans).entryList({QStringLiteral("*.meshplan")}, QDir::Files, QDir::Name))
        if (load(file.chopped(9)).kind == kind)
            names << file.chopped(9);
    return names;
}

bool isLocal(const std::string &bound)
{
    return bound == "compute" || bound == "hbm";
}

bool isLink(const std::string &bound)
{
    return bound == "ici" || bound == "dcn" || bound == "nvlink" || bound == "scale-out";
}

const ScalingPoint *pointAt(const ScalingSweep &sweep, double x)
{
    for (const auto &p : sweep.points)
        if (std::fabs(p.x - x) <= 1e-9 * x)
            return &p;
    return nullptr;
}

/// What every sweep must satisfy: x strictly increasing, positive finite figures, the plan itself
/// exactly once; MFU rising (non-strictly) with the per-chip batch while it fits; step time
/// falling with more chips while compute binds; a crossover only between a compute/hbm-bound
/// point and a neighbouring link-bound one.
void checkSweepShape(const ScalingSweep &sweep, const Evaluation &plan, bool byChips)
{
    QVERIFY(!sweep.points.empty());
    int current = 0;
    for (std::size_t i = 0; i < sweep.points.size(); ++i) {
        const ScalingPoint &p = sweep.points[i];
        QVERIFY(std::isfinite(p.x) && p.x > 0);
        QVERIFY(std::isfinite(p.mfu) && p.mfu > 0 && p.mfu <= 1);
        QVERIFY(std::isfinite(p.stepTimeS) && p.stepTimeS > 0);
        QVERIFY(std::isfinite(p.tokensPerS) && p.tokensPerS > 0);
        QVERIFY(p.exposedCommunicationS >= 0);
        QVERIFY2(isLocal(p.bound) || isLink(p.bound) || p.bound == "memory-capacity", p.bound.c_str());
        if (i > 0)
            QVERIFY(p.x > sweep.points[i - 1].x);
        if (p.current) {
            ++current;
            QCOMPARE(p.mfu, plan.mfu);
            QCOMPARE(p.stepTimeS, plan.step.time);
            QCOMPARE(p.bound, plan.bound);
        }
    }
    QCOMPARE(current, 1);
    for (std::size_t i = 1; i < sweep.points.size(); ++i) {
        const ScalingPoint &a = sweep.points[i - 1];
        const ScalingPoint &b = sweep.points[i];
        if (!byChips && a.fits && b.fits)
            QVERIFY2(b.mfu >= a.mfu * (1 - 1e-9), qPrintable(QStringLiteral("MFU falls from %1 at x=%2 to %3 at x=%4")
                                                                 .arg(a.mfu).arg(a.x).arg(b.mfu).arg(b.x)));
        if (byChips && a.fits && b.fits && isLocal(a.bound) && isLocal(b.bound))
            QVERIFY2(b.stepTimeS <= a.stepTimeS * (1 + 1e-9),
                     qPrintable(QStringLiteral("step time rises from %1 s at %2 chips to %3 s at %4")
                                    .arg(a.stepTimeS).arg(a.x).arg(b.stepTimeS).arg(b.x)));
    }
    QVERIFY(sweep.crossoverX >= 0);
    if (sweep.crossoverX > 0) {
        bool bracketed = false;
        const ScalingPoint *previous = nullptr;
        for (const auto &p : sweep.points) {
            if (!isLocal(p.bound) && !isLink(p.bound))
                continue;
            if (previous && isLocal(previous->bound) != isLocal(p.bound) && previous->x <= sweep.crossoverX
                && sweep.crossoverX <= p.x)
                bracketed = true;
            previous = &p;
        }
        QVERIFY2(bracketed, qPrintable(QStringLiteral("crossover %1 is not between a compute and a link point")
                                           .arg(sweep.crossoverX)));
    }
}

/// Hand model of the pure-FSDP 70B plan in ideal mode (book ch. 5, 6). Per layer and token the
/// chip does 2P + a FLOPs, P = attention + MLP weights, a = the causal attention core; a layer's
/// gather moves V = 2P bytes over three wrapped axes at 2 x 9e10 B/s each.
struct PureFsdpHand {
    static constexpr double C = 4.59e14;
    static constexpr double W3 = 3 * 2 * 9e10; // the book's 3 W_ici
    static constexpr double L = 80;
    static constexpr double P = 151003136.0 + 704651264.0; // 8192(8192 + 2x1024 + 8192) + 8192, 3 x 8192 x 28672 + 8192
    static constexpr double a = 2.0 * 256 * 64 * (128 + 128) * 0.5; // flash skips the masked half
    static constexpr double logits = 2.0 * 128256 * 8192;            // unembedding FLOPs per token
    static constexpr double chips = 8192;

    static double gather() { return 2 * P / W3; } // reduce-scatter of the bf16 gradients: the same
    static double forward(double x) { return (2 * P + a) * x / C; }
    /// Exposed gathers over compute: forward hides max(0, ag - f), the backward (2f, plus f
    /// recomputed) hides the second gather and the reduce-scatter: max(0, 2ag - 3f).
    static double ratio(double x)
    {
        const double f = forward(x);
        const double exposed = L * (std::max(0.0, gather() - f) + std::max(0.0, 2 * gather() - 3 * f));
        const double compute = L * 4 * f + 3 * logits * x / C;
        return exposed / compute;
    }
    static double critical() { return C / W3 * 2 * P / (2 * P + a); }
    /// ratio(x) = 1 where both maxima are positive: L (3 ag - 4 f) = 4 L f + 3 logits x / C.
    static double continuousCrossover() { return 3 * L * gather() / ((8 * L * (2 * P + a) + 3 * logits) / C); }
    /// What the sweep interpolates: linearly in log x between the points either side.
    static double interpolated(double local, double link)
    {
        const double t = (1 - ratio(local)) / (ratio(link) - ratio(local));
        return std::exp(std::log(local) + t * (std::log(link) - std::log(local)));
    }
};

} // namespace

class TestChartData : public QObject
{
    Q_OBJECT

private slots:
    // ---- Step timeline -------------------------------------------------------------------------

    void trainingTimelineTilesTheStep_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<int>("microbatches"); // 0: the plan's
        QTest::newRow("default") << QString() << 0;
        for (const QString &name : shippedPlans(WorkloadKind::Training))
            QTest::newRow(qPrintable(name)) << name << 0;
        // 1 microbatch through 16 stages of 4 chunks each: filling and draining the pipe waits
        // 2 x 15 sends, more than the 2 x 1 x 4 this stage makes itself.
        QTest::newRow("405B, 1 microbatch") << QStringLiteral("llama-3-405b-h100-16k") << 1;
        // Megatron-Core's distributed optimizer with both halves partly exposed: MW4 (GPT 32B on 384
        // H100, 48 data ranks one GPU a node).
        QTest::newRow("distributed optimizer")
            << QStringLiteral("../measured-runs-extra/training/MW4-megatron-core-gpt-32b-h100-384gpu.json") << 0;
    }

    // compute + bubble + exposed communication + optimizer = step time, segment after segment
    // without gaps (1e-9 relative); every collective has a lane whose hidden and exposed parts
    // add up to its time.
    void trainingTimelineTilesTheStep()
    {
        QFETCH(QString, plan);
        QFETCH(int, microbatches);
        Plan p = plan.isEmpty() ? defaultPlan() : load(plan);
        if (microbatches > 0)
            p.parallelism.microbatches = microbatches;
        const Evaluation e = run(p);
        const StepTimeline t = stepTimeline(p, e);
        const StepTime &s = e.step;
        if (microbatches > 0) {
            const auto fill = std::find_if(t.segments.begin(), t.segments.end(), [](const auto &seg) {
                return seg.label == "pipeline fill and drain (exposed)";
            });
            QVERIFY(fill != t.segments.end());
            const CollectiveUse &c = e.collectives[std::size_t(fill->collective)];
            QCOMPARE(c.role, Role::Pipeline);
            QVERIFY_NEAR(fill->durationS, c.timeS / 8 * (30 - 8), 1e-9);
        }
        QCOMPARE(t.totalS, s.time);
        QCOMPARE(t.lanes.size(), e.collectives.size() + 1);
        QCOMPARE(t.lanes.front(), std::string("compute"));

        std::vector<TimelineSegment> path;
        std::vector<double> laneTime(t.lanes.size(), 0.0);
        for (const auto &seg : t.segments) {
            QVERIFY2(seg.durationS > 0 && std::isfinite(seg.durationS), seg.label.c_str());
            QVERIFY(seg.startS >= 0);
            QVERIFY(seg.lane >= 0 && seg.lane < int(t.lanes.size()));
            laneTime[std::size_t(seg.lane)] += seg.durationS;
            if (seg.kind == "hidden") {
                QVERIFY(seg.collective == seg.lane - 1);
                QVERIFY2(seg.startS + seg.durationS <= (s.compute + s.bubble) * (1 + 1e-12), seg.label.c_str());
            } else {
                path.push_back(seg);
            }
            if (seg.kind == "hidden" || seg.kind == "exposed")
                QVERIFY(seg.collective >= 0 && seg.collective < int(e.collectives.size()));
        }
        std::sort(path.begin(), path.end(), [](const auto &l, const auto &r) { return l.startS < r.startS; });
        double at = 0;
        double sum = 0;
        for (const auto &seg : path) {
            QVERIFY2(std::fabs(seg.startS - at) <= 1e-9 * s.time, seg.label.c_str()); // no gap, no overlap
            at = seg.startS + seg.durationS;
            sum += seg.durationS;
        }
        QVERIFY_NEAR(at, s.time, 1e-9);
        // The updated weights' gather feeds the next forward: its exposed part follows the optimizer.
        const auto labelled = [&](const std::string &label) {
            return std::find_if(path.begin(), path.end(), [&](const auto &seg) { return seg.label == label; });
        };
        if (const auto gather = labelled("updated weights (exposed)"); gather != path.end()) {
            const auto optimizer = labelled("optimizer");
            QVERIFY(optimizer != path.end());
            QVERIFY_NEAR(gather->startS, optimizer->startS + optimizer->durationS, 1e-12);
        } else {
            QVERIFY(plan.indexOf(QLatin1String("MW4")) < 0); // that row has one
        }
        QVERIFY_NEAR(sum, s.compute + s.bubble + s.exposedCommunication + s.optimizer + s.overlapInterference, 1e-9);
        QVERIFY_NEAR(sum, s.time, 1e-9);
        for (std::size_t i = 0; i < e.collectives.size(); ++i) {
            const CollectiveUse &c = e.collectives[i];
            const double pipelineWait = c.role == Role::Pipeline ? s.exposedCommunication - [&] {
                double exposed = 0;
                for (const auto &d : e.collectives)
                    exposed += d.exposedS;
                return exposed;
            }() : 0.0;
            QVERIFY_NEAR(laneTime[i + 1] + 1e-30, c.timeS + pipelineWait + 1e-30, 1e-9);
        }
    }

    // The golden result of LLaMA-3 70B on 16x16x32 (tests/data/golden): compute 1.85365 s of
    // which 0.45634 s recompute, the tensor all-reduce exposed whole (0.59940 s), the optimizer
    // 0.10 ms; the fsdp gathers (0.19196 s) hide from the start, their gradients' reduce-scatter
    // (0.09598 s) ends with the backward.
    void trainingTimelineMatchesGolden()
    {
        const Plan p = load(QStringLiteral("llama-3-70b-v5p-16x16x32"));
        const StepTimeline t = stepTimeline(p, run(p));
        const auto find = [&](const std::string &label) -> const TimelineSegment * {
            for (const auto &s : t.segments)
                if (s.label == label)
                    return &s;
            return nullptr;
        };
        const double compute = 1.8536484068413057, recompute = 0.45634386206659916;
        const auto *fb = find("forward + backward");
        const auto *rc = find("recompute");
        const auto *tensor = find("tensor activations (exposed)");
        const auto *opt = find("optimizer");
        const auto *gather = find("fsdp weights (hidden)");
        const auto *scatter = find("fsdp gradients (hidden)");
        QVERIFY(fb && rc && tensor && opt && gather && scatter);
        QVERIFY(!find("tensor activations (hidden)") && !find("fsdp weights (exposed)") && !find("pipeline bubble"));
        QCOMPARE(fb->startS, 0.0);
        QVERIFY_NEAR(fb->durationS, compute - recompute, 1e-12);
        QVERIFY_NEAR(rc->startS, compute - recompute, 1e-12);
        QVERIFY_NEAR(rc->durationS, recompute, 1e-12);
        QVERIFY_NEAR(tensor->startS, compute, 1e-12);
        QVERIFY_NEAR(tensor->durationS, 0.5994032355555555, 1e-12);
        QCOMPARE(t.lanes[std::size_t(tensor->lane)], std::string("tensor activations (all-reduce)"));
        QVERIFY_NEAR(opt->startS, compute + 0.5994032355555555, 1e-12);
        QVERIFY_NEAR(opt->durationS, 0.00010382779987944546, 1e-9);
        QVERIFY_NEAR(opt->startS + opt->durationS, 2.453155470196741, 1e-12);
        QCOMPARE(gather->startS, 0.0);
        QVERIFY_NEAR(gather->durationS, 0.1919579478737997, 1e-12);
        QVERIFY_NEAR(scatter->startS + scatter->durationS, compute, 1e-12);
        QVERIFY_NEAR(scatter->durationS, 0.09597897393689984, 1e-12);
    }

    // LLaMA-3 405B: 16 stages, interleaved 1F1B with 4 virtual stages: the bubble, (pp - 1) x t_mb
    // / v with t_mb one microbatch's work (the step's compute / 16), follows the compute.
    void pipelineBubbleFollowsCompute()
    {
        const Plan p = load(QStringLiteral("llama-3-405b-h100-16k"));
        const Evaluation e = run(p);
        const StepTimeline t = stepTimeline(p, e);
        const double tMb = e.step.compute / 16; // 16 microbatches
        QVERIFY_NEAR(e.step.bubble, 15 * tMb / 4, 1e-12);
        int bubbles = 0;
        for (const auto &s : t.segments)
            if (s.kind == "bubble") {
                ++bubbles;
                QCOMPARE(s.lane, 0);
                QVERIFY_NEAR(s.startS, e.step.compute, 1e-12);
                QVERIFY_NEAR(s.durationS, e.step.bubble, 1e-12);
            }
        QCOMPARE(bubbles, 1);
    }

    void servingTimeline_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::newRow("interleaved v5e") << QStringLiteral("@v5e");
        QTest::newRow("disaggregated h100") << QStringLiteral("@disaggregated");
        for (const QString &name : shippedPlans(WorkloadKind::Inference))
            QTest::newRow(qPrintable(name)) << name;
    }

    // Prefill, first token at TTFT, then generate_len - 1 decode steps: one request's time, with
    // batch x generate_len / totalS = the plan's throughput; each decode component over the decode
    // span; each collective on its own lane.
    void servingTimeline()
    {
        QFETCH(QString, plan);
        const Plan p = plan == QStringLiteral("@v5e")             ? servingV5e()
                       : plan == QStringLiteral("@disaggregated") ? servingDisaggregated()
                                                                  : load(plan);
        const bool disaggregated = p.inference.serving == Serving::Disaggregated;
        const Evaluation e = run(p);
        const InferenceResult &r = *e.inference;
        const StepTimeline t = stepTimeline(p, e);
        const double steps = double(p.inference.generateLen - 1);
        QVERIFY_NEAR(t.totalS, r.timeToFirstTokenS + steps * r.decodeStepS, 1e-12);
        QVERIFY_NEAR(double(p.inference.batch * p.inference.generateLen) / t.totalS, r.tokensPerS, 1e-12);
        const bool decodeCollectives = std::any_of(e.collectives.begin(), e.collectives.end(), [](const auto &c) {
            return c.purpose.rfind("prefill:", 0) != 0;
        });
        QCOMPARE(t.lanes.size(), std::size_t(decodeCollectives ? 4 : 5) + e.collectives.size());
        QCOMPARE(t.lanes.front(), std::string("request"));

        std::vector<TimelineSegment> request;
        for (const auto &s : t.segments) {
            QVERIFY2(s.durationS > 0 && std::isfinite(s.durationS), s.label.c_str());
            QVERIFY(s.startS >= 0 && s.startS + s.durationS <= t.totalS * (1 + 1e-12));
            if (s.lane == 0)
                request.push_back(s);
        }
        QCOMPARE(request.size(), std::size_t(3));
        // Disaggregated: prefill chips work through ceil(batch / prefill replicas) prompts; a
        // request waits for its own, then its KV cache travels to the decode chips.
        const double prompts = disaggregated ? std::ceil(double(p.inference.batch) / e.serving.prefillReplicas) : 1.0;
        QCOMPARE(e.serving.prefillReplicas > 0, disaggregated);
        QCOMPARE(request[0].kind, std::string("prefill"));
        QCOMPARE(request[0].startS, 0.0);
        QVERIFY_NEAR(request[0].durationS, r.prefillS / prompts, 1e-12);
        QVERIFY_NEAR(request[1].startS + request[1].durationS, r.timeToFirstTokenS, 1e-12);
        QVERIFY_NEAR(request[2].startS, r.timeToFirstTokenS, 1e-12);
        QVERIFY_NEAR(request[2].durationS, steps * r.decodeStepS, 1e-12);
        if (disaggregated)
            QVERIFY(request[1].durationS > e.serving.kvTransferS && e.serving.kvTransferS > 0);

        // A decode step spends max(weights, FLOPs), then the KV cache, elementwise work and the
        // communication (inferencecost Phase::total), so over generate_len - 1 steps: weights and
        // FLOPs from TTFT, the KV cache after the larger of the two, communication ending the span.
        const ServingExtras &x = e.serving;
        const double decodeEnd = r.timeToFirstTokenS + steps * r.decodeStepS;
        const struct {
            double start, perStep;
        } parts[] = {{r.timeToFirstTokenS, x.decodeWeightsS},
                     {r.timeToFirstTokenS, x.decodeComputeS},
                     {r.timeToFirstTokenS + steps * std::max(x.decodeWeightsS, x.decodeComputeS), x.decodeKvS},
                     {decodeEnd - steps * x.decodeCommunicationS, x.decodeCommunicationS}};
        for (int lane = 1; lane <= (decodeCollectives ? 3 : 4); ++lane) {
            const auto it = std::find_if(t.segments.begin(), t.segments.end(), [&](const auto &s) { return s.lane == lane; });
            if (parts[lane - 1].perStep == 0) { // pure replicas exchange nothing while decoding: no bar
                QVERIFY(it == t.segments.end() || it->durationS == 0);
                continue;
            }
            QVERIFY(it != t.segments.end());
            QVERIFY_NEAR(it->startS, parts[lane - 1].start, 1e-12);
            QVERIFY_NEAR(it->durationS, steps * parts[lane - 1].perStep, 1e-12);
        }
        // The decode collectives follow one another and end with the decode span.
        double decodeCommEnd = 0;
        for (const auto &s : t.segments)
            if (s.collective >= 0 && e.collectives[std::size_t(s.collective)].purpose.rfind("prefill:", 0) != 0) {
                QVERIFY(s.startS >= decodeEnd - steps * x.decodeCommunicationS * (1 + 1e-12));
                decodeCommEnd = std::max(decodeCommEnd, s.startS + s.durationS);
            }
        if (decodeCollectives)
            QVERIFY_NEAR(decodeCommEnd, decodeEnd, 1e-9);
        std::set<int> collectiveLanes;
        for (const auto &s : t.segments)
            if (s.collective >= 0)
                collectiveLanes.insert(s.lane);
        QCOMPARE(collectiveLanes.size(), e.collectives.size());
    }

    // ---- Roofline --------------------------------------------------------------------------------

    void ceilings_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QList<double>>("values");
        // v5p lists bf16 and int8 only (book ch. 2; no native fp8 before Ironwood).
        QTest::newRow("default: v5p, one slice")
            << QString() << QStringList{"bf16 peak", "int8 peak", "HBM", "ICI (per axis)"}
            << QList<double>{4.59e14, 9.18e14, 2.765e12, 2 * 9e10};
        QTest::newRow("v5e multislice: DCN per chip")
            << QStringLiteral("llama-3-8b-v5e-multislice")
            << QStringList{"bf16 peak", "int8 peak", "HBM", "ICI (per axis)", "DCN (per chip)"}
            << QList<double>{1.97e14, 3.94e14, 8.2e11, 2 * 4.5e10, 3.125e9};
        QTest::newRow("h100: NVLink, scale-out per GPU = 400 GB/s / 8")
            << QStringLiteral("llama-3-405b-h100-16k")
            << QStringList{"fp32 peak", "fp16 peak", "bf16 peak", "fp8 peak", "int8 peak", "HBM", "NVLink (per GPU)",
                           "scale-out (per GPU)"}
            << QList<double>{6.7e13, 9.89e14, 9.89e14, 1.979e15, 1.979e15, 3.35e12, 4.5e11, 5e10};
        QTest::newRow("inline chip: only its two dtypes")
            << QStringLiteral("inline-chip-llama-3-8b")
            << QStringList{"bf16 peak", "fp8 peak", "HBM", "NVLink (per GPU)", "scale-out (per GPU)"}
            << QList<double>{5e14, 1e15, 2e12, 3e11, 2e11 / 8};
    }

    void ceilings()
    {
        QFETCH(QString, plan);
        QFETCH(QStringList, names);
        QFETCH(QList<double>, values);
        const Plan p = plan.isEmpty() ? defaultPlan() : load(plan);
        const OpRoofline r = opRoofline(p, run(p));
        QStringList got;
        for (const auto &c : r.ceilings)
            got << QString::fromStdString(c.name);
        QCOMPARE(got, names);
        for (int i = 0; i < names.size(); ++i) {
            const auto &c = r.ceilings[std::size_t(i)];
            QVERIFY_NEAR(c.value, values[i], 1e-12);
            QCOMPARE(c.slope, !names[i].endsWith(QStringLiteral(" peak")));
        }
    }

    // The roof is the plan's compute dtype, not the highest listed peak: bf16 on v5p (459 T, under
    // fp8/int8's 918 T), fp8 for DeepSeek-V3 on H100 (1979 T), bf16 for int8 weights on v5e (197 T).
    void computePeakIsThePlansDtype_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<double>("peak");
        QTest::newRow("default") << QString() << "bf16" << 4.59e14;
        QTest::newRow("deepseek fp8") << QStringLiteral("deepseek-v3-h100-2048") << "fp8" << 1.979e15;
        QTest::newRow("int8 serving") << QStringLiteral("llama-3-70b-int8-v5e-serving") << "bf16" << 1.97e14;
    }

    void computePeakIsThePlansDtype()
    {
        QFETCH(QString, plan);
        QFETCH(QString, dtype);
        QFETCH(double, peak);
        const Plan p = plan.isEmpty() ? defaultPlan() : load(plan);
        const OpRoofline r = opRoofline(p, run(p));
        QCOMPARE(QString::fromStdString(r.computeDtype), dtype);
        QCOMPARE(r.computePeak, peak);
    }

    // The inline chip lists 5e14 FLOPs/s and 2e12 B/s (a datasheet ridge of 250 FLOPs/B) but
    // reaches 0.6 and 0.85 of them: an achievable ridge of 3e14 / 1.7e12 = 176. An op of 200
    // FLOPs/B (2e11 FLOPs, 1e9 bytes) takes 2e11 / 3e14 = 667 us of compute against 1e9 / 1.7e12
    // = 588 us of HBM: compute-bound, although left of the datasheet ridge; one of 150 is not.
    void onChipBoundUsesTheEvaluationsRates()
    {
        const Plan p = load(QStringLiteral("inline-chip-llama-3-8b"));
        Evaluation e = run(p);
        e.collectives.clear();
        const auto op = [](const char *name, double flops, double bytes) {
            OperationCost c;
            c.op = name;
            c.kind = "matmul";
            c.flops = flops;
            c.bytes = bytes;
            c.memoryS = bytes / 1.7e12;
            c.timeS = std::max(flops / 3e14, c.memoryS);
            c.countPerStep = 1;
            return c;
        };
        e.operations = {op("between the ridges", 2e11, 1e9), op("left of both", 1.5e11, 1e9)};
        const OpRoofline r = opRoofline(p, e);
        QCOMPARE(r.criticalIntensity, 250.0);
        QCOMPARE(r.points.size(), std::size_t(2));
        QCOMPARE(r.points[0].bound, std::string("compute"));
        QVERIFY_NEAR(r.points[0].timeS, 2e11 / 3e14, 1e-12);
        QCOMPARE(r.points[1].bound, std::string("hbm"));
        // And the evaluation's own ops carry the HBM time they were taken with.
        for (const auto &c : run(p).operations)
            QVERIFY_NEAR(c.memoryS, c.bytes / (2e12 * 0.85), 1e-12);
    }

    void matmulIntensityIsTheBooks_data()
    {
        // Per chip [B, D] x [D, F] in bf16: 2BDF FLOPs over 2(BD + DF + BF) bytes (book ch. 1). The
        // default plan: B = 2048 tokens per chip (one 4096-token sequence over context 2), heads
        // and d_ff over tensor 4. The projections also carry a norm's d/4 weights, as the step
        // counts them (1e-4 of the qkv FLOPs, 2e-5 of up+gate's).
        QTest::addColumn<bool>("serving");
        QTest::addColumn<QString>("op");
        QTest::addColumn<double>("B");
        QTest::addColumn<double>("D");
        QTest::addColumn<double>("F");
        QTest::addColumn<double>("weightBytes");
        QTest::addColumn<double>("rtol");
        QTest::newRow("mlp down") << false << "mlp down" << 2048.0 << 28672.0 / 4 << 8192.0 << 2.0 << 1e-12;
        QTest::newRow("attention output") << false << "attention output projection" << 2048.0 << 8192.0 / 4 << 8192.0
                                          << 2.0 << 1e-12;
        QTest::newRow("logits") << false << "logits (unembedding)" << 2048.0 << 8192.0 << 128256.0 / 4 << 2.0 << 1e-12;
        QTest::newRow("mlp up+gate") << false << "mlp up+gate" << 2048.0 << 8192.0 << 2 * 28672.0 / 4 << 2.0 << 1e-4;
        QTest::newRow("qkv (64 + 2 x 8 heads of 128)")
            << false << "attention qkv projection" << 2048.0 << 8192.0 << (64 + 16) * 128.0 / 4 << 2.0 << 2e-4;
        // Decode, 32 sequences per replica over tensor 16, int8 weights: the weights dominate, so
        // the intensity is about 2B / 1 byte = 64 (book ch. 7).
        QTest::newRow("decode mlp down, int8") << true << "decode: mlp down" << 32.0 << 28672.0 / 16 << 8192.0 << 1.0
                                               << 1e-12;
    }

    void matmulIntensityIsTheBooks()
    {
        QFETCH(bool, serving);
        QFETCH(QString, op);
        QFETCH(double, B);
        QFETCH(double, D);
        QFETCH(double, F);
        QFETCH(double, weightBytes);
        QFETCH(double, rtol);
        const Plan p = serving ? servingV5e() : defaultPlan();
        const Evaluation e = run(p);
        const OpRoofline r = opRoofline(p, e);
        const auto it = std::find_if(r.points.begin(), r.points.end(), [&](const auto &pt) { return pt.op == op.toStdString(); });
        QVERIFY(it != r.points.end());
        const double flops = 2 * B * D * F;
        const double bytes = 2 * (B * D + B * F) + weightBytes * D * F;
        QCOMPARE(it->kind, std::string("matmul"));
        QVERIFY_NEAR(it->flops, flops, rtol);
        QVERIFY_NEAR(it->bytes, bytes, rtol);
        QVERIFY_NEAR(it->intensity, flops / bytes, rtol);
        if (weightBytes == 2.0)
            QVERIFY_NEAR(it->intensity, 2 * B * D * F / (2 * (B * D + D * F + B * F)), rtol);
        QCOMPARE(it->bound, std::string(it->intensity > r.criticalIntensity ? "compute" : "hbm"));
        QCOMPARE(it->bound, std::string(serving ? "hbm" : "compute"));
        if (serving)
            QVERIFY(std::fabs(it->intensity - 2 * B) < 0.05 * 2 * B);
    }

    void pointsLieUnderTheRoofline_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<int>("mode");
        QTest::addColumn<double>("ridge");
        QTest::newRow("default") << QString() << int(CostMode::Achievable) << 4.59e14 / 2.765e12;
        QTest::newRow("default, ideal") << QString() << int(CostMode::Ideal) << 4.59e14 / 2.765e12;
        QTest::newRow("serving v5e") << QStringLiteral("@v5e") << int(CostMode::Achievable) << 1.97e14 / 8.2e11;
        QTest::newRow("serving disaggregated") << QStringLiteral("@disaggregated") << int(CostMode::Achievable)
                                               << 9.89e14 / 3.35e12;
        QTest::newRow("70B v5p") << QStringLiteral("llama-3-70b-v5p-16x16x32") << int(CostMode::Achievable)
                                 << 4.59e14 / 2.765e12;
        QTest::newRow("405B h100") << QStringLiteral("llama-3-405b-h100-16k") << int(CostMode::Achievable)
                                   << 9.89e14 / 3.35e12;
        QTest::newRow("deepseek fp8") << QStringLiteral("deepseek-v3-h100-2048") << int(CostMode::Achievable)
                                      << 1.979e15 / 3.35e12;
        QTest::newRow("mixtral") << QStringLiteral("mixtral-8x7b-h100-moe") << int(CostMode::Achievable)
                                 << 9.89e14 / 3.35e12;
        QTest::newRow("8B v5e multislice") << QStringLiteral("llama-3-8b-v5e-multislice") << int(CostMode::Achievable)
                                           << 1.97e14 / 8.2e11;
        QTest::newRow("inline chip") << QStringLiteral("inline-chip-llama-3-8b") << int(CostMode::Achievable)
                                     << 5e14 / 2e12;
        for (const QString &name : shippedPlans(WorkloadKind::Inference))
            QTest::newRow(qPrintable(name)) << name << int(CostMode::Achievable)
                                            << load(name).topology.chip().peakFlops(load(name).inference.computeDtype)
                                                   / load(name).topology.chip().hbmBandwidth;
    }

    // Every coordinate positive and finite; on-chip ops compute-bound exactly right of the
    // ridge (C / W_hbm of the compute dtype); no point above the datasheet roofline; every
    // collective of the evaluation placed, bound by its link exactly when the step exposes it.
    void pointsLieUnderTheRoofline()
    {
        QFETCH(QString, plan);
        QFETCH(int, mode);
        QFETCH(double, ridge);
        const Plan p = plan == QStringLiteral("@v5e")             ? servingV5e()
                       : plan == QStringLiteral("@disaggregated") ? servingDisaggregated()
                       : plan.isEmpty()                           ? defaultPlan()
                                                                  : load(plan);
        const Evaluation e = run(p, CostMode(mode));
        const OpRoofline r = opRoofline(p, e);
        QVERIFY_NEAR(r.criticalIntensity, ridge, 1e-12);
        QVERIFY_NEAR(r.computePeak / p.topology.chip().hbmBandwidth, ridge, 1e-12); // the roof the ridge is on
        const Chip &chip = p.topology.chip();
        const DType dtype = p.kind == WorkloadKind::Training ? p.training.computeDtype : p.inference.computeDtype;
        std::set<int> collectives;
        std::set<std::string> kinds;
        for (const auto &pt : r.points) {
            for (double v : {pt.flops, pt.bytes, pt.intensity, pt.timeS, pt.achievedFlopsPerS})
                QVERIFY2(std::isfinite(v) && v > 0, pt.op.c_str());
            QVERIFY(pt.countPerStep > 0);
            QVERIFY_NEAR(pt.intensity, pt.flops / (pt.kind == "collective" ? pt.effectiveBytes : pt.bytes), 1e-12);
            QVERIFY_NEAR(pt.achievedFlopsPerS, pt.flops / pt.timeS, 1e-12);
            kinds.insert(pt.kind);
            if (pt.kind == "collective") {
                QVERIFY(pt.collective >= 0 && pt.collective < int(e.collectives.size()));
                collectives.insert(pt.collective);
                const CollectiveUse &c = e.collectives[std::size_t(pt.collective)];
                const double each = c.timeS / double(c.countPerStep);
                QCOMPARE(pt.flops, c.overlapFlops);
                QCOMPARE(pt.bytes, c.bytesPerChip);
                QCOMPARE(pt.bound, c.exposedS > 0 ? std::string(linkName(c.link)) : std::string("compute"));
                QVERIFY_NEAR(pt.timeS,
                             c.exposedS > 0 ? std::max(each, c.overlapS + c.exposedS / double(c.countPerStep))
                                            : std::max(c.overlapS, each),
                             1e-12);
                QVERIFY(pt.achievedFlopsPerS <= chip.peakFlops(dtype) * (1 + 1e-12));
                // Against the slope drawn for its link: exposed ones on it, hidden ones under it.
                const auto slope = std::find_if(r.ceilings.begin(), r.ceilings.end(),
                                                [&](const auto &ceiling) { return ceiling.name == pt.linkCeiling; });
                QVERIFY2(slope != r.ceilings.end() && slope->slope, pt.linkCeiling.c_str());
                QCOMPARE(pt.linkBandwidth, slope->value);
                QVERIFY_NEAR(pt.effectiveBytes, slope->value * (c.exposedS > 0 ? pt.timeS : each), 1e-12);
                if (c.exposedS > 0)
                    QVERIFY_NEAR(pt.achievedFlopsPerS, pt.intensity * slope->value, 1e-12);
                else
                    QVERIFY(pt.achievedFlopsPerS <= pt.intensity * slope->value * (1 + 1e-12));
            } else {
                QCOMPARE(pt.collective, -1);
                // The side of the ridge at the evaluation's rates: FLOPs outlast the HBM traffic.
                const double hbm = chip.hbmBandwidth * (CostMode(mode) == CostMode::Ideal ? 1.0 : chip.achievable.hbmEfficiency);
                QCOMPARE(pt.bound, std::string(pt.timeS > pt.bytes / hbm * (1 + 1e-12) ? "compute" : "hbm"));
                const double roof = std::min(chip.peakFlops(dtype), pt.intensity * chip.hbmBandwidth);
                QVERIFY2(pt.achievedFlopsPerS <= roof * (1 + 1e-12), pt.op.c_str());
                if (CostMode(mode) == CostMode::Ideal && pt.kind != "elementwise")
                    QVERIFY_NEAR(pt.achievedFlopsPerS, roof, 1e-12); // the ideal model sits on the roof
            }
        }
        QCOMPARE(collectives.size(), e.collectives.size()); // each has FLOPs to overlap and bytes to send
        QVERIFY(kinds.count("matmul") && kinds.count("attention"));
        QCOMPARE(bool(kinds.count("elementwise")), CostMode(mode) == CostMode::Achievable); // ideal: no elementwise traffic
    }

    // The operations are the step cost's own: in the ideal model (no elementwise traffic, matmuls
    // above the ridge) the default plan's compute is L x (3 + 1 recomputed) passes of the layer
    // plus 3 passes of the logits, and the FLOPs less the recompute, over all chips, are the
    // step's model FLOPs (up to the final norm, 1e-7).
    void operationsAddUpToTheStep()
    {
        const Plan p = defaultPlan();
        const Evaluation e = run(p, CostMode::Ideal);
        double layer = 0, logits = 0, perChip = 0;
        for (const auto &op : e.operations) {
            if (op.op == "logits (unembedding)") {
                logits = op.flops;
                QCOMPARE(op.countPerStep, std::int64_t(3));
                perChip += op.flops * double(op.countPerStep);
            } else {
                layer += op.flops;
                QCOMPARE(op.countPerStep, std::int64_t(80 * 4));
                perChip += op.flops * double(op.countPerStep) * 3 / 4;
            }
        }
        QVERIFY_NEAR(e.step.compute, (80 * 4 * layer + 3 * logits) / 4.59e14, 1e-12);
        QVERIFY_NEAR(perChip * 8192, e.step.flops, 1e-6);

        // Decode: the matmuls' FLOPs are the decode step's compute component exactly.
        const Plan s = servingV5e();
        const Evaluation d = run(s, CostMode::Ideal);
        double decodeFlops = 0;
        for (const auto &op : d.operations)
            if (op.op.rfind("decode: ", 0) == 0 && op.kind == "matmul")
                decodeFlops += op.flops * double(op.countPerStep);
        QVERIFY_NEAR(decodeFlops / 1.97e14, d.serving.decodeComputeS, 1e-12);
        int prefill = 0;
        for (const auto &op : d.operations)
            prefill += op.op.rfind("prefill: ", 0) == 0;
        QCOMPARE(prefill, 6); // qkv, output, core, up+gate, down, logits (ideal: no elementwise)
    }

    // MoE: attention once for all the stage's layers, then a dense layer's MLP and a MoE layer's
    // experts, as the busiest stage holds them. DeepSeek-V3 over 16 stages (61 layers: stages 0-12
    // hold 4, 13-15 hold 3; the 3 dense ones share stage 0 with one MoE layer): the busiest is the
    // last, its 3 MoE layers and the 129k-wide output layer; unstaged, all 61 layers.
    void moeLayersHaveTheirOwnPoints()
    {
        const auto onChip = [](const Plan &p) {
            QStringList ops;
            for (const auto &pt : opRoofline(p, run(p)).points)
                if (pt.kind != "collective")
                    ops << QString::fromStdString(pt.op) + QLatin1Char(' ') + QString::number(pt.countPerStep);
            return ops;
        };
        const Plan staged = load(QStringLiteral("deepseek-v3-h100-2048"));
        // 3 layers x 32 microbatches x 3 passes; the attention core's forward twice (selective
        // remat runs it again) and its fused backward once, a point of its own; the loss once per
        // microbatch.
        QCOMPARE(onChip(staged), (QStringList{"attention qkv projection 288", "attention output projection 288",
                                              "attention core 192", "attention core (backward) 96",
                                              "moe router and shared experts 288",
                                              "moe routed experts 288", "elementwise (moe layer) 288",
                                              "logits (unembedding) 96",
                                              "loss (softmax cross-entropy) 32"}));
        const PlanEdits edits;
        json doc = unwrap(edits.withDegree(planToJson(staged), Role::Pipeline, 1));
        doc = unwrap(edits.withField(doc, "/parallelism/microbatches", 1));
        QCOMPARE(onChip(parse(doc)), (QStringList{"attention qkv projection 183", "attention output projection 183",
                                                  "attention core 122", "attention core (backward) 61", "mlp up+gate 9",
                                                  "mlp down 9", "elementwise 9",
                                                  "moe router and shared experts 174", "moe routed experts 174",
                                                  "elementwise (moe layer) 174", "logits (unembedding) 3",
                                                  "loss (softmax cross-entropy) 1"}));
    }

    // The fsdp gather of the default plan: it overlaps one layer's forward, B (2P / 4 + a) with
    // B = 2048, a = 2 x 4096 x 16 heads x 256 / 2; each chip sends V (N - 1) / N of the layer's
    // V = 2P / 4 bytes, N = 2048 (ZeRO-3 gathers over fsdp and context alike), in
    // V / (0.9 x 2 x 9e10 (1/4 + 1 + 1)) + 26 hops x 1 us (fsdp holds 2 of x at stride 8 and
    // context 2 at stride 4: together a ring of 4 at stride 4; all of y and z).
    void fsdpGatherPoint()
    {
        const Plan p = defaultPlan();
        const Evaluation e = run(p);
        const OpRoofline r = opRoofline(p, e);
        const auto it = std::find_if(r.points.begin(), r.points.end(), [](const auto &pt) { return pt.op == "fsdp weights"; });
        QVERIFY(it != r.points.end());
        const double P = PureFsdpHand::P;
        const double flops = 2048 * (2 * P / 4 + 2.0 * 4096 * 16 * 256 / 2);
        const double V = 2 * P / 4;
        const double each = V / (0.9 * 2 * 9e10 * (1.0 / 4 + 2)) + 26e-6;
        QVERIFY_NEAR(it->flops, flops, 1e-12);
        QVERIFY_NEAR(it->bytes, V * 2047 / 2048, 1e-12);
        const CollectiveUse &c = e.collectives[std::size_t(it->collective)];
        QVERIFY_NEAR(c.timeS / double(c.countPerStep), each, 1e-9);
        QCOMPARE(it->bound, std::string("compute")); // 2048 tokens per chip > the critical 892
    }

    // A collective's bound is the step cost's exposure, not a comparison of two times. The default
    // plan in the ideal model: each tensor all-reduce moves one layer block's activations,
    // V = 2048 tokens x 8192 x 2 bytes, round a 4-chip line (no wraparound on a sub-ring: the
    // book's 2 (N - 1) / N V one way round, 1.5 V / 9e10) and is never hidden in training; the
    // context all-gather (2 chips: the other half of K and V, 2048 tokens x 2 of the 8 KV heads
    // (tensor 4) x 128 x 2 (K, V) x 2 bytes) is.
    void collectiveBoundFollowsTheExposure()
    {
        const Plan p = defaultPlan();
        const Evaluation e = run(p, CostMode::Ideal);
        const OpRoofline r = opRoofline(p, e);
        const auto find = [&](const std::string &op) {
            return std::find_if(r.points.begin(), r.points.end(), [&](const auto &pt) { return pt.op == op; });
        };
        const auto tensor = find("tensor activations");
        QVERIFY(tensor != r.points.end());
        const double V = 2048.0 * 8192 * 2;
        QVERIFY_NEAR(tensor->bytes, 1.5 * V, 1e-12);
        QVERIFY_NEAR(tensor->commS, 1.5 * V / 9e10, 1e-9);
        QVERIFY_NEAR(tensor->exposedS, tensor->commS, 1e-9); // all of it
        QCOMPARE(tensor->bound, std::string("ici"));
        // One occurrence: its matmul block at the bf16 peak, then the all-reduce.
        QVERIFY_NEAR(tensor->overlapS, tensor->flops / 4.59e14, 1e-12);
        QVERIFY_NEAR(tensor->timeS, tensor->flops / 4.59e14 + 1.5 * V / 9e10, 1e-9);
        QVERIFY(tensor->achievedFlopsPerS < 0.75 * 4.59e14);

        const auto context = find("context keys and values");
        QVERIFY(context != r.points.end());
        QVERIFY_NEAR(context->bytes, 2048.0 * 2 * 128 * 2 * 2, 1e-12);
        QCOMPARE(context->exposedS, 0.0);
        QCOMPARE(context->bound, std::string("compute"));
        QVERIFY_NEAR(context->timeS, std::max(context->overlapS, context->commS), 1e-12);

        // LLaMA-3 8B over 4 v5e slices: the gradients' all-reduce over DCN. Each chip sends 2 x 3/4
        // of its 1 / 256 of the bf16 gradients, V, and the book prices it at V / W_dcn for each
        // half (3.125 GB/s). The book's ideal model overlaps it with the backward: compute. The
        // achievable one runs it after the backward, all of it exposed: bound by dcn, however
        // large the backward it follows.
        const Plan m = load(QStringLiteral("llama-3-8b-v5e-multislice"));
        const double grads = 2.0 * 8030261248.0 / 256; // LLaMA-3 8B's 8.03e9 parameters
        const auto gradients = [](const OpRoofline &roofline) {
            return *std::find_if(roofline.points.begin(), roofline.points.end(),
                                 [](const auto &pt) { return pt.op == "gradients"; });
        };
        const RooflinePoint ideal = gradients(opRoofline(m, run(m, CostMode::Ideal)));
        QVERIFY_NEAR(ideal.bytes, 1.5 * grads, 1e-6); // the shard's rounding: 5e-7
        QVERIFY_NEAR(ideal.commS, 2 * grads / 3.125e9, 1e-6);
        QCOMPARE(ideal.bound, std::string("compute"));
        QCOMPARE(ideal.timeS, ideal.overlapS); // the backward, 1.9 s, outlasts 40 ms
        const RooflinePoint achievable = gradients(opRoofline(m, run(m)));
        QCOMPARE(achievable.bound, std::string("dcn"));
        QVERIFY_NEAR(achievable.exposedS, achievable.commS, 1e-12);
        QVERIFY_NEAR(achievable.timeS, achievable.overlapS + achievable.commS, 1e-12);

        // Serving hides nothing: both tensor all-reduces are bound by ICI.
        const Plan s = servingV5e();
        for (const auto &pt : opRoofline(s, run(s, CostMode::Ideal)).points)
            if (pt.kind == "collective") {
                QCOMPARE(pt.bound, std::string("ici"));
                QVERIFY_NEAR(pt.timeS, pt.overlapS + pt.commS, 1e-9);
            }
    }

    // Mixtral with sequence parallelism: the activations' all-gather and reduce-scatter share a
    // purpose, so their names carry the op; every point's name is unique (a selection key).
    void collectivesSharingAPurposeHaveDistinctNames()
    {
        const Plan p = load(QStringLiteral("mixtral-8x7b-h100-moe"));
        const Evaluation e = run(p);
        const OpRoofline r = opRoofline(p, e);
        std::set<std::string> names;
        for (const auto &pt : r.points)
            QVERIFY2(names.insert(pt.op).second, pt.op.c_str());
        QVERIFY(names.count("tensor activations (sequence parallel) all-gather"));
        QVERIFY(names.count("tensor activations (sequence parallel) reduce-scatter"));
        QVERIFY(names.count("fsdp weights")); // a purpose of its own keeps its name
        for (const auto &pt : r.points) {
            if (pt.kind != "collective")
                continue;
            const CollectiveUse &c = e.collectives[std::size_t(pt.collective)];
            QCOMPARE(pt.collectiveOp, std::string(collectiveName(c.op)));
            QCOMPARE(pt.axes, c.axes);
            QCOMPARE(pt.link, std::string(linkName(c.link)));
        }
        // Tensor 2 inside a node, over NVLink: a microbatch is one 4096-token sequence per chip
        // (512 over fsdp 8 x expert 8, 8 microbatches), V = 4096 x d 4096 x 2 bytes, of which each
        // GPU sends the half the other lacks.
        for (const char *op : {"all-gather", "reduce-scatter"}) {
            const auto it = std::find_if(r.points.begin(), r.points.end(), [&](const auto &pt) {
                return pt.op == "tensor activations (sequence parallel) " + std::string(op);
            });
            QVERIFY(it != r.points.end());
            QCOMPARE(it->collectiveOp, std::string(op));
            QCOMPARE(it->link, std::string("nvlink"));
            QCOMPARE(it->linkCeiling, std::string("NVLink (per GPU)"));
            QVERIFY_NEAR(it->bytes, 4096.0 * 4096 * 2 / 2, 1e-12);
        }
    }

    // Pure 3-axis FSDP in the book's ideal model: the gather's point is link-bound exactly below
    // the critical batch, and then lies on the drawn ICI slope (W_ici per axis, 1.8e11 B/s).
    // Hidden, its effective intensity is FLOPs / (W_ici x t), t = 2P / (3 W_ici) for a layer's
    // bf16 weights gathered over three full axes: 3 (2P + a) x / 2P, right of the slope's ridge
    // C / W_ici = 2550 exactly when x is above the critical batch (the book's F / B > C / W).
    void fsdpGatherPointFlipsAtTheCriticalBatch_data()
    {
        QTest::addColumn<double>("tokens");
        for (double x : {256.0, 512.0, 1024.0, 2048.0})
            QTest::newRow(qPrintable(QString::number(x))) << x;
    }

    void fsdpGatherPointFlipsAtTheCriticalBatch()
    {
        QFETCH(double, tokens);
        Plan p = pureFsdpDefault();
        p.training.globalBatch = std::int64_t(tokens / 256 * 8192);
        const Evaluation e = run(p, CostMode::Ideal);
        QCOMPARE(e.critical.tokensPerChip, tokens);
        const OpRoofline r = opRoofline(p, e);
        const auto it = std::find_if(r.points.begin(), r.points.end(), [](const auto &pt) { return pt.op == "fsdp weights"; });
        QVERIFY(it != r.points.end());
        using H = PureFsdpHand;
        const double n = H::chips;
        QVERIFY_NEAR(it->bytes, 2 * H::P * (n - 1) / n, 1e-12);
        QCOMPARE(it->bound, std::string(tokens < H::critical() ? "ici" : "compute"));
        const double W = 2 * 9e10;
        QCOMPARE(it->linkBandwidth, W);
        if (it->bound == "compute")
            QVERIFY_NEAR(it->intensity, 3 * (2 * H::P + H::a) * tokens / (2 * H::P), 1e-6);
        else
            QVERIFY_NEAR(it->intensity * W, it->achievedFlopsPerS, 1e-12); // on the slope
        QCOMPARE(it->bound == "compute", it->intensity > H::C / W);
    }

    // ---- Scaling sweeps --------------------------------------------------------------------------

    void sweepsRefuseServing_data()
    {
        QTest::addColumn<bool>("byChips");
        QTest::newRow("batch") << false;
        QTest::newRow("chips") << true;
    }

    void sweepsRefuseServing()
    {
        QFETCH(bool, byChips);
        std::vector<Plan> plans{servingV5e(), servingDisaggregated()};
        for (const QString &name : shippedPlans(WorkloadKind::Inference))
            plans.push_back(load(name));
        for (const Plan &p : plans) {
            const auto sweep = byChips ? sweepChipCount(p) : sweepPerChipBatch(p);
            QVERIFY(!sweep);
            QCOMPARE(sweep.error().path, std::string("workload.kind"));
            QVERIFY(sweep.error().message.find("inference") != std::string::npos);
        }
    }

    // The default plan already has one sequence per batch shard (fsdp 1024) and microbatch, so the
    // batch sweep starts at it: 4096 / context 2 = 2048 tokens per chip, then doubles up to 64x.
    // Its critical batch is the hand-derived gather time over forward time per token:
    // 1.19975 ms / (444,604,416 FLOPs / (0.72 x 4.59e14)) = 891.78. The sweep never reaches it.
    void defaultPlanBatchSweep()
    {
        const Plan p = defaultPlan();
        const Evaluation e = run(p);
        const auto sweep = sweepPerChipBatch(p);
        QVERIFY(sweep);
        checkSweepShape(*sweep, e, false);
        QVERIFY(sweep->points.front().current);
        QCOMPARE(sweep->points.size(), std::size_t(7));
        for (std::size_t i = 0; i < sweep->points.size(); ++i) {
            QCOMPARE(sweep->points[i].x, 2048.0 * double(1 << i));
            QCOMPARE(sweep->points[i].globalBatch, std::int64_t(1024) << i);
            QCOMPARE(sweep->points[i].chips, std::int64_t(8192));
        }
        QVERIFY(!sweep->points.back().fits); // 131072 tokens per chip: out of HBM
        QCOMPARE(sweep->crossoverX, 0.0);
        // One sequence per batch shard already: 512 sequences cannot fill 1024 shards.
        QVERIFY2(sweep->belowLimit.find("512 sequences cannot be split") != std::string::npos, sweep->belowLimit.c_str());
        QVERIFY(sweep->aboveLimit.empty());
        const double gather = 2 * PureFsdpHand::P / 4 / (0.9 * 2 * 9e10 * (1.0 / 4 + 2)) + 26e-6;
        const double perToken = (2 * PureFsdpHand::P / 4 + 2.0 * 4096 * 16 * 256 / 2) / (0.72 * 4.59e14);
        QVERIFY_NEAR(sweep->bookCriticalX, gather / perToken, 1e-9);
        QCOMPARE(sweep->bookCriticalX, e.critical.fsdpTokensPerChip);
    }

    // Two slices would leave 2048 batch shards for 1024 sequences, so the sweep goes down: the
    // pod's slice with its longest axis halved each time (16x16x32 -> 16x16x16 -> 8x16x16 ->
    // 8x8x16 -> 8x8x8), fsdp absorbing the change (tensor 4 x context 2 kept). All compute-bound,
    // so step time x chips stays put (within 0.5%: only the latency terms of the collectives do
    // not scale). Its critical batch in chips: 1024 x 4096 x tensor 4 / 891.78.
    void defaultPlanChipSweep()
    {
        const Plan p = defaultPlan();
        const Evaluation e = run(p);
        const auto sweep = sweepChipCount(p);
        QVERIFY(sweep);
        checkSweepShape(*sweep, e, true);
        QCOMPARE(sweep->points.size(), std::size_t(5));
        for (std::size_t i = 0; i < sweep->points.size(); ++i) {
            const ScalingPoint &q = sweep->points[i];
            QCOMPARE(q.chips, std::int64_t(512) << i);
            QCOMPARE(q.x, double(q.chips));
            QCOMPARE(q.globalBatch, std::int64_t(1024));
            QCOMPARE(q.bound, std::string("compute"));
            QVERIFY(q.fits);
            QVERIFY_NEAR(q.stepTimeS * double(q.chips), e.step.time * 8192, 0.005);
        }
        QVERIFY(sweep->points.back().current);
        QCOMPARE(sweep->crossoverX, 0.0);
        QVERIFY_NEAR(sweep->bookCriticalX, 1024.0 * 4096 * 4 / e.critical.fsdpTokensPerChip, 1e-12);
        // Why it stops at the plan: 16384 chips would need 2048 batch shards for 1024 sequences.
        QVERIFY2(sweep->aboveLimit.find("1024 sequences cannot be split") != std::string::npos, sweep->aboveLimit.c_str());
        QVERIFY(sweep->belowLimit.empty());
    }

    // Book ch. 5: FSDP over a v5p's three axes is communication-bound below C / (3 W_ici) =
    // 4.59e14 / 5.4e11 = 850 tokens per chip. The model's critical batch (ideal) is that times
    // 2P / (2P + a), the attention core adding a: 847.92. Communication *outweighs* compute
    // (bound "ici") further down, where L (3 ag - 4 f) > 4 L f + 3 logits: 316 tokens; the sweep
    // interpolates between its points at 256 and 512 (within 6% of 316: exposure falls as 1/x,
    // the interpolation is linear in log x). Achievable efficiencies (0.72 FLOPs, 0.9 ICI, plus
    // 32 hops of 1 us) move the critical batch to 684.5.
    void bookFsdpCriticalBatch()
    {
        using H = PureFsdpHand;
        const Plan p = pureFsdpDefault();
        QCOMPARE(p.parallelism.degree(Role::Fsdp), 8192);
        QCOMPARE(p.topology.chipCount(), std::int64_t(8192));
        const ParamCounts params = countParams(p.model);
        QCOMPARE(double(params.attentionPerLayer + params.denseMlpPerLayer), H::P);
        QVERIFY(H::forward(256) > H::P * 2 / 2.765e12); // matmuls, not weight reads, set the layer time

        const auto sweep = sweepPerChipBatch(p, CostMode::Ideal);
        QVERIFY(sweep);
        checkSweepShape(*sweep, run(p, CostMode::Ideal), false);
        QCOMPARE(sweep->points.front().x, 256.0); // one sequence per chip
        QCOMPARE(sweep->points.front().bound, std::string("ici"));
        QVERIFY(pointAt(*sweep, 512) && pointAt(*sweep, 512)->bound == "compute");
        QVERIFY(pointAt(*sweep, 1024) && pointAt(*sweep, 1024)->current);

        QVERIFY_NEAR(sweep->bookCriticalX, H::critical(), 1e-9);
        QVERIFY_NEAR(sweep->bookCriticalX, 850.0, 0.003);
        QVERIFY(H::ratio(256) > 1 && H::ratio(512) < 1);
        QVERIFY_NEAR(sweep->crossoverX, H::interpolated(512, 256), 1e-9);
        QVERIFY_NEAR(sweep->crossoverX, H::continuousCrossover(), 0.06);
        QVERIFY(sweep->crossoverX < 0.4 * sweep->bookCriticalX);

        const auto achievable = sweepPerChipBatch(p);
        QVERIFY(achievable);
        const double gather = 2 * H::P / (0.9 * H::W3) + 32e-6;
        QVERIFY_NEAR(achievable->bookCriticalX, gather / ((2 * H::P + H::a) / (0.72 * H::C)), 1e-9);
        QVERIFY_NEAR(achievable->bookCriticalX, 684.5, 1e-3);
    }

    // The same plan from a 8x8x8 slice up to 4 slices (fsdp absorbs them; 8 slices would leave a
    // shard with no sequence): below one pod, the slice's longest axis halves each time. Tokens
    // per chip 16384 ... 256 for the fixed batch of 8,388,608 tokens. In the ideal model a
    // compute-bound step is FLOPs / (chips x C), so step time x chips and MFU are the same on
    // the five sub-pod points (to 1e-9). The crossover is 8,388,608 / the batch sweep's and the
    // critical chip count 8,388,608 / 847.92. The DCN leg of each gather carries only 1/8192 of
    // it and stays below the ICI time.
    void bookFsdpChipSweep()
    {
        using H = PureFsdpHand;
        const Plan p = pureFsdpDefault();
        const auto sweep = sweepChipCount(p, CostMode::Ideal);
        QVERIFY(sweep);
        checkSweepShape(*sweep, run(p, CostMode::Ideal), true);
        QCOMPARE(sweep->points.size(), std::size_t(7));
        for (std::size_t i = 0; i < 7; ++i) {
            const ScalingPoint &q = sweep->points[i];
            QCOMPARE(q.chips, std::int64_t(512) << i);
            QCOMPARE(q.globalBatch, std::int64_t(32768));
            QCOMPARE(q.bound, std::string(i < 6 ? "compute" : "ici"));
            if (i > 0 && i < 5) {
                QVERIFY_NEAR(q.mfu, sweep->points[0].mfu, 1e-9);
                QVERIFY_NEAR(q.stepTimeS * double(q.chips), sweep->points[0].stepTimeS * 512, 1e-9);
            }
        }
        QVERIFY(sweep->points[4].current);
        const double tokens = 32768.0 * 256;
        QVERIFY_NEAR(sweep->crossoverX, tokens / H::interpolated(512, 256), 1e-9);
        QVERIFY_NEAR(sweep->bookCriticalX, tokens / H::critical(), 1e-9);
        QVERIFY_NEAR(sweep->bookCriticalX, 9893.0, 1e-4);
    }

    // Book ch. 12: data parallelism across H100 nodes is compute-bound above C (15/16) / W_node
    // = 9.89e14 x 15/16 / 4e11 = 2317.97 tokens per GPU. (Exact here: the tied embedding's
    // gradient, 2 x 1024 x 2048, equals the 8 layers' attention-core FLOPs, 8 x 128 x 16 x 256,
    // that the book's formula leaves out.) Without remat the backward (2/3 of the step) hides
    // the all-reduce, so the exposed part outweighs compute where AR - 2/3 c > c, at 2/5 of it.
    void gpuDataParallelSweeps()
    {
        const Plan p = gpuDataParallel();
        const Evaluation e = run(p, CostMode::Ideal);
        const double critical = 9.89e14 * 15 / 16 / 4e11;
        QVERIFY_NEAR(e.critical.dataTokensPerChip, critical, 1e-9);

        // r(x) = AR / c - 2/3 = 2/3 (X_c / x - 1), up to the logits (1e-3 of c).
        const auto ratio = [&](double x, double leaf) { return 2.0 / 3 * (critical * leaf / (15.0 / 16) / x - 1); };
        const auto batch = sweepPerChipBatch(p, CostMode::Ideal);
        QVERIFY(batch);
        checkSweepShape(*batch, e, false);
        QCOMPARE(batch->points.front().x, 128.0); // one 128-token sequence per GPU
        QCOMPARE(pointAt(*batch, 512)->bound, std::string("scale-out"));
        QCOMPARE(pointAt(*batch, 1024)->bound, std::string("compute"));
        QVERIFY_NEAR(batch->bookCriticalX, critical, 1e-9);
        const double t = (1 - ratio(1024, 15.0 / 16)) / (ratio(512, 15.0 / 16) - ratio(1024, 15.0 / 16));
        QVERIFY_NEAR(batch->crossoverX, 1024 * std::pow(0.5, t), 2e-3);
        QVERIFY_NEAR(batch->crossoverX, 0.4 * critical, 0.03);

        // Nodes 1 to 128 (data absorbs them: it holds the node axis). Past 32 nodes a spine level
        // joins the leaves; at 32 the leaf ring has 31/32 instead of 15/16.
        const auto chips = sweepChipCount(p, CostMode::Ideal);
        QVERIFY(chips);
        checkSweepShape(*chips, e, true);
        QCOMPARE(chips->points.front().chips, std::int64_t(8));
        QCOMPARE(chips->points.back().chips, std::int64_t(1024));
        QCOMPARE(pointAt(*chips, 8)->bound, std::string("compute")); // NVLink only
        QCOMPARE(pointAt(*chips, 256)->bound, std::string("scale-out"));
        QVERIFY_NEAR(chips->bookCriticalX, 1024.0 * 128 / critical, 1e-9);
        const double tc = (1 - ratio(1024, 15.0 / 16)) / (ratio(512, 31.0 / 32) - ratio(1024, 15.0 / 16));
        QVERIFY_NEAR(chips->crossoverX, 128 * std::pow(2.0, tc), 2e-3);
    }

    void shippedPlansSweep_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::newRow("default") << QString();
        for (const QString &name : shippedPlans(WorkloadKind::Training))
            QTest::newRow(qPrintable(name)) << name;
    }

    // The shipped plans are sensible layouts: compute-bound at every point of both sweeps, so no
    // crossover; the shapes hold; the critical batch is the role's own (fsdp, else data).
    void shippedPlansSweep()
    {
        QFETCH(QString, plan);
        const Plan p = plan.isEmpty() ? defaultPlan() : load(plan);
        const Evaluation e = run(p);
        const auto batch = sweepPerChipBatch(p);
        const auto chips = sweepChipCount(p);
        QVERIFY(batch && chips);
        checkSweepShape(*batch, e, false);
        checkSweepShape(*chips, e, true);
        const auto current = std::find_if(batch->points.begin(), batch->points.end(), [](const auto &pt) { return pt.current; });
        QCOMPARE(current->x, e.critical.tokensPerChip);
        const double critical = batch->bookCriticalX;
        QVERIFY(critical == e.critical.fsdpTokensPerChip || critical == e.critical.dataTokensPerChip);
        QVERIFY(critical > 0);
        QCOMPARE(batch->crossoverX, 0.0);
        QCOMPARE(chips->crossoverX, 0.0);
        for (const auto &pt : chips->points)
            QCOMPARE(pt.globalBatch, p.training.globalBatch);
    }

    // Mixtral: expert 8 x tensor 2 x fsdp 8 on 16 nodes. Fsdp absorbs the chip count (2 nodes:
    // fsdp 1, up to 128 nodes: fsdp 64, with microbatches down to the one sequence left per
    // replica); 256 nodes would leave batch shards without a sequence.
    void mixtralChipSweepKeepsExpertAndTensor()
    {
        const Plan p = load(QStringLiteral("mixtral-8x7b-h100-moe"));
        const auto sweep = sweepChipCount(p);
        QVERIFY(sweep);
        checkSweepShape(*sweep, run(p), true);
        std::vector<std::int64_t> chips;
        for (const auto &pt : sweep->points)
            chips.push_back(pt.chips);
        QCOMPARE(chips, (std::vector<std::int64_t>{16, 32, 64, 128, 256, 512, 1024}));
        const double speedup = sweep->points[3].stepTimeS / sweep->points.back().stepTimeS;
        // 8x the GPUs, nearly 8x the speed: the exposed all-to-alls and gathers keep it under (7.4).
        QVERIFY2(speedup > 7.0 && speedup < 8.0, qPrintable(QString::number(speedup)));
    }
    // A pipelined plan that leaves its microbatches out runs one sequence per microbatch, and the
    // chip-count sweep keeps that: LLaMA-3 8B on 2 H100 nodes as pipeline 4 x data 4, 64 sequences
    // (16 per replica, 16 microbatches); 4 nodes (data 8) give 8 microbatches, 1 node (data 2) 32.
    // A plan that names 16 keeps 16 where the sequences allow. The batch sweep keeps the count
    // either way: its x axis is the batch per chip per microbatch, which one sequence would pin.
    void sweepsKeepDefaultedMicrobatchesAtOneSequence()
    {
        json doc = {{"format", "meshplan/plan"},
                    {"version", 1},
                    {"model", "llama-3-8b"},
                    {"hardware", {{"chip", "h100-sxm"}, {"topology", {{"nodes", 2}, {"gpus_per_node", 8}}}}},
                    {"parallelism", {{"data", 4}, {"pipeline", 4}}},
                    {"workload", {{"kind", "training"}, {"seq_len", 4096}, {"global_batch", 64}, {"remat", "full"}}}};
        const Plan defaulted = parse(doc);
        QVERIFY(defaulted.parallelism.microbatchesDefaulted);
        QCOMPARE(defaulted.parallelism.microbatches, 16);
        const auto batchSweep = sweepPerChipBatch(defaulted);
        QVERIFY2(batchSweep, batchSweep ? "" : batchSweep.error().toString().c_str());
        QVERIFY(batchSweep->points.size() >= 3);
        for (const ScalingPoint &point : batchSweep->points)
            QCOMPARE(point.microbatches, 16);
        const auto chipSweep = sweepChipCount(defaulted);
        QVERIFY(chipSweep);
        const ScalingPoint *four = nullptr;
        for (const ScalingPoint &point : chipSweep->points)
            if (point.chips == 32)
                four = &point;
        QVERIFY(four);
        QCOMPARE(four->microbatches, 8);
        const ScalingPoint *one = nullptr;
        for (const ScalingPoint &point : chipSweep->points)
            if (point.chips == 8)
                one = &point;
        QVERIFY(one);
        QCOMPARE(one->microbatches, 32);

        doc["parallelism"]["microbatches"] = 16;
        const Plan named = parse(doc);
        QVERIFY(!named.parallelism.microbatchesDefaulted);
        const auto namedSweep = sweepChipCount(named);
        QVERIFY(namedSweep);
        int checked = 0;
        for (const ScalingPoint &point : namedSweep->points)
            if (point.chips == 8) {
                QCOMPARE(point.microbatches, 16);
                ++checked;
            }
        QCOMPARE(checked, 1);
    }

};

QTEST_APPLESS_MAIN(TestChartData)
#include "tst_chartdata.moc"
