#include "cost/trackrecord.h"

#include "base/embeddedresources.h"
#include "base/jsonfields.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace meshplan::model {

namespace {

constexpr RecordedQuantity kQuantities[] = {RecordedQuantity::StepTime, RecordedQuantity::Prefill,
                                            RecordedQuantity::DecodeStep, RecordedQuantity::Throughput};

// Below this the median error is inside the scatter of the runs themselves: no lean to report.
constexpr double kLeanThreshold = 0.03;

// The stack record of the plans that leave workload.stack out (priced as a well-tuned stack).
constexpr std::string_view kNoStackNamed = "none named";

/// A share as the validation page prints it: "26.2%".
std::string percentText(double share)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * share);
    return buffer;
}

RecordedQuantity quantityFromName(const std::string &name, const std::string &path)
{
    for (const RecordedQuantity q : kQuantities)
        if (recordedQuantityName(q) == name)
            return q;
    throw FieldError(path, "unknown quantity \"" + name + "\" (expected step time, prefill, decode step or throughput)");
}

} // namespace

std::string_view recordedQuantityName(RecordedQuantity quantity)
{
    switch (quantity) {
    case RecordedQuantity::StepTime:
        return "step time";
    case RecordedQuantity::Prefill:
        return "prefill";
    case RecordedQuantity::DecodeStep:
        return "decode step";
    case RecordedQuantity::Throughput:
        return "throughput";
    }
    return "step time";
}

RecordedQuantity recordedQuantityOf(std::string_view jsonPath)
{
    if (jsonPath.find("prefill") != std::string_view::npos || jsonPath.find("first_token") != std::string_view::npos)
        return RecordedQuantity::Prefill;
    if (jsonPath.find("decode") != std::string_view::npos)
        return RecordedQuantity::DecodeStep;
    if (jsonPath == "step.time_s")
        return RecordedQuantity::StepTime;
    return RecordedQuantity::Throughput;
}

std::string chipGeneration(const Chip &chip)
{
    if (chip.isTpu())
        return "TPU";
    // A chip written inline that takes its matmul rate from a catalog chip (an A800 takes the A100's)
    // errs as that chip does, so it shares its record; one that lists its own keeps its own id,
    // which no family on the page names.
    const std::string id = chip.figureOwner("flops_fraction");
    if (id.starts_with("a100"))
        return "A100";
    if (id.starts_with("h100") || id == "h200" || id == "h800")
        return "H100/H200";
    if (id == "b200" || id == "gb200")
        return "B200/GB200";
    return id;
}

std::string trackRecordFamily(const Plan &plan, RecordedQuantity quantity)
{
    std::string family = chipGeneration(plan.topology.chip()) + (plan.model.moe ? ", MoE, " : ", dense, ");
    switch (quantity) {
    case RecordedQuantity::StepTime:
        // Past 16K tokens the attention kernels' published curves end and context parallelism
        // begins: a family of its own.
        return family + (plan.training.seqLen > 16384 ? "sequences over 16K" : "sequences up to 16K");
    case RecordedQuantity::Prefill:
        return family + "prefill";
    case RecordedQuantity::DecodeStep:
        return family + "decode step";
    case RecordedQuantity::Throughput:
        return family + "whole-batch throughput";
    }
    return family;
}

std::string trackRecordStack(const Plan &plan)
{
    return plan.training.stack.empty() ? std::string(kNoStackNamed) : plan.training.stack;
}

bool FamilyRecord::optimistic() const
{
    // A time predicted short, or a throughput predicted high, promises more than was measured.
    return quantity == RecordedQuantity::Throughput ? medianError > 0 : medianError < 0;
}

std::string FamilyRecord::sentence() const
{
    std::string lean = "with no clear lean";
    if (std::abs(medianError) >= kLeanThreshold) {
        const bool time = quantity != RecordedQuantity::Throughput;
        const char *direction = time ? (medianError < 0 ? "faster" : "slower") : (medianError < 0 ? "lower" : "higher");
        lean = std::string("and it leans ") + (optimistic() ? "optimistic" : "pessimistic") + ": at the median the prediction is "
               + percentText(std::abs(medianError)) + " " + direction + " than measured";
    }
    // Serving families count measurements (one run may compare its prefill and its throughput).
    const bool training = quantity == RecordedQuantity::StepTime;
    const std::string runs = std::to_string(scored) + " published " + (training ? "run" : "measurement") + (scored == 1 ? "" : "s");
    const std::string which = !byStack                 ? " like this one (" + family + ")"
                              : family == kNoStackNamed ? std::string(scored == 1 ? " that names" : " that name") + " no stack,"
                                                        : " under the same stack (" + family + ")";
    return "On " + runs + which + " the predicted " + std::string(recordedQuantityName(quantity))
           + " came within ±" + std::to_string(std::lround(100.0 * band)) + "% on " + std::to_string(withinBand)
           + "; median absolute error " + percentText(medianAbsError) + ", " + lean + ".";
}

std::string_view TrackRecord::noRecordSentence()
{
    return "No published run like this one is on the validation page (docs/validation.md): the numbers are the "
           "model's alone.";
}

