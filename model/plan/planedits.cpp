#include "plan/planedits.h"

#include "base/divisors.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <vector>

namespace meshplan::model {

using nlohmann::json;

namespace {

/// The order placeRoles() hands out axes: pipeline from the outside, then the rest from the inside.
constexpr std::array<Role, 6> kPlacementOrder{Role::Pipeline, Role::Tensor, Role::Expert,
                                              Role::Context,  Role::Fsdp,   Role::Data};
/// Who gives up a factor when another role grows (withDegree), first to last.
constexpr std::array<Role, 6> kDonorOrder{Role::Fsdp, Role::Data, Role::Context, Role::Expert, Role::Pipeline,
                                          Role::Tensor};

using Requested = std::map<Role, std::vector<std::string>>;

/// Per role, the factor of each mesh axis it holds (1: none of it).
using Shares = std::array<std::vector<int>, 6>;

std::size_t at(Role role)
{
    return static_cast<std::size_t>(role);
}

std::string nameOf(Role role)
{
    return std::string(roleName(role));
}

std::string num(std::int64_t n)
{
    return std::to_string(n);
}

bool startsWith(const std::string &text, const std::string &prefix)
{
    return text.compare(0, prefix.size(), prefix) == 0;
}

Shares sharesOf(const Placement &placement, std::size_t axisCount)
{
    Shares shares;
    for (Role role : kRoles) {
        auto &row = shares[at(role)];
        row.assign(axisCount, 1);
        for (const AxisSpan &span : placement.of(role))
            row[static_cast<std::size_t>(span.axis)] *= span.size;
    }
    return shares;
}

RoleDegrees degreesOf(const Shares &shares)
{
    RoleDegrees degrees{};
    for (Role role : kRoles) {
        int degree = 1;
        for (int share : shares[at(role)])
            degree *= share;
        degrees[at(role)] = degree;
    }
    return degrees;
}

/// "data 1 x fsdp 1024 x tensor 4 x ..." for messages.
std::string degreeList(const RoleDegrees &degrees)
{
    std::string out;
    for (Role role : kRoles)
        out += (out.empty() ? "" : " x ") + nameOf(role) + " " + num(degrees[at(role)]);
    return out;
}

/// The roles holding part of axis `axis`, in placement order: "tensor 4, context 2, fsdp 2".
std::string holderList(const Shares &shares, std::size_t axis)
{
    std::string out;
    for (Role role : kPlacementOrder)
        if (shares[at(role)][axis] > 1)
            out += (out.empty() ? "" : ", ") + nameOf(role) + " " + num(shares[at(role)][axis]);
    return out.empty() ? "no role" : out;
}

/// "4 of x (16) and 2 of y (16)".
std::string shareList(const Topology &topology, const std::vector<int> &row)
{
    std::string out;
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (row[i] <= 1)
            continue;
        const MeshAxis &axis = topology.axes()[i];
        out += (out.empty() ? "" : " and ") + num(row[i]) + " of " + axis.name + " (" + num(axis.size) + ")";
    }
    return out;
}

std::vector<int> primeFactors(int n)
{
    std::vector<int> out;
    for (int p = 2; static_cast<std::int64_t>(p) * p <= n; ++p) {
        if (n % p != 0)
            continue;
        out.push_back(p);
        while (n % p == 0)
            n /= p;
    }
    if (n > 1)
        out.push_back(n);
    return out;
}

/// The divisors of n, largest first.
std::vector<int> divisorsDescending(int n)
{
    std::vector<int> out = divisors(n);
    std::reverse(out.begin(), out.end());
    return out;
}

/// Whether `degree` ways of `role` split `model` evenly: tensor over the heads (and over the KV
/// heads, or a whole number of copies of them), expert over the experts, pipeline over the layers.
bool fitsModel(Role role, int degree, const ModelSpec &model)
{
    switch (role) {
    case Role::Tensor:
        return model.heads % degree == 0
               && (model.kvHeads <= 0 || model.kvHeads % degree == 0 || degree % model.kvHeads == 0);
    case Role::Expert:
        return degree == 1 || (model.moe && model.moe->experts % degree == 0);
    case Role::Pipeline:
        return degree <= model.layers;
    case Role::Data:
    case Role::Fsdp:
    case Role::Context:
        return true;
    }
    return true;
}

/// The book's serving layout (ch. 7-8) for `plan`'s model and cluster: tensor parallelism inside
/// the fast domain (an NVLink node or rack, a TPU slice), just wide enough that the weights take
/// at most half of HBM (the rest is for the KV cache); for a mixture of experts that still does
/// not fit, experts spread over more chips; replicas (data) over the rest.
RoleDegrees servingLayout(const Plan &plan)
{
    const Topology &topology = plan.topology;
    const std::int64_t chips = topology.chipCount();
    std::int64_t domain = 1;
    for (const MeshAxis &axis : topology.axes())
        if (axis.link == LinkKind::Ici || axis.link == LinkKind::Nvlink)
            domain *= axis.size;
    const ModelSpec &model = plan.model;
    const ParamCounts counts = countParams(model);
    const double bytes = bytesPerElement(plan.inference.weightDtype);
    const double routed = model.moe ? double(counts.expertParams) * model.moe->experts * model.moeLayerCount() : 0.0;
    const double dense = double(counts.total) - routed;
    const double budget = 0.5 * double(topology.chip().hbmBytes);
    int tensor = 1;
    for (int t : divisors(std::gcd(chips, domain))) {
        if (!fitsModel(Role::Tensor, t, model))
            continue;
        tensor = t; // the widest that divides, unless a narrower one already fits
        if ((dense + routed) * bytes / t <= budget)
            break;
    }
    int expert = 1;
    if (model.moe && (dense + routed) * bytes / tensor > budget) {
        for (int e : divisors(chips / tensor)) {
            if (!fitsModel(Role::Expert, e, model))
                continue;
            expert = e;
            if ((dense + routed / e) * bytes / tensor <= budget)
                break;
        }
    }
    RoleDegrees degrees{};
    degrees.fill(1);
    degrees[at(Role::Tensor)] = tensor;
    degrees[at(Role::Expert)] = expert;
    degrees[at(Role::Data)] = static_cast<int>(chips / (std::int64_t(tensor) * expert));
    return degrees;
}

/// The role that absorbs freed factors: fsdp for training, data for serving.
Role batchRole(const Plan &plan)
{
    return plan.kind == WorkloadKind::Training ? Role::Fsdp : Role::Data;
}

/// Writes the degrees that changed into the plan's "parallelism" object.
void writeDegrees(json &plan, const RoleDegrees &before, const RoleDegrees &after)
{
    for (Role role : kRoles)
        if (before[at(role)] != after[at(role)])
            plan["parallelism"][nameOf(role)] = after[at(role)];
}

/// The requested placement if it still places `degrees`; else without the entries of the roles
/// in `involved`; else none at all. The error is auto placement's.
Expected<Requested> fitRequested(const Topology &topology, const RoleDegrees &degrees, const Requested &requested,
                                 const std::vector<Role> &involved)
{
    if (placeRoles(topology, degrees, requested))
        return requested;
    Requested trimmed = requested;
    for (Role role : involved)
        trimmed.erase(role);
    if (trimmed.size() != requested.size() && placeRoles(topology, degrees, trimmed))
        return trimmed;
    auto automatic = placeRoles(topology, degrees, {});
    if (!automatic)
        return automatic.error();
    return Requested{};
}

/// Removes from the plan's "placement" object the roles `requested` had and `kept` does not.
void writeTrimmedPlacement(json &plan, const Requested &requested, const Requested &kept)
{
    if (requested.size() == kept.size())
        return;
    json &placement = plan["parallelism"]["placement"];
    for (const auto &entry : requested)
        if (!kept.count(entry.first) && placement.is_object())
            placement.erase(nameOf(entry.first));
}

struct Stated {
    Requested requested;
    std::optional<Role> failed; ///< the first role whose share of the axes no list of axis names gives
};

/// Finds, role by role in placement order, an order of each role's axes for which placeRoles()
/// hands out exactly `target`. `preferred` gives each role's axes in the order to try first.
Stated statePlacement(const Topology &topology, const Shares &target, const std::array<std::vector<int>, 6> &preferred)
{
    Stated out;
    const auto &axes = topology.axes();
    std::vector<int> free(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i)
        free[i] = axes[i].size;
    for (Role role : kPlacementOrder) {
        const std::vector<int> &order = preferred[at(role)];
        if (order.empty())
            continue;
        int degree = 1;
        for (int share : target[at(role)])
            degree *= share;
        std::vector<std::size_t> permutation(order.size());
        std::iota(permutation.begin(), permutation.end(), std::size_t{0});
        bool found = false;
        do {
            // placeRoles: each named axis in turn gives gcd(what is left to place, what is free).
            std::vector<int> left = free;
            std::vector<int> got(axes.size(), 1);
            int remaining = degree;
            for (std::size_t k : permutation) {
                const auto axis = static_cast<std::size_t>(order[k]);
                const int take = std::gcd(remaining, left[axis]);
                if (take <= 1)
                    continue;
                got[axis] = take;
                left[axis] /= take;
                remaining /= take;
                if (remaining == 1)
                    break;
            }
            if (remaining == 1 && got == target[at(role)]) {
                std::vector<std::string> names;
                for (std::size_t k : permutation)
                    names.push_back(axes[static_cast<std::size_t>(order[k])].name);
                out.requested[role] = names;
                free = left;
                found = true;
            }
        } while (!found && std::next_permutation(permutation.begin(), permutation.end()));
        if (!found) {
            out.failed = role;
            return out;
        }
    }
    return out;
}

/// "/hardware/topology/0" -> "hardware.topology[0]", the way plan errors name fields.
std::string fieldPath(const std::string &pointer)
{
    std::string out;
    std::size_t start = 1;
    while (start <= pointer.size()) {
        const std::size_t end = std::min(pointer.find('/', start), pointer.size());
        std::string token = pointer.substr(start, end - start);
        std::string unescaped;
        for (std::size_t i = 0; i < token.size(); ++i) {
            if (token[i] == '~' && i + 1 < token.size()) {
                unescaped += token[i + 1] == '1' ? '/' : '~';
                ++i;
            } else {
                unescaped += token[i];
            }
        }
        const bool index = !unescaped.empty() && std::all_of(unescaped.begin(), unescaped.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        if (index && !out.empty())
            out += "[" + unescaped + "]";
        else
            out += (out.empty() ? "" : ".") + unescaped;
        start = end + 1;
    }
    return out;
}

bool allFinite(const json &value)
{
    if (value.is_number_float())
        return std::isfinite(value.get<double>());
    if (value.is_structured())
        for (const auto &item : value)
            if (!allFinite(item))
                return false;
    return true;
}

/// Makes an error found after setting `field` name that field.
Error nameField(const Error &error, const std::string &field)
{
    if (error.path == field || startsWith(error.path, field + ".") || startsWith(error.path, field + "["))
        return error;
    if (error.path.empty() || startsWith(field, error.path + ".") || startsWith(field, error.path + "["))
        return Error{field, error.message};
    return Error{field, error.path + ": " + error.message};
}

} // namespace

PlanEdits::PlanEdits() : PlanEdits(ChipCatalog::builtin(), ModelCatalog::builtin()) {}

PlanEdits::PlanEdits(const ChipCatalog &chips, const ModelCatalog &models) : m_chips(chips), m_models(models) {}

std::optional<Error> PlanEdits::check(const json &plan) const
{
    auto loaded = planFromJson(plan, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    if (auto error = checkModelSharding(loaded.value()))
        return error;
    const ParallelismSpec &p = loaded->parallelism;
    auto placed = placeRoles(loaded->topology, p.degrees, p.placement);
    if (!placed)
        return placed.error();
    return std::nullopt;
}

Expected<json> PlanEdits::withModel(const json &plan, const json &modelRef) const
{
    json out = plan;
    out["model"] = modelRef;
    auto loaded = planFromJson(out, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const Plan &edited = loaded.value();
    const RoleDegrees before = edited.parallelism.degrees;
    RoleDegrees after = before;
    int freed = 1;
    for (Role role : {Role::Tensor, Role::Expert, Role::Pipeline}) {
        const int degree = after[at(role)];
        if (fitsModel(role, degree, edited.model))
            continue;
        for (int divisor : divisorsDescending(degree))
            if (fitsModel(role, divisor, edited.model)) {
                after[at(role)] = divisor;
                freed *= degree / divisor;
                break;
            }
    }
    after[at(batchRole(edited))] *= freed;

    std::vector<Role> involved;
    for (Role role : kRoles)
        if (after[at(role)] != before[at(role)])
            involved.push_back(role);
    if (!involved.empty()) {
        auto kept = fitRequested(edited.topology, after, edited.parallelism.placement, involved);
        if (!kept)
            return Error{"model", "the degrees refit to " + edited.model.name + " (" + degreeList(after)
                                      + ") do not place on " + edited.topology.describe() + ": "
                                      + kept.error().message};
        writeDegrees(out, before, after);
        writeTrimmedPlacement(out, edited.parallelism.placement, kept.value());
    }
    if (auto error = check(out))
        return *error;
    return out;
}

Expected<json> PlanEdits::withHardware(const json &plan, const json &hardware) const
{
    if (!hardware.is_object())
        return Error{"hardware", "must be an object with chip and topology, got " + hardware.dump()};
    json out = plan;
    out["hardware"] = hardware;
    auto loaded = planFromJson(out, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const Plan &edited = loaded.value();
    const std::int64_t chips = edited.topology.chipCount();
    const RoleDegrees before = edited.parallelism.degrees;
    const Role primary = batchRole(edited);
    const Role secondary = primary == Role::Fsdp ? Role::Data : Role::Fsdp;

    RoleDegrees after{1, 1, 1, 1, 1, 1};
    std::int64_t product = 1;
    for (Role role : {Role::Tensor, Role::Pipeline, Role::Expert, Role::Context, secondary})
        for (int divisor : divisorsDescending(before[at(role)]))
            if (chips % (product * divisor) == 0) {
                after[at(role)] = divisor;
                product *= divisor;
                break;
            }
    after[at(primary)] = static_cast<int>(chips / product);

    writeDegrees(out, before, after);
    if (out.contains("parallelism") && out["parallelism"].is_object() && out["parallelism"].contains("placement"))
        out["parallelism"]["placement"] = json::object();
    if (auto error = check(out)) {
        if (startsWith(error->path, "parallelism"))
            return Error{"hardware.topology", "the degrees refit to " + edited.topology.describe() + " ("
                                                  + degreeList(after) + ") do not place: " + error->message};
        return *error;
    }
    return out;
}

namespace {

/// The slice shape (ascending axes) of `dims` axes holding `chips` that the chip accepts, the
/// most cube-like first; empty when none does.
std::vector<int> cubeLikeSlice(const Chip &chip, std::int64_t chips, int dims)
{
    std::vector<int> best;
    double bestSpread = 0;
    const auto consider = [&](std::vector<int> shape) {
        if (!Topology::tpuSlice(chip, shape, 1))
            return;
        const double spread = double(shape.back()) / double(shape.front());
        if (best.empty() || spread < bestSpread) {
            best = std::move(shape);
            bestSpread = spread;
        }
    };
    const std::vector<int> factors = divisors(chips);
    for (int a : factors) {
        if (dims == 1) {
            if (a == chips)
                consider({a});
            continue;
        }
        for (int b : factors) {
            if (b < a || (chips / a) % b != 0)
                continue;
            const std::int64_t c = chips / a / b;
            if (dims == 2 && c == 1)
                consider({a, b});
            if (dims == 3 && c >= b)
                consider({a, b, static_cast<int>(c)});
        }
    }
    return best;
}

} // namespace

Expected<json> PlanEdits::withChip(const json &plan, const std::string &chipId) const
{
    const Chip *to = m_chips.find(chipId);
    if (!to)
        return Error{"hardware.chip", "no chip \"" + chipId + "\" in the catalog"};
    auto loaded = planFromJson(plan, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const Topology &current = loaded->topology;
    const Chip &from = current.chip();
    const std::int64_t chips = current.chipCount();
    json hardware = {{"chip", to->id}};

    if (to->isTpu() && to->ici) {
        // The same slice when the new chip takes it (v4 <-> v5p, v5e <-> v6e).
        std::vector<int> shape = current.sliceShape();
        int slices = current.sliceCount();
        if (!from.isTpu() || !Topology::tpuSlice(*to, shape, slices)) {
            shape.clear();
            const auto &pod = to->ici->maxShape;
            const std::int64_t podChips =
                std::accumulate(pod.begin(), pod.end(), std::int64_t(1), std::multiplies<>());
            for (int s : divisors(chips)) {
                if (!pod.empty() && chips / s > podChips)
                    continue; // more than a pod per slice: no shape to search
                shape = cubeLikeSlice(*to, chips / s, to->ici->torusDims);
                if (!shape.empty()) {
                    slices = s;
                    break;
                }
            }
            if (shape.empty()) {
                shape = to->ici->torusDims >= 3 ? std::vector<int>{4, 4, 4} : std::vector<int>{4, 4};
                slices = 1;
            }
        }
        hardware["topology"] = shape;
        if (slices > 1)
            hardware["slices"] = slices;
    } else if (to->nvlink) {
        const int domain = to->nvlink->domainSize;
        int perNode = domain;
        if (!from.isTpu() && from.nvlink) {
            const int gpuAxis = current.axisIndex("gpu");
            const int old = gpuAxis >= 0 ? current.axes()[static_cast<std::size_t>(gpuAxis)].size : domain;
            if (old != from.nvlink->domainSize && old <= domain)
                perNode = old; // a node size the user picked, not the old chip's default
        }
        std::int64_t nodes = 1;
        if (chips % perNode == 0)
            nodes = chips / perNode;
        else if (chips < perNode)
            perNode = static_cast<int>(chips); // part of one domain: the count is what was asked for
        else
            nodes = std::max<std::int64_t>(1, (chips + perNode / 2) / perNode);
        hardware["topology"] = {{"nodes", nodes}, {"gpus_per_node", perNode}};
    } else {
        return Error{"hardware.chip", chipId + " has neither ICI nor NVLink in the catalog"};
    }
    return withHardware(plan, hardware);
}

Expected<json> PlanEdits::withDegree(const json &plan, Role role, int degree) const
{
    const std::string path = "parallelism." + nameOf(role);
    const std::string name = nameOf(role);
    if (degree < 1)
        return Error{path, "must be a positive integer, got " + num(degree)};
    auto loaded = planFromJson(plan, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const Plan &current = loaded.value();
    const Topology &topology = current.topology;
    const std::int64_t chips = topology.chipCount();
    if (degree > chips || chips % degree != 0)
        return Error{path, name + " parallelism of " + num(degree) + " must divide the " + num(chips) + " chips of "
                               + topology.describe()};
    const RoleDegrees before = current.parallelism.degrees;
    if (before[at(role)] == degree)
        return plan;

    // degree / old = take / give in lowest terms: the others lose `take` and gain `give`.
    RoleDegrees after = before;
    after[at(role)] = degree;
    const int common = std::gcd(degree, before[at(role)]);
    int take = degree / common;
    const int give = before[at(role)] / common;
    for (Role donor : kDonorOrder) {
        if (donor == role)
            continue;
        const int t = std::gcd(take, after[at(donor)]);
        after[at(donor)] /= t;
        take /= t;
    }
    if (take != 1)
        return Error{path, "no other role has a factor of " + num(take) + " to give up for " + name + " parallelism of "
                               + num(degree) + " (" + degreeList(before) + ")"};
    Role receiver = batchRole(current);
    if (receiver == role)
        receiver = receiver == Role::Fsdp ? Role::Data : Role::Fsdp;
    after[at(receiver)] *= give;

    Plan edited = current;
    edited.parallelism.degrees = after;
    if (auto error = checkModelSharding(edited))
        return *error;

    std::vector<Role> involved;
    for (Role r : kRoles)
        if (after[at(r)] != before[at(r)])
            involved.push_back(r);
    auto kept = fitRequested(topology, after, current.parallelism.placement, involved);
    if (!kept)
        return Error{path, name + " parallelism of " + num(degree) + " (" + degreeList(after) + ") does not place on "
                               + topology.describe() + ": " + kept.error().message};
    json out = plan;
    writeDegrees(out, before, after);
    writeTrimmedPlacement(out, current.parallelism.placement, kept.value());
    if (auto error = check(out))
        return *error;
    return out;
}

Expected<json> PlanEdits::withRoleOnAxis(const json &plan, Role role, const std::string &axis, AxisDrop how) const
{
    const std::string path = "parallelism.placement";
    const std::string name = nameOf(role);
    auto loaded = planFromJson(plan, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const Plan &current = loaded.value();
    if (auto error = checkModelSharding(current))
        return *error;
    const Topology &topology = current.topology;
    const int axisIndex = topology.axisIndex(axis);
    if (axisIndex < 0)
        return Error{path, "there is no axis \"" + axis + "\" on " + topology.describe() + " (axes: "
                               + topology.axisList() + ")"};
    const auto a = static_cast<std::size_t>(axisIndex);
    const int size = topology.axes()[a].size;
    if (size == 1)
        return Error{path, "axis " + axis + " of " + topology.describe() + " has a single chip: " + name
                               + " cannot hold any of it"};
    auto placed = placeRoles(topology, current.parallelism.degrees, current.parallelism.placement);
    if (!placed)
        return placed.error();
    const Shares shares = sharesOf(placed.value(), topology.axes().size());
    if (shares[at(role)][a] == size)
        return plan; // it already holds all of it

    struct Candidate {
        Shares target;
        std::string intent; ///< "tensor on all of y (16 chips)"
    };
    std::vector<Candidate> candidates;
    if (how == AxisDrop::Whole) {
        Shares target = shares;
        for (Role r : kRoles)
            target[at(r)][a] = 1;
        target[at(role)][a] = size;
        candidates.push_back({target, name + " on all of " + axis + " (" + num(size) + " chips)"});
    } else {
        // The axis's smallest factor that a holder can give and still keep a share, from the
        // holder with the largest share (ties: the donor order of withDegree).
        for (int factor : primeFactors(size)) {
            std::vector<Role> donors;
            for (Role r : kDonorOrder)
                if (r != role && shares[at(r)][a] % factor == 0 && shares[at(r)][a] / factor >= 2)
                    donors.push_back(r);
            std::stable_sort(donors.begin(), donors.end(),
                             [&](Role l, Role r) { return shares[at(l)][a] > shares[at(r)][a]; });
            for (Role donor : donors) {
                Shares target = shares;
                target[at(donor)][a] /= factor;
                target[at(role)][a] *= factor;
                candidates.push_back({target, name + " taking " + num(factor) + " of " + axis + " from " + nameOf(donor)
                                                  + " (" + num(shares[at(donor)][a]) + ")"});
            }
        }
        if (candidates.empty()) {
            std::string why = primeFactors(size).size() == 1 && primeFactors(size)[0] == size
                                  ? num(size) + " is prime, so no holder can give up part of it and keep the rest"
                                  : "no holder has a factor of its share to spare and still keep part of the axis";
            return Error{path, "cannot split " + axis + " (" + num(size) + " chips: " + holderList(shares, a)
                                   + ") for " + name + ": " + why + ". Drop " + name + " on " + axis
                                   + " as Whole instead"};
        }
    }

    std::optional<Error> firstError;
    for (const Candidate &candidate : candidates) {
        const Shares &target = candidate.target;
        const RoleDegrees after = degreesOf(target);
        Plan edited = current;
        edited.parallelism.degrees = after;
        edited.parallelism.placement.clear();
        std::optional<Error> error;
        if (auto sharding = checkModelSharding(edited)) {
            error = Error{path, candidate.intent + " would make " + name + " " + num(after[at(role)])
                                    + "-way: " + sharding->message};
        } else {
            // Try each role's axes in the order placeRoles visited them, new ones last.
            std::array<std::vector<int>, 6> preferred;
            for (Role r : kRoles) {
                for (const AxisSpan &span : placed->of(r))
                    if (target[at(r)][static_cast<std::size_t>(span.axis)] > 1
                        && std::find(preferred[at(r)].begin(), preferred[at(r)].end(), span.axis)
                               == preferred[at(r)].end())
                        preferred[at(r)].push_back(span.axis);
                for (std::size_t i = 0; i < target[at(r)].size(); ++i)
                    if (target[at(r)][i] > 1
                        && std::find(preferred[at(r)].begin(), preferred[at(r)].end(), static_cast<int>(i))
                               == preferred[at(r)].end())
                        preferred[at(r)].push_back(static_cast<int>(i));
            }
            const Stated stated = statePlacement(topology, target, preferred);
            if (stated.failed) {
                const Role r = *stated.failed;
                error = Error{path, candidate.intent + " would give " + nameOf(r) + " "
                                        + shareList(topology, target[at(r)])
                                        + ", which no placement states: roles are placed in the order pipeline, "
                                          "tensor, expert, context, fsdp, data, each taking all it can of the axes "
                                          "it names in turn. Drop "
                                        + name + " on " + axis + " as Whole instead"};
            } else {
                auto check = placeRoles(topology, after, stated.requested);
                if (!check || sharesOf(check.value(), topology.axes().size()) != target) {
                    error = Error{path, candidate.intent + " gives a placement that does not place as intended"};
                } else {
                    json out = plan;
                    writeDegrees(out, current.parallelism.degrees, after);
                    json placement = json::object();
                    for (const auto &[r, names] : stated.requested)
                        placement[nameOf(r)] = names;
                    out["parallelism"]["placement"] = placement;
                    error = this->check(out);
                    if (!error)
                        return out;
                }
            }
        }
        if (!firstError)
            firstError = error;
    }
    return *firstError;
}

Expected<json> PlanEdits::withField(const json &plan, const std::string &pointer, const json &value) const
{
    if (pointer.empty())
        return Error{"", "name a field, such as /workload/global_batch"};
    json::json_pointer target;
    try {
        target = json::json_pointer(pointer);
    } catch (const json::exception &) {
        return Error{pointer, "is not a field pointer such as /workload/global_batch"};
    }
    const std::string field = fieldPath(pointer);
    if (!allFinite(value))
        return Error{field, "must hold finite numbers only, got " + value.dump()};
    json out = plan;
    try {
        if (value.is_null()) {
            if (out.contains(target)) {
                json &parent = out.at(target.parent_pointer());
                if (parent.is_object())
                    parent.erase(target.back());
                else if (parent.is_array())
                    parent.erase(static_cast<std::size_t>(std::stoul(target.back())));
            }
        } else {
            out[target] = value;
        }
    } catch (const std::exception &e) {
        return Error{field, std::string("cannot be set here: ") + e.what()};
    }
    if (auto error = check(out))
        return nameField(*error, field);
    return out;
}

Expected<json> PlanEdits::withServing(const json &plan, const std::string &mode) const
{
    if (mode != "interleaved" && mode != "disaggregated")
        return Error{"workload.serving", "must be \"interleaved\" or \"disaggregated\", got \"" + mode + "\""};
    auto loaded = planFromJson(plan, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const Plan &current = loaded.value();
    if (current.kind != WorkloadKind::Inference)
        return Error{"workload.serving", "only an inference plan has a serving mode"};
    json out = plan;
    out["workload"]["serving"] = mode;
    if (mode == "disaggregated") {
        const std::int64_t chips = current.topology.chipCount();
        const int replicas = current.parallelism.degree(Role::Data);
        const std::int64_t perReplica = chips / replicas;
        const std::int64_t prefill = current.inference.prefillChips;
        const bool usable = prefill > 0 && prefill % perReplica == 0 && prefill < chips;
        if (!usable) {
            if (replicas < 2)
                return Error{"parallelism.data", "disaggregated serving needs at least two replicas (data 2 or more): "
                                                 "one for prefill, one for decode; this plan has one"};
            out["workload"]["prefill_chips"] = perReplica * (replicas / 2);
        }
    }
    if (auto error = check(out))
        return *error;
    return out;
}

Expected<json> PlanEdits::withWorkloadKind(const json &plan, const std::string &kind) const
{
    if (kind != "training" && kind != "inference")
        return Error{"workload.kind", "must be \"training\" or \"inference\", got \"" + kind + "\""};
    auto loaded = planFromJson(plan, m_chips, m_models);
    if (!loaded)
        return loaded.error();
    const bool training = kind == "training";
    if ((loaded->kind == WorkloadKind::Training) == training)
        return plan;
    // The other kind's keys stay in "workload": the loader reads only the current kind's.
    json out = plan;
    json &workload = out["workload"];
    workload["kind"] = kind;
    if (training) {
        const TrainingSpec defaults;
        if (!workload.contains("seq_len"))
            workload["seq_len"] = defaults.seqLen;
        if (!workload.contains("global_batch"))
            workload["global_batch"] = defaults.globalBatch;
    } else {
        const InferenceSpec defaults;
        if (!workload.contains("batch"))
            workload["batch"] = defaults.batch;
        if (!workload.contains("prompt_len"))
            workload["prompt_len"] = defaults.promptLen;
        if (!workload.contains("generate_len"))
            workload["generate_len"] = defaults.generateLen;
        // A training layout (fsdp 1024 at batch 1) is no way to serve: propose the book's.
        auto served = planFromJson(out, m_chips, m_models);
        if (!served)
            return served.error();
        const RoleDegrees degrees = servingLayout(*served);
        json &parallelism = out["parallelism"];
        for (Role role : kRoles)
            parallelism[nameOf(role)] = degrees[at(role)];
        parallelism["placement"] = json::object();
        // At least a sequence per replica, or the replicas have nothing to decode.
        if (served->inference.batch < degrees[at(Role::Data)])
            workload["batch"] = degrees[at(Role::Data)];
    }
    if (auto error = check(out))
        return *error;
    return out;
}

} // namespace meshplan::model
