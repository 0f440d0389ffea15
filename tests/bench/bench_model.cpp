// Microbenchmarks of the model's building blocks (Google Benchmark).
#include "cost/calculator.h"
#include "cost/evaluation.h"
#include "cost/shardedmatmul.h"
#include "hardware/chipcatalog.h"
#include "hardware/collective.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <benchmark/benchmark.h>

using namespace meshplan::model;

static void BM_CollectiveOnTpuPod(benchmark::State &state)
{
    const auto t = Topology::tpuSlice(*ChipCatalog::builtin().find("tpu-v5p"), {16, 20, 28}, 2).value();
    const auto spans = wholeAxes(t, {"x", "y", "z", "slice"}, "axes").value();
    double v = 1e9;
    for (auto _ : state) {
        benchmark::DoNotOptimize(collectiveCost(t, CollectiveOp::AllReduce, spans, v));
        v += 1;
    }
}
BENCHMARK(BM_CollectiveOnTpuPod);

static void BM_CollectiveOnGpuCluster(benchmark::State &state)
{
    const auto t = Topology::gpuCluster(*ChipCatalog::builtin().find("h100-sxm"), 2048, 8).value();
    const auto spans = wholeAxes(t, {"gpu", "node"}, "axes").value();
    double v = 1e9;
    for (auto _ : state) {
        benchmark::DoNotOptimize(collectiveCost(t, CollectiveOp::AllGather, spans, v));
        v += 1;
    }
}
BENCHMARK(BM_CollectiveOnGpuCluster);

static void BM_ShardedMatmul(benchmark::State &state)
{
    const auto t = Topology::tpuSlice(*ChipCatalog::builtin().find("tpu-v5e"), {16, 16}, 1).value();
    const auto e = parseMatmul("A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]").value();
    const std::map<std::string, std::int64_t> dims{{"I", 4096}, {"J", 8192}, {"K", 8192}};
    for (auto _ : state)
        benchmark::DoNotOptimize(analyzeMatmul(t, e, dims, DType::Bf16));
}
BENCHMARK(BM_ShardedMatmul);

// A plan from the parts a plan file gives: a catalog model, the hardware, the parallelism and the
// workload.
static Plan planOf(const char *model, nlohmann::json hardware, nlohmann::json parallelism, nlohmann::json workload)
{
    const nlohmann::json doc = {{"format", "meshplan/plan"},     {"version", 1},
                                {"model", model},                {"hardware", std::move(hardware)},
                                {"parallelism", std::move(parallelism)}, {"workload", std::move(workload)}};
    return planFromJson(doc, ChipCatalog::builtin(), ModelCatalog::builtin()).value();
}

// One evaluation of `plan` per iteration.
static void evaluateEachIteration(benchmark::State &state, const Plan &plan)
{
    for (auto _ : state)
        benchmark::DoNotOptimize(evaluate(plan));
}

static nlohmann::json h100Nodes(int nodes)
{
    return {{"chip", "h100-sxm"}, {"topology", {{"nodes", nodes}, {"gpus_per_node", 8}}}};
}

// The target: one full evaluation of LLaMA-3 405B on 16,384 H100s (TP 8 x PP 16 x DP 128,
// every layer, every collective) in under 5 us median on one core.
static void BM_EvaluateLlama405bOn16kH100(benchmark::State &state)
{
    evaluateEachIteration(state, planOf("llama-3-405b", h100Nodes(2048),
                                        {{"tensor", 8}, {"pipeline", 16}, {"data", 128}, {"zero_stage", 1},
                                         {"microbatches", 16}, {"pipeline_schedule", "interleaved-1f1b"},
                                         {"virtual_stages", 4}, {"sequence_parallel", true}},
                                        {{"kind", "training"}, {"seq_len", 8192}, {"global_batch", 2048},
                                         {"remat", "selective"}}));
}
BENCHMARK(BM_EvaluateLlama405bOn16kH100)->Repetitions(5)->ReportAggregatesOnly(true);