const TrackRecord &TrackRecord::builtin()
{
    static const TrackRecord record = [] {
        try {
            return fromJson(json_fields::parse(std::string(embedded::trackRecordJson()), "track-record.json"));
        } catch (const FieldError &e) {
            // Compiled in and checked by tst_validation: failing here is a build defect.
            std::cerr << "meshplan: the built-in track record is invalid: " << e.error.toString() << '\n';
            std::abort();
        }
    }();
    return record;
}

TrackRecord TrackRecord::fromJson(const nlohmann::json &document)
{
    namespace jf = json_fields;
    if (!document.is_object())
        throw FieldError("", "a track record must be a JSON object");
    if (jf::string(document, "format", "") != "meshplan/track-record")
        throw FieldError("format", "must be \"meshplan/track-record\"");
    if (jf::integer(document, "version", "", 0, 1'000'000) != 1)
        throw FieldError("version", "must be 1");
    const auto &list = jf::require(document, "families", "");
    if (!list.is_array())
        throw FieldError("families", "must be an array");
    TrackRecord record;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "families[" + std::to_string(i) + "]";
        const auto &entry = list[i];
        if (!entry.is_object())
            throw FieldError(path, "must be an object");
        FamilyRecord f;
        f.quantity = quantityFromName(jf::string(entry, "quantity", path), jf::join(path, "quantity"));
        f.family = jf::string(entry, "family", path);
        if (f.family.empty())
            throw FieldError(jf::join(path, "family"), "must not be empty");
        if (entry.contains("by")) {
            const std::string by = jf::string(entry, "by", path);
            if (by != "family" && by != "stack")
                throw FieldError(jf::join(path, "by"), "must be \"family\" or \"stack\"");
            f.byStack = by == "stack";
            if (f.byStack && f.quantity != RecordedQuantity::StepTime)
                throw FieldError(jf::join(path, "by"), "a stack's record is of training step times only");
        }
        f.scored = static_cast<int>(jf::integer(entry, "scored", path, 1, 1'000'000));
        f.withinBand = static_cast<int>(jf::integer(entry, "within_band", path, 0, f.scored));
        f.band = jf::positiveNumber(entry, "band", path);
        if (f.band >= 1)
            throw FieldError(jf::join(path, "band"), "must be below 1 (a share: 0.15 is ±15%)");
        const auto &median = jf::require(entry, "median_error", path);
        if (!median.is_number() || !std::isfinite(median.get<double>()))
            throw FieldError(jf::join(path, "median_error"), "must be a finite number");
        f.medianError = median.get<double>();
        f.medianAbsError = jf::positiveNumber(entry, "median_abs_error", path, true);
        if (record.find(f.quantity, f.family, f.byStack))
            throw FieldError(jf::join(path, "family"), "duplicates \"" + f.family + "\"");
        record.add(std::move(f));
    }
    return record;
}

nlohmann::json TrackRecord::toJson() const
{
    nlohmann::json families = nlohmann::json::array();
    for (const FamilyRecord &f : m_families) {
        nlohmann::json entry = {{"quantity", std::string(recordedQuantityName(f.quantity))},
                                {"family", f.family},
                                {"scored", f.scored},
                                {"within_band", f.withinBand},
                                {"band", f.band},
                                {"median_error", f.medianError},
                                {"median_abs_error", f.medianAbsError}};
        if (f.byStack)
            entry["by"] = "stack";
        families.push_back(std::move(entry));
    }
    return {{"format", "meshplan/track-record"},
            {"version", 1},
            {"about", "How the achievable model did on docs/validation.md's check runs, by family (training step "
                      "time within ±15%, serving within ±20%) and, marked \"by\": \"stack\", the training checks by "
                      "the stack their plans name. Written by tst_validation with MESHPLAN_UPDATE_DOCS=1; the plan "
                      "summary and meshplan-cli evaluate quote it."},
            {"families", families}};
}

const FamilyRecord *TrackRecord::find(RecordedQuantity quantity, const std::string &family, bool byStack) const
{
    for (const FamilyRecord &f : m_families)
        if (f.quantity == quantity && f.family == family && f.byStack == byStack)
            return &f;
    return nullptr;
}

std::vector<FamilyRecord> TrackRecord::forPlan(const Plan &plan) const
{
    std::vector<FamilyRecord> out;
    const auto add = [&](RecordedQuantity q) {
        if (const FamilyRecord *f = find(q, trackRecordFamily(plan, q)))
            out.push_back(*f);
    };
    if (plan.kind == WorkloadKind::Training) {
        add(RecordedQuantity::StepTime);
        // The stack's record qualifies the family's; alone it would hide that no run like this
        // one (its chips, its kind) was ever checked.
        if (const FamilyRecord *s = find(RecordedQuantity::StepTime, trackRecordStack(plan), true); s && !out.empty())
            out.push_back(*s);
    } else {
        add(RecordedQuantity::Prefill);
        add(RecordedQuantity::DecodeStep);
        add(RecordedQuantity::Throughput);
    }
    return out;
}

} // namespace meshplan::model
