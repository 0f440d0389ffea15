// The track record: which validation family a plan's numbers fall in, the sentence the summary
// shows for it, and the file it is read from (resources/track-record.json; tst_validation keeps
// that file equal to docs/validation.md).
#include "base/jsonfields.h"
#include "cost/trackrecord.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <QTest>

#include <nlohmann/json.hpp>

using nlohmann::json;
using namespace meshplan::model;

namespace {

Plan parse(const json &doc)
{
    auto p = planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin());
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    return p.value();
}

json trainingPlan(const char *model, const char *chip, const json &topology, std::int64_t seqLen)
{
    return {{"format", "meshplan/plan"},
            {"version", 1},
            {"model", model},
            {"hardware", {{"chip", chip}, {"topology", topology}}},
            {"parallelism", {{"fsdp", 8}}},
            {"workload", {{"kind", "training"}, {"seq_len", seqLen}, {"global_batch", 8}}}};
}

json servingPlan(const char *model, const char *chip)
{
    return {{"format", "meshplan/plan"},
            {"version", 1},
            {"model", model},
            {"hardware", {{"chip", chip}, {"topology", {{"nodes", 1}, {"gpus_per_node", 8}}}}},
            {"parallelism", {{"tensor", 8}}},
            {"workload", {{"kind", "inference"}, {"batch", 8}, {"prompt_len", 128}, {"generate_len", 128}}}};
}

const json kGpuNode = {{"nodes", 1}, {"gpus_per_node", 8}};

// A training stack's record: the same counts, grouped by the stack the plans name.
FamilyRecord stackRecord(const std::string &stack, int scored, int within, double median, double medianAbs);

FamilyRecord record(RecordedQuantity q, const std::string &family, int scored, int within, double band, double median,
                    double medianAbs)
{
    FamilyRecord f;
    f.quantity = q;
    f.family = family;
    f.scored = scored;
    f.withinBand = within;
    f.band = band;
    f.medianError = median;
    f.medianAbsError = medianAbs;
    return f;
}

FamilyRecord stackRecord(const std::string &stack, int scored, int within, double median, double medianAbs)
{
    FamilyRecord f = record(RecordedQuantity::StepTime, stack, scored, within, 0.15, median, medianAbs);
    f.byStack = true;
    return f;
}

json file(const json &families)
{
    return {{"format", "meshplan/track-record"}, {"version", 1}, {"families", families}};
}

} // namespace

class TestTrackRecord : public QObject
{
    Q_OBJECT

private slots:
    // A plan's family: the chip generation (not the SKU), dense or MoE, and for training the
    // sequence length on either side of 16K, for serving the number shown.
    void plansFallInTheValidationPagesFamilies()
    {
        QCOMPARE(trackRecordFamily(parse(trainingPlan("llama-3-8b", "h100-sxm", kGpuNode, 4096)), RecordedQuantity::StepTime),
                 std::string("H100/H200, dense, sequences up to 16K"));
        QCOMPARE(trackRecordFamily(parse(trainingPlan("llama-3-8b", "h200", kGpuNode, 16384)), RecordedQuantity::StepTime),
                 std::string("H100/H200, dense, sequences up to 16K"));
        QCOMPARE(trackRecordFamily(parse(trainingPlan("llama-3-8b", "h800", kGpuNode, 16385)), RecordedQuantity::StepTime),
                 std::string("H100/H200, dense, sequences over 16K"));
        QCOMPARE(trackRecordFamily(parse(trainingPlan("mixtral-8x7b", "tpu-v5p", json::array({2, 2, 2}), 4096)),
                                   RecordedQuantity::StepTime),
                 std::string("TPU, MoE, sequences up to 16K"));
        QCOMPARE(trackRecordFamily(parse(trainingPlan("llama-3-8b", "gb200", kGpuNode, 4096)), RecordedQuantity::StepTime),
                 std::string("B200/GB200, dense, sequences up to 16K"));
        // An A800 written inline (an A100 with a narrower NVLink) runs at the A100's measured
        // figures, and its track record is the A100's.
        json a800 = trainingPlan("llama-3-8b", "a100-80gb", kGpuNode, 8192);
        a800["hardware"]["chip"] = {{"id", "a800-80gb"},
                                    {"family", "gpu"},
                                    {"peak_flops", {{"bf16", 312e12}}},
                                    {"hbm_bytes", 85899345920.0},
                                    {"hbm_bandwidth", 2039e9},
                                    {"nvlink", {{"bandwidth", 200e9}, {"domain_size", 8}}},
                                    {"scale_out", {{"node_egress_bandwidth", 200e9}}}};
        QCOMPARE(trackRecordFamily(parse(a800), RecordedQuantity::StepTime), std::string("A100, dense, sequences up to 16K"));
        const Plan serving = parse(servingPlan("mixtral-8x7b", "a100-80gb"));
        QCOMPARE(trackRecordFamily(serving, RecordedQuantity::Prefill), std::string("A100, MoE, prefill"));
        QCOMPARE(trackRecordFamily(serving, RecordedQuantity::DecodeStep), std::string("A100, MoE, decode step"));
        QCOMPARE(trackRecordFamily(serving, RecordedQuantity::Throughput), std::string("A100, MoE, whole-batch throughput"));
    }

