#pragma once
// How close the achievable model came on published runs like a plan: docs/validation.md's check
// families and training stacks (resources/track-record.json, compiled in), so each number can say
// how far to trust it.

#include "plan/plan.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

/// The numbers the validation page scores, as a reader of a plan's summary sees them.
enum class RecordedQuantity { StepTime, Prefill, DecodeStep, Throughput };

std::string_view recordedQuantityName(RecordedQuantity quantity); ///< "step time", "prefill", ...
/// The quantity a compared result path scores: "inference.time_to_first_token_s" is a prefill,
/// "inference.decode_step_s" a decode step, "step.time_s" a step time, any tokens/s a throughput.
RecordedQuantity recordedQuantityOf(std::string_view jsonPath);

/// The chips a family names: the generation, not the SKU (H100, H200 and H800 share a die); a chip
/// written inline counts as the catalog chip whose matmul rate (flops_fraction) it runs at.
std::string chipGeneration(const Chip &chip);
/// The family a plan's quantity belongs to, as the validation page names it: "H100/H200, dense,
/// sequences up to 16K" for a training step, "A100, MoE, decode step" for serving.
std::string trackRecordFamily(const Plan &plan, RecordedQuantity quantity);
/// The training stack a plan names, as the validation page's stack table lists it: "deepspeed",
/// or "none named" where workload.stack is absent.
std::string trackRecordStack(const Plan &plan);

/// One family of check runs and how the achievable model did on them.
struct FamilyRecord {
    RecordedQuantity quantity = RecordedQuantity::StepTime;
    std::string family;          ///< a chip generation and kind of run; with byStack, the stack (trackRecordStack)
    bool byStack = false;        ///< the training checks grouped by the stack their plans name
    int scored = 0;              ///< runs (or serving measurements) with a prediction
    int withinBand = 0;          ///< of them, within ±band
    double band = 0.15;          ///< ±15% for a training step, ±20% for serving
    double medianError = 0;      ///< signed: predicted / measured − 1
    double medianAbsError = 0;

    /// Whether the model's median run promises more than was measured: a shorter time or a
    /// higher throughput.
    bool optimistic() const;
    /// "On 41 published runs like this one (H100/H200, dense, sequences up to 16K) the predicted
    /// step time came within ±15% on 38; median absolute error 6.6%, with no clear lean." A median error
    /// of 3% or more is named: "..., and it leans optimistic: at the median the prediction is
    /// 26.2% faster than measured." Serving families count measurements. A stack's record says
    /// "On 13 published runs under the same stack (deepspeed) ...", or "... runs that name no
    /// stack ...".
    std::string sentence() const;
};

/// The families (and training stacks) of docs/validation.md's check sets, looked up by plan.
class TrackRecord
{
public:
    /// resources/track-record.json, parsed once (tst_validation keeps it equal to the page).
    static const TrackRecord &builtin();
    /// What to say for a plan whose family no published run has checked.
    static std::string_view noRecordSentence();
    /// Throws FieldError naming the offending key: wrong format or version, a family without a
    /// name, a count out of range (a within-band count above the scored one), a band outside
    /// (0, 1), an error that is not a finite number, a "by" other than family or stack (or a
    /// stack's record of anything but a step time), or a family or stack listed twice.
    static TrackRecord fromJson(const nlohmann::json &document);
    nlohmann::json toJson() const;

    const std::vector<FamilyRecord> &families() const { return m_families; }
    void add(FamilyRecord record) { m_families.push_back(std::move(record)); }
    /// The family record (or, `byStack`, the stack record) for this quantity and name, or nullptr.
    const FamilyRecord *find(RecordedQuantity quantity, const std::string &family, bool byStack = false) const;
    /// The records behind a plan's headline numbers: the step time of a training plan, by its
    /// family and then by its stack; the prefill, decode step and throughput of a serving plan.
    /// Families no run has checked are left out, and a training plan's stack with its family (an
    /// empty result: the plan is unlike every published run on the page).
    std::vector<FamilyRecord> forPlan(const Plan &plan) const;

private:
    std::vector<FamilyRecord> m_families;
};

} // namespace meshplan::model
