// The plan search's speed (issue 17): the whole space of LLaMA-3 405B on 16,384 H100s (8,192-token
// sequences, a 16M-token batch of 2,048 sequences), and plans considered per second. Run:
// build/tests/bench/meshplan_bench_search. Figures from this machine are in README's "Search".
#include "explore/plansearch.h"
#include "hardware/chipcatalog.h"
#include "transformer/modelcatalog.h"

#include <benchmark/benchmark.h>

using namespace meshplan::model;

namespace {

Plan llama405bOn16kH100()
{
    const nlohmann::json doc = {
        {"format", "meshplan/plan"},
        {"version", 1},
        {"model", "llama-3-405b"},
        {"hardware", {{"chip", "h100-sxm"}, {"topology", {{"nodes", 2048}, {"gpus_per_node", 8}}}}},
        {"parallelism",
         {{"tensor", 8}, {"pipeline", 16}, {"data", 128}, {"zero_stage", 1}, {"microbatches", 16},
          {"pipeline_schedule", "interleaved-1f1b"}, {"virtual_stages", 4}, {"sequence_parallel", true}}},
        {"workload", {{"kind", "training"}, {"seq_len", 8192}, {"global_batch", 2048}, {"remat", "full"}}}};
    return planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin()).value();
}

void report(benchmark::State &state, const SearchOutcome &o)
{
    state.counters["space"] = double(o.space.size);
    state.counters["evaluated"] = double(o.space.evaluated);
    state.counters["pruned"] = double(o.space.pruned);
    state.counters["fits"] = double(o.space.fits);
    state.counters["does_not_fit"] = double(o.space.doesNotFit);
    state.counters["elapsed_s"] = o.elapsedS;
    state.counters["plans_per_s"] = double(o.space.size) / o.elapsedS;
    state.counters["best_step_s"] = o.results.empty() ? 0.0 : o.results.front().evaluation.step.time;
}

} // namespace

// The whole space with every hardware thread (the target: under 2 s on 2 cores, at least
// a million plans considered per second).
static void BM_SearchLlama405bOn16kH100(benchmark::State &state)
{
    const Plan plan = llama405bOn16kH100();
    SearchOptions options;
    options.threads = static_cast<int>(state.range(0));
    SearchOutcome last;
    for (auto _ : state)
        last = searchPlans(plan, options).value();
    report(state, last);
}
BENCHMARK(BM_SearchLlama405bOn16kH100)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// The smaller default plan (LLaMA-3 70B on a TPU v5p pod): a 3D torus with interchangeable axes.
static void BM_SearchDefaultPlan(benchmark::State &state)
{
    const Plan plan = defaultPlan();
    SearchOptions options;
    options.threads = 2;
    SearchOutcome last;
    for (auto _ : state)
        last = searchPlans(plan, options).value();
    report(state, last);
}
BENCHMARK(BM_SearchDefaultPlan)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

BENCHMARK_MAIN();
