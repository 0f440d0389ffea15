// The plan search (plansearch.h): exact against brute force on small spaces (every placement
// request, no pruning), its bounds below every evaluation, at least as fast as each published
// layout that fits, the same outcome on one thread or two, a prompt cancel, and plans that
// evaluate to the results printed with them.
#include "cost/evaluation.h"
#include "explore/paretofront.h"
#include "explore/plansearch.h"
#include "explore/servingsearch.h"
#include "explore/trainingbound.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

using nlohmann::json;
using namespace meshplan::model;

namespace {

const QString kData = QStringLiteral(MESHPLAN_TEST_DATA);

Plan parse(const json &doc)
{
    auto p = planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!p)
        qFatal("plan: %s", p.error().toString().c_str());
    return p.value();
}

Plan load(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    auto p = planFromText(f.readAll().toStdString(), path.toStdString(), ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!p)
        qFatal("plan %s: %s", qPrintable(path), p.error().toString().c_str());
    return p.value();
}

/// A small dense model (6.5B parameters, 104 GB of training state, so that memory binds on 8
/// H100s): 64 query heads over 4 KV heads (replicated past tensor 4), 7 layers (uneven stages).
json tinyDense()
{
    return {{"name", "small"}, {"layers", 7},     {"d_model", 8192}, {"d_ff", 28672},  {"heads", 64},
            {"kv_heads", 4},   {"head_dim", 128}, {"vocab", 32000},  {"mlp", "gated"}, {"tied_embeddings", false}};
}

/// A small mixture of experts: 8 experts, 2 per token, a shared one, the first layer dense.
json tinyMoe()
{
    json m = tinyDense();
    m["name"] = "tiny-moe";
    m["moe"] = {{"experts", 8}, {"experts_per_token", 2}, {"d_ff_expert", 2048}, {"shared_experts", 1},
                {"first_dense_layers", 1}};
    return m;
}

json trainingPlan(const json &model, const json &hardware, std::int64_t batch, std::int64_t seq, const char *dtype = "bf16")
{
    return {{"format", "meshplan/plan"},
            {"version", 1},
            {"model", model},
            {"hardware", hardware},
            {"parallelism", {{"data", 1}, {"fsdp", 1}, {"tensor", 1}, {"pipeline", 1}, {"expert", 1}, {"context", 1}}},
            {"workload",
             {{"kind", "training"}, {"seq_len", seq}, {"global_batch", batch}, {"compute_dtype", dtype}, {"remat", "full"}}}};
}

json smallGpu(int nodes, int perNode)
{
    return {{"chip", "h100-sxm"}, {"topology", {{"nodes", nodes}, {"gpus_per_node", perNode}}}};
}

std::vector<int> divisorsOf(std::int64_t n)
{
    std::vector<int> out;
    for (std::int64_t d = 1; d <= n; ++d)
        if (n % d == 0)
            out.push_back(static_cast<int>(d));
    return out;
}

/// Every ordered list of distinct axis names of the topology.
std::vector<std::vector<std::string>> axisLists(const Topology &t)
{
    std::vector<std::vector<std::string>> out;
    const int n = static_cast<int>(t.axes().size());
    for (int mask = 1; mask < (1 << n); ++mask) {
        std::vector<std::string> names;
        for (int a = 0; a < n; ++a)
            if (mask & (1 << a))
                names.push_back(t.axes()[static_cast<std::size_t>(a)].name);
        std::sort(names.begin(), names.end());
        do {
            out.push_back(names);
        } while (std::next_permutation(names.begin(), names.end()));
    }
    return out;
}

struct Point {
    double time;
    double memory;
    Plan plan;
};

