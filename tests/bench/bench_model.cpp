// Microbenchmarks of the model's building blocks (Google Benchmark).
#include "calculator.h"
#include "chipcatalog.h"
#include "collective.h"
#include "shardedmatmul.h"

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

BENCHMARK_MAIN();
