// Two plans side by side (plancomparison.h): each difference and ratio is the two evaluations'
// own numbers subtracted and divided, the better side is the one the unit says, every number sits
// at its result-contract path, and the change list names exactly the inputs that differ.
#include "cost/evaluation.h"
#include "explore/plancomparison.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

using nlohmann::json;
using namespace meshplan::model;

namespace {

json planFile(const QString &name)
{
    QFile f(QStringLiteral(MESHPLAN_TEST_DATA "/plans/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return json::parse(f.readAll().toStdString());
}

Plan parse(const json &doc)
{
    auto p = planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!p)
        qFatal("plan: %s", p.error().toString().c_str());
    return p.value();
}

Evaluation run(const Plan &plan)
{
    auto e = evaluate(plan);
    if (!e)
        qFatal("evaluate: %s", e.error().toString().c_str());
    return e.value();
}

/// The book's ch. 6 layout (LLaMA-3 70B, 8192 v5p, fsdp 2048 x tensor 4) with a 15T-token run.
json baselineDoc()
{
    json doc = planFile(QStringLiteral("llama-3-70b-v5p-16x16x32.meshplan"));
    doc["workload"]["train_tokens"] = 15'000'000'000'000;
    return doc;
}

/// The same run with tensor 8 (still inside x), FSDP halved to keep 8192 chips, selective remat.
json candidateDoc()
{
    json doc = baselineDoc();
    doc["parallelism"]["tensor"] = 8;
    doc["parallelism"]["fsdp"] = 1024;
    doc["workload"]["remat"] = "selective";
    return doc;
}

std::set<std::string> changedPaths(const PlanComparison &c)
{
    std::set<std::string> paths;
    for (const auto &change : c.changes)
        paths.insert(change.path);
    return paths;
}

} // namespace

class TestPlanComparison : public QObject
{
    Q_OBJECT

private slots:
    void differencesAndRatiosAreTheEvaluationsOwn()
    {
        const Plan a = parse(baselineDoc());
        const Plan b = parse(candidateDoc());
        const Evaluation ea = run(a);
        const Evaluation eb = run(b);
        const PlanComparison c = comparePlans(a, ea, b, eb);

        const NumberComparison *time = c.number("step.time_s");
        QVERIFY(time);
        QCOMPARE(*time->baseline, ea.step.time);
        QCOMPARE(*time->candidate, eb.step.time);
        QCOMPARE(*time->difference, eb.step.time - ea.step.time);
        QCOMPARE(*time->ratio, eb.step.time / ea.step.time);
        QVERIFY(time->better == Better::Lower);
        // The two step times differ (another tensor degree, another remat), so one side wins.
        QVERIFY(ea.step.time != eb.step.time);
        QCOMPARE(time->verdict(), eb.step.time < ea.step.time ? 1 : -1);

        const NumberComparison *mfu = c.number("mfu");
        QVERIFY(mfu);
        QCOMPARE(*mfu->ratio, eb.mfu / ea.mfu);
        QVERIFY(mfu->better == Better::Higher);
        // Same model FLOPs per step on the same chips: MFU is inverse to the step time.
        QCOMPARE(mfu->verdict(), time->verdict());
        QVERIFY(std::fabs(*mfu->ratio * *time->ratio - 1.0) < 1e-9);

        const NumberComparison *memory = c.number("memory_per_chip.total");
        QVERIFY(memory);
        QCOMPARE(*memory->difference, eb.memory.total - ea.memory.total);
        QCOMPARE(memory->verdict(), eb.memory.total < ea.memory.total ? 1 : eb.memory.total > ea.memory.total ? -1 : 0);

        // Cost per step at the catalog's $4.20 per v5p chip-hour: 8192 chips x step time / 3600 x 4.2.
        const NumberComparison *perStep = c.number("train.cost_per_step");
        QVERIFY(perStep);
        QVERIFY(std::fabs(*perStep->baseline - 8192.0 * ea.step.time / 3600.0 * 4.2) <= 1e-12 * *perStep->baseline);
        QVERIFY(std::fabs(*perStep->candidate - 8192.0 * eb.step.time / 3600.0 * 4.2) <= 1e-12 * *perStep->candidate);
        // The same tokens on the same chips: days, cost per step and cost to train all scale as the step time.
        for (const char *path : {"train.cost_per_step", "train.days", "train.cost", "train.time_s"}) {
            const NumberComparison *n = c.number(path);
            QVERIFY2(n && n->ratio, path);
            QVERIFY2(std::fabs(*n->ratio - *time->ratio) < 1e-9, path);
            QCOMPARE(n->verdict(), time->verdict());
        }
        // Describing numbers are neither better nor worse, and equal here.
        for (const char *path : {"chips", "step.tokens", "train.steps", "memory_per_chip.capacity"}) {
            const NumberComparison *n = c.number(path);
            QVERIFY2(n, path);
            QCOMPARE(*n->difference, 0.0);
            QCOMPARE(*n->ratio, 1.0);
            QCOMPARE(n->verdict(), 0);
        }
        QCOMPARE(*c.number("chips")->baseline, 8192.0);
        // A training plan has no serving numbers.
        QVERIFY(!c.number("inference.decode_step_s"));
    }