/// The search's space enumerated naively: every degree split, every placement request (no
/// deduplication), every knob; each plan evaluated. `visit` sees each evaluated plan.
template<class Visit>
void bruteForce(const Plan &base, CostMode mode, Visit visit)
{
    const ModelSpec &m = base.model;
    const std::int64_t chips = base.topology.chipCount();
    const auto lists = axisLists(base.topology);
    std::vector<std::string> policies;
    for (auto name : rematPolicyChoices())
        policies.emplace_back(name);
    for (int t : divisorsOf(chips))
        for (int p : divisorsOf(chips / t))
            for (int e : divisorsOf(chips / t / p))
                for (int c : divisorsOf(chips / t / p / e))
                    for (int f : divisorsOf(chips / t / p / e / c)) {
                        const int d = static_cast<int>(chips / t / p / e / c / f);
                        if (m.heads % t || (m.kvHeads % t && t % m.kvHeads) || p > m.layers
                            || (m.moe ? m.moe->experts % e : e != 1) || base.training.seqLen % c
                            || base.training.globalBatch % (std::int64_t(d) * f * e))
                            continue;
                        Plan plan = base;
                        plan.parallelism.degrees = {d, f, t, p, e, c};
                        std::vector<Role> roles;
                        for (Role r : kRoles)
                            if (plan.parallelism.degree(r) > 1)
                                roles.push_back(r);
                        // Every request: one list per role of degree > 1.
                        std::vector<std::size_t> choice(roles.size(), 0);
                        std::vector<std::map<Role, std::vector<std::string>>> requests;
                        while (true) {
                            std::map<Role, std::vector<std::string>> request;
                            for (std::size_t i = 0; i < roles.size(); ++i)
                                request[roles[i]] = lists[choice[i]];
                            if (placeRoles(base.topology, plan.parallelism.degrees, request))
                                requests.push_back(request);
                            std::size_t i = 0;
                            while (i < roles.size() && ++choice[i] == lists.size())
                                choice[i++] = 0;
                            if (i == roles.size())
                                break;
                        }
                        const std::int64_t perReplica = base.training.globalBatch / (std::int64_t(d) * f * e);
                        std::vector<std::pair<PipelineSchedule, int>> schedules{{PipelineSchedule::OneFOneB, 1}};
                        if (p > 1) {
                            schedules = {{PipelineSchedule::GPipe, 1}, {PipelineSchedule::OneFOneB, 1},
                                         {PipelineSchedule::ZeroBubble, 1}};
                            for (int v = 2; v <= 8 && p * v <= m.layers; ++v)
                                schedules.emplace_back(PipelineSchedule::Interleaved1F1B, v);
                            if (p % 2 == 0)
                                schedules.emplace_back(PipelineSchedule::DualPipe, 1);
                        }
                        for (int sp = 0; sp <= (t > 1); ++sp)
                            for (int zero = 0; zero <= (d > 1 || c > 1 || e > 1 ? 3 : 0); ++zero)
                                for (auto [schedule, v] : schedules)
                                    for (int mb : divisorsOf(perReplica)) {
                                        if (schedule == PipelineSchedule::DualPipe && mb % 2)
                                            continue;
                                        for (const auto &policy : policies)
                                            for (const auto &request : requests) {
                                                ParallelismSpec &par = plan.parallelism;
                                                par.placement = request;
                                                par.sequenceParallel = sp;
                                                par.zeroStage = zero;
                                                par.schedule = schedule;
                                                par.virtualStages = v;
                                                par.microbatches = mb;
                                                plan.training.remat = rematPolicyFromJson(json(policy), "remat").value();
                                                visit(plan, evaluate(plan, mode));
                                            }
                                    }
                    }
}

/// (memory, time) of the front of fitting points, as the search defines it.
std::set<std::pair<double, double>> frontOf(std::vector<std::pair<double, double>> points)
{
    std::sort(points.begin(), points.end());
    std::set<std::pair<double, double>> out;
    double lowest = INFINITY;
    for (const auto &[memory, time] : points)
        if (time < lowest) {
            out.insert({memory, time});
            lowest = time;
        }
    return out;
}

} // namespace

class TestPlanSearch : public QObject
{
    Q_OBJECT

private slots:
    void paretoFrontTies();
    void bruteForce_data();
    void bruteForce();
    void boundsBelowEvaluation_data();
    void boundsBelowEvaluation();
    void publishedLayouts();
    void sameOutcomeOnAnyThreadCount();
    void cancelStopsPromptly();
    void printedPlansEvaluateToTheirResults();
    void servingCostBeatsCheapest();
    void servingSearchKeepsTheExpertDispatch();
    void errorsNameTheOption();
};

