// Fuzzes the plan loader as `meshplan-cli evaluate` drives it: text -> planFromText -> evaluate ->
// the result document, dumped as the CLI writes it. Errors are fine; crashes and sanitizer
// reports are not.
#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace m = meshplan::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    const auto plan = m::planFromText(text, "fuzz.meshplan", m::ChipCatalog::builtin(), m::ModelCatalog::builtin());
    if (!plan)
        return 0;
    // The plan as a save would write it: a plan that loaded must also write.
    (void)m::planToJson(plan.value()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    for (const auto mode : {m::CostMode::Achievable, m::CostMode::Ideal}) {
        const auto evaluation = m::evaluate(plan.value(), mode);
        if (!evaluation)
            continue;
        const auto result = m::evaluationToJson(evaluation.value(), plan->kind == m::WorkloadKind::Training);
        (void)result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return 0;
}
