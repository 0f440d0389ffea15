#pragma once
// The divisors of a chip count or a degree: what a parallelism role may take.

#include <cstdint>
#include <vector>

namespace meshplan::model {

/// The divisors of n (n >= 1, at most INT_MAX), smallest first.
std::vector<int> divisors(std::int64_t n);

} // namespace meshplan::model