void TestPlanSearch::paretoFrontTies()
{
    ParetoFront front;
    front.insert(10, 5);
    front.insert(20, 3);
    front.insert(15, 6); // dominated by (10, 5): not kept
    QVERIFY(!front.dominates(10, 5)); // a point equal to one on the front is a tie, not dominated
    QVERIFY(front.dominates(10, 5.5));
    QVERIFY(front.dominates(10.5, 5));
    QVERIFY(front.dominates(25, 3));
    QVERIFY(!front.dominates(20, 3));
    QVERIFY(!front.dominates(9, 100)); // less memory than any point
    QVERIFY(!front.dominates(19, 4));  // between the steps
    front.insert(19, 4);
    QVERIFY(front.dominates(19.5, 4));
    front.insert(5, 1); // dominates everything
    QVERIFY(front.dominates(10, 5));
    QVERIFY(!front.dominates(5, 1));
}

// A sanitizer build (ASan + UBSan, about ten times slower) checks memory safety on a part of the
// spaces; the normal build checks every space for exactness.
#ifdef MESHPLAN_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

void TestPlanSearch::bruteForce_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<int>("ideal");
    // 2 nodes x 4 GPUs: tensor, data, fsdp, pipeline and context compete for NVLink.
    QTest::newRow("dense, 2x4 GPUs") << QByteArray::fromStdString(trainingPlan(tinyDense(), smallGpu(2, 4), 16, 4096).dump()) << 0;
    if (!kSanitized) {
        QTest::newRow("dense, 2x4 GPUs, ideal")
            << QByteArray::fromStdString(trainingPlan(tinyDense(), smallGpu(2, 4), 16, 4096).dump()) << 1;
        QTest::newRow("dense fp8, 2x4 GPUs")
            << QByteArray::fromStdString(trainingPlan(tinyDense(), smallGpu(2, 4), 8, 8192, "fp8").dump()) << 0;
    }
    // A TPU v5e 2x4 slice: axes of different sizes, strides that matter.
    QTest::newRow("moe, v5e 2x4")
        << QByteArray::fromStdString(
               trainingPlan(tinyMoe(), json{{"chip", "tpu-v5e"}, {"topology", "2x4"}}, 8, 2048).dump())
        << 0;
}

void TestPlanSearch::bruteForce()
{
    QFETCH(QByteArray, plan);
    QFETCH(int, ideal);
    const Plan base = parse(json::parse(plan.toStdString()));
    const CostMode mode = ideal ? CostMode::Ideal : CostMode::Achievable;
    constexpr int kTop = 12;

    std::vector<std::pair<double, double>> fitting; // (memory, time)
    std::vector<double> times;
    std::int64_t all = 0;
    std::int64_t notFitting = 0;
    ::bruteForce(base, mode, [&](const Plan &, const Expected<Evaluation> &e) {
        ++all;
        QVERIFY2(e.hasValue(), e ? "" : e.error().toString().c_str());
        if (!e->memory.fits) {
            ++notFitting;
            return;
        }
        fitting.emplace_back(e->memory.total, e->step.time);
        times.push_back(e->step.time);
    });
    QVERIFY(!times.empty());
    QVERIFY(notFitting > 0); // the memory bound has something to do
    std::sort(times.begin(), times.end());

    SearchOptions options;
    options.top = kTop;
    options.mode = mode;
    options.threads = 2;
    const auto outcome = searchPlans(base, options);
    QVERIFY2(outcome.hasValue(), outcome ? "" : outcome.error().toString().c_str());
    const SearchOutcome &o = outcome.value();
    QVERIFY(!o.cancelled);
    // The counts add up; the space is the naive one less equivalent placements.
    QCOMPARE(o.space.evaluated + o.space.pruned, o.space.size);
    QVERIFY(o.space.size <= all);
    QVERIFY(o.space.pruned > 0);
    QCOMPARE(o.space.rejected, 0);
    // The ranking: the brute force's best times, exactly.
    QCOMPARE(o.results.size(), std::min<std::size_t>(kTop, times.size()));
    for (std::size_t i = 0; i < o.results.size(); ++i)
        QCOMPARE(o.results[i].evaluation.step.time, times[i]);
    // The front: the same (memory, time) points.
    std::set<std::pair<double, double>> front;
    for (const auto &c : o.pareto)
        front.insert({c.evaluation.memory.total, c.evaluation.step.time});
    QCOMPARE(front, frontOf(fitting));
    QCOMPARE(o.pareto.size(), front.size());
}

