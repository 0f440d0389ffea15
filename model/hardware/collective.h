#pragma once
// Cost of AllGather, ReduceScatter, AllReduce and AllToAll over any set of mesh axes (book ch. 3, 12).

#include "hardware/topology.h"

#include <optional>
#include <string_view>
#include <vector>

namespace meshplan::model {

enum class CollectiveOp {
    AllGather,
    ReduceScatter,
    AllReduce,
    AllToAll,
    SendRecv, ///< point-to-point to the next chip along the group (pipeline stages)
};

std::string_view collectiveName(CollectiveOp op); ///< "all-gather", ...
std::optional<CollectiveOp> parseCollective(std::string_view name);

/// The part of one mesh axis a collective group spans: `size` chips spaced `stride` apart
/// (a whole axis is {axis, axes()[axis].size, 1}; a role given the inner 4 of a 16-long axis is
/// {axis, 4, 1}, the role outside it {axis, 4, 4}).
struct AxisSpan {
    int axis = 0;
    int size = 1;
    int stride = 1;
};

/// Ideal: the book's model (advertised bandwidth, latency and bandwidth terms overlap, T = max).
/// Achievable: catalog efficiencies applied, latency added to the bandwidth term (alpha-beta).
enum class CostMode {
    Ideal,
    Achievable,
};

struct CollectiveOptions {
    CostMode mode = CostMode::Ideal;
    bool sharp = false;         ///< GPU in-network reduction for AllReduce, where the chip has it
    double activeFraction = 1.0; ///< AllToAll: fraction of destinations that receive data (MoE top-k)
    /// AllToAll on GPU nodes: each token's top-k where the kernel sends a token across the network
    /// once per destination node, forwards it over NVLink there, and reaches each destination GPU
    /// once whatever its experts there (DeepEP's normal kernels); 0 sends every copy.
    double forwardedTopK = 0;
};

struct CollectiveCost {
    double time = 0;          ///< seconds
    double bandwidthTime = 0; ///< bytes / bandwidth part
    double latencyTime = 0;   ///< per-hop part
    bool latencyBound = false;
    double bytesPerChip = 0;  ///< bytes each chip sends
    LinkKind bindingLink = LinkKind::Ici; ///< the network whose term sets the bandwidth time
};

/// Spans covering whole axes, looked up by name; errors name `path`.
Expected<std::vector<AxisSpan>> wholeAxes(const Topology &topology, const std::vector<std::string> &names,
                                          const std::string &path);

/// Cost of one collective over `group` on `topology`. `bytes` is the book's V: the gathered array
/// (AllGather), the unreduced array each chip holds (ReduceScatter, AllReduce), or the whole array
/// across the group (AllToAll), the message (SendRecv). A group of one chip costs nothing.
CollectiveCost collectiveCost(const Topology &topology, CollectiveOp op, const std::vector<AxisSpan> &group,
                              double bytes, const CollectiveOptions &options = {});

} // namespace meshplan::model
