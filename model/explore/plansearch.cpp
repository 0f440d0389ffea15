#include "explore/plansearch.h"
#include "cost/softwarestack.h"

#include "base/divisors.h"
#include "base/units.h"
#include "explore/paretofront.h"
#include "explore/placementchoices.h"
#include "explore/servingsearch.h"
#include "explore/trainingbound.h"
#include "plan/plantitle.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <thread>

namespace meshplan::model {

using nlohmann::json;

std::string_view objectiveName(SearchObjective objective)
{
    switch (objective) {
    case SearchObjective::StepTime:
        return "step-time";
    case SearchObjective::Cost:
        return "cost";
    case SearchObjective::TokensPerChip:
        return "tokens-per-chip";
    }
    return "?";
}

Expected<SearchObjective> objectiveFromName(std::string_view name)
{
    for (SearchObjective o : {SearchObjective::StepTime, SearchObjective::Cost, SearchObjective::TokensPerChip})
        if (objectiveName(o) == name)
            return o;
    return Error{"objective", "must be step-time, cost or tokens-per-chip, got \"" + std::string(name) + "\""};
}

namespace {

/// Whether a ZeRO stage changes anything: it shards over the data and context ranks, and the
/// optimizer state and gradients of the weights every expert rank holds over the expert ranks.
bool zeroShardsAny(int data, int context, int expert)
{
    return data > 1 || context > 1 || expert > 1;
}

/// The threads a search runs on: as asked, or one per core.
unsigned threadCount(int requested)
{
    return requested > 0 ? static_cast<unsigned>(requested) : std::max(1u, std::thread::hardware_concurrency());
}

/// Runs `work` on `threads` threads, the caller's among them, and returns when all are done.
template<typename Work>
void onThreads(unsigned threads, const Work &work)
{
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto &t : pool)
        t.join();
}

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Interleaved 1F1B's virtual stages tried: 2 up to this many (and at least one layer each).
constexpr int kMaxVirtualStages = 8;
/// Degree combinations handed to the threads at a time. The pruning state is frozen for a
/// block, so the outcome does not depend on how many threads share it.
constexpr std::size_t kBlock = 16;

/// Why `objective` cannot rank the plans of `plan` (training plans by step time or cost, serving
/// plans by tokens per chip or cost; cost only with a price), or nothing.
std::optional<Error> objectiveError(const Plan &plan, SearchObjective objective)
{
    const bool training = plan.kind == WorkloadKind::Training;
    if (training && objective == SearchObjective::TokensPerChip)
        return Error{"objective", "tokens-per-chip ranks serving plans; a training plan is ranked by step-time or cost"};
    if (!training && objective == SearchObjective::StepTime)
        return Error{"objective", "step-time ranks training plans; a serving plan is ranked by tokens-per-chip or cost"};
    if (objective == SearchObjective::Cost && !(plan.pricePerChipHour > 0))
        return Error{"objective", "cost needs a price per chip-hour (hardware.price_per_hour, or a catalog price for "
                                      + plan.topology.chip().id + ")"};
    return std::nullopt;
}

std::size_t idx(Role role)
{
    return static_cast<std::size_t>(role);
}

/// The choices beside the degrees and the placement (the knobs of one degree combination).
struct Knobs {
    bool sequenceParallel = false;
    int zeroStage = 0;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int virtualStages = 1;
    int microbatches = 1;
    int remat = 0; ///< index into the policies tried
};

/// A stable position in the space: degree combination, knobs, placement, in enumeration order.
/// Ties of the objective (or of the front's two quantities) go to the smaller key.
using Key = ParetoFront::Key;

/// A fitting candidate found by the search: enough to rank it and to rebuild its plan.
struct Found {
    double objective = 0; ///< smaller is better
    double memory = 0;    ///< the front's x (training: bytes per chip; serving: latency)
    double time = 0;      ///< the front's y (training: step time; serving: -tokens/s per chip)
    Key key;
    Knobs knobs;
};

bool better(const Found &a, const Found &b)
{
    return a.objective != b.objective ? a.objective < b.objective : a.key < b.key;
}

/// The best `top` by objective and the Pareto front of what was found so far.
class Standings
{
public:
    explicit Standings(int top)
        : m_top(static_cast<std::size_t>(std::max(top, 1)))
    {
    }

    /// Whether candidates whose objective, front coordinates and key are at least these can
    /// neither enter the results nor the front.
    bool excludes(double objective, double x, double y, const Key &key) const
    {
        if (m_best.size() < m_top)
            return false;
        const Found &last = m_best.back();
        const bool outranked = objective > last.objective || (objective == last.objective && last.key < key);
        return outranked && m_front.dominates(x, y, key);
    }

    void add(const Found &f)
    {
        m_front.insert(f.memory, f.time, f.key);
        const auto at = std::lower_bound(m_best.begin(), m_best.end(), f, better);
        if (static_cast<std::size_t>(at - m_best.begin()) < m_top) {
            m_best.insert(at, f);
            if (m_best.size() > m_top)
                m_best.pop_back();
        }
        m_kept.push_back(f);
    }

