#include "hardware/collective.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace meshplan::model {

std::string_view collectiveName(CollectiveOp op)
{
    switch (op) {
    case CollectiveOp::AllGather:
        return "all-gather";
    case CollectiveOp::ReduceScatter:
        return "reduce-scatter";
    case CollectiveOp::AllReduce:
        return "all-reduce";
    case CollectiveOp::AllToAll:
        return "all-to-all";
    case CollectiveOp::SendRecv:
        return "send-recv";
    }
    return "?";
}

std::optional<CollectiveOp> parseCollective(std::string_view name)
{
    for (auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
                    CollectiveOp::AllToAll, CollectiveOp::SendRecv})
        if (collectiveName(op) == name)
            return op;
    return std::nullopt;
}

Expected<std::vector<AxisSpan>> wholeAxes(const Topology &topology, const std::vector<std::string> &names,
                                          const std::string &path)
{
    std::vector<AxisSpan> spans;
    for (const auto &name : names) {
        const int index = topology.axisIndex(name);
        if (index < 0)
            return Error{path, "no axis \"" + name + "\" in " + topology.describe() + " (axes: "
                                   + topology.axisList() + ")"};
        for (const auto &s : spans)
            if (s.axis == index)
                return Error{path, "names axis \"" + name + "\" twice"};
        spans.push_back({index, topology.axes()[static_cast<std::size_t>(index)].size, 1});
    }
    return spans;
}