    // The result a measurement compares decides its quantity (vLLM's latency benchmark, a whole
    // generate call over its steps, is compared as decode_step_s and counts as a decode step).
    void comparedResultsNameTheirQuantity()
    {
        QCOMPARE(recordedQuantityOf("step.time_s"), RecordedQuantity::StepTime);
        QCOMPARE(recordedQuantityOf("inference.prefill_s"), RecordedQuantity::Prefill);
        QCOMPARE(recordedQuantityOf("inference.time_to_first_token_s"), RecordedQuantity::Prefill);
        QCOMPARE(recordedQuantityOf("inference.decode_step_s"), RecordedQuantity::DecodeStep);
        QCOMPARE(recordedQuantityOf("inference.tokens_per_s"), RecordedQuantity::Throughput);
        QCOMPARE(recordedQuantityOf("inference.tokens_per_s_per_chip"), RecordedQuantity::Throughput);
    }

    // The sentence says how many runs, how many in the band, the median absolute error and which way the
    // median run errs, in the reader's terms: a time predicted short, or a throughput predicted
    // high, is optimistic. Under 3% there is no lean to speak of.
    void theSentenceSaysHowFarToTrustTheNumber()
    {
        const auto dense = record(RecordedQuantity::StepTime, "H100/H200, dense, sequences up to 16K", 41, 38, 0.15, -0.012, 0.066);
        QCOMPARE(dense.sentence(), std::string("On 41 published runs like this one (H100/H200, dense, sequences up to 16K) "
                                               "the predicted step time came within ±15% on 38; median absolute error 6.6%, "
                                               "with no clear lean."));
        const auto moe = record(RecordedQuantity::StepTime, "H100/H200, MoE, sequences up to 16K", 8, 3, 0.15, -0.2622, 0.2622);
        QVERIFY(moe.optimistic());
        QCOMPARE(moe.sentence(), std::string("On 8 published runs like this one (H100/H200, MoE, sequences up to 16K) the "
                                             "predicted step time came within ±15% on 3; median absolute error 26.2%, and it "
                                             "leans optimistic: at the median the prediction is 26.2% faster than "
                                             "measured."));
        QCOMPARE(stackRecord("deepspeed", 13, 4, 0.037, 0.31).sentence(),
                 std::string("On 13 published runs under the same stack (deepspeed) the predicted step time came within "
                             "±15% on 4; median absolute error 31.0%, and it leans pessimistic: at the median the "
                             "prediction is 3.7% slower than measured."));
        QCOMPARE(stackRecord("none named", 1, 1, 0.01, 0.01).sentence(),
                 std::string("On 1 published run that names no stack, the predicted step time came within ±15% on 1; "
                             "median absolute error 1.0%, with no clear lean."));
        QCOMPARE(stackRecord("none named", 11, 6, -0.131, 0.131).sentence(),
                 std::string("On 11 published runs that name no stack, the predicted step time came within ±15% on 6; "
                             "median absolute error 13.1%, and it leans optimistic: at the median the prediction is "
                             "13.1% faster than measured."));
        const auto slowThroughput = record(RecordedQuantity::Throughput, "A100, dense, whole-batch throughput", 1, 1, 0.2, -0.04, 0.04);
        QVERIFY(!slowThroughput.optimistic());
        QCOMPARE(slowThroughput.sentence(), std::string("On 1 published measurement like this one (A100, dense, "
                                                        "whole-batch throughput) the predicted throughput came within "
                                                        "±20% on 1; median absolute error 4.0%, and it leans pessimistic: at "
                                                        "the median the prediction is 4.0% lower than measured."));
        QVERIFY(record(RecordedQuantity::Throughput, "x", 3, 2, 0.2, 0.05, 0.05).optimistic());
        QVERIFY(!record(RecordedQuantity::DecodeStep, "x", 3, 2, 0.2, 0.05, 0.05).optimistic());
    }