void TestPlanSearch::boundsBelowEvaluation_data()
{
    bruteForce_data();
    // Expert all-to-alls and tensor collectives overlapped with compute.
    json overlapped = trainingPlan(tinyMoe(), smallGpu(1, 4), 8, 4096);
    overlapped["parallelism"]["expert_overlap"] = true;
    overlapped["parallelism"]["tensor_overlap"] = true;
    QTest::newRow("moe overlapped, 4 GPUs") << QByteArray::fromStdString(overlapped.dump()) << 0;
    // fp8 asked of a chip without fp8 units runs as bf16 in the cost model; the bound follows.
    json emulated = trainingPlan(tinyDense(), json{{"chip", "a100-80gb"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 4}}}},
                                 8, 4096, "fp8");
    QTest::newRow("dense, 4 A100, fp8 emulated") << QByteArray::fromStdString(emulated.dump()) << 0;
    // MaxText on a TPU hides the backward's tensor all-reduces behind the weight gradients.
    json maxtext = trainingPlan(tinyMoe(), json{{"chip", "tpu-v5e"}, {"topology", "2x4"}}, 8, 2048);
    maxtext["workload"]["stack"] = "maxtext";
    QTest::newRow("moe, v5e 2x4, maxtext") << QByteArray::fromStdString(maxtext.dump()) << 0;
    // MaxText's fp8 on GPUs: XLA fuses the casts, which the bound must not charge either.
    json maxtextFp8 = trainingPlan(tinyDense(), smallGpu(2, 4), 8, 8192, "fp8");
    maxtextFp8["workload"]["stack"] = "maxtext";
    QTest::newRow("dense fp8, 2x4 H100, maxtext") << QByteArray::fromStdString(maxtextFp8.dump()) << 0;
    // The unfused fp32 loss (Megatron's 52 bytes per logit, eager PyTorch's 48) on the last stage.
    // The sanitizer build walks the same code with eager torchtitan alone.
    for (const char *stack : {"megatron", "torchtitan"}) {
        if (kSanitized && std::string(stack) == "megatron")
            continue;
        json unfused = trainingPlan(tinyDense(), smallGpu(1, 4), 8, 4096);
        unfused["workload"]["stack"] = stack;
        unfused["workload"]["loss_fusion"] = false;
        QTest::newRow((std::string("dense, 4 GPUs, unfused loss, ") + stack).c_str())
            << QByteArray::fromStdString(unfused.dump()) << 0;
        if (!kSanitized)
            QTest::newRow((std::string("dense, 4 GPUs, unfused loss, ideal, ") + stack).c_str())
                << QByteArray::fromStdString(unfused.dump()) << 1;
    }
    // The expert all-to-all across two nodes under an fp8 recipe: Megatron's bf16 tokens, every
    // copy sent; a well-tuned stack's fp8 tokens, sent once per node.
    if (!kSanitized) {
        for (const char *dispatch : {"", "deduplicated"}) {
            json moe = trainingPlan(tinyMoe(), smallGpu(2, 4), 16, 2048, "fp8");
            if (std::string(dispatch).empty()) {
                moe["workload"]["stack"] = "megatron";
                moe["parallelism"]["expert_dispatch"] = "all-to-all"; // Megatron's alltoall dispatcher
            } else
                moe["parallelism"]["expert_dispatch"] = dispatch;
            QTest::newRow((std::string("moe fp8, 2 x 4 GPUs, dispatch ") + (*dispatch ? dispatch : "megatron")).c_str())
                << QByteArray::fromStdString(moe.dump()) << 0;
        }
    }
    // torchtitan compiled: its blocks' traffic and its loss both drop (eager is the row above).
    // With async TP asked for, the backward's tensor collectives stay in view.
    json compiled = trainingPlan(tinyDense(), smallGpu(1, 4), 8, 4096);
    compiled["workload"]["stack"] = "torchtitan";
    compiled["workload"]["compile"] = true;
    compiled["parallelism"]["tensor_overlap"] = true;
    QTest::newRow("dense, 4 GPUs, torchtitan compiled, async TP") << QByteArray::fromStdString(compiled.dump()) << 0;
}