namespace {

double ceilLog2(double n)
{
    return n <= 1 ? 0.0 : std::ceil(std::log2(n));
}

/// One link class's contribution: seconds of bandwidth and of latency.
struct Term {
    double bandwidth = 0;
    double latency = 0;
    LinkKind link = LinkKind::Ici;
};

/// The levels a collective crosses (NVLink, leaf, spine; or ICI, DCN): at most three, kept in
/// place because every evaluation prices a dozen collectives.
struct Terms {
    std::array<Term, 3> items{};
    std::size_t count = 0;
    void push_back(const Term &term) { items[count++] = term; }
    const Term &front() const { return items[0]; }
    const Term *begin() const { return items.data(); }
    const Term *end() const { return items.data() + count; }
};

bool isReduction(CollectiveOp op)
{
    return op == CollectiveOp::AllReduce;
}

// TPU ICI: a ring per axis (both directions when it wraps), axes used in parallel (book ch. 3).
Term iciTerm(const Topology &t, CollectiveOp op, const std::vector<AxisSpan> &spans, double bytes,
             const CollectiveOptions &o)
{
    const IciSpec &ici = *t.chip().ici;
    const double w = ici.linkBandwidth;
    Term term;
    term.link = LinkKind::Ici;
    double participants = 1;
    for (const auto &s : spans)
        participants *= s.size;
    if (participants <= 1)
        return term;

    double hops = 0;
    if (op == CollectiveOp::AllToAll) {
        // Bisection bound: half the group sends V/4 across the narrowest cut of the group.
        double narrowest = std::numeric_limits<double>::infinity();
        for (const auto &s : spans) {
            if (s.size <= 1)
                continue;
            const auto &axis = t.axes()[static_cast<std::size_t>(s.axis)];
            const bool ring = axis.wraps && s.size * s.stride == axis.size;
            const double cut = (participants / s.size) * (ring ? 2.0 : 1.0) * w / s.stride;
            narrowest = std::min(narrowest, cut);
            hops += ring ? std::floor(s.size / 2.0) : s.size - 1;
        }
        term.bandwidth = bytes * o.activeFraction / 4.0 / narrowest;
    } else {
        // AllGather / ReduceScatter: V over the summed per-axis bandwidth. A ring moves V/W_bidi
        // (the book's form); a line without wraparound (N-1)/N * V / W_one-way.
        double sumBandwidth = 0;
        for (const auto &s : spans) {
            if (s.size <= 1)
                continue;
            const auto &axis = t.axes()[static_cast<std::size_t>(s.axis)];
            const bool ring = axis.wraps && s.size * s.stride == axis.size;
            const double n = s.size;
            const double axisBandwidth = ring ? 2.0 * w : w * n / (n - 1.0);
            sumBandwidth += axisBandwidth / s.stride;
            hops += ring ? std::floor(n / 2.0) : n - 1.0;
        }
        term.bandwidth = bytes / sumBandwidth;
    }
    term.latency = hops * ici.hopLatency;
    if (isReduction(op)) {
        term.bandwidth *= 2.0;
        term.latency *= 2.0;
    }
    if (o.mode == CostMode::Achievable)
        term.bandwidth /= t.chip().achievable.iciEfficiency;
    return term;
}

// TPU DCN: each chip exchanges its stripe of the array with its peers in the other slices.
Term dcnTerm(const Topology &t, CollectiveOp op, int slices, double stripeBytes, double groupChips,
             const CollectiveOptions &o)
{
    Term term;
    term.link = LinkKind::Dcn;
    if (slices <= 1)
        return term;
    const double s = slices;
    const double w = t.chip().dcnBandwidth;
    if (op == CollectiveOp::AllToAll) {
        // Each chip holds V/N of the array and sends the (S-1)/S of it bound for other slices.
        term.bandwidth = stripeBytes * o.activeFraction / groupChips * (s - 1.0) / s / w;
    } else {
        // The book prices a DCN ring at V/W_dcn per AllGather; the achievable model keeps (S-1)/S.
        const double factor = o.mode == CostMode::Ideal ? 1.0 : (s - 1.0) / s;
        term.bandwidth = stripeBytes * factor / w;
        if (isReduction(op))
            term.bandwidth *= 2.0;
    }
    term.latency = (s - 1.0) * t.chip().dcnLatency * (isReduction(op) ? 2.0 : 1.0);
    if (o.mode == CostMode::Achievable)
        term.bandwidth /= t.chip().achievable.dcnEfficiency;
    return term;
}

// Of a token's k expert copies spread uniformly over `places` (GPUs or nodes), the share that
// lands on distinct places: places(1 - (1 - 1/places)^k)/k, a place being missed with
// probability (1 - 1/places)^k.
double distinctDestinationShare(double places, double k)
{
    return std::min(1.0, places * (1.0 - std::pow(1.0 - 1.0 / places, k)) / k);
}

// GPU: NVSwitch inside a node, then a fat tree of leaf and spine levels (book ch. 12).
Terms gpuTerms(const Topology &t, CollectiveOp op, int g, int m, double bytes,
                           const CollectiveOptions &o)
{
    const Chip &chip = t.chip();
    const NvlinkSpec &nv = *chip.nvlink;
    const ScaleOutSpec &so = *chip.scaleOut;
    const double gpusPerNode = t.axes()[0].size;
    const double wGpu = nv.bandwidth * (o.mode == CostMode::Achievable ? chip.achievable.nvlinkEfficiency : 1.0);
    // The node's egress is shared by all GPUs in it; SPMD runs gpusPerNode/g groups at once.
    const double wNodeShare = so.nodeEgressBandwidth * (g / gpusPerNode)
                              * (o.mode == CostMode::Achievable ? chip.achievable.scaleOutEfficiency : 1.0);
    const double G = g;
    const double M = m;
    const bool sharp = o.sharp && isReduction(op) && nv.sharp;

    Term intra{0, 0, LinkKind::Nvlink};
    Term leaf{0, 0, LinkKind::ScaleOut};
    Term spine{0, 0, LinkKind::ScaleOut};
    if (op == CollectiveOp::AllToAll) {
        const double n = G * M;
        const double v = bytes * o.activeFraction;
        const double k = o.forwardedTopK;
        if (g > 1) {
            // The same kernels send a token once to each GPU that holds one of its experts, not
            // once per expert (DeepEP's dispatch takes is_token_in_rank [tokens, ranks]; each
            // rank returns one summed row in the combine), and a token that crossed the network
            // to a node's same-index GPU is forwarded over NVLink to the others there: per GPU,
            // a token's copies on other GPUs, (G - 1)/G of them, cross NVLink once.
            intra.bandwidth = k > 0 ? v / n * distinctDestinationShare(n, k) * (G - 1.0) / G / wGpu
                                    : v * (G - 1.0) / (n * n) / wGpu;
        }
        if (m > 1) {
            // A token bound for k experts crosses the network once per other node that holds one
            // of them, not k(M - 1)/M times (DeepSeek-V3 report sec. 3.2.2: IB to the same
            // in-node index, then NVLink forwarding).
            const double share = k > 0 ? distinctDestinationShare(M, k) : 1.0;
            leaf.bandwidth = v * share * (M - 1.0) / (M * M) / wNodeShare;
        }
    } else {
        const double dLeaf = std::min<double>(m, so.nodesPerLeaf);
        const double dSpine = std::ceil(M / so.nodesPerLeaf);
        const auto level = [&](double degree, double bandwidth) {
            if (degree <= 1)
                return 0.0;
            return (sharp ? 1.0 : (degree - 1.0) / degree) * bytes / bandwidth;
        };
        intra.bandwidth = level(G, wGpu);
        leaf.bandwidth = level(dLeaf, wNodeShare);
        spine.bandwidth = level(dSpine, wNodeShare * so.nodesPerLeaf);
        if (isReduction(op) && !sharp) {
            intra.bandwidth *= 2.0;
            leaf.bandwidth *= 2.0;
            spine.bandwidth *= 2.0;
        }
    }
    if (o.mode == CostMode::Achievable && (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter)) {
        // NCCL runs all-gather and reduce-scatter only as rings: n - 1 steps, each waiting on its
        // neighbour. Of them, M - 1 cross the network and the other M(G - 1) stay inside a node
        // (NCCL's own cost model, src/graph/tuning.cc: (nsteps - nInterSteps) x intra latency +
        // nInterSteps x network latency). The book's log-depth count is the ideal.
        intra.latency = M * (G - 1.0) * nv.latency;
        leaf.latency = (M - 1.0) * so.latency;
        return Terms{{intra, leaf, spine}, 3};
    }
    const double rounds = isReduction(op) && !sharp ? 2.0 : 1.0;
    intra.latency = rounds * ceilLog2(G) * nv.latency;
    leaf.latency = rounds * ceilLog2(M) * so.latency;
    return Terms{{intra, leaf, spine}, 3};
}

// One message to the neighbour along the group's outermost axis: one link, one direction.
CollectiveCost sendRecvCost(const Topology &t, const std::vector<AxisSpan> &group, double bytes,
                            const CollectiveOptions &o)
{
    const Chip &chip = t.chip();
    const bool achievable = o.mode == CostMode::Achievable;
    LinkKind link = LinkKind::Ici;
    for (const auto &s : group)
        if (s.size > 1)
            link = std::max(link, t.axes()[static_cast<std::size_t>(s.axis)].link);
    double bandwidth = 0;
    double latency = 0;
    switch (link) {
    case LinkKind::Ici:
        bandwidth = chip.ici->linkBandwidth * (achievable ? chip.achievable.iciEfficiency : 1.0);
        latency = chip.ici->hopLatency;
        break;
    case LinkKind::Dcn:
        bandwidth = chip.dcnBandwidth * (achievable ? chip.achievable.dcnEfficiency : 1.0);
        latency = chip.dcnLatency;
        break;
    case LinkKind::Nvlink:
        bandwidth = chip.nvlink->bandwidth * (achievable ? chip.achievable.nvlinkEfficiency : 1.0);
        latency = chip.nvlink->latency;
        break;
    case LinkKind::ScaleOut:
        // Every GPU of the node sends to its peer in the next stage at once: a share of the NICs.
        bandwidth = chip.scaleOut->nodeEgressBandwidth / t.axes()[0].size
                    * (achievable ? chip.achievable.scaleOutEfficiency : 1.0);
        latency = chip.scaleOut->latency;
        break;
    }
    CollectiveCost cost;
    cost.bandwidthTime = bytes / bandwidth;
    cost.latencyTime = latency;
    cost.time = achievable ? cost.bandwidthTime + latency : std::max(cost.bandwidthTime, latency);
    cost.latencyBound = latency > cost.bandwidthTime;
    cost.bytesPerChip = bytes;
    cost.bindingLink = link;
    return cost;
}

} // namespace

