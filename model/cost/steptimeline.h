#pragma once
// One step laid out in time, lane by lane: compute, each collective (the part hidden behind
// compute and the exposed part), the pipeline bubble, the optimizer; for serving, prefill, the
// first token and the decode steps with what each decode step spends its time on.

#include "cost/evaluation.h"
#include "plan/plan.h"

#include <string>
#include <vector>

namespace meshplan::model {

struct TimelineSegment {
    int lane = 0;          ///< index into StepTimeline::lanes
    std::string label;     ///< "forward + backward", "fsdp weights (hidden)", "bubble", ...
    std::string kind;      ///< compute, recompute, hidden, exposed, bubble, optimizer, prefill, decode, idle
    double startS = 0;
    double durationS = 0;
    int collective = -1;   ///< index into Evaluation::collectives for communication segments
};

struct StepTimeline {
    /// Top to bottom. Training: "compute" (compute, recompute, bubble, optimizer), then one lane
    /// per collective ("fsdp weights (all-gather)"). Serving: "request", one lane per decode
    /// component (weights, FLOPs, KV cache; communication only when no collective has a lane
    /// of its own), then one per collective.
    std::vector<std::string> lanes;
    std::vector<TimelineSegment> segments;
    double totalS = 0;              ///< the step time (training) or one request's time (serving)
};

/// Lays out `evaluation` of `plan` so that the lanes add up to its step time exactly: the
/// compute lane spans [0, compute) (recompute its own segment at the end), the bubble follows,
/// then the exposed communication (one segment per collective, in order), then the optimizer.
/// The segments other than "hidden" tile [0, totalS) without gaps. Each collective's lane shows
/// its hidden part inside the compute span (gradient reductions ending with it, the others
/// starting with it) and its exposed part where it sits on the critical path. (Pipeline fill and
/// drain waits beyond a collective's own time appear as one more exposed segment on the
/// pipeline lane.) Serving: prefill [0, prefillS) (disaggregated: this request's own prompt,
/// prefillS / ceil(batch / prefill replicas), then the KV transfer), the first token up to TTFT,
/// the decode steps up to TTFT + (generate_len - 1) x decode step; one lane per decode component
/// (weights, KV cache, FLOPs, communication: each step's share times the steps, from TTFT), and
/// each collective (prefill's inside the prefill, the decode steps' over the decode span).
/// Empty segments are left out.
StepTimeline stepTimeline(const Plan &plan, const Evaluation &evaluation);

} // namespace meshplan::model