void TestPlanSearch::boundsBelowEvaluation()
{
    QFETCH(QByteArray, plan);
    QFETCH(int, ideal);
    const Plan base = parse(json::parse(plan.toStdString()));
    const CostMode mode = ideal ? CostMode::Ideal : CostMode::Achievable;
    const TrainingBound bound(base, mode);
    std::int64_t checked = 0;
    std::int64_t communicating = 0; // plans whose communication bound is not zero
    double tightest = 0; // the largest bound / step time: the bound must not be vacuous
    ::bruteForce(base, mode, [&](const Plan &p, const Expected<Evaluation> &e) {
        if (!e)
            return;
        TrainingShape s;
        s.degrees = p.parallelism.degrees;
        s.sequenceParallel = p.parallelism.sequenceParallel;
        s.zeroStage = p.parallelism.zeroStage;
        s.microbatches = p.parallelism.microbatches;
        s.schedule = p.parallelism.schedule;
        s.virtualStages = p.parallelism.virtualStages;
        s.remat = &p.training.remat;
        const TrainingBounds b = bound.bounds(s);
        // The communication no schedule hides, on this placement.
        const Placement placement = placeRoles(p.topology, p.parallelism.degrees, p.parallelism.placement).value();
        // Bounded by the compute evaluated for the same knobs (on this placement, as on any).
        const double exposed = bound.exposedCommunication(s, placement, e->step.compute);
        QVERIFY(bound.exposedCommunication(s, placement) <= exposed);
        if (!(exposed <= e->step.exposedCommunication))
            QFAIL(qPrintable(QStringLiteral("%1: exposed bound %2 s above %3 s")
                                 .arg(QString::fromStdString(planToJson(p)["parallelism"].dump() + " remat " + p.training.remat.name))
                                 .arg(exposed)
                                 .arg(e->step.exposedCommunication)));
        QVERIFY(b.stepTimeS + exposed <= e->step.time);
        QVERIFY(b.computeS <= e->step.compute);
        ++checked;
        if (exposed > 0)
            ++communicating;
        if (!(b.stepTimeS <= e->step.time && b.memory <= e->memory.total)) {
            QFAIL(qPrintable(QStringLiteral("%1: bound %2 s / %3 B above %4 s / %5 B")
                                 .arg(QString::fromStdString(planToJson(p)["parallelism"].dump() + " remat "
                                                             + p.training.remat.name))
                                 .arg(b.stepTimeS)
                                 .arg(b.memory)
                                 .arg(e->step.time)
                                 .arg(e->memory.total)));
        }
        // The memory bound counts what the evaluation counts.
        QVERIFY(b.memory >= 0.999999 * e->memory.total);
        tightest = std::max(tightest, b.stepTimeS / e->step.time);
    });
    QVERIFY(checked > 1000);
    QVERIFY(communicating > checked / 4);
    QVERIFY2(tightest > 0.5, qPrintable(QString::number(tightest)));
}

void TestPlanSearch::publishedLayouts()
{
    // Every published training layout that fits: the search finds one at least as fast. The
    // largest spaces (thousands of chips) run with two threads; all of them are searched whole.
    const QDir dir(kData + QStringLiteral("/measured-runs/training"));
    int searched = 0;
    int index = 0;
    for (const QString &name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        if (kSanitized && index++ % 4 != 0)
            continue;
        const Plan plan = load(dir.filePath(name));
        const auto published = evaluate(plan);
        QVERIFY2(published.hasValue(), qPrintable(name));
        if (!published->memory.fits)
            continue;
        SearchOptions options;
        options.top = 1;
        options.threads = 2;
        const auto o = searchPlans(plan, options);
        QVERIFY2(o.hasValue(), qPrintable(name + QStringLiteral(": ") + QString::fromStdString(o ? "" : o.error().toString())));
        QVERIFY2(!o->results.empty(), qPrintable(name));
        const double best = o->results.front().evaluation.step.time;
        QVERIFY2(best <= published->step.time * (1 + 1e-12),
                 qPrintable(QStringLiteral("%1: best %2 s, published %3 s").arg(name).arg(best).arg(published->step.time)));
        ++searched;
    }
    QVERIFY(searched >= (kSanitized ? 7 : 30));
}

