#include "plan/degreechanges.h"

namespace meshplan::model {

std::vector<DegreeChange> degreeChanges(const Plan &before, const Plan &after, std::optional<Role> asked)
{
    std::vector<DegreeChange> out;
    for (Role role : kRoles) {
        if (asked && role == *asked)
            continue;
        const int from = before.parallelism.degree(role);
        const int to = after.parallelism.degree(role);
        if (from != to)
            out.push_back({role, from, to});
    }
    return out;
}

std::string describeDegreeChanges(const Plan &before, const Plan &after, std::optional<Role> asked)
{
    const auto changes = degreeChanges(before, after, asked);
    if (changes.empty())
        return {};
    std::string text;
    for (const DegreeChange &c : changes)
        text += (text.empty() ? "" : ", ") + std::string(roleName(c.role)) + " " + std::to_string(c.from) + " → "
                + std::to_string(c.to);

    std::vector<std::string> reasons;
    const std::int64_t chipsBefore = before.topology.chipCount();
    const std::int64_t chipsAfter = after.topology.chipCount();
    if (chipsBefore != chipsAfter)
        reasons.push_back("the cluster has " + std::to_string(chipsAfter) + " chips, not " + std::to_string(chipsBefore));
    if (before.kind != after.kind && after.kind == WorkloadKind::Inference)
        reasons.push_back("serving puts tensor parallelism inside the fast domain and replicas over the rest");
    if (before.model.id != after.model.id || before.model.name != after.model.name) {
        const ModelSpec &m = after.model;
        for (const DegreeChange &c : changes) {
            if (c.role == Role::Tensor)
                reasons.push_back("tensor must divide the " + std::to_string(m.heads) + " heads of " + m.name);
            else if (c.role == Role::Expert)
                reasons.push_back(m.moe ? "expert must divide the " + std::to_string(m.moe->experts) + " experts of " + m.name
                                        : m.name + " has no experts");
            else if (c.role == Role::Pipeline)
                reasons.push_back(m.name + " has " + std::to_string(m.layers) + " layers");
        }
    }
    if (asked && reasons.empty())
        reasons.push_back("the degrees multiply to the " + std::to_string(chipsAfter) + " chips");
    if (reasons.empty())
        reasons.push_back("the degrees must still multiply to the " + std::to_string(chipsAfter) + " chips");
    std::string because;
    for (const auto &r : reasons)
        because += (because.empty() ? "" : "; ") + r;
    return text + ", because " + because;
}

} // namespace meshplan::model