    // A plan gets the records of the numbers it shows, and nothing for a family no run checked.
    void aPlanGetsTheRecordsOfItsNumbers()
    {
        TrackRecord r;
        r.add(record(RecordedQuantity::StepTime, "H100/H200, dense, sequences up to 16K", 41, 38, 0.15, -0.012, 0.066));
        r.add(record(RecordedQuantity::DecodeStep, "A100, MoE, decode step", 8, 2, 0.2, -0.32, 0.32));
        r.add(record(RecordedQuantity::Prefill, "A100, MoE, prefill", 2, 2, 0.2, 0.01, 0.05));
        const auto training = r.forPlan(parse(trainingPlan("llama-3-8b", "h100-sxm", kGpuNode, 4096)));
        QCOMPARE(training.size(), std::size_t{1});
        QCOMPARE(training[0].scored, 41);
        const auto serving = r.forPlan(parse(servingPlan("mixtral-8x7b", "a100-80gb")));
        QCOMPARE(serving.size(), std::size_t{2}); // no throughput record
        QCOMPARE(serving[0].quantity, RecordedQuantity::Prefill);
        QCOMPARE(serving[1].quantity, RecordedQuantity::DecodeStep);
        QVERIFY(r.forPlan(parse(trainingPlan("llama-3-8b", "tpu-v5p", json::array({2, 2, 2}), 4096))).empty());
        // A training plan's stack adds its record after the family's; a family that happens to be
        // named like a stack is not taken for it.
        r.add(stackRecord("deepspeed", 13, 4, 0.037, 0.31));
        r.add(stackRecord("none named", 11, 6, -0.131, 0.131));
        r.add(record(RecordedQuantity::StepTime, "torchtitan", 99, 99, 0.15, 0.0, 0.01));
        json deepspeed = trainingPlan("llama-3-8b", "h100-sxm", kGpuNode, 4096);
        deepspeed["workload"]["stack"] = "deepspeed";
        const auto both = r.forPlan(parse(deepspeed));
        QCOMPARE(both.size(), std::size_t{2});
        QVERIFY(!both[0].byStack);
        QVERIFY(both[1].byStack);
        QCOMPARE(both[1].scored, 13);
        const auto unnamed = r.forPlan(parse(trainingPlan("llama-3-8b", "h100-sxm", kGpuNode, 4096)));
        QCOMPARE(unnamed.size(), std::size_t{2});
        QCOMPARE(unnamed[1].family, std::string("none named"));
        deepspeed["workload"]["stack"] = "torchtitan";
        QCOMPARE(r.forPlan(parse(deepspeed)).size(), std::size_t{1});
        QCOMPARE(r.forPlan(parse(servingPlan("mixtral-8x7b", "a100-80gb"))).size(), std::size_t{2}); // serving: no stack
        // With no record of its family, a plan's stack alone says nothing: no run like it was checked.
        QVERIFY(r.forPlan(parse(trainingPlan("llama-3-8b", "tpu-v5p", json::array({2, 2, 2}), 4096))).empty());
    }

