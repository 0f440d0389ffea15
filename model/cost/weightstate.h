#pragma once
// The per-chip bytes of a training stage's weights, gradients and optimizer state under FSDP and
// ZeRO: one rule for the evaluation (TrainingCost) and the plan search's bound (TrainingBound).

#include "plan/plan.h"

namespace meshplan::model {

/// Optimizer states per weight: Adam and AdamW 2 (two moments), SGD 1, Adafactor about 0.1.
double optimizerStatesPerWeight(Optimizer optimizer);

struct WeightStateBytes {
    double params = 0;
    double grads = 0;
    double optimizer = 0;
};

/// How the ranks beside FSDP shard weight state. The expert ranks are carved out of the data
/// ranks, so the weights every expert rank holds are replicated over data x context x expert and
/// ZeRO-1 and -2 shard their optimizer state and gradients over all of them; the routed experts'
/// over data x context, the ranks that hold the same experts (Megatron-Core's distributed
/// optimizer: the data-parallel group for dense parameters, the expert-data-parallel group for
/// the experts'). ZeRO-3's weight shards stay over data x context, where its gathers are priced.
struct WeightStateShards {
    double fsdp = 1;
    double dataContext = 1; ///< data x context
    double expert = 1;
};

/// `dense` weights every expert rank holds and `expert` routed-expert weights, per chip before
/// FSDP and ZeRO, under `train`'s dtypes and optimizer and ZeRO stage `zeroStage`.
WeightStateBytes weightStateBytes(const TrainingSpec &train, int zeroStage, double dense, double expert,
                                  const WeightStateShards &shards);

} // namespace meshplan::model
