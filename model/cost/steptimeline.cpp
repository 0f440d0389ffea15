#include "cost/steptimeline.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

namespace {

/// Appends a segment unless it is empty (or not a number).
void add(StepTimeline &t, int lane, const std::string &label, const std::string &kind, double start, double duration,
         int collective = -1)
{
    if (!(duration > 0) || !std::isfinite(duration) || !std::isfinite(start))
        return;
    t.segments.push_back({lane, label, kind, start, duration, collective});
}

std::string laneName(const CollectiveUse &c)
{
    return c.purpose + " (" + std::string(collectiveName(c.op)) + ")";
}

/// Gradient reductions run during the backward pass, at the end of the compute span; the rest
/// (weight gathers, activations, pipeline sends) from its start.
bool runsAtTheEnd(const CollectiveUse &c)
{
    return c.op == CollectiveOp::ReduceScatter || c.purpose.find("gradient") != std::string::npos;
}

/// The distributed optimizer's gather of the updated weights follows the optimizer step (it feeds
/// the next step's first forward), where every other exposed collective precedes it.
bool followsTheOptimizer(const CollectiveUse &c)
{
    return c.op == CollectiveOp::AllGather && c.purpose.rfind("updated", 0) == 0;
}

StepTimeline trainingTimeline(const Evaluation &e)
{
    StepTimeline t;
    const StepTime &s = e.step;
    t.totalS = s.time;
    t.lanes.push_back("compute");
    const int computeLane = 0;
    for (const auto &c : e.collectives)
        t.lanes.push_back(laneName(c));

    // The critical path, end to end: compute, recompute, bubble, exposed communication, optimizer
    // (then the updated weights' gather, if the optimizer is distributed).
    const double plain = s.compute - s.recompute;
    add(t, computeLane, "forward + backward", "compute", 0.0, plain);
    add(t, computeLane, "recompute", "recompute", plain, s.recompute);
    add(t, computeLane, "pipeline bubble", "bubble", s.compute, s.bubble);
    double at = s.compute + s.bubble;
    double exposedSum = 0;
    int pipelineLane = -1;
    for (std::size_t i = 0; i < e.collectives.size(); ++i) {
        const CollectiveUse &c = e.collectives[i];
        const int lane = static_cast<int>(i) + 1;
        if (c.role == Role::Pipeline)
            pipelineLane = lane;
        if (followsTheOptimizer(c)) {
            exposedSum += c.exposedS;
            continue;
        }
        add(t, lane, c.purpose + " (exposed)", "exposed", at, c.exposedS, static_cast<int>(i));
        if (c.exposedS > 0) {
            at += c.exposedS;
            exposedSum += c.exposedS;
        }
    }
    // A collective's exposed time is capped at its own time; filling and draining a pipeline
    // waits on other stages' sends too. That remainder still sits on the critical path.
    const double rest = s.exposedCommunication - exposedSum;
    if (rest > 1e-12 * std::max(s.time, 1e-300)) {
        const int lane = pipelineLane >= 0 ? pipelineLane : computeLane;
        add(t, lane, pipelineLane >= 0 ? "pipeline fill and drain (exposed)" : "communication (exposed)", "exposed",
            at, rest, pipelineLane >= 0 ? pipelineLane - 1 : -1);
        at += rest;
    }
    add(t, computeLane, "optimizer", "optimizer", at, s.optimizer);
    at += s.optimizer;
    for (std::size_t i = 0; i < e.collectives.size(); ++i) {
        const CollectiveUse &c = e.collectives[i];
        if (!followsTheOptimizer(c) || c.exposedS <= 0)
            continue;
        add(t, static_cast<int>(i) + 1, c.purpose + " (exposed)", "exposed", at, c.exposedS, static_cast<int>(i));
        at += c.exposedS;
    }
    add(t, computeLane, "compute slowed by hidden collectives", "interference", at, s.overlapInterference);

    // The hidden part of each collective, drawn inside the span of compute (and bubble) it hides behind.
    const double span = s.compute + s.bubble;
    for (std::size_t i = 0; i < e.collectives.size(); ++i) {
        const CollectiveUse &c = e.collectives[i];
        const double hidden = std::min(std::max(0.0, c.timeS - c.exposedS), span);
        const double start = runsAtTheEnd(c) ? std::max(0.0, s.compute - hidden) : 0.0;
        add(t, static_cast<int>(i) + 1, c.purpose + " (hidden)", "hidden", start, hidden, static_cast<int>(i));
    }
    return t;
}

StepTimeline servingTimeline(const Plan &plan, const Evaluation &e)
{
    StepTimeline t;
    const InferenceResult &r = *e.inference;
    const ServingExtras &x = e.serving;
    const double steps = std::max(0.0, double(plan.inference.generateLen) - 1.0);
    const double decodeStart = r.timeToFirstTokenS;
    const double decodeSpan = steps * r.decodeStepS;
    t.totalS = decodeStart + decodeSpan;

    // Disaggregated: prefill chips work through their share of the prompts one after another
    // (prefillS is all of them); one request waits for its own prompt only, then its KV transfer.
    double prompts = 1;
    if (x.prefillReplicas > 0)
        prompts = std::ceil(double(plan.inference.batch) / x.prefillReplicas);
    const double prefill = r.prefillS / prompts;
    t.lanes.push_back("request");
    add(t, 0, prompts > 1 ? "prefill (this prompt)" : "prefill", "prefill", 0.0, prefill);
    add(t, 0, x.kvTransferS > 0 ? "KV transfer + first token" : "first token", "decode", prefill,
        r.timeToFirstTokenS - prefill);
    add(t, 0, std::to_string(plan.inference.generateLen - 1) + " decode steps", "decode", decodeStart, decodeSpan);

    // What the decode steps spend, over the whole decode span and in the order a step spends it:
    // weight reads and matmul FLOPs overlap (the step takes the larger), then the KV cache reads,
    // elementwise work (the gap) and, last, the communication, which ends the span.
    const double decodeEnd = decodeStart + decodeSpan;
    const double heavy = std::max(x.decodeWeightsS, x.decodeComputeS);
    bool decodeCollectives = false;
    for (const auto &c : e.collectives)
        decodeCollectives = decodeCollectives || c.purpose.rfind("prefill:", 0) != 0;
    const struct {
        const char *lane;
        double perStep;
        double start;
    } parts[] = {{"decode: weights from HBM", x.decodeWeightsS, decodeStart},
                 {"decode: matmul FLOPs", x.decodeComputeS, decodeStart},
                 {"decode: KV cache from HBM", x.decodeKvS, decodeStart + steps * heavy},
                 {"decode: communication", x.decodeCommunicationS, decodeEnd - steps * x.decodeCommunicationS}};
    for (const auto &part : parts) {
        // The collectives' own lanes say it better when there are any.
        if (decodeCollectives && &part == &parts[3])
            continue;
        t.lanes.push_back(part.lane);
        add(t, static_cast<int>(t.lanes.size()) - 1, part.lane, "decode", part.start, steps * part.perStep);
    }

    // Each collective: the prefill's within the prefill, one after another; the decode steps'
    // one after another at the end of the decode span. Serving hides none of them.
    double prefillAt = 0;
    double decodeAt = decodeEnd - steps * x.decodeCommunicationS;
    for (std::size_t i = 0; i < e.collectives.size(); ++i) {
        const CollectiveUse &c = e.collectives[i];
        t.lanes.push_back(laneName(c));
        const int lane = static_cast<int>(t.lanes.size()) - 1;
        if (c.purpose.rfind("prefill:", 0) == 0) {
            const double start = std::min(prefillAt, prefill);
            const double duration = std::min(c.timeS / prompts, prefill - start);
            add(t, lane, c.purpose, "exposed", start, duration, static_cast<int>(i));
            prefillAt = start + std::max(0.0, duration);
        } else {
            const double start = std::clamp(decodeAt, decodeStart, decodeEnd);
            const double duration = std::min(steps * c.timeS, decodeEnd - start);
            add(t, lane, c.purpose, "exposed", start, duration, static_cast<int>(i));
            decodeAt = start + std::max(0.0, duration);
        }
    }
    return t;
}

} // namespace

StepTimeline stepTimeline(const Plan &plan, const Evaluation &evaluation)
{
    if (plan.kind == WorkloadKind::Inference && evaluation.inference)
        return servingTimeline(plan, evaluation);
    return trainingTimeline(evaluation);
}

} // namespace meshplan::model