    void everyNumberIsTheResultsNumberAtItsPath()
    {
        // With train_tokens the result has a train block, so every training path exists in it;
        // a serving plan's paths exist in its own result.
        const json training = baselineDoc();
        const json serving = planFile(QStringLiteral("llama-3-70b-int8-v5e-serving.meshplan"));
        for (const json &doc : {training, serving}) {
            const Plan plan = parse(doc);
            const Evaluation e = run(plan);
            const json result = evaluationToJson(e, plan.kind == WorkloadKind::Training);
            const PlanComparison c = comparePlans(plan, e, plan, e);
            QVERIFY(c.numbers.size() >= 10);
            for (const NumberComparison &n : c.numbers) {
                std::string pointer = "/" + n.path;
                std::replace(pointer.begin(), pointer.end(), '.', '/');
                QVERIFY2(result.contains(json::json_pointer(pointer)), n.path.c_str());
                const double want = result.at(json::json_pointer(pointer)).get<double>();
                // Byte counts are rounded to integers in the result.
                QVERIFY2(std::fabs(*n.baseline - want) <= std::max(0.5, 1e-12 * std::fabs(want)), n.path.c_str());
                QCOMPARE(*n.difference, 0.0);
                QCOMPARE(n.verdict(), 0);
            }
            QVERIFY(c.changes.empty());
        }
    }

    void changesNameWhatDiffers()
    {
        const Plan a = parse(baselineDoc());
        const Plan b = parse(candidateDoc());
        const PlanComparison c = comparePlans(a, run(a), b, run(b));
        // Tensor 8 still sits inside x and FSDP keeps the rest of x, y and z: the placement, as
        // evaluated, does not change.
        QCOMPARE(changedPaths(c), (std::set<std::string>{"parallelism.fsdp", "parallelism.tensor", "workload.remat"}));
        QVERIFY((c.change("parallelism.tensor")->baseline) == (json(4)));
        QVERIFY((c.change("parallelism.tensor")->candidate) == (json(8)));
        QVERIFY((c.change("parallelism.fsdp")->candidate) == (json(1024)));
        QVERIFY((c.change("workload.remat")->baseline) == (json("full")));
        QVERIFY((c.change("workload.remat")->candidate) == (json("selective")));
        // Degrees first (in the section order model, hardware, parallelism, workload).
        QCOMPARE(c.changes.front().path, std::string("parallelism.fsdp"));
        QCOMPARE(c.changes.back().path, std::string("workload.remat"));
        QCOMPARE(c.verdicts.size(), std::size_t(2));
        QCOMPARE(c.verdicts[0].path, std::string("memory_per_chip.fits"));
        QCOMPARE(c.verdicts[1].path, std::string("bound"));
    }

