// Fuzzes the plan loader as `meshplan-cli evaluate` drives it: text -> planFromText -> evaluate ->
// the result document, dumped as the CLI writes it. Errors are fine; crashes and sanitizer
// reports are not.
#include "base/expression.h"
#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
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
    // As --explain and the explain panel do: every derivation recorded, parsed and evaluated.
    m::Derivations derivations;
    if (m::evaluate(plan.value(), m::CostMode::Achievable, &derivations)) {
        for (const auto &[path, d] : derivations) {
            const auto expression = m::Expression::parse(d.expression);
            if (!expression)
                __builtin_trap(); // the cost model wrote a formula its own grammar refuses
            std::map<std::string, double> values;
            for (const auto &v : d.values)
                values[v.name] = v.value;
            (void)expression->evaluate(values);
        }
        (void)m::derivationsToJson(derivations).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return 0;
}
