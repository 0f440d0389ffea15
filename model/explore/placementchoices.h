#pragma once
// The placements of a plan's roles onto the mesh axes that the plan format can ask for
// (parallelism.placement) and that differ in cost: one request per distinct placement.

#include "plan/placement.h"

#include <map>
#include <string>
#include <vector>

namespace meshplan::model {

using PlacementRequest = std::map<Role, std::vector<std::string>>;

/// Every placement of `degrees` on `topology` that a request of axis lists can produce, less
/// those that cost the same as one already listed: on a GPU cluster a role's collectives depend
/// only on how many of its chips share a node and how many nodes it spans; on TPUs on its
/// (axis, size, stride) spans, with axes of the same size and kind interchangeable. Deterministic
/// order; empty when the degrees do not fit the mesh.
std::vector<PlacementRequest> placementChoices(const Topology &topology, const RoleDegrees &degrees);

} // namespace meshplan::model