    /// Drops kept candidates that can no longer be in the results or on the front.
    void compact()
    {
        std::vector<Found> kept;
        for (const Found &f : m_kept)
            if (!m_front.dominates(f.memory, f.time, f.key) || !(m_best.size() >= m_top && better(m_best.back(), f)))
                kept.push_back(f);
        m_kept.swap(kept);
    }

    /// The same standings without the kept candidates: what pruning needs.
    Standings bar() const
    {
        Standings copy(static_cast<int>(m_top));
        copy.m_best = m_best;
        copy.m_front = m_front;
        return copy;
    }

    const std::vector<Found> &best() const { return m_best; }
    const std::vector<Found> &kept() const { return m_kept; }

private:
    std::size_t m_top;
    std::vector<Found> m_best; ///< sorted by better()
    ParetoFront m_front;
    std::vector<Found> m_kept; ///< every candidate that may still be in the results or on the front
};

/// The front from candidates: sorted by (x, y, key), each one whose y is below every earlier y.
std::vector<Found> frontOf(std::vector<Found> all)
{
    std::sort(all.begin(), all.end(), [](const Found &a, const Found &b) {
        if (a.memory != b.memory)
            return a.memory < b.memory;
        if (a.time != b.time)
            return a.time < b.time;
        return a.key < b.key;
    });
    std::vector<Found> out;
    double lowest = kInf;
    for (const Found &f : all)
        if (f.time < lowest) {
            out.push_back(f);
            lowest = f.time;
        }
    return out;
}

struct Counts {
    std::int64_t evaluated = 0;
    std::int64_t pruned = 0;
    std::int64_t fits = 0;
    std::int64_t doesNotFit = 0;
    std::int64_t rejected = 0;

    void add(const Counts &o)
    {
        evaluated += o.evaluated;
        pruned += o.pruned;
        fits += o.fits;
        doesNotFit += o.doesNotFit;
        rejected += o.rejected;
    }
};

std::string changeList(const Plan &from, const Plan &to)
{
    std::string out;
    const auto add = [&](const std::string &text) { out += (out.empty() ? "" : ", ") + text; };
    const ParallelismSpec &a = from.parallelism;
    const ParallelismSpec &b = to.parallelism;
    for (Role r : kRoles)
        if (a.degree(r) != b.degree(r))
            add(std::string(roleName(r)) + " " + std::to_string(a.degree(r)) + "→" + std::to_string(b.degree(r)));
    if (from.kind == WorkloadKind::Training) {
        if (a.zeroStage != b.zeroStage && zeroShardsAny(b.degree(Role::Data), b.degree(Role::Context), b.degree(Role::Expert)))
            add("ZeRO " + std::to_string(a.zeroStage) + "→" + std::to_string(b.zeroStage));
        if (a.sequenceParallel != b.sequenceParallel && b.degree(Role::Tensor) > 1)
            add(b.sequenceParallel ? "sequence parallel" : "no sequence parallel");
        if (b.degree(Role::Pipeline) > 1 && (a.schedule != b.schedule || a.virtualStages != b.virtualStages))
            add(std::string(scheduleName(b.schedule))
                + (b.virtualStages > 1 ? " x" + std::to_string(b.virtualStages) : std::string()));
        if (a.microbatches != b.microbatches)
            add("microbatches " + std::to_string(a.microbatches) + "→" + std::to_string(b.microbatches));
        if (from.training.remat.name != to.training.remat.name)
            add("remat " + from.training.remat.name + "→" + to.training.remat.name);
    } else {
        if (from.topology.chipCount() != to.topology.chipCount())
            add(std::to_string(to.topology.chipCount()) + " chips");
        if (from.inference.batch != to.inference.batch)
            add("batch " + std::to_string(from.inference.batch) + "→" + std::to_string(to.inference.batch));
        if (from.inference.serving != to.inference.serving || from.inference.prefillChips != to.inference.prefillChips)
            add(to.inference.serving == Serving::Interleaved
                    ? std::string("interleaved")
                    : "disaggregated, " + std::to_string(to.inference.prefillChips) + " prefill chips");
    }
    return out.empty() ? "the plan's own layout" : out;
}

std::string trainingWhy(const Plan &from, const Expected<Evaluation> &base, const Plan &plan, const Evaluation &e)
{
    std::string why;
    if (!base)
        why = "the plan itself cannot be evaluated";
    else if (!base->memory.fits)
        why = "fits where the plan needs " + formatBytes(base->memory.total, true);
    else
        why = formatNumber(base->step.time / e.step.time) + "x the plan's speed";
    why += "; " + formatSeconds(e.step.time) + " per step";
    if (plan.pricePerChipHour > 0)
        why += " ($" + formatNumber(double(e.chips) * e.step.time / 3600.0 * plan.pricePerChipHour) + ")";
    why += ", MFU " + formatNumber(100.0 * e.mfu) + "%, " + formatBytes(e.memory.total, true) + " of "
           + formatBytes(e.memory.capacity, true) + ", " + e.bound + "-bound";
    if (e.run)
        why += ", " + formatNumber(e.run->days) + " days to train"
               + (e.run->cost > 0 ? " ($" + formatNumber(e.run->cost) + ")" : std::string());
    why += "; " + changeList(from, plan);
    return why;
}

std::string servingWhy(const Plan &from, const Plan &plan, const Evaluation &e)
{
    const double perChip = e.serving.steadyTokensPerS / double(e.chips);
    std::string why = formatSeconds(e.inference->decodeStepS) + " per token, " + formatNumber(perChip)
                      + " tokens/s per chip";
    if (e.serving.costPerMillionTokens > 0)
        why += ", $" + formatNumber(e.serving.costPerMillionTokens) + " per million tokens";
    return why + "; " + changeList(from, plan);
}

// ---- training ------------------------------------------------------------------------------

/// One degree combination with its placements and what its knobs range over.
struct Combo {
    RoleDegrees degrees{};
    std::vector<PlacementRequest> placements;
    std::vector<Placement> placed; ///< what each request places
    std::vector<std::pair<PipelineSchedule, int>> schedules; ///< with their virtual stages
    std::vector<int> microbatches;
    std::int64_t knobCount = 0;
    double minTime = kInf;   ///< no knob's step time is below (the compute alone, no bubble)
    double minMemory = kInf; ///< no knob's per-chip memory is below
};

/// A knob of a combination with its bounds and its position in the combination's enumeration.
struct BoundedKnobs {
    Knobs knobs;
    TrainingBounds bounds;
    std::int64_t index = 0;
    std::size_t layers = 0; ///< into the combination's layers, one per (sequence parallel, remat)
};

/// What the bounds of a combination's knobs share.
struct SharedBounds {
    std::vector<TrainingBound::Layers> layers;
};

class TrainingSearch
{
public:
    TrainingSearch(const Plan &plan, const SearchOptions &options, const SearchProgress &progress,
                   const std::atomic<bool> *cancel)
        : m_plan(plan)
        , m_options(options)
        , m_progress(progress)
        , m_cancel(cancel)
        , m_bound(plan, options.mode)
        , m_standings(options.top)
    {
    }

