#pragma once
// The training-step cost model behind evaluate() for "kind": "training" plans.

#include "cost/evaluation.h"
#include "hardware/collective.h"

#include <optional>

namespace meshplan::model {

struct Plan;
struct Placement;

/// Fills `out` (step, memory, collectives, warnings, MFU, bound) for a training plan whose roles
/// are already placed; an Error for a plan the model cannot cost.
std::optional<Error> evaluateTraining(const Plan &plan, const Placement &placement, CostMode mode, Evaluation &out,
                                      Derivations *derivations = nullptr);

} // namespace meshplan::model