    void placementChangesAreThoseEvaluated()
    {
        // Tensor moved from x to y, degrees unchanged: only the evaluated placement differs
        // (parallelism.placement, as written, is compared through it).
        json moved = baselineDoc();
        moved["parallelism"]["placement"] = {{"tensor", {"y"}}};
        const Plan a = parse(baselineDoc());
        const Plan b = parse(moved);
        const Evaluation ea = run(a);
        const Evaluation eb = run(b);
        const PlanComparison c = comparePlans(a, ea, b, eb);
        QVERIFY(c.change("placement.tensor"));
        QVERIFY((c.change("placement.tensor")->baseline) == (json({"x"})));
        QVERIFY((c.change("placement.tensor")->candidate) == (json({"y"})));
        for (const PlanChange &change : c.changes)
            QVERIFY2(change.path.rfind("placement.", 0) == 0, change.path.c_str());
        QCOMPARE(changeValueText(c.change("placement.tensor")->candidate), std::string("y"));
    }

    void trainingAgainstServing()
    {
        const Plan a = parse(baselineDoc());
        const Plan b = parse(planFile(QStringLiteral("llama-3-70b-int8-v5e-serving.meshplan")));
        const Evaluation ea = run(a);
        const Evaluation eb = run(b);
        const PlanComparison c = comparePlans(a, ea, b, eb);
        const NumberComparison *step = c.number("step.time_s");
        QVERIFY(step && step->baseline && !step->candidate && !step->difference && !step->ratio);
        QCOMPARE(step->verdict(), 0);
        const NumberComparison *decode = c.number("inference.decode_step_s");
        QVERIFY(decode && !decode->baseline && decode->candidate);
        QCOMPARE(*decode->candidate, eb.inference->decodeStepS);
        // 8192 v5p chips against 16 v5e chips: the ratio is 16 / 8192.
        QCOMPARE(*c.number("chips")->ratio, 16.0 / 8192.0);
        QVERIFY(c.change("workload.kind"));
        QVERIFY((c.change("workload.kind")->candidate) == (json("inference")));
        QVERIFY((c.change("hardware.chip")->baseline) == (json("tpu-v5p")));
        QVERIFY((c.change("hardware.chip")->candidate) == (json("tpu-v5e")));
        QCOMPARE(changeValueText(c.change("hardware.topology")->baseline), std::string("16x16x32"));
        QCOMPARE(changeValueText(c.change("hardware.topology")->candidate), std::string("4x4"));
        // Keys only one side has are compared against null.
        QVERIFY(c.change("workload.train_tokens"));
        QVERIFY(c.change("workload.train_tokens")->candidate.is_null());
        QCOMPARE(changeValueText(json()), std::string("(none)"));
    }

    void aModelIsComparedByName()
    {
        // An inline model would otherwise list every key of its architecture.
        json inlineModel = baselineDoc();
        inlineModel["model"] = {{"name", "tiny"}, {"layers", 8}, {"d_model", 1024}, {"d_ff", 4096}, {"heads", 8},
                                {"kv_heads", 8}, {"head_dim", 128}, {"vocab", 32000}, {"mlp", "gated"}};
        const Plan a = parse(baselineDoc());
        const Plan b = parse(inlineModel);
        const PlanComparison c = comparePlans(a, run(a), b, run(b));
        QVERIFY(c.change("model"));
        QVERIFY((c.change("model")->baseline) == (json("llama-3-70b")));
        QVERIFY((c.change("model")->candidate) == (json("tiny")));
        for (const PlanChange &change : c.changes)
            QVERIFY2(change.path.rfind("model.", 0) != 0, change.path.c_str());
    }

