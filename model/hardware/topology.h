#pragma once
// A cluster's physical mesh: named axes with their sizes and the kind of link each crosses.

#include "base/expected.h"
#include "hardware/chip.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

/// The network a mesh axis runs over.
enum class LinkKind {
    Ici,      ///< TPU torus axis (x, y, z)
    Dcn,      ///< TPU slices joined through their hosts (axis "slice")
    Nvlink,   ///< GPUs inside one NVLink domain (axis "gpu")
    ScaleOut, ///< NVLink domains joined by the fat tree (axis "node")
};

std::string_view linkName(LinkKind kind);

struct MeshAxis {
    std::string name;
    int size = 1;
    LinkKind link = LinkKind::Ici;
    bool wraps = false; ///< TPU ICI axes: a ring (wraparound links) rather than a line
};

/// The largest cluster we accept; anything above is a typo, not a plan.
inline constexpr std::int64_t kMaxChips = 10'000'000;

class Topology
{
public:
    /// A TPU slice of `shape` chips (axes x, y, z) and `slices` such slices over DCN (axis "slice").
    static Expected<Topology> tpuSlice(const Chip &chip, const std::vector<int> &shape, int slices);
    /// `nodes` NVLink domains of `gpusPerNode` GPUs (axes "gpu" and "node").
    static Expected<Topology> gpuCluster(const Chip &chip, int nodes, int gpusPerNode);

    const Chip &chip() const { return m_chip; }
    const std::vector<MeshAxis> &axes() const { return m_axes; }
    /// Index of the axis with this name, or -1.
    int axisIndex(std::string_view name) const;
    std::int64_t chipCount() const;
    /// A TPU slice's shape (its ICI axes) and how many slices join over DCN; empty and 1 for GPUs.
    std::vector<int> sliceShape() const;
    int sliceCount() const;
    /// Host machines (TPU: chips per host from the chip's host shape; GPU: one per 8 GPUs).
    std::int64_t hostCount() const;
    /// "16x16x16, 2 slices" / "128 nodes x 8 GPUs".
    std::string describe() const;
    /// Comma-separated axis names, for error messages.
    std::string axisList() const;

private:
    Chip m_chip;
    std::vector<MeshAxis> m_axes;
};

/// Parses "16x16" or "4x4x4" into chip counts per axis; errors name `path`.
Expected<std::vector<int>> parseShape(std::string_view text, const std::string &path);

} // namespace meshplan::model