    Expected<SearchOutcome> run();

private:
    void enumerateCombos();
    /// Placements, knob ranges and the combination's bounds (before any evaluation).
    void prepare(Combo &combo) const;
    /// The knobs of a combination (numbered in a fixed order) with their bounds, less those
    /// `skip` drops (it sees each knob's bounds and number) and the groups of one microbatch
    /// count that `skipGroup` drops (it sees bounds below all of the group's, its first number
    /// and its size).
    template<class Skip, class SkipGroup>
    std::vector<BoundedKnobs> knobsOf(const Combo &combo, SharedBounds &shared, Skip skip, SkipGroup skipGroup) const;
    TrainingShape shape(const Combo &combo, const Knobs &k) const;
    /// Sets the plan's parallelism and remat policy to a candidate's (nothing else is copied).
    void apply(Plan &plan, const Combo &combo, const Knobs &k, std::size_t placement) const;
    Plan planFor(const Combo &combo, const Knobs &k, std::size_t placement) const;
    /// Searches one combination against the standings frozen at the start of its block.
    Counts searchCombo(const Combo &combo, std::int64_t comboIndex, std::vector<Found> &found) const;
    bool cancelled() const { return m_cancel && m_cancel->load(std::memory_order_relaxed); }
    double capacity() const { return double(m_plan.topology.chip().hbmBytes); }
    /// Whether sequence parallelism is a choice: not where the stack shards activations over
    /// the tensor axis anyway (both settings would evaluate alike).
    bool sequenceParallelIsAChoice() const
    {
        return m_options.mode == CostMode::Ideal
               || !shardsActivationsOverTensor(m_plan.topology.chip(), m_plan.training.stack);
    }

