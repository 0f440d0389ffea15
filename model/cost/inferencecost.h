#pragma once
// The serving cost model behind evaluate() for "kind": "inference" plans.

#include "cost/evaluation.h"
#include "hardware/collective.h"

#include <optional>

namespace meshplan::model {

struct Plan;
struct Placement;

/// Fills `out` (inference, serving, memory, collectives per decode step, warnings, bound) for an
/// inference plan whose roles are already placed; an Error for a plan the model cannot cost.
std::optional<Error> evaluateInference(const Plan &plan, const Placement &placement, CostMode mode, Evaluation &out,
                                       Derivations *derivations = nullptr);

} // namespace meshplan::model
