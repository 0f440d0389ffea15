#include "explore/placementchoices.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

namespace meshplan::model {

namespace {

// placeRoles' order: pipeline from the outside, then tensor, expert, context, fsdp and data
// from the inside, each taking gcd(remaining, free) from its listed axes in turn.
constexpr std::array kOrder{Role::Pipeline, Role::Tensor, Role::Expert, Role::Context, Role::Fsdp, Role::Data};

/// Every ordered list of distinct axes (the requests a role can make).
std::vector<std::vector<int>> axisLists(int axes)
{
    std::vector<std::vector<int>> out;
    std::vector<int> all(static_cast<std::size_t>(axes));
    std::iota(all.begin(), all.end(), 0);
    for (int mask = 1; mask < (1 << axes); ++mask) {
        std::vector<int> chosen;
        for (int a = 0; a < axes; ++a)
            if (mask & (1 << a))
                chosen.push_back(a);
        do {
            out.push_back(chosen);
        } while (std::next_permutation(chosen.begin(), chosen.end()));
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    return out;
}

using Signature = std::vector<std::tuple<int, int, int, int>>; // role, axis, size, stride

Signature signatureOf(const Topology &topology, const Placement &placement, const std::vector<int> &axisMap)
{
    const bool gpu = !topology.chip().isTpu();
    Signature s;
    for (Role role : kRoles) {
        for (const AxisSpan &span : placement.of(role)) {
            if (span.size <= 1)
                continue;
            const int axis = axisMap[static_cast<std::size_t>(span.axis)];
            s.emplace_back(static_cast<int>(role), axis, span.size, gpu ? 0 : span.stride);
        }
    }
    std::sort(s.begin(), s.end());
    return s;
}

/// The smallest signature over relabelings of interchangeable axes (same size, link and wrap).
Signature canonicalSignature(const Topology &topology, const Placement &placement)
{
    const auto &axes = topology.axes();
    std::vector<int> map(axes.size());
    std::iota(map.begin(), map.end(), 0);
    Signature best = signatureOf(topology, placement, map);
    if (axes.size() > 4)
        return best;
    while (std::next_permutation(map.begin(), map.end())) {
        bool same = true;
        for (std::size_t i = 0; i < axes.size() && same; ++i) {
            const MeshAxis &a = axes[i];
            const MeshAxis &b = axes[static_cast<std::size_t>(map[i])];
            same = a.size == b.size && a.link == b.link && a.wraps == b.wraps;
        }
        if (same)
            best = std::min(best, signatureOf(topology, placement, map));
    }
    return best;
}

} // namespace

std::vector<PlacementRequest> placementChoices(const Topology &topology, const RoleDegrees &degrees)
{
    const auto &axes = topology.axes();
    const int axisCount = static_cast<int>(axes.size());
    const auto lists = axisLists(axisCount);
    std::vector<Role> roles;
    for (Role r : kOrder)
        if (degrees[static_cast<std::size_t>(r)] > 1)
            roles.push_back(r);

    std::vector<PlacementRequest> out;
    std::set<Signature> seen;
    PlacementRequest request;
    std::vector<int> inner(axes.size(), 1);
    std::vector<int> outer(axes.size(), 1);
    // Depth-first over the roles; per role only the requests that take different shares of the
    // axes are followed (the order within a role's list changes nothing else).
    const auto visit = [&](auto &&self, std::size_t index) -> void {
        if (index == roles.size()) {
            auto placement = placeRoles(topology, degrees, request);
            if (!placement)
                return;
            if (seen.insert(canonicalSignature(topology, placement.value())).second)
                out.push_back(request);
            return;
        }
        const Role role = roles[index];
        const bool fromOutside = role == Role::Pipeline;
        std::set<std::vector<int>> shares;
        for (const auto &list : lists) {
            std::vector<int> take(axes.size(), 1);
            int remaining = degrees[static_cast<std::size_t>(role)];
            for (int axis : list) {
                const auto a = static_cast<std::size_t>(axis);
                const int free = axes[a].size / (inner[a] * outer[a] * take[a]);
                const int t = std::gcd(remaining, free);
                if (t <= 1)
                    continue;
                take[a] *= t;
                remaining /= t;
                if (remaining == 1)
                    break;
            }
            if (remaining != 1 || !shares.insert(take).second)
                continue;
            std::vector<std::string> names;
            for (int axis : list)
                if (take[static_cast<std::size_t>(axis)] > 1)
                    names.push_back(axes[static_cast<std::size_t>(axis)].name);
            request[role] = names;
            for (std::size_t a = 0; a < axes.size(); ++a)
                (fromOutside ? outer : inner)[a] *= take[a];
            self(self, index + 1);
            for (std::size_t a = 0; a < axes.size(); ++a)
                (fromOutside ? outer : inner)[a] /= take[a];
        }
        request.erase(role);
    };
    visit(visit, 0);
    return out;
}

} // namespace meshplan::model
