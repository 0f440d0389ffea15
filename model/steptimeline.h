#pragma once
// One step laid out in time, lane by lane: compute, each collective (the part hidden behind
// compute and the exposed part), the pipeline bubble, the optimizer; for serving, prefill, the
// first token and the decode steps with what each decode step spends its time on.

#include "evaluation.h"
#include "plan.h"

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
    std::vector<std::string> lanes; ///< top to bottom: "compute", then one lane per collective, ...
    std::vector<TimelineSegment> segments;
    double totalS = 0;              ///< the step time (training) or one request's time (serving)
};

/// Lays out `evaluation` of `plan` so that the lanes add up to its step time exactly: the
/// compute lane spans [0, compute) (recompute its own segment at the end), the bubble follows,
/// then the exposed communication (one segment per collective, in order), then the optimizer.
/// Each collective's lane shows its hidden part inside the compute span and its exposed part
/// where it sits on the critical path. Serving: prefill, first token, the decode steps, and one
/// lane per decode component (weights, KV cache, compute, communication) scaled to the decode span.
StepTimeline stepTimeline(const Plan &plan, const Evaluation &evaluation);

} // namespace meshplan::model
