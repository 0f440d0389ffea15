#include "hardware/topology.h"

#include <algorithm>
#include <charconv>
#include <numeric>

namespace meshplan::model {

std::string_view linkName(LinkKind kind)
{
    switch (kind) {
    case LinkKind::Ici:
        return "ici";
    case LinkKind::Dcn:
        return "dcn";
    case LinkKind::Nvlink:
        return "nvlink";
    case LinkKind::ScaleOut:
        return "scale-out";
    }
    return "?";
}

Expected<std::vector<int>> parseShape(std::string_view text, const std::string &path)
{
    std::vector<int> shape;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('x', start), text.size());
        const std::string_view part = text.substr(start, end - start);
        int value = 0;
        const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || value < 1)
            return Error{path, "must be a slice shape like 4x4 or 4x4x8 of positive chip counts, got \""
                                   + std::string(text) + "\""};
        shape.push_back(value);
        start = end + 1;
    }
    if (shape.size() > 3)
        return Error{path, "has more than 3 axes: \"" + std::string(text) + "\""};
    return shape;
}

Expected<Topology> Topology::tpuSlice(const Chip &chip, const std::vector<int> &shape, int slices)
{
    if (!chip.isTpu() || !chip.ici)
        return Error{"hardware.topology", chip.id + " is a GPU: give nodes and gpus_per_node, not a slice shape"};
    if (shape.empty() || shape.size() > 3)
        return Error{"hardware.topology", "must have 1 to 3 axes"};
    if (static_cast<int>(shape.size()) > std::max(chip.ici->torusDims, 1))
        return Error{"hardware.topology", chip.id + " is a " + std::to_string(chip.ici->torusDims)
                                              + "D torus; a slice has at most that many axes"};
    if (slices < 1)
        return Error{"hardware.slices", "must be a positive integer, got " + std::to_string(slices)};
    std::int64_t perSlice = 1;
    for (int s : shape) {
        if (s < 1)
            return Error{"hardware.topology", "axis sizes must be positive"};
        perSlice *= s;
        if (perSlice > kMaxChips)
            return Error{"hardware.topology", "more than " + std::to_string(kMaxChips) + " chips"};
    }
    const auto &maxShape = chip.ici->maxShape;
    if (!maxShape.empty()) {
        const std::int64_t podChips = std::accumulate(maxShape.begin(), maxShape.end(), std::int64_t(1),
                                                      std::multiplies<>());
        const int longest = *std::max_element(maxShape.begin(), maxShape.end());
        const int ourLongest = *std::max_element(shape.begin(), shape.end());
        // Optical-switch pods (v4, v5p) can be cut into any cube multiple up to the pod's chip
        // count; the fixed 2D pods (v5e, v6e) cannot grow an axis past the pod's.
        const bool axisTooLong = chip.ici->wrapRule == WrapRule::Full && ourLongest > longest;
        if (perSlice > podChips || axisTooLong) {
            std::string pod;
            for (int s : maxShape)
                pod += (pod.empty() ? "" : "x") + std::to_string(s);
            return Error{"hardware.topology", "a " + chip.id + " slice is at most " + pod
                                                  + "; join more slices over DCN with \"slices\""};
        }
    }
    if (perSlice * slices > kMaxChips)
        return Error{"hardware.slices", "more than " + std::to_string(kMaxChips) + " chips in total"};

    Topology t;
    t.m_chip = chip;
    static constexpr const char *kNames[] = {"x", "y", "z"};
    for (std::size_t i = 0; i < shape.size(); ++i)
        t.m_axes.push_back({kNames[i], shape[i], LinkKind::Ici, chip.ici->wraps(shape, i)});
    if (slices > 1)
        t.m_axes.push_back({"slice", slices, LinkKind::Dcn, false});
    return t;
}

Expected<Topology> Topology::gpuCluster(const Chip &chip, int nodes, int gpusPerNode)
{
    if (chip.isTpu() || !chip.nvlink || !chip.scaleOut)
        return Error{"hardware.topology", chip.id + " is a TPU: give a slice shape like 4x4x4, not nodes"};
    if (nodes < 1)
        return Error{"hardware.topology.nodes", "must be a positive integer, got " + std::to_string(nodes)};
    if (gpusPerNode < 1)
        return Error{"hardware.topology.gpus_per_node", "must be a positive integer, got " + std::to_string(gpusPerNode)};
    if (gpusPerNode > chip.nvlink->domainSize)
        return Error{"hardware.topology.gpus_per_node", chip.id + " NVLink domains hold at most "
                                                            + std::to_string(chip.nvlink->domainSize)
                                                            + " GPUs, got " + std::to_string(gpusPerNode)};
    if (static_cast<std::int64_t>(nodes) * gpusPerNode > kMaxChips)
        return Error{"hardware.topology.nodes", "more than " + std::to_string(kMaxChips) + " GPUs in total"};
    Topology t;
    t.m_chip = chip;
    t.m_axes.push_back({"gpu", gpusPerNode, LinkKind::Nvlink, false});
    t.m_axes.push_back({"node", nodes, LinkKind::ScaleOut, false});
    return t;
}

int Topology::axisIndex(std::string_view name) const
{
    for (std::size_t i = 0; i < m_axes.size(); ++i)
        if (m_axes[i].name == name)
            return static_cast<int>(i);
    return -1;
}

std::int64_t Topology::chipCount() const
{
    std::int64_t n = 1;
    for (const auto &axis : m_axes)
        n *= axis.size;
    return n;
}

std::int64_t Topology::hostCount() const
{
    const std::int64_t perHost = m_chip.ici ? std::max(1, m_chip.ici->chipsPerHost()) : 8;
    return (chipCount() + perHost - 1) / perHost;
}

std::string Topology::describe() const
{
    if (!m_chip.isTpu())
        return std::to_string(m_axes[1].size) + (m_axes[1].size == 1 ? " node x " : " nodes x ")
               + std::to_string(m_axes[0].size) + " GPUs";
    std::string out;
    int slices = 1;
    for (const auto &axis : m_axes) {
        if (axis.link == LinkKind::Dcn) {
            slices = axis.size;
            continue;
        }
        out += (out.empty() ? "" : "x") + std::to_string(axis.size);
    }
    if (slices > 1)
        out += ", " + std::to_string(slices) + " slices";
    return out;
}

std::vector<int> Topology::sliceShape() const
{
    std::vector<int> shape;
    for (const auto &axis : m_axes)
        if (axis.link == LinkKind::Ici)
            shape.push_back(axis.size);
    return shape;
}

int Topology::sliceCount() const
{
    for (const auto &axis : m_axes)
        if (axis.link == LinkKind::Dcn)
            return axis.size;
    return 1;
}

std::string Topology::axisList() const
{
    std::string out;
    for (const auto &axis : m_axes)
        out += (out.empty() ? "" : ", ") + axis.name;
    return out;
}

} // namespace meshplan::model
