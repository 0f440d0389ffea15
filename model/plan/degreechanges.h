#pragma once
// What an edit did to the degrees the user did not touch, in words for the undo entry and the
// status bar: "expert 16 → 8, fsdp 128 → 9, because the cluster has 72 chips, not 2048".

#include "plan/plan.h"

#include <optional>
#include <string>
#include <vector>

namespace meshplan::model {

struct DegreeChange {
    Role role;
    int from = 1;
    int to = 1;
};

/// The roles whose degree differs between `before` and `after`, in kRoles order, leaving out
/// `asked` (the role the user set, if any).
std::vector<DegreeChange> degreeChanges(const Plan &before, const Plan &after, std::optional<Role> asked = {});

/// The changes with the reason they were needed, or "" when no other degree changed. Reasons:
/// another chip count, another model that a degree must divide, the switch to serving, or
/// (when the user set `asked`) keeping the product at the chip count.
std::string describeDegreeChanges(const Plan &before, const Plan &after, std::optional<Role> asked = {});

} // namespace meshplan::model
