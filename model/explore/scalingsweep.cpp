#include "explore/scalingsweep.h"

#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/planedits.h"
#include "transformer/modelcatalog.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace meshplan::model {

namespace {

using nlohmann::json;

bool isLocalBound(const std::string &bound)
{
    return bound == "compute" || bound == "hbm";
}

bool isLinkBound(const std::string &bound)
{
    return bound == "ici" || bound == "dcn" || bound == "nvlink" || bound == "scale-out";
}

/// The largest exposed communication on one link over the on-chip time (compute + bubble), as
/// Evaluation::bound weighs them: above 1 exactly where the bound names a link.
double linkRatio(const Evaluation &e)
{
    std::map<LinkKind, double> byLink;
    for (const auto &c : e.collectives)
        byLink[c.link] += c.exposedS;
    double worst = 0;
    for (const auto &[link, t] : byLink)
        worst = std::max(worst, t);
    const double local = e.step.compute + e.step.bubble;
    return local > 0 ? worst / local : std::numeric_limits<double>::infinity();
}

struct Sample {
    ScalingPoint point;
    double ratio = 0;
};

Sample sampleOf(const Evaluation &e, double x, std::int64_t globalBatch, int microbatches, bool current)
{
    Sample s;
    ScalingPoint &p = s.point;
    p.x = x;
    p.globalBatch = globalBatch;
    p.chips = e.chips;
    p.mfu = e.mfu;
    p.stepTimeS = e.step.time;
    p.tokensPerS = e.tokensPerS;
    p.exposedCommunicationS = e.step.exposedCommunication;
    p.fits = e.memory.fits;
    p.bound = e.bound;
    p.current = current;
    p.bubbleS = e.step.bubble;
    p.microbatches = microbatches;
    s.ratio = linkRatio(e);
    return s;
}

/// Walks from the compute end of the sweep (`fromTop`: the largest x) towards the other and
/// returns the x where the first compute/hbm-bound point gives way to a link-bound one,
/// interpolating the link ratio linearly in log x between those two points; 0 if none.
double crossoverOf(const std::vector<Sample> &samples, bool fromTop)
{
    const int n = static_cast<int>(samples.size());
    int local = -1;
    for (int k = 0; k < n; ++k) {
        const int i = fromTop ? n - 1 - k : k;
        const std::string &bound = samples[static_cast<std::size_t>(i)].point.bound;
        if (isLocalBound(bound)) {
            local = i;
        } else if (isLinkBound(bound) && local >= 0) {
            const Sample &a = samples[static_cast<std::size_t>(local)];
            const Sample &b = samples[static_cast<std::size_t>(i)];
            double t = 0.5;
            if (std::isfinite(b.ratio) && b.ratio > a.ratio)
                t = std::clamp((1.0 - a.ratio) / (b.ratio - a.ratio), 0.0, 1.0);
            return std::exp(std::log(a.point.x) + t * (std::log(b.point.x) - std::log(a.point.x)));
        }
    }
    return 0.0;
}

std::optional<Error> trainingOnly(const Plan &plan)
{
    if (plan.kind != WorkloadKind::Training)
        return Error{"workload.kind", "scaling sweeps are for training plans; this plan is \"inference\" "
                                      "(its latency against throughput is the serving sweep)"};
    return std::nullopt;
}

/// The axis a sweep over the chip count grows: "slice" (TPU) or "node" (GPU), or -1.
int scaledAxis(const Topology &topology)
{
    return topology.axisIndex(topology.chip().isTpu() ? "slice" : "node");
}

/// The batch role that absorbs a change of chip count and whose critical batch the sweeps
/// report: data when it alone spans the scaled axis (slices over DCN, nodes), else fsdp when the
/// plan uses it, else data.
Role batchRole(const Plan &plan)
{
    const ParallelismSpec &par = plan.parallelism;
    const int axis = scaledAxis(plan.topology);
    if (axis >= 0 && par.degree(Role::Data) > 1) {
        auto placement = placeRoles(plan.topology, par.degrees, par.placement);
        if (placement) {
            const auto holds = [&](Role role) {
                for (const AxisSpan &s : placement->of(role))
                    if (s.axis == axis && s.size > 1)
                        return true;
                return false;
            };
            if (holds(Role::Data) && !holds(Role::Fsdp))
                return Role::Data;
        }
    }
    return par.degree(Role::Fsdp) > 1 ? Role::Fsdp : Role::Data;
}

/// The book's critical tokens per chip per microbatch for `role` (the other batch role's if it
/// has none), 0 if neither.
double criticalTokens(const Evaluation &e, Role role)
{
    const double fsdp = e.critical.fsdpTokensPerChip;
    const double data = e.critical.dataTokensPerChip;
    if (role == Role::Fsdp)
        return fsdp > 0 ? fsdp : std::max(0.0, data);
    return data > 0 ? data : std::max(0.0, fsdp);
}

std::vector<ScalingPoint> pointsOf(const std::vector<Sample> &samples)
{
    std::vector<ScalingPoint> out;
    out.reserve(samples.size());
    for (const auto &s : samples)
        out.push_back(s.point);
    return out;
}

} // namespace