void TestPlanSearch::sameOutcomeOnAnyThreadCount()
{
    const Plan plan = load(kData + QStringLiteral("/plans/mixtral-8x7b-h100-moe.meshplan"));
    SearchOptions options;
    options.top = 20;
    options.threads = 1;
    const auto one = searchPlans(plan, options).value();
    options.threads = 2;
    const auto two = searchPlans(plan, options).value();
    options.threads = 3;
    const auto three = searchPlans(plan, options).value();
    for (const SearchOutcome *o : {&two, &three}) {
        QCOMPARE(o->space.size, one.space.size);
        QCOMPARE(o->space.evaluated, one.space.evaluated);
        QCOMPARE(o->space.pruned, one.space.pruned);
        QCOMPARE(o->space.doesNotFit, one.space.doesNotFit);
        QCOMPARE(o->results.size(), one.results.size());
        QCOMPARE(o->pareto.size(), one.pareto.size());
        for (std::size_t i = 0; i < one.results.size(); ++i)
            QCOMPARE(planToJson(o->results[i].plan).dump(), planToJson(one.results[i].plan).dump());
        for (std::size_t i = 0; i < one.pareto.size(); ++i)
            QCOMPARE(planToJson(o->pareto[i].plan).dump(), planToJson(one.pareto[i].plan).dump());
    }
    QCOMPARE(one.results.size(), std::size_t(20));
    // Ranked best first.
    for (std::size_t i = 1; i < one.results.size(); ++i)
        QVERIFY(one.results[i - 1].evaluation.step.time <= one.results[i].evaluation.step.time);
}

void TestPlanSearch::cancelStopsPromptly()
{
    const Plan plan = load(kData + QStringLiteral("/plans/llama-3-405b-h100-16k.meshplan"));
    std::atomic<bool> cancel{false};
    std::atomic<int> calls{0};
    SearchOptions options;
    options.threads = 2;
    QElapsedTimer timer;
    timer.start();
    const auto o = searchPlans(plan, options, [&](std::int64_t considered, std::int64_t total) {
        QVERIFY(considered <= total);
        if (++calls == 2)
            cancel = true;
    }, &cancel);
    QVERIFY(o.hasValue());
    QVERIFY(o->cancelled);
    QVERIFY(calls >= 2);
    QVERIFY(o->space.evaluated + o->space.pruned < o->space.size);
    QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
}

void TestPlanSearch::printedPlansEvaluateToTheirResults()
{
    const Plan plan = defaultPlan();
    SearchOptions options;
    options.top = 5;
    const auto o = searchPlans(plan, options).value();
    const json doc = searchToJson(o, true);
    QCOMPARE(doc["format"].get<std::string>(), std::string("meshplan/search"));
    QCOMPARE(doc["space"]["size"].get<std::int64_t>(), o.space.size);
    QCOMPARE(doc["results"].size(), std::size_t(5));
    QVERIFY(!doc["pareto"].empty());
    for (const char *list : {"results", "pareto"})
        for (const json &entry : doc[list]) {
            // Through the file format, as meshplan-cli evaluate reads it.
            const Plan again = parse(json::parse(entry["plan"].dump()));
            const json result = evaluationToJson(evaluate(again).value(), true);
            QCOMPARE(result.dump(), entry["result"].dump());
        }
    QCOMPARE(doc["results"][0]["rank"].get<int>(), 1);
}