// An MoE step: DeepSeek-V3 (latent attention, 256 routed experts) on 2,048 H100s, expert 64 x
// pipeline 16 x data 2 in fp8 (the book's ch. 12 layout): routed and shared experts and the expert
// all-to-alls on top of everything the dense step prices.
static void BM_EvaluateDeepSeekV3On2kH100(benchmark::State &state)
{
    evaluateEachIteration(state, planOf("deepseek-v3", h100Nodes(256),
                                        {{"expert", 64}, {"pipeline", 16}, {"data", 2}, {"zero_stage", 1},
                                         {"microbatches", 32}},
                                        {{"kind", "training"}, {"seq_len", 4096}, {"global_batch", 4096},
                                         {"compute_dtype", "fp8"}, {"remat", "selective"}}));
}
BENCHMARK(BM_EvaluateDeepSeekV3On2kH100);

// A long-context step under a stack: LLaMA-3 8B at 262,144 tokens on 8 H100s, torchtitan's context
// ring over all 8 (gathered once, fp32 gradient sends, eager merges), full remat stopping early.
static void BM_EvaluateLongContextTorchtitan(benchmark::State &state)
{
    evaluateEachIteration(state, planOf("llama-3-8b", h100Nodes(1), {{"context", 8}, {"zero_stage", 3}},
                                        {{"kind", "training"}, {"seq_len", 262144}, {"global_batch", 1},
                                         {"remat", "full"}, {"stack", "torchtitan"}}));
}
BENCHMARK(BM_EvaluateLongContextTorchtitan);

static void BM_EvaluateDefaultPlan(benchmark::State &state)
{
    evaluateEachIteration(state, defaultPlan());
}
BENCHMARK(BM_EvaluateDefaultPlan);

// LLaMA-3 70B on 4 H100s at TP 4, fp8 weights and KV cache, serving `batch` sequences of `prompt`
// tokens in and `generate` out.
static Plan servingPlan(std::int64_t batch, std::int64_t prompt, std::int64_t generate)
{
    return planOf("llama-3-70b", {{"chip", "h100-sxm"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 4}}}},
                  {{"tensor", 4}},
                  {{"kind", "inference"}, {"batch", batch}, {"prompt_len", prompt}, {"generate_len", generate},
                   {"weight_dtype", "fp8"}, {"kv_dtype", "fp8"}});
}

// A serving evaluation at batch 64, 2k in / 512 out (prefill, the mean and first decode steps with
// their decode-attention and matmul-shape terms, memory, the largest batch). The target
// holds here too: under 5 us.
static void BM_EvaluateServingPlan(benchmark::State &state)
{
    evaluateEachIteration(state, servingPlan(64, 2048, 512));
}
BENCHMARK(BM_EvaluateServingPlan);

// The same deployment at batch 4, 128 in / 128 out: a small batch's decode attention is read off
// the blend of the single-request and batched kernels and held no slower than any larger count up
// to 16 (DecodeAttentionCurve::share), the most curve reads an evaluation makes.
static void BM_EvaluateServingPlanSmallBatch(benchmark::State &state)
{
    evaluateEachIteration(state, servingPlan(4, 128, 128));
}
BENCHMARK(BM_EvaluateServingPlanSmallBatch);

// The same evaluation with every derivation recorded (meshplan-cli evaluate --explain, the explain
// panel): the formulas' strings cost far more than the arithmetic, which is why they are only
// built on request and BM_EvaluateDefaultPlan pays nothing for them.
static void BM_EvaluateDefaultPlanExplained(benchmark::State &state)
{
    const Plan plan = defaultPlan();
    std::size_t count = 0;
    for (auto _ : state) {
        Derivations derivations;
        benchmark::DoNotOptimize(evaluate(plan, CostMode::Achievable, &derivations));
        count = derivations.size();
    }
    state.counters["derivations"] = double(count);
}
BENCHMARK(BM_EvaluateDefaultPlanExplained);

BENCHMARK_MAIN();