Expected<ScalingSweep> sweepPerChipBatch(const Plan &plan, CostMode mode)
{
    if (auto error = trainingOnly(plan))
        return *error;
    auto base = evaluate(plan, mode);
    if (!base)
        return base.error();

    const std::int64_t batch = plan.training.globalBatch;
    const int microbatches = plan.parallelism.microbatches;
    ScalingSweep sweep;
    std::vector<Sample> samples;
    for (int k = -6; k <= 6; ++k) {
        const std::int64_t scale = std::int64_t(1) << std::abs(k);
        if (k < 0 && batch % scale != 0) {
            if (k == -1)
                sweep.belowLimit = "a batch of " + std::to_string(batch) + " sequences cannot be halved";
            continue; // whole sequences only
        }
        const std::int64_t sequences = k < 0 ? batch / scale : batch * scale;
        Sample sample;
        if (k == 0) {
            sample = sampleOf(base.value(), base->critical.tokensPerChip, batch, microbatches, true);
        } else {
            Plan p = plan;
            p.training.globalBatch = sequences;
            // The microbatch count stays, defaulted or not: the x axis is the batch per chip per
            // microbatch, which one sequence per microbatch would pin.
            auto e = evaluate(p, mode); // refuses fewer sequences than shards x microbatches
            // An MoE plan's count read by the plan format's formula instead is another plan's
            // microbatch size: the sweep keeps this plan's, so it stops there as it would be refused.
            const auto reread = [microbatches](const Evaluation &ev) { return ev.step.microbatches != microbatches; };
            if (!e || !(e->critical.tokensPerChip > 0) || reread(*e)) {
                if (k == -1 || k == 1) {
                    if (!e)
                        (k < 0 ? sweep.belowLimit : sweep.aboveLimit) = e.error().message;
                    else if (reread(*e))
                        (k < 0 ? sweep.belowLimit : sweep.aboveLimit) =
                            std::to_string(microbatches) + " microbatches need at least as many sequences per replica";
                }
                continue;
            }
            sample = sampleOf(e.value(), e->critical.tokensPerChip, sequences, microbatches, false);
        }
        if (!samples.empty() && !(sample.point.x > samples.back().point.x))
            continue; // rounding to whole sequences per shard gave the same per-chip batch
        samples.push_back(std::move(sample));
    }

    sweep.points = pointsOf(samples);
    sweep.crossoverX = crossoverOf(samples, true);
    sweep.bookCriticalX = criticalTokens(base.value(), batchRole(plan));
    return sweep;
}