    const Plan &m_plan;
    const SearchOptions &m_options;
    const SearchProgress &m_progress;
    const std::atomic<bool> *m_cancel;
    TrainingBound m_bound;
    std::vector<RematPolicy> m_policies;
    std::vector<Combo> m_combos;
    Standings m_standings;
};

void TrainingSearch::enumerateCombos()
{
    const ModelSpec &m = m_plan.model;
    const TrainingSpec &t = m_plan.training;
    const std::int64_t chips = m_plan.topology.chipCount();
    for (int tensor : divisors(chips)) {
        if (m.heads % tensor != 0 || (m.kvHeads % tensor != 0 && tensor % m.kvHeads != 0))
            continue;
        for (int pipeline : divisors(chips / tensor)) {
            if (pipeline > m.layers)
                continue;
            for (int expert : divisors(chips / tensor / pipeline)) {
                if (m.moe ? m.moe->experts % expert != 0 : expert != 1)
                    continue;
                for (int context : divisors(chips / tensor / pipeline / expert)) {
                    if (t.seqLen % context != 0)
                        continue;
                    const std::int64_t rest = chips / tensor / pipeline / expert / context;
                    for (int fsdp : divisors(rest)) {
                        const int data = static_cast<int>(rest / fsdp);
                        if (t.globalBatch % (std::int64_t(data) * fsdp * expert) != 0)
                            continue;
                        Combo c;
                        c.degrees[idx(Role::Data)] = data;
                        c.degrees[idx(Role::Fsdp)] = fsdp;
                        c.degrees[idx(Role::Tensor)] = tensor;
                        c.degrees[idx(Role::Pipeline)] = pipeline;
                        c.degrees[idx(Role::Expert)] = expert;
                        c.degrees[idx(Role::Context)] = context;
                        m_combos.push_back(std::move(c));
                    }
                }
            }
        }
    }
}

TrainingShape TrainingSearch::shape(const Combo &combo, const Knobs &k) const
{
    TrainingShape s;
    s.degrees = combo.degrees;
    s.sequenceParallel = k.sequenceParallel;
    s.zeroStage = k.zeroStage;
    s.microbatches = k.microbatches;
    s.schedule = k.schedule;
    s.virtualStages = k.virtualStages;
    s.remat = &m_policies[static_cast<std::size_t>(k.remat)];
    return s;
}

void TrainingSearch::prepare(Combo &combo) const
{
    const auto degree = [&](Role r) { return combo.degrees[idx(r)]; };
    combo.placements = placementChoices(m_plan.topology, combo.degrees);
    for (const PlacementRequest &request : combo.placements)
        combo.placed.push_back(placeRoles(m_plan.topology, combo.degrees, request).value());
    if (combo.placements.empty())
        return;
    const int pipeline = degree(Role::Pipeline);
    const std::int64_t perReplica =
        m_plan.training.globalBatch / (std::int64_t(degree(Role::Data)) * degree(Role::Fsdp) * degree(Role::Expert));
    if (pipeline == 1) {
        combo.schedules.emplace_back(PipelineSchedule::OneFOneB, 1); // no bubble, one microbatch in flight
    } else {
        combo.schedules.emplace_back(PipelineSchedule::GPipe, 1);
        combo.schedules.emplace_back(PipelineSchedule::OneFOneB, 1);
        for (int v = 2; v <= kMaxVirtualStages && pipeline * v <= m_plan.model.layers; ++v)
            combo.schedules.emplace_back(PipelineSchedule::Interleaved1F1B, v);
        combo.schedules.emplace_back(PipelineSchedule::ZeroBubble, 1);
        if (pipeline % 2 == 0)
            combo.schedules.emplace_back(PipelineSchedule::DualPipe, 1);
    }
    combo.microbatches = divisors(perReplica);
    const bool sp = degree(Role::Tensor) > 1;
    const int zeroStages = zeroShardsAny(degree(Role::Data), degree(Role::Context), degree(Role::Expert)) ? 4 : 1;
    std::int64_t pairs = 0; // (schedule, microbatches)
    for (const auto &schedule : combo.schedules)
        for (int mb : combo.microbatches)
            pairs += schedule.first != PipelineSchedule::DualPipe || mb % 2 == 0;
    combo.knobCount = (sp && sequenceParallelIsAChoice() ? 2 : 1) * zeroStages * pairs
                      * static_cast<std::int64_t>(m_policies.size());

    // The combination's corner: no knob is faster than its compute at one microbatch (fewer,
    // larger microbatches never cost more FLOPs or HBM time) without a bubble, or uses less
    // memory than the most sharded, most microbatched 1F1B knob with the best remat policy.
    for (std::size_t r = 0; r < m_policies.size(); ++r) {
        Knobs k{sp, zeroStages - 1, PipelineSchedule::OneFOneB, 1, 1, static_cast<int>(r)};
        TrainingShape s = shape(combo, k);
        const TrainingBound::Layers layers = m_bound.layers(s);
        combo.minTime = std::min(combo.minTime, m_bound.bounds(s, layers).computeS);
        if (pipeline % 2 == 0) { // a DualPipe rank averages its two stages
            s.schedule = PipelineSchedule::DualPipe;
            combo.minTime = std::min(combo.minTime, m_bound.bounds(s, layers).computeS);
            s.schedule = PipelineSchedule::OneFOneB;
        }
        s.microbatches = combo.microbatches.back();
        combo.minMemory = std::min(combo.minMemory, m_bound.bounds(s, layers).memory);
    }
}

template<class Skip, class SkipGroup>
std::vector<BoundedKnobs> TrainingSearch::knobsOf(const Combo &combo, SharedBounds &shared, Skip skip,
                                                  SkipGroup skipGroup) const
{
    std::vector<BoundedKnobs> out;
    const bool tensor = combo.degrees[idx(Role::Tensor)] > 1;
    const int zeroStages =
        zeroShardsAny(combo.degrees[idx(Role::Data)], combo.degrees[idx(Role::Context)], combo.degrees[idx(Role::Expert)])
            ? 4
            : 1;
    std::int64_t index = 0;
    const double pp = combo.degrees[idx(Role::Pipeline)];
    for (int sp = tensor && !sequenceParallelIsAChoice() ? 1 : 0; sp <= (tensor ? 1 : 0); ++sp)
        for (std::size_t r = 0; r < m_policies.size(); ++r) {
            Knobs k{sp == 1, 0, PipelineSchedule::OneFOneB, 1, 1, static_cast<int>(r)};
            shared.layers.push_back(m_bound.layers(shape(combo, k)));
            const TrainingBound::Layers &layers = shared.layers.back();
            for (int mb : combo.microbatches) {
                k.microbatches = mb;
                const TrainingBound::Microbatch micro = m_bound.microbatch(shape(combo, k), layers);
                // The group of this microbatch count: no knob of it is faster than its compute
                // without a bubble, or uses less memory than its most sharded 1F1B knob.
                std::int64_t size = 0;
                for (const auto &schedule : combo.schedules)
                    size += schedule.first != PipelineSchedule::DualPipe || mb % 2 == 0 ? zeroStages : 0;
                k.zeroStage = zeroStages - 1;
                k.schedule = PipelineSchedule::OneFOneB;
                k.virtualStages = 1;
                TrainingBounds corner = m_bound.bounds(shape(combo, k), layers, micro);
                corner.stepTimeS = mb * std::min(micro.busiest, pp > 1 && mb % 2 == 0 ? micro.busiestDual : micro.busiest)
                                   * (1.0 - 1e-9);
                if (skipGroup(corner, index, size)) {
                    index += size;
                    continue;
                }
                for (const auto &[schedule, virtualStages] : combo.schedules) {
                    if (schedule == PipelineSchedule::DualPipe && mb % 2 != 0)
                        continue;
                    for (int zero = 0; zero < zeroStages; ++zero) {
                        k.zeroStage = zero;
                        k.schedule = schedule;
                        k.virtualStages = virtualStages;
                        const TrainingBounds b = m_bound.bounds(shape(combo, k), layers, micro);
                        if (!skip(b, index))
                            out.push_back({k, b, index, shared.layers.size() - 1});
                        ++index;
                    }
                }
            }
        }
    return out;
}

void TrainingSearch::apply(Plan &p, const Combo &combo, const Knobs &k, std::size_t placement) const
{
    ParallelismSpec &par = p.parallelism;
    par.degrees = combo.degrees;
    par.placement = combo.placements[placement];
    par.zeroStage = k.zeroStage;
    par.sequenceParallel = k.sequenceParallel;
    par.schedule = k.schedule;
    par.virtualStages = k.virtualStages;
    par.microbatches = k.microbatches;
    p.training.remat = m_policies[static_cast<std::size_t>(k.remat)];
}

Plan TrainingSearch::planFor(const Combo &combo, const Knobs &k, std::size_t placement) const
{
    Plan p = m_plan;
    apply(p, combo, k, placement);
    if (titleFollowsPlan(m_plan))
        p.title = generatedTitle(p);
    return p;
}

Counts TrainingSearch::searchCombo(const Combo &combo, std::int64_t comboIndex, std::vector<Found> &found) const
{
    Counts counts;
    const auto placements = static_cast<std::int64_t>(combo.placements.size());
    Standings local = m_standings.bar(); // frozen for the block, plus what this combination finds
    // Knobs over the chip's memory whatever the placement are counted, not evaluated; so are
    // those the standings frozen for the block already exclude.
    const double limit = capacity();
    SharedBounds shared;
    std::vector<BoundedKnobs> knobs = knobsOf(combo, shared, [&](const TrainingBounds &b, std::int64_t i) {
        if (b.memory > limit) {
            counts.doesNotFit += placements;
            counts.pruned += placements;
            return true;
        }
        if (local.excludes(b.stepTimeS, b.memory, b.stepTimeS, Key{comboIndex, i, 0})) {
            counts.pruned += placements;
            return true;
        }
        return false;
    }, [&](const TrainingBounds &b, std::int64_t first, std::int64_t size) {
        if (b.memory <= limit && !local.excludes(b.stepTimeS, b.memory, b.stepTimeS, Key{comboIndex, first, 0}))
            return false;
        counts.pruned += placements * size;
        if (b.memory > limit)
            counts.doesNotFit += placements * size;
        return true;
    });
    // Most promising first, so that the standings tighten early.
    std::sort(knobs.begin(), knobs.end(), [](const BoundedKnobs &a, const BoundedKnobs &b) {
        return a.bounds.stepTimeS != b.bounds.stepTimeS ? a.bounds.stepTimeS < b.bounds.stepTimeS : a.index < b.index;
    });
    Plan plan = m_plan;
    std::vector<std::pair<double, std::int64_t>> hidden(static_cast<std::size_t>(placements));
    std::map<std::pair<bool, int>, std::vector<TrainingBound::LinkTimes>> linkTimes;
    for (std::size_t n = 0; n < knobs.size(); ++n) {
        if (cancelled()) {
            counts.pruned += placements * static_cast<std::int64_t>(knobs.size() - n);
            break;
        }
        const Knobs &k = knobs[n].knobs;
        const TrainingBounds &b = knobs[n].bounds;
        const std::int64_t i = knobs[n].index;
        if (local.excludes(b.stepTimeS, b.memory, b.stepTimeS, Key{comboIndex, i, 0})) {
            counts.pruned += placements;
            continue;
        }
        // Communication no schedule hides, per placement: the most promising placement first.
        const TrainingShape s = shape(combo, k);
        std::vector<TrainingBound::LinkTimes> &times = linkTimes[{k.sequenceParallel, k.microbatches}];
        if (times.empty())
            for (const Placement &placed : combo.placed)
                times.push_back(m_bound.linkTimes(s, placed));
        const TrainingBound::Layers &layers = shared.layers[knobs[n].layers];
        constexpr double kUnknown = std::numeric_limits<double>::infinity();
        for (std::int64_t p = 0; p < placements; ++p)
            hidden[static_cast<std::size_t>(p)] = {
                m_bound.exposedCommunication(s, layers, times[static_cast<std::size_t>(p)], kUnknown), p};
        std::sort(hidden.begin(), hidden.end());
        if (local.excludes(b.stepTimeS + hidden.front().first, b.memory, b.stepTimeS + hidden.front().first,
                           Key{comboIndex, i, 0})) {
            counts.pruned += placements;
            continue;
        }
        // Memory and the step's compute, bubble and optimizer do not depend on the placement:
        // the first placement's evaluation gives them for the others.
        double floor = b.stepTimeS;
        double memory = b.memory;
        std::int64_t handled = 0; // placements of this knob pruned or evaluated so far
        double stageLimit = kUnknown; // the busiest stage's time per microbatch, once evaluated
        for (const auto &[unhidden, p] : hidden) {
            ++handled;
            const double exposed = std::isinf(stageLimit)
                                       ? unhidden
                                       : m_bound.exposedCommunication(s, layers, times[static_cast<std::size_t>(p)], stageLimit);
            if (local.excludes(floor + exposed, memory, floor + exposed, Key{comboIndex, i, p})) {
                counts.pruned += 1;
                continue;
            }
            apply(plan, combo, k, static_cast<std::size_t>(p));
            const auto e = evaluate(plan, m_options.mode);
            ++counts.evaluated;
            if (!e) {
                ++counts.rejected;
                continue;
            }
            if (!e->memory.fits) {
                // The same memory on every placement: none of them fits (and only the first
                // placement evaluated can find that out).
                counts.doesNotFit += 1 + placements - handled;
                counts.pruned += placements - handled;
                break;
            }
            ++counts.fits;
            // What hidden collectives take from compute depends on the placement too.
            floor = e->step.time - e->step.exposedCommunication - e->step.overlapInterference;
            memory = e->memory.total;
            stageLimit = e->step.compute / k.microbatches;
            Found f;
            f.objective = e->step.time;
            f.memory = e->memory.total;
            f.time = e->step.time;
            f.key = Key{comboIndex, i, p};
            f.knobs = k;
            local.add(f);
            found.push_back(f);
        }
    }
    return counts;
}

Expected<SearchOutcome> TrainingSearch::run()
{
    const auto start = std::chrono::steady_clock::now();
    if (auto error = objectiveError(m_plan, m_options.objective))
        return *error;
    for (std::string_view name : rematPolicyChoices()) {
        auto policy = rematPolicyFromJson(json(std::string(name)), "workload.remat");
        if (!policy)
            continue;
        if (!policy->offloaded.empty() && !(m_plan.topology.chip().pcieBandwidth > 0))
            continue; // nowhere to offload to: the cost model refuses these
        m_policies.push_back(policy.value());
    }
    enumerateCombos();
    const unsigned threads = threadCount(m_options.threads);
    {
        std::atomic<std::size_t> next{0};
        onThreads(threads, [&] {
            for (std::size_t i = next++; i < m_combos.size(); i = next++)
                prepare(m_combos[i]);
        });
    }

    SearchOutcome out;
    out.objective = m_options.objective;
    Counts total;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < m_combos.size(); ++i) {
        const Combo &c = m_combos[i];
        const std::int64_t size = static_cast<std::int64_t>(c.placements.size()) * c.knobCount;
        out.space.size += size;
        if (size == 0)
            continue;
        if (c.minMemory > capacity()) {
            // Over the chip's memory whatever the knobs and the placement: counted, not evaluated.
            total.doesNotFit += size;
            total.pruned += size;
            continue;
        }
        order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return m_combos[a].minTime != m_combos[b].minTime ? m_combos[a].minTime < m_combos[b].minTime : a < b;
    });

    std::size_t begin = 0;
    std::size_t end = std::min(kBlock, order.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::vector<Found>> found(kBlock);
    std::vector<Counts> counts(kBlock);
    bool finished = order.empty();
    std::string failure;
    const auto merge = [&]() noexcept {
        try {
            for (std::size_t i = begin; i < end; ++i) {
                const std::size_t slot = i - begin;
                total.add(counts[slot]);
                for (const Found &f : found[slot])
                    m_standings.add(f);
                found[slot].clear();
                counts[slot] = {};
            }
            m_standings.compact();
            if (m_progress)
                m_progress(total.evaluated + total.pruned, out.space.size);
        } catch (const std::exception &e) {
            failure = e.what();
        }
        begin = end;
        end = std::min(begin + kBlock, order.size());
        next = begin;
        if (begin >= order.size() || !failure.empty())
            finished = true;
        if (cancelled()) {
            out.cancelled = true;
            finished = true;
        }
    };
    std::barrier sync(static_cast<std::ptrdiff_t>(threads), merge);
    const auto worker = [&] {
        while (!finished) {
            for (std::size_t i = next++; i < end; i = next++) {
                const std::size_t c = order[i];
                const Combo &combo = m_combos[c];
                // A combination whose best corner already loses is skipped whole.
                if (m_standings.excludes(combo.minTime, combo.minMemory, combo.minTime,
                                         Key{static_cast<std::int64_t>(c), 0, 0})) {
                    counts[i - begin].pruned += static_cast<std::int64_t>(combo.placements.size()) * combo.knobCount;
                    continue;
                }
                counts[i - begin] = searchCombo(combo, static_cast<std::int64_t>(c), found[i - begin]);
            }
            sync.arrive_and_wait();
        }
    };
    if (!finished) {
        next = 0;
        onThreads(threads, worker);
    }
    if (!failure.empty())
        return Error{"", "the search failed: " + failure};
    out.space.evaluated = total.evaluated;
    out.space.pruned = total.pruned;
    out.space.fits = total.fits;
    out.space.doesNotFit = total.doesNotFit;
    out.space.rejected = total.rejected;

    const auto base = evaluate(m_plan, m_options.mode);
    const auto candidate = [&](const Found &f) -> SearchCandidate {
        const Combo &combo = m_combos[static_cast<std::size_t>(f.key[0])];
        SearchCandidate c;
        c.plan = planFor(combo, f.knobs, static_cast<std::size_t>(f.key[2]));
        c.evaluation = evaluate(c.plan, m_options.mode).value();
        c.why = trainingWhy(m_plan, base, c.plan, c.evaluation);
        return c;
    };
    for (const Found &f : m_standings.best())
        out.results.push_back(candidate(f));
    for (const Found &f : frontOf(m_standings.kept()))
        out.pareto.push_back(candidate(f));
    out.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

// ---- serving -------------------------------------------------------------------------------

/// The deployments tried: the plan's own mesh, then TPU slices growing the smallest axis first
/// (1x1, 2x1, 2x2, ...) or GPU nodes of 1, 2, 4, ... GPUs and then whole NVLink domains, up to
/// `maxChips`.
std::vector<Topology> servingTopologies(const Plan &plan, std::int64_t maxChips)
{
    std::vector<Topology> out;
    const auto add = [&](Expected<Topology> t) {
        if (!t || t->chipCount() > maxChips)
            return;
        for (const Topology &have : out)
            if (have.describe() == t->describe())
                return;
        out.push_back(std::move(t).value());
    };
    add(plan.topology);
    const Chip &chip = plan.topology.chip();
    if (chip.isTpu()) {
        for (const std::vector<int> &shape : tpuSliceShapes(chip, maxChips))
            add(Topology::tpuSlice(chip, shape, 1));
    } else {
        const int domain = chip.nvlink->domainSize;
        for (int g = 1; g <= domain; g *= 2)
            add(Topology::gpuCluster(chip, 1, g));
        add(Topology::gpuCluster(chip, 1, domain));
        for (std::int64_t n = 2; n * domain <= maxChips && n <= 1024; n *= 2)
            add(Topology::gpuCluster(chip, static_cast<int>(n), domain));
    }
    return out;
}

Expected<SearchOutcome> searchServing(const Plan &plan, const SearchOptions &options, const SearchProgress &progress,
                                      const std::atomic<bool> *cancel)
{
    const auto start = std::chrono::steady_clock::now();
    if (auto error = objectiveError(plan, options.objective))
        return *error;
    const double latency = options.latencyTargetS > 0 ? options.latencyTargetS : plan.inference.latencyTargetS;
    const std::int64_t maxChips = options.maxChips > 0 ? options.maxChips : plan.topology.chipCount();
    const ModelSpec &m = plan.model;
    std::vector<Plan> candidates;
    for (const Topology &topology : servingTopologies(plan, maxChips)) {
        Plan p = plan;
        setTopology(p, topology);
        const std::int64_t chips = topology.chipCount();
        for (int tensor : divisors(chips)) {
            if (m.heads % tensor != 0)
                continue;
            for (int expert : divisors(chips / tensor)) {
                if (m.moe ? m.moe->experts % expert != 0 : expert != 1)
                    continue;
                const auto data = static_cast<int>(chips / tensor / expert);
                p.parallelism = ParallelismSpec{};
                // The dispatch is a serving choice (the cost reads it); keep what the plan asked.
                p.parallelism.expertDispatch = plan.parallelism.expertDispatch;
                p.parallelism.degrees[idx(Role::Data)] = data;
                p.parallelism.degrees[idx(Role::Tensor)] = tensor;
                p.parallelism.degrees[idx(Role::Expert)] = expert;
                // The largest batch that fits this layout bounds the batches tried.
                p.inference.serving = Serving::Interleaved;
                p.inference.prefillChips = 0;
                p.inference.batch = data;
                const auto probe = evaluate(p, options.mode);
                if (!probe)
                    continue;
                const auto largest = std::max<std::int64_t>(static_cast<std::int64_t>(probe->serving.maxBatch), data);
                std::vector<std::int64_t> prefillReplicas{0};
                for (std::int64_t k = 1; k < data; k *= 2)
                    prefillReplicas.push_back(k);
                for (std::int64_t prefill : prefillReplicas)
                    for (std::int64_t b : batchLadder(largest)) {
                        if (b < data - prefill)
                            continue;
                        p.inference.serving = prefill > 0 ? Serving::Disaggregated : Serving::Interleaved;
                        p.inference.prefillChips = prefill * tensor * expert;
                        p.inference.batch = b;
                        if (titleFollowsPlan(plan))
                            p.title = generatedTitle(p);
                        candidates.push_back(p);
                    }
            }
        }
    }
    SearchOutcome out;
    out.objective = options.objective;
    out.space.size = static_cast<std::int64_t>(candidates.size());
    std::vector<std::optional<Evaluation>> evaluations(candidates.size());
    const unsigned threads = threadCount(options.threads);
    std::vector<char> tried(candidates.size(), 0);
    std::atomic<std::size_t> next{0};
    std::atomic<std::int64_t> done{0};
    const auto loop = [&] {
        for (std::size_t i = next++; i < candidates.size(); i = next++) {
            if (cancel && cancel->load(std::memory_order_relaxed))
                return;
            auto e = evaluate(candidates[i], options.mode);
            if (e)
                evaluations[i] = std::move(e).value();
            tried[i] = 1;
            const auto n = ++done;
            if (progress && n % 64 == 0)
                progress(n, out.space.size);
        }
    };
    onThreads(threads, loop);
    out.cancelled = cancel && cancel->load();

    Standings standings(options.top);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (!tried[i]) { // not reached before the cancel
            ++out.space.pruned;
            continue;
        }
        ++out.space.evaluated;
        const auto &e = evaluations[i];
        if (!e) {
            ++out.space.rejected;
            continue;
        }
        if (!e->memory.fits) {
            ++out.space.doesNotFit;
            continue;
        }
        ++out.space.fits;
        const double perChip = e->serving.steadyTokensPerS / double(e->chips);
        Found f;
        f.key = Key{static_cast<std::int64_t>(i), 0, 0};
        f.memory = e->inference->decodeStepS;
        f.time = -perChip;
        f.objective = options.objective == SearchObjective::Cost ? e->serving.costPerMillionTokens : -perChip;
        if (latency > 0 && e->inference->decodeStepS > latency) {
            // Outside the latency target: on the front (latency against throughput), not ranked.
            f.objective = kInf;
        }
        standings.add(f);
    }
    const auto candidate = [&](const Found &f) {
        SearchCandidate c;
        c.plan = candidates[static_cast<std::size_t>(f.key[0])];
        c.evaluation = *evaluations[static_cast<std::size_t>(f.key[0])];
        c.why = servingWhy(plan, c.plan, c.evaluation);
        return c;
    };
    for (const Found &f : standings.best())
        if (std::isfinite(f.objective))
            out.results.push_back(candidate(f));
    for (const Found &f : frontOf(standings.kept()))
        out.pareto.push_back(candidate(f));
    out.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

} // namespace

