#include "base/divisors.h"

#include <algorithm>

namespace meshplan::model {

std::vector<int> divisors(std::int64_t n)
{
    std::vector<int> out;
    for (std::int64_t d = 1; d * d <= n; ++d)
        if (n % d == 0) {
            out.push_back(static_cast<int>(d));
            if (d * d != n)
                out.push_back(static_cast<int>(n / d));
        }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace meshplan::model
