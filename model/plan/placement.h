#pragma once
// Parallelism roles (data, FSDP, tensor, pipeline, expert, context) and where they sit on the
// physical mesh: which part of which axis each role's groups span.

#include "base/expected.h"
#include "hardware/collective.h"
#include "hardware/topology.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

enum class Role {
    Data,
    Fsdp,
    Tensor,
    Pipeline,
    Expert,
    Context,
};

inline constexpr std::array<Role, 6> kRoles{Role::Data, Role::Fsdp, Role::Tensor, Role::Pipeline, Role::Expert,
                                            Role::Context};

std::string_view roleName(Role role); ///< "data", "fsdp", "tensor", "pipeline", "expert", "context"
std::optional<Role> parseRole(std::string_view name);

/// Degree of each role, indexed by Role.
using RoleDegrees = std::array<int, 6>;

/// Where each role's groups lie: the axis spans a group of that role covers.
struct Placement {
    std::array<std::vector<AxisSpan>, 6> spans;

    const std::vector<AxisSpan> &of(Role role) const { return spans[static_cast<std::size_t>(role)]; }
    /// The spans of several roles together (a group spanning all of them).
    std::vector<AxisSpan> combined(const std::vector<Role> &roles) const;
    /// Axis names per role, e.g. {"tensor": ["x"], "fsdp": ["x", "y", "z"]} (roles of degree 1 omitted).
    std::map<std::string, std::vector<std::string>> axisNames(const Topology &topology) const;
};

/// Places roles on `topology`. `requested` optionally restricts a role to named axes. Unplaced
/// roles go tensor innermost, then expert, context, fsdp, data; pipeline outermost. Errors name
/// "parallelism" or "parallelism.placement.<role>".
Expected<Placement> placeRoles(const Topology &topology, const RoleDegrees &degrees,
                               const std::map<Role, std::vector<std::string>> &requested);

} // namespace meshplan::model
