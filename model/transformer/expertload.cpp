#include "transformer/expertload.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

namespace {

// What is left of the experts' uneven popularity once EPLB has placed them by load: a rank's
// relative load spread (its standard deviation over the mean) beyond sampling. From the one
// public table that gives a placement's per-rank statistics, TensorRT-LLM's wide-EP blog
// (NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md,
// Table 1; also examples/wide_ep/ep_load_balancer/README.md): DeepSeek-R1 decode on 32 GB200,
// 1,024 routed pairs per rank, with EPLB over 288 slots the busiest rank carries 1.109x the mean.
// Its spread, 0.109 / z(32) = 0.0527, less the sampling term at that load (0.0308), leaves 0.0427.
// The table's own per-rank standard deviations agree: 52.0 / 1024 = 0.0508 (EP32) and 53.9 / 1024
// = 0.0526 (EP36) against 0.0526 and 0.0527 here.
// Without EPLB the same table shows 2.56x: not modelled, since every large-EP deployment in the
// stacks Meshplan names balances its experts (DeepSeek-V3 report sec. 3.4; SGLang; TensorRT-LLM).
constexpr double kPlacedLoadSpread = 0.0427;

// The inverse of the standard normal CDF for an upper tail q < 0.5 (Abramowitz & Stegun
// 26.2.23, |error| < 4.5e-4).
double upperTailQuantile(double q)
{
    const double t = std::sqrt(-2.0 * std::log(q));
    return t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

} // namespace

double expectedMaxStandardNormal(int draws)
{
    if (draws <= 1)
        return 0.0;
    const double n = draws;
    return upperTailQuantile(1.0 - (n - 0.375) / (n + 0.25));
}

double placedExpertLoadSpread()
{
    return kPlacedLoadSpread;
}

double busiestExpertRankLoad(int ranks, double routedPerRank)
{
    if (ranks <= 1 || !(routedPerRank > 0))
        return 1.0;
    // Sampling: with load-placed experts each routed pair lands on a rank with probability 1/R,
    // so a rank's count is binomial, its relative variance (1 - 1/R) / n. The residual placement
    // spread adds to it; the busiest of R ranks sits z(R) spreads above the mean.
    const double sampling = (1.0 - 1.0 / ranks) / std::max(1.0, routedPerRank);
    return 1.0 + expectedMaxStandardNormal(ranks) * std::sqrt(kPlacedLoadSpread * kPlacedLoadSpread + sampling);
}

} // namespace meshplan::model
