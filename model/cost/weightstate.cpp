#include "cost/weightstate.h"

namespace meshplan::model {

double optimizerStatesPerWeight(Optimizer optimizer)
{
    switch (optimizer) {
    case Optimizer::Adam:
    case Optimizer::AdamW:
        return 2.0;
    case Optimizer::Sgd:
        return 1.0;
    case Optimizer::Adafactor:
        return 0.1; // factored second moment
    }
    return 0.1;
}

WeightStateBytes weightStateBytes(const TrainingSpec &train, int zeroStage, double dense, double expert,
                                  const WeightStateShards &shards)
{
    const double denseShards = shards.dataContext * shards.expert;
    const auto sharded = [&](double bytes, bool zero) {
        return (dense * bytes / (zero ? denseShards : 1.0) + expert * bytes / (zero ? shards.dataContext : 1.0))
               / shards.fsdp;
    };
    const double optimizerBytes = bytesPerElement(train.optimizerDtype);
    WeightStateBytes out;
    out.params = (dense + expert) * bytesPerElement(train.paramDtype)
                 / (shards.fsdp * (zeroStage >= 3 ? shards.dataContext : 1.0));
    out.grads = sharded(bytesPerElement(train.gradDtype), zeroStage >= 2);
    out.optimizer = sharded(optimizerStatesPerWeight(train.optimizer) * optimizerBytes
                                + (train.masterWeights ? optimizerBytes : 0.0),
                            zeroStage >= 1);
    return out;
}

} // namespace meshplan::model
