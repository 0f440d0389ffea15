#include "plan/plantitle.h"

#include <array>

namespace meshplan::model {

std::string generatedTitle(const Plan &plan)
{
    const Topology &topology = plan.topology;
    std::string title = plan.model.name + (plan.kind == WorkloadKind::Training ? " training" : " serving") + " on "
                        + std::to_string(topology.chipCount()) + " " + topology.chip().name + ", "
                        + topology.describe() + ": ";
    // Outermost first, the order a mesh is written in (pipeline over data over fsdp ... tensor).
    static constexpr std::array<Role, 6> kOrder{Role::Pipeline, Role::Data, Role::Fsdp,
                                                Role::Context,  Role::Expert, Role::Tensor};
    std::string layout;
    for (Role role : kOrder) {
        const int degree = plan.parallelism.degree(role);
        if (degree > 1)
            layout += (layout.empty() ? "" : " x ") + std::string(roleName(role)) + " " + std::to_string(degree);
    }
    return title + (layout.empty() ? "one chip" : layout);
}

bool titleFollowsPlan(const Plan &plan)
{
    return plan.title.empty() || plan.title == generatedTitle(plan);
}

} // namespace meshplan::model
