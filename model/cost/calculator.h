#pragma once
// The book's primitive calculators (hardware, roofline, collective, matmul, slice) as one
// request -> result API over JSON, shared by meshplan-cli, the GUI and the tests.

#include "base/expected.h"
#include "hardware/collective.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace meshplan::model {

class ChipCatalog;

/// Names of the calls `calculate` answers: "hardware", "critical_intensity", "roofline",
/// "collective", "slice", "matmul".
const std::vector<std::string> &calculatorCalls();

/// Answers one call. `args` uses the CLI's option names with underscores ("gpus_per_node");
/// "chip" is a catalog id or an inline chip object. The result's keys are those of
/// plan-format.md (time_s, t_math_s, ...). Errors name the argument ("bytes", "axes", ...).
Expected<nlohmann::json> calculate(const std::string &call, const nlohmann::json &args, CostMode mode,
                                   const ChipCatalog &catalog);

/// The topology described by args {"topology": "4x4x4", "slices": N} or {"nodes", "gpus_per_node"}.
Expected<Topology> topologyFromArgs(const Chip &chip, const nlohmann::json &args);

} // namespace meshplan::model