Expected<ScalingSweep> sweepChipCount(const Plan &plan, CostMode mode)
{
    if (auto error = trainingOnly(plan))
        return *error;
    auto base = evaluate(plan, mode);
    if (!base)
        return base.error();

    const ParallelismSpec &par = plan.parallelism;
    const Role absorber = batchRole(plan);
    const bool tpu = plan.topology.chip().isTpu();
    const json document = planToJson(plan);
    const json &hardware = document.at("hardware");
    const std::int64_t units = tpu ? hardware.value("slices", std::int64_t(1))
                                   : hardware.at("topology").value("nodes", std::int64_t(1));
    std::int64_t others = 1; // chips held by every role but the absorber: kept as they are
    for (Role role : kRoles)
        if (role != absorber)
            others *= par.degree(role);
    const std::int64_t chipsPerUnit = plan.topology.chipCount() / std::max<std::int64_t>(1, units);
    const PlanEdits edits;

    // The plan at 2^k times its chips, or why there is none.
    const auto scaledBy = [&](int k) -> Expected<Sample> {
        const std::int64_t scale = std::int64_t(1) << std::abs(k);
        json scaled = hardware;
        std::int64_t chips = 0;
        if (k < 0 && units % scale != 0) {
            // Fewer chips than one slice: a smaller slice of the same chip, halving its longest
            // axis each time (16x16x32 -> 16x16x16 -> 8x16x16 ...), as one would order it. A GPU
            // node keeps its shape.
            if (!tpu || units != 1 || !hardware.at("topology").is_array())
                return Error{"", "a node is the smallest unit this sweep removes"};
            std::vector<std::int64_t> shape = hardware.at("topology").get<std::vector<std::int64_t>>();
            for (int halving = 0; halving < -k; ++halving) {
                auto longest = std::max_element(shape.begin(), shape.end());
                *longest /= 2;
            }
            if (std::any_of(shape.begin(), shape.end(), [](std::int64_t s) { return s < 1; }))
                return Error{"", "no smaller slice"};
            scaled["topology"] = shape;
            chips = plan.topology.chipCount() / scale;
        } else {
            const std::int64_t count = k < 0 ? units / scale : units * scale;
            chips = count * chipsPerUnit;
            if (tpu)
                scaled["slices"] = count;
            else
                scaled["topology"]["nodes"] = count;
        }
        if (chips > kMaxChips)
            return Error{"", "more than " + std::to_string(kMaxChips) + " chips"};
        if (chips % others != 0)
            return Error{"", std::to_string(chips) + " chips do not divide among the other roles' " + std::to_string(others)};
        const std::int64_t absorbed = chips / others;
        if (absorbed > std::numeric_limits<int>::max())
            return Error{"", "too many chips for one role"};

        auto edited = edits.withHardware(document, scaled);
        if (!edited)
            return edited.error();
        // withHardware gives the freed or added factor to fsdp; keep every role but the absorber.
        json parallelism = edited->at("parallelism");
        bool refit = false;
        for (Role role : kRoles) {
            const int want = role == absorber ? static_cast<int>(absorbed) : par.degree(role);
            const std::string name(roleName(role));
            if (parallelism.value(name, 1) != want) {
                parallelism[name] = want;
                refit = true;
            }
        }
        // Fewer sequences per replica allow no more microbatches than sequences.
        const std::int64_t shards = std::int64_t(parallelism.value("data", 1)) * parallelism.value("fsdp", 1)
                                    * parallelism.value("expert", 1);
        const std::int64_t perReplica = (plan.training.globalBatch + shards - 1) / shards;
        int microbatches = par.microbatches;
        // A plan that left its microbatches to the default keeps one sequence per microbatch.
        if (par.microbatchesDefaulted && perReplica != par.microbatches) {
            microbatches = static_cast<int>(std::min<std::int64_t>(perReplica, 1'000'000));
            parallelism["microbatches"] = microbatches;
            refit = true;
        } else if (par.microbatches > perReplica) {
            microbatches = static_cast<int>(perReplica);
            parallelism["microbatches"] = perReplica;
            refit = true;
        }
        if (refit) {
            edited = edits.withField(edited.value(), "/parallelism", parallelism);
            if (!edited)
                return edited.error();
        }
        auto p = planFromJson(edited.value(), ChipCatalog::builtin(), ModelCatalog::builtin());
        if (!p)
            return p.error();
        auto e = evaluate(p.value(), mode);
        if (!e)
            return e.error();
        return sampleOf(e.value(), double(e->chips), plan.training.globalBatch, microbatches, false);
    };

    ScalingSweep sweep;
    std::vector<Sample> samples;
    for (int k = -4; k <= 4; ++k) {
        if (k == 0) {
            samples.push_back(sampleOf(base.value(), double(base->chips), plan.training.globalBatch, par.microbatches, true));
            continue;
        }
        auto sample = scaledBy(k);
        if (sample)
            samples.push_back(std::move(sample.value()));
        else if (k == -1 || k == 1)
            (k < 0 ? sweep.belowLimit : sweep.aboveLimit) = sample.error().message;
    }

    sweep.points = pointsOf(samples);
    sweep.crossoverX = crossoverOf(samples, false);
    // The chip count at which the fixed global batch leaves the critical tokens per chip per
    // microbatch: tokens per chip = batch x seq_len x tensor x pipeline / (chips x microbatches).
    const double critical = criticalTokens(base.value(), absorber);
    if (critical > 0)
        sweep.bookCriticalX = double(plan.training.globalBatch) * double(plan.training.seqLen)
                              * par.degree(Role::Tensor) * par.degree(Role::Pipeline)
                              / (double(par.microbatches) * critical);
    return sweep;
}

} // namespace meshplan::model
