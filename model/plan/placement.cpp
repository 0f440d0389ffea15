#include "plan/placement.h"

#include <algorithm>
#include <numeric>

namespace meshplan::model {

std::string_view roleName(Role role)
{
    switch (role) {
    case Role::Data:
        return "data";
    case Role::Fsdp:
        return "fsdp";
    case Role::Tensor:
        return "tensor";
    case Role::Pipeline:
        return "pipeline";
    case Role::Expert:
        return "expert";
    case Role::Context:
        return "context";
    }
    return "?";
}

std::optional<Role> parseRole(std::string_view name)
{
    for (Role role : kRoles)
        if (roleName(role) == name)
            return role;
    return std::nullopt;
}

std::vector<AxisSpan> Placement::combined(const std::vector<Role> &roles) const
{
    std::vector<AxisSpan> out;
    for (Role role : roles)
        for (const AxisSpan &span : of(role)) {
            // Two roles on one axis form one group of size a*b spaced by the smaller stride.
            bool merged = false;
            for (AxisSpan &existing : out)
                if (existing.axis == span.axis) {
                    const int stride = std::min(existing.stride, span.stride);
                    existing.size *= span.size;
                    existing.stride = stride;
                    merged = true;
                }
            if (!merged)
                out.push_back(span);
        }
    return out;
}

std::map<std::string, std::vector<std::string>> Placement::axisNames(const Topology &topology) const
{
    std::map<std::string, std::vector<std::string>> out;
    for (Role role : kRoles) {
        std::vector<std::string> names;
        names.reserve(of(role).size());
        for (const AxisSpan &span : of(role))
            names.push_back(topology.axes()[static_cast<std::size_t>(span.axis)].name);
        if (!names.empty())
            out.emplace(roleName(role), std::move(names));
    }
    return out;
}

Expected<Placement> placeRoles(const Topology &topology, const RoleDegrees &degrees,
                               const std::map<Role, std::vector<std::string>> &requested)
{
    const auto &axes = topology.axes();
    // Checked: six degrees of up to 10^7 each overflow 64 bits. Past the largest cluster the
    // product is only said to be too large.
    std::int64_t product = 1;
    bool tooLarge = false;
    for (int d : degrees) {
        if (d < 1)
            return Error{"parallelism", "degrees must be positive, got " + std::to_string(d)};
        if (product > kMaxChips / d)
            tooLarge = true;
        else
            product *= d;
    }
    if (tooLarge || product != topology.chipCount()) {
        std::string terms;
        for (Role role : kRoles)
            terms += (terms.empty() ? "" : " x ") + std::string(roleName(role)) + " "
                     + std::to_string(degrees[static_cast<std::size_t>(role)]);
        return Error{"parallelism", terms + " = " + (tooLarge ? "more than " + std::to_string(kMaxChips) : std::to_string(product)) + " chips, but the hardware ("
                                        + topology.describe() + ") has " + std::to_string(topology.chipCount())};
    }

    // Per axis, the factors handed out so far from the inside and from the outside.
    std::vector<int> innerTaken(axes.size(), 1);
    std::vector<int> outerTaken(axes.size(), 1);
    struct Piece {
        Role role;
        int axis;
        int size;
        bool fromOutside;
    };
    std::vector<Piece> pieces;
    pieces.reserve(2 * kRoles.size());
    std::vector<int> allowed; // one buffer for every role's axes
    allowed.reserve(axes.size());

    const auto allowedAxes = [&](Role role, std::vector<int> &out) -> std::optional<Error> {
        out.clear();
        auto it = requested.find(role);
        if (it == requested.end()) {
            for (std::size_t i = 0; i < axes.size(); ++i)
                out.push_back(static_cast<int>(i));
            return std::nullopt;
        }
        for (const auto &name : it->second) {
            const int index = topology.axisIndex(name);
            if (index < 0)
                return Error{"parallelism.placement." + std::string(roleName(role)),
                             "no axis \"" + name + "\" (axes: " + topology.axisList() + ")"};
            out.push_back(index);
        }
        return std::nullopt;
    };

    const auto place = [&](Role role, bool fromOutside) -> std::optional<Error> {
        int remaining = degrees[static_cast<std::size_t>(role)];
        if (remaining <= 1)
            return std::nullopt;
        if (auto error = allowedAxes(role, allowed))
            return error;
        if (fromOutside && !requested.count(role))
            std::reverse(allowed.begin(), allowed.end());
        for (int axis : allowed) {
            const int free = axes[static_cast<std::size_t>(axis)].size / (innerTaken[static_cast<std::size_t>(axis)]
                                                                          * outerTaken[static_cast<std::size_t>(axis)]);
            const int take = std::gcd(remaining, free);
            if (take <= 1)
                continue;
            pieces.push_back({role, axis, take, fromOutside});
            (fromOutside ? outerTaken : innerTaken)[static_cast<std::size_t>(axis)] *= take;
            remaining /= take;
            if (remaining == 1)
                break;
        }
        if (remaining != 1)
            return Error{requested.count(role) ? "parallelism.placement." + std::string(roleName(role)) : "parallelism",
                         std::string(roleName(role)) + " parallelism of "
                             + std::to_string(degrees[static_cast<std::size_t>(role)]) + " does not fit the axes left on "
                             + topology.describe() + " after the roles placed before it"};
        return std::nullopt;
    };

    // Pipeline outermost, then tensor innermost, expert, context, fsdp, data. Where that order
    // leaves a role the plan placed without room (an unplaced role took its axis first), the
    // placed roles go first and the others fill what is left.
    const auto placeAll = [&](bool requestedFirst) -> std::optional<Error> {
        std::fill(innerTaken.begin(), innerTaken.end(), 1);
        std::fill(outerTaken.begin(), outerTaken.end(), 1);
        pieces.clear();
        for (int pass = requestedFirst ? 0 : 1; pass < 2; ++pass) {
            const auto inPass = [&](Role role) { return !requestedFirst || (requested.count(role) > 0) == (pass == 0); };
            if (inPass(Role::Pipeline))
                if (auto error = place(Role::Pipeline, true))
                    return error;
            for (Role role : {Role::Tensor, Role::Expert, Role::Context, Role::Fsdp, Role::Data})
                if (inPass(role))
                    if (auto error = place(role, false))
                        return error;
        }
        return std::nullopt;
    };
    if (auto error = placeAll(false)) {
        if (requested.empty() || placeAll(true))
            return *error;
    }

    // Strides: inner pieces are laid out first along the axis, outer pieces after all inner ones.
    Placement placement;
    std::vector<int> innerStride(axes.size(), 1);
    std::vector<int> outerStride(axes.size(), 1);
    for (std::size_t i = 0; i < axes.size(); ++i)
        outerStride[i] = innerTaken[i];
    for (const Piece &p : pieces) {
        int &stride = (p.fromOutside ? outerStride : innerStride)[static_cast<std::size_t>(p.axis)];
        placement.spans[static_cast<std::size_t>(p.role)].push_back({p.axis, p.size, stride});
        stride *= p.size;
    }
    // Pieces taken from the outside were handed out outermost first; their strides must grow
    // inward-to-outward, so recompute them in reverse order of assignment.
    for (std::size_t i = 0; i < axes.size(); ++i)
        outerStride[i] = innerTaken[i];
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        if (!it->fromOutside)
            continue;
        auto &spans = placement.spans[static_cast<std::size_t>(it->role)];
        for (AxisSpan &span : spans)
            if (span.axis == it->axis && span.size == it->size) {
                span.stride = outerStride[static_cast<std::size_t>(it->axis)];
                outerStride[static_cast<std::size_t>(it->axis)] *= it->size;
                break;
            }
    }
    return placement;
}

} // namespace meshplan::model