Expected<SearchOutcome> searchPlans(const Plan &plan, const SearchOptions &options, const SearchProgress &progress,
                                    const std::atomic<bool> *cancel)
{
    if (options.top < 1)
        return Error{"top", "must be at least 1"};
    if (options.maxChips < 0 || options.maxChips > kMaxChips)
        return Error{"max_chips", "must be from 1 to " + std::to_string(kMaxChips)};
    if (options.latencyTargetS < 0 || !std::isfinite(options.latencyTargetS))
        return Error{"latency", "must be a positive number of seconds"};
    try {
        if (plan.kind == WorkloadKind::Inference)
            return searchServing(plan, options, progress, cancel);
        TrainingSearch search(plan, options, progress, cancel);
        return search.run();
    } catch (const std::exception &e) {
        return Error{"", std::string("the search failed: ") + e.what()};
    }
}

json searchToJson(const SearchOutcome &outcome, bool training)
{
    const auto entry = [&](const SearchCandidate &c) {
        return json{{"plan", planToJson(c.plan)}, {"result", evaluationToJson(c.evaluation, training)}, {"why", c.why}};
    };
    json results = json::array();
    for (std::size_t i = 0; i < outcome.results.size(); ++i) {
        json r = entry(outcome.results[i]);
        r["rank"] = i + 1;
        results.push_back(r);
    }
    json pareto = json::array();
    for (const auto &c : outcome.pareto)
        pareto.push_back(entry(c));
    const SearchSpace &s = outcome.space;
    return {{"format", "meshplan/search"},
            {"version", 1},
            {"objective", objectiveName(outcome.objective)},
            {"space",
             {{"size", s.size},
              {"evaluated", s.evaluated},
              {"pruned", s.pruned},
              {"fits", s.fits},
              {"does_not_fit", s.doesNotFit},
              {"rejected", s.rejected}}},
            {"elapsed_s", outcome.elapsedS},
            {"plans_per_s", outcome.elapsedS > 0 ? double(s.size) / outcome.elapsedS : 0.0},
            {"cancelled", outcome.cancelled},
            {"results", results},
            {"pareto", pareto}};
}

} // namespace meshplan::model