CollectiveCost collectiveCost(const Topology &t, CollectiveOp op, const std::vector<AxisSpan> &group,
                              double bytes, const CollectiveOptions &o)
{
    CollectiveCost cost;
    double participants = 1;
    for (const auto &s : group)
        participants *= std::max(1, s.size);
    if (participants <= 1 || bytes <= 0)
        return cost;

    if (op == CollectiveOp::SendRecv)
        return sendRecvCost(t, group, bytes, o);

    Terms terms;
    if (t.chip().isTpu()) {
        std::vector<AxisSpan> iciSpans;
        int slices = 1;
        double iciChips = 1;
        for (const auto &s : group) {
            if (t.axes()[static_cast<std::size_t>(s.axis)].link == LinkKind::Dcn) {
                slices = s.size;
            } else {
                iciSpans.push_back(s);
                iciChips *= s.size;
            }
        }
        terms.push_back(iciTerm(t, op, iciSpans, bytes, o));
        // Hierarchically, each chip carries only its ICI stripe across DCN.
        const double stripe = op == CollectiveOp::AllToAll ? bytes : bytes / iciChips;
        terms.push_back(dcnTerm(t, op, slices, stripe, participants, o));
    } else {
        int g = 1;
        int m = 1;
        for (const auto &s : group) {
            if (t.axes()[static_cast<std::size_t>(s.axis)].link == LinkKind::Nvlink)
                g = s.size;
            else
                m = s.size;
        }
        terms = gpuTerms(t, op, g, m, bytes, o);
    }

    const Term *binding = &terms.front();
    for (const auto &term : terms) {
        if (term.bandwidth > binding->bandwidth)
            binding = &term;
        cost.latencyTime = std::max(cost.latencyTime, term.latency);
    }
    // Levels run concurrently (pipelined chunks), so the slowest one sets the pace.
    cost.bandwidthTime = binding->bandwidth;
    cost.bindingLink = binding->link;
    // Latency of the levels adds up along the longest path; take the sum of per-level latencies.
    double latencySum = 0;
    for (const auto &term : terms)
        latencySum += term.latency;
    cost.latencyTime = latencySum;
    if (o.mode == CostMode::Ideal)
        cost.time = std::max(cost.bandwidthTime, cost.latencyTime);
    else
        cost.time = cost.bandwidthTime + cost.latencyTime;
    cost.latencyBound = cost.latencyTime > cost.bandwidthTime;

    const double n = participants;
    switch (op) {
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
        cost.bytesPerChip = bytes * (n - 1.0) / n;
        break;
    case CollectiveOp::AllReduce:
        cost.bytesPerChip = 2.0 * bytes * (n - 1.0) / n;
        break;
    case CollectiveOp::AllToAll:
        cost.bytesPerChip = bytes * o.activeFraction / n * (n - 1.0) / n;
        break;
    case CollectiveOp::SendRecv:
        break;
    }
    return cost;
}

} // namespace meshplan::model
