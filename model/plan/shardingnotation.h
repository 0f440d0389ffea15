#pragma once
// The book's sharding notation (ch. 3): A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]{U_Z}.

#include "base/expected.h"

#include <string>
#include <string_view>
#include <vector>

namespace meshplan::model {

/// One array dimension and the mesh axes it is split over, in order (I_XY -> {"x", "y"}).
struct ShardedDim {
    std::string name;
    std::vector<std::string> axes;
};

/// An array as written in the notation; `unreduced` holds the axes of a {U_X} annotation.
struct ShardedArray {
    std::string name;
    std::vector<ShardedDim> dims;
    std::vector<std::string> unreduced;

    const ShardedDim *dim(const std::string &dimName) const;
    /// "A[I_X, J]" back in the book's notation.
    std::string toString() const;
};

struct MatmulExpression {
    ShardedArray lhs;
    ShardedArray rhs;
    ShardedArray out;

    std::string toString() const;
};

/// Parses one sharded array, e.g. "C[I_X, K]{U_Y}". Axis letters X, Y, Z name axes x, y, z (and
/// G, N, S name gpu, node, slice); a braced list names axes in full: I_{gpu,node}.
Expected<ShardedArray> parseShardedArray(std::string_view text);
/// Parses "LHS . RHS -> OUT"; the product may be written '.', '*', '@' or '·' (optionally with a
/// contraction subscript, '*_D'), the arrow '->' or '→'.
Expected<MatmulExpression> parseMatmul(std::string_view text);

} // namespace meshplan::model
