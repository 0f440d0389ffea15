#pragma once
// A sharded matmul on a mesh: which of the book's four cases it is, the collectives it needs and
// what they cost next to the local matmul (book ch. 3).

#include "base/dtype.h"
#include "hardware/collective.h"
#include "plan/shardingnotation.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace meshplan::model {

/// One collective the matmul needs, before (on an input) or after (on the result) the local product.
struct MatmulCollective {
    CollectiveOp op = CollectiveOp::AllGather;
    std::string array;              ///< "A", "B" or "C" (the names used in the expression)
    std::vector<std::string> axes;
    double bytes = 0;               ///< the book's V for this collective
    bool beforeMatmul = true;
    std::string reason;             ///< e.g. "A is sharded on the contracting dimension J over x"
    CollectiveCost cost;
};

struct MatmulAnalysis {
    int bookCase = 1; ///< 1: no contracting sharding; 2: one input; 3: both alike; 4: same axis on both
    std::vector<MatmulCollective> collectives;
    std::string localProduct;  ///< the local shards multiplied, in the notation
    double flopsPerChip = 0;
    double computeTime = 0;    ///< flops / peak of the dtype
    double hbmBytesPerChip = 0;
    double hbmTime = 0;        ///< local operands and result through HBM
    double commsTime = 0;      ///< sum of the collectives
    double lowerBound = 0;     ///< max(compute, hbm, comms): communication overlapped
    double upperBound = 0;     ///< max(compute, hbm) + comms: nothing overlapped
    std::string bound;         ///< "compute", "hbm" or the binding link ("ici", "dcn", "nvlink", "scale-out")
};

/// Analyses `expression` with dimension sizes `dims` on `topology`; errors name the field
/// ("notation", "dims.J", "topology").
Expected<MatmulAnalysis> analyzeMatmul(const Topology &topology, const MatmulExpression &expression,
                                       const std::map<std::string, std::int64_t> &dims, DType dtype,
                                       CostMode mode = CostMode::Ideal);

} // namespace meshplan::model
