#pragma once
// Which chips work together: every chip's coordinates on the mesh and, for each parallelism
// role, the chips it shares that role's collectives with (its tensor group, its pipeline stage).

#include "hardware/topology.h"
#include "plan/placement.h"

#include <array>
#include <cstdint>
#include <vector>

namespace meshplan::model {

class MeshGroups
{
public:
    /// One role's share of one axis: on that axis the role's rank is (coordinate / stride) % size.
    struct AxisShare {
        Role role = Role::Data;
        int size = 1;
        int stride = 1;
    };

    MeshGroups(const Topology &topology, const Placement &placement);

    std::int64_t chipCount() const { return m_chipCount; }
    /// The chip's coordinate on every axis (topology order). Chips are numbered with the first
    /// axis fastest.
    std::vector<int> coordinates(std::int64_t chip) const;
    std::int64_t chipAt(const std::vector<int> &coordinates) const;

    /// The chip's rank inside its `role` group (0 .. degree-1); its pipeline stage for Pipeline.
    std::int64_t rankIn(std::int64_t chip, Role role) const;
    /// A number equal for exactly the chips of the same `role` group.
    std::int64_t groupOf(std::int64_t chip, Role role) const;
    /// The chips of `chip`'s `role` group, in rank order.
    std::vector<std::int64_t> members(std::int64_t chip, Role role) const;

    /// The roles holding parts of axis `axis`, innermost (smallest stride) first.
    std::vector<AxisShare> sharesOf(int axis) const;

private:
    int coordinate(std::int64_t chip, int axis) const;

    std::vector<int> m_sizes;
    std::vector<std::int64_t> m_axisStride; ///< chip-number step of one unit along each axis
    std::int64_t m_chipCount = 1;
    std::array<std::vector<AxisSpan>, 6> m_spans;
};

} // namespace meshplan::model