void TestPlanSearch::servingCostBeatsCheapest()
{
    // search --objective cost covers cheapest's space (slices, tensor, replicas, batch) and more.
    const Plan plan = load(kData + QStringLiteral("/plans/llama-3-70b-int8-v5e-serving.meshplan"));
    const double latency = 0.05;
    const auto cheapest = cheapestServing(plan, latency, 64);
    QVERIFY(cheapest.hasValue());
    SearchOptions options;
    options.objective = SearchObjective::Cost;
    options.latencyTargetS = latency;
    options.maxChips = 64;
    const auto o = searchPlans(plan, options).value();
    QVERIFY(!o.results.empty());
    const Evaluation &best = o.results.front().evaluation;
    QVERIFY(best.inference->decodeStepS <= latency);
    QVERIFY(best.serving.costPerMillionTokens <= cheapest->point.costPerMillionTokens * (1 + 1e-12));
    for (std::size_t i = 1; i < o.results.size(); ++i)
        QVERIFY(o.results[i - 1].evaluation.serving.costPerMillionTokens
                <= o.results[i].evaluation.serving.costPerMillionTokens);
    // Tokens per chip: the best within the target, and the front runs from low latency to high
    // throughput.
    options.objective = SearchObjective::TokensPerChip;
    const auto t = searchPlans(plan, options).value();
    QVERIFY(!t.results.empty() && t.pareto.size() >= 2);
    const auto perChip = [](const Evaluation &e) { return e.serving.steadyTokensPerS / double(e.chips); };
    for (const auto &c : t.pareto)
        if (c.evaluation.inference->decodeStepS <= latency)
            QVERIFY(perChip(c.evaluation) <= perChip(t.results.front().evaluation));
    for (std::size_t i = 1; i < t.pareto.size(); ++i) {
        QVERIFY(t.pareto[i - 1].evaluation.inference->decodeStepS < t.pareto[i].evaluation.inference->decodeStepS);
        QVERIFY(perChip(t.pareto[i - 1].evaluation) < perChip(t.pareto[i].evaluation));
    }
}

void TestPlanSearch::servingSearchKeepsTheExpertDispatch()
{
    // The serving cost reads the dispatch (the default deduplicates in prefill only), so the
    // candidates must keep the one the plan asked for.
    // Two H100 nodes: deduplicating saves bytes only on the links between nodes.
    Plan plan = parse(json::parse(R"({"format": "meshplan/plan", "version": 1, "model": "qwen3-30b-a3b",
        "hardware": {"chip": "h100-sxm", "topology": {"nodes": 2, "gpus_per_node": 8}},
        "parallelism": {"data": 16, "expert_dispatch": "all-to-all"},
        "workload": {"kind": "inference", "batch": 16, "prompt_len": 2048, "generate_len": 512}})"));
    QCOMPARE(plan.parallelism.expertDispatch, ExpertDispatch::AllToAll);
    SearchOptions options;
    options.objective = SearchObjective::Cost;
    options.maxChips = 16;
    options.top = 1000; // every candidate that fits
    const auto o = searchPlans(plan, options).value();
    QVERIFY(!o.results.empty());
    int expertParallel = 0;
    for (const SearchCandidate &c : o.results) {
        QCOMPARE(c.plan.parallelism.expertDispatch, ExpertDispatch::AllToAll);
        if (c.plan.parallelism.degree(Role::Expert) <= 8)
            continue;
        ++expertParallel;
        // The same layout with the stack's dispatch: prefill sends each token once per other node.
        Plan stack = c.plan;
        stack.parallelism.expertDispatch = ExpertDispatch::Stack;
        QVERIFY(evaluate(stack)->inference->prefillS < c.evaluation.inference->prefillS);
    }
    QVERIFY(expertParallel > 0);
}

void TestPlanSearch::errorsNameTheOption()
{
    SearchOptions options;
    options.objective = SearchObjective::TokensPerChip;
    auto o = searchPlans(defaultPlan(), options);
    QVERIFY(!o);
    QCOMPARE(o.error().path, std::string("objective"));
    options = {};
    options.top = 0;
    o = searchPlans(defaultPlan(), options);
    QVERIFY(!o);
    QCOMPARE(o.error().path, std::string("top"));
    QCOMPARE(objectiveFromName("cost").value(), SearchObjective::Cost);
    QVERIFY(!objectiveFromName("fastest"));
}

QTEST_APPLESS_MAIN(TestPlanSearch)
#include "tst_plansearch.moc"