    // The file round-trips, and a damaged one is refused with the key named.
    void theFileIsCheckedWhenRead()
    {
        TrackRecord r;
        r.add(record(RecordedQuantity::StepTime, "A100, dense, sequences up to 16K", 28, 21, 0.15, 0.0028, 0.0624));
        r.add(record(RecordedQuantity::Prefill, "A100, dense, prefill", 6, 5, 0.2, 0.037, 0.061));
        r.add(stackRecord("A100, dense, sequences up to 16K", 3, 1, 0.05, 0.2)); // a stack of a family's name is its own record
        QVERIFY(TrackRecord::fromJson(r.toJson()).toJson() == r.toJson());
        QVERIFY(TrackRecord::fromJson(r.toJson()).families().at(2).byStack);

        const json good = r.toJson().at("families").at(0);
        const auto refused = [](const json &doc) {
            try {
                TrackRecord::fromJson(doc);
            } catch (const FieldError &e) {
                return e.error.toString();
            }
            return std::string();
        };
        QVERIFY(refused({{"format", "meshplan/plan"}, {"version", 1}, {"families", json::array()}}).find("format") != std::string::npos);
        QVERIFY(refused(file(json::array({good, good}))).find("families[1].family") != std::string::npos); // twice
        json over = good;
        over["within_band"] = 29;
        QVERIFY(refused(file(json::array({over}))).find("families[0].within_band") != std::string::npos);
        json huge = good;
        huge["scored"] = 1e20; // not an int: refused, never converted
        QVERIFY(refused(file(json::array({huge}))).find("families[0].scored") != std::string::npos);
        json wideBand = good;
        wideBand["band"] = 15;
        QVERIFY(refused(file(json::array({wideBand}))).find("families[0].band") != std::string::npos);
        QVERIFY(refused({{"format", 7}, {"version", 1}, {"families", json::array()}}).find("format") != std::string::npos);
        json unknown = good;
        unknown["quantity"] = "latency";
        QVERIFY(refused(file(json::array({unknown}))).find("latency") != std::string::npos);
        json missing = good;
        missing.erase("median_error");
        QVERIFY(refused(file(json::array({missing}))).find("families[0].median_error") != std::string::npos);
        json by = good;
        by["by"] = "chip";
        QVERIFY(refused(file(json::array({by}))).find("families[0].by") != std::string::npos);
        json stack = good;
        stack["by"] = "stack";
        QCOMPARE(refused(file(json::array({good, stack}))), std::string()); // a family and a stack may share a name
        QVERIFY(refused(file(json::array({stack, stack}))).find("families[1].family") != std::string::npos);
        json servingStack = r.toJson().at("families").at(1);
        servingStack["by"] = "stack";
        QVERIFY(refused(file(json::array({servingStack}))).find("families[0].by") != std::string::npos);
    }

    // The compiled-in record is the validation page's: every check family with runs in it, an
    // H100 dense training family among them (the largest on the page).
    void theBuiltInRecordHoldsThePagesFamilies()
    {
        const TrackRecord &r = TrackRecord::builtin();
        QVERIFY(r.families().size() >= 10);
        const FamilyRecord *h100 = r.find(RecordedQuantity::StepTime, "H100/H200, dense, sequences up to 16K");
        QVERIFY(h100);
        QVERIFY(h100->scored >= 30);
        QVERIFY(h100->withinBand <= h100->scored);
        QCOMPARE(h100->band, 0.15);
        for (const FamilyRecord &f : r.families())
            QCOMPARE(f.band, f.quantity == RecordedQuantity::StepTime ? 0.15 : 0.20);
        // The stack table's rows too: every stack the contract names has training checks.
        for (const char *stack : {"megatron", "nemo", "maxtext", "torchtitan", "deepspeed", "composer"}) {
            const FamilyRecord *s = r.find(RecordedQuantity::StepTime, stack, true);
            QVERIFY2(s, stack);
            QVERIFY(s->scored >= 10);
        }
    }
};

QTEST_APPLESS_MAIN(TestTrackRecord)
#include "tst_trackrecord.moc"