    void comparisonDocument()
    {
        const Plan a = parse(baselineDoc());
        const Plan b = parse(candidateDoc());
        const Evaluation ea = run(a);
        const Evaluation eb = run(b);
        const PlanComparison c = comparePlans(a, ea, b, eb);
        const json doc = comparisonToJson(c, a, ea, b, eb);
        QVERIFY((doc["format"]) == (json("meshplan/comparison")));
        QVERIFY((doc["version"]) == (json(1)));
        QVERIFY((doc["baseline"]) == (evaluationToJson(ea, true)));
        QVERIFY((doc["candidate"]) == (evaluationToJson(eb, true)));
        QCOMPARE(doc["differences"].size(), c.numbers.size());
        bool sawTime = false;
        for (const json &d : doc["differences"]) {
            for (const char *key : {"path", "label", "unit", "better", "baseline", "candidate", "difference", "ratio"})
                QVERIFY2(d.contains(key), key);
            if (d["path"] == "step.time_s") {
                sawTime = true;
                QCOMPARE(d["difference"].get<double>(), eb.step.time - ea.step.time);
                QCOMPARE(d["ratio"].get<double>(), eb.step.time / ea.step.time);
                QVERIFY((d["better"]) == (json("lower")));
            }
        }
        QVERIFY(sawTime);
        QCOMPARE(doc["changes"].size(), std::size_t(3));
        QVERIFY((doc["changes"][1]) == ((json{{"path", "parallelism.tensor"}, {"baseline", 4}, {"candidate", 8}})));
        // The result's train block carries the cost per step with the run.
        QVERIFY(std::fabs(doc["baseline"]["train"]["cost_per_step"].get<double>() - ea.costPerStep) <= 1e-12 * ea.costPerStep);
    }

    void costPerStepNeedsAPrice()
    {
        json doc = baselineDoc();
        doc["hardware"]["price_per_hour"] = 2.0;
        const Evaluation priced = run(parse(doc));
        QVERIFY(std::fabs(priced.costPerStep - 8192.0 * priced.step.time / 3600.0 * 2.0) <= 1e-12 * priced.costPerStep);
        // A user's own chip without a price has no cost per step, and the comparison leaves the row out.
        json inlineChip = planFile(QStringLiteral("inline-chip-llama-3-8b.meshplan"));
        inlineChip["hardware"]["chip"].erase("price_per_hour");
        const Plan p = parse(inlineChip);
        QCOMPARE(p.pricePerChipHour, 0.0);
        const Evaluation e = run(p);
        QCOMPARE(e.costPerStep, 0.0);
        QVERIFY(!comparePlans(p, e, p, e).number("train.cost_per_step"));
    }

    void formatsForReading()
    {
        QCOMPARE(formatCompared(1.234, "s"), std::string("1.23 s"));
        QCOMPARE(formatDifference(-0.18, "s"), std::string("-180 ms"));
        QCOMPARE(formatCompared(0.321, "fraction"), std::string("32.1%"));
        QCOMPARE(formatDifference(0.031, "fraction"), std::string("+3.1 pp"));
        QCOMPARE(formatCompared(1234567.4, "$"), std::string("$1,234,567"));
        QCOMPARE(formatCompared(12.5, "$"), std::string("$12.50"));
        QCOMPARE(formatDifference(-12.5, "$"), std::string("-$12.50"));
        QCOMPARE(formatCompared(64.0 * 1024 * 1024 * 1024, "bytes"), std::string("64.0 GiB"));
        QCOMPARE(formatRatio(0.85444), std::string("0.854x"));
        QCOMPARE(formatCompared(16, "chips"), std::string("16"));
        QCOMPARE(formatDifference(56, "chips"), std::string("+56"));
        QCOMPARE(formatCompared(2.5, "steps"), std::string("2.50"));
        QCOMPARE(formatDifference(0, "s"), std::string("0"));
        QCOMPARE(changeValueText(json({16, 16, 32})), std::string("16x16x32"));
        QCOMPARE(changeValueText(json({"x", "y"})), std::string("x,y"));
        QCOMPARE(changeValueText(json(true)), std::string("yes"));
        QCOMPARE(changeValueText(json{{"nodes", 2048}, {"gpus_per_node", 8}}), std::string("gpus_per_node 8, nodes 2048"));
    }
};

QTEST_APPLESS_MAIN(TestPlanComparison)
#include "tst_plancomparison.moc"
