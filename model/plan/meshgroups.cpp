#include "plan/meshgroups.h"

#include <algorithm>

namespace meshplan::model {

MeshGroups::MeshGroups(const Topology &topology, const Placement &placement) : m_spans(placement.spans)
{
    for (const MeshAxis &axis : topology.axes()) {
        m_sizes.push_back(axis.size);
        m_axisStride.push_back(m_chipCount);
        m_chipCount *= axis.size;
    }
}

std::vector<int> MeshGroups::coordinates(std::int64_t chip) const
{
    std::vector<int> out(m_sizes.size());
    for (std::size_t i = 0; i < m_sizes.size(); ++i) {
        out[i] = static_cast<int>(chip % m_sizes[i]);
        chip /= m_sizes[i];
    }
    return out;
}

std::int64_t MeshGroups::chipAt(const std::vector<int> &coordinates) const
{
    std::int64_t chip = 0;
    for (std::size_t i = m_sizes.size(); i-- > 0;)
        chip = chip * m_sizes[i] + coordinates[i];
    return chip;
}

std::int64_t MeshGroups::rankIn(std::int64_t chip, Role role) const
{
    // Hot while painting a mesh (once per chip per role): no allocation.
    std::int64_t rank = 0;
    std::int64_t scale = 1;
    for (const AxisSpan &span : m_spans[static_cast<std::size_t>(role)]) {
        const int digit = (coordinate(chip, span.axis) / span.stride) % span.size;
        rank += digit * scale;
        scale *= span.size;
    }
    return rank;
}

std::int64_t MeshGroups::groupOf(std::int64_t chip, Role role) const
{
    // The group is named by its rank-0 chip: the role's digits cleared.
    std::int64_t group = chip;
    for (const AxisSpan &span : m_spans[static_cast<std::size_t>(role)]) {
        const int digit = (coordinate(chip, span.axis) / span.stride) % span.size;
        group -= digit * span.stride * m_axisStride[static_cast<std::size_t>(span.axis)];
    }
    return group;
}

int MeshGroups::coordinate(std::int64_t chip, int axis) const
{
    const auto a = static_cast<std::size_t>(axis);
    return static_cast<int>((chip / m_axisStride[a]) % m_sizes[a]);
}

std::vector<std::int64_t> MeshGroups::members(std::int64_t chip, Role role) const
{
    const auto &spans = m_spans[static_cast<std::size_t>(role)];
    const auto base = coordinates(groupOf(chip, role));
    std::int64_t degree = 1;
    for (const AxisSpan &span : spans)
        degree *= span.size;
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(degree));
    for (std::int64_t rank = 0; rank < degree; ++rank) {
        auto coords = base;
        std::int64_t r = rank;
        for (const AxisSpan &span : spans) {
            coords[static_cast<std::size_t>(span.axis)] += static_cast<int>(r % span.size) * span.stride;
            r /= span.size;
        }
        out.push_back(chipAt(coords));
    }
    return out;
}

std::vector<MeshGroups::AxisShare> MeshGroups::sharesOf(int axis) const
{
    std::vector<AxisShare> out;
    for (Role role : kRoles)
        for (const AxisSpan &span : m_spans[static_cast<std::size_t>(role)])
            if (span.axis == axis)
                out.push_back({role, span.size, span.stride});
    std::sort(out.begin(), out.end(), [](const AxisShare &a, const AxisShare &b) { return a.stride < b.stride; });
    return out;
}

} // namespace meshplan::model
