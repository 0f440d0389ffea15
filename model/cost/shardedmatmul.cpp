#include "cost/shardedmatmul.h"

#include <algorithm>

namespace meshplan::model {

namespace {

using Dims = std::map<std::string, std::int64_t>;

bool contains(const std::vector<std::string> &list, const std::string &item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

std::vector<std::string> minus(const std::vector<std::string> &a, const std::vector<std::string> &b)
{
    std::vector<std::string> out;
    for (const auto &x : a)
        if (!contains(b, x))
            out.push_back(x);
    return out;
}

std::string joinAxes(const std::vector<std::string> &axes)
{
    std::string out;
    for (const auto &a : axes)
        out += (out.empty() ? "" : ",") + a;
    return out;
}

class Analyzer
{
public:
    Analyzer(const Topology &t, const Dims &dims, DType dtype, CostMode mode)
        : m_t(t), m_dims(dims), m_elementBytes(bytesPerElement(dtype)), m_dtype(dtype), m_mode(mode)
    {}

    int axisSize(const std::string &axis) const
    {
        return m_t.axes()[static_cast<std::size_t>(m_t.axisIndex(axis))].size;
    }
    double shards(const std::vector<std::string> &axes) const
    {
        double n = 1;
        for (const auto &a : axes)
            n *= axisSize(a);
        return n;
    }
    double localElements(const ShardedArray &array) const
    {
        double n = 1;
        for (const auto &d : array.dims)
            n *= static_cast<double>(m_dims.at(d.name)) / shards(d.axes);
        return n;
    }
    double bytes(const ShardedArray &array) const { return localElements(array) * m_elementBytes; }

    std::optional<Error> validate(const MatmulExpression &e) const
    {
        for (const ShardedArray *array : {&e.lhs, &e.rhs, &e.out}) {
            for (const auto &d : array->dims) {
                auto it = m_dims.find(d.name);
                if (it == m_dims.end())
                    return Error{"dims." + d.name, "no size given for dimension " + d.name + " of " + array->name};
                if (it->second < 1)
                    return Error{"dims." + d.name, "must be a positive integer, got " + std::to_string(it->second)};
                for (const auto &a : d.axes)
                    if (m_t.axisIndex(a) < 0)
                        return Error{"notation", array->name + " shards " + d.name + " over axis \"" + a
                                                     + "\", which " + m_t.describe() + " does not have (axes: "
                                                     + m_t.axisList() + ")"};
                const double n = shards(d.axes);
                if (static_cast<double>(it->second) < n || it->second % static_cast<std::int64_t>(n) != 0)
                    return Error{"dims." + d.name, std::to_string(it->second) + " does not split evenly into "
                                                       + std::to_string(static_cast<std::int64_t>(n)) + " shards over "
                                                       + joinAxes(d.axes)};
            }
            for (const auto &a : array->unreduced)
                if (m_t.axisIndex(a) < 0)
                    return Error{"notation", array->name + " is unreduced over axis \"" + a + "\", which "
                                                 + m_t.describe() + " does not have"};
        }
        if (!e.lhs.unreduced.empty() || !e.rhs.unreduced.empty())
            return Error{"notation", "an input with {U_...} must be reduced before a matmul"};
        for (const ShardedArray *in : {&e.lhs, &e.rhs})
            for (const auto &d : in->dims) {
                const bool inOther = (in == &e.lhs ? e.rhs : e.lhs).dim(d.name) != nullptr;
                if (!inOther && !e.out.dim(d.name))
                    return Error{"notation", d.name + " appears in " + in->name + " but not in " + e.out.name
                                                 + "; summing it away is not a matmul"};
            }
        bool contracts = false;
        for (const auto &d : e.lhs.dims)
            if (e.rhs.dim(d.name) && !e.out.dim(d.name))
                contracts = true;
        if (!contracts)
            return Error{"notation", e.lhs.name + " and " + e.rhs.name + " share no dimension to contract"};
        for (const auto &d : e.out.dims)
            if (!e.lhs.dim(d.name) && !e.rhs.dim(d.name))
                return Error{"notation", e.out.name + " has dimension " + d.name + ", which neither input has"};
        for (const auto &d : e.lhs.dims) {
            const ShardedDim *r = e.rhs.dim(d.name);
            if (r && e.out.dim(d.name) && r->axes != d.axes)
                return Error{"notation", "batch dimension " + d.name + " is sharded differently in "
                                             + e.lhs.name + " and " + e.rhs.name};
        }
        return std::nullopt;
    }

    MatmulCollective collective(CollectiveOp op, const std::string &array, const std::vector<std::string> &axes,
                                double v, bool before, std::string reason) const
    {
        MatmulCollective c;
        c.op = op;
        c.array = array;
        c.axes = axes;
        c.bytes = v;
        c.beforeMatmul = before;
        c.reason = std::move(reason);
        std::vector<AxisSpan> spans;
        for (const auto &a : axes) {
            const int index = m_t.axisIndex(a);
            spans.push_back({index, m_t.axes()[static_cast<std::size_t>(index)].size, 1});
        }
        CollectiveOptions options;
        options.mode = m_mode;
        c.cost = collectiveCost(m_t, op, spans, v, options);
        return c;
    }

    // Gathers `axes` of `array` (removing them from its dims) and records the collective.
    void gatherInput(ShardedArray &array, const std::vector<std::string> &axes, const std::string &why,
                     MatmulAnalysis &result) const
    {
        if (axes.empty())
            return;
        for (auto &d : array.dims)
            d.axes = minus(d.axes, axes);
        result.collectives.push_back(
            collective(CollectiveOp::AllGather, array.name, axes, bytes(array), true, why));
    }

    MatmulAnalysis run(const MatmulExpression &e) const
    {
        MatmulAnalysis result;
        ShardedArray a = e.lhs;
        ShardedArray b = e.rhs;
        const auto isContracting = [&](const std::string &dim) { return e.lhs.dim(dim) && e.rhs.dim(dim) && !e.out.dim(dim); };
        const auto isBatch = [&](const std::string &dim) { return e.lhs.dim(dim) && e.rhs.dim(dim) && e.out.dim(dim); };

        // Case 4: one mesh axis on a non-contracting dim of both inputs; gather the smaller input.
        std::vector<std::string> conflicts;
        for (const auto &da : a.dims)
            if (!isContracting(da.name) && !isBatch(da.name))
                for (const auto &axis : da.axes)
                    for (const auto &db : b.dims)
                        if (!isContracting(db.name) && !isBatch(db.name) && contains(db.axes, axis))
                            conflicts.push_back(axis);
        if (!conflicts.empty()) {
            result.bookCase = 4;
            ShardedArray &smaller = bytes(a) <= bytes(b) ? a : b;
            gatherInput(smaller, conflicts,
                        "both inputs shard a non-contracting dimension over " + joinAxes(conflicts), result);
        }

        // Contracting dims: gather what only one side shards; what both shard alike stays unreduced.
        std::vector<std::string> common;
        std::vector<std::string> gatherA;
        std::vector<std::string> gatherB;
        std::string contracted;
        for (const auto &da : a.dims) {
            if (!isContracting(da.name))
                continue;
            contracted += (contracted.empty() ? "" : ",") + da.name;
            const ShardedDim &db = *b.dim(da.name);
            for (const auto &x : minus(da.axes, db.axes))
                gatherA.push_back(x);
            for (const auto &x : minus(db.axes, da.axes))
                gatherB.push_back(x);
            for (const auto &x : da.axes)
                if (contains(db.axes, x))
                    common.push_back(x);
        }
        if (!gatherA.empty() || !gatherB.empty()) {
            if (result.bookCase != 4)
                result.bookCase = 2;
            gatherInput(a, gatherA, a.name + " is sharded on contracting dimension " + contracted + " over "
                                        + joinAxes(gatherA) + " and " + b.name + " is not", result);
            gatherInput(b, gatherB, b.name + " is sharded on contracting dimension " + contracted + " over "
                                        + joinAxes(gatherB) + " and " + a.name + " is not", result);
        } else if (!common.empty() && result.bookCase == 1) {
            result.bookCase = 3;
        }

        // The local product and the layout it leaves.
        ShardedArray local;
        local.name = e.out.name;
        for (const auto &d : e.out.dims) {
            const ShardedDim *src = a.dim(d.name) ? a.dim(d.name) : b.dim(d.name);
            local.dims.push_back({d.name, src->axes});
        }
        local.unreduced = common;
        result.localProduct = a.toString() + " . " + b.toString() + " -> " + local.toString();
        double flops = 2.0 * localElements(a);
        for (const auto &d : b.dims)
            if (!isContracting(d.name) && !isBatch(d.name))
                flops *= static_cast<double>(m_dims.at(d.name)) / shards(d.axes);
        result.flopsPerChip = flops;
        result.hbmBytesPerChip = bytes(a) + bytes(b) + bytes(local);

        // Partial sums: reduce-scatter into a dim the result wants sharded, else all-reduce.
        std::vector<std::string> scatter;
        std::vector<std::string> reduce;
        for (const auto &u : common) {
            if (contains(e.out.unreduced, u))
                continue;
            bool scattered = false;
            for (std::size_t i = 0; i < e.out.dims.size(); ++i)
                if (contains(e.out.dims[i].axes, u) && !contains(local.dims[i].axes, u)) {
                    scattered = true;
                    break;
                }
            (scattered ? scatter : reduce).push_back(u);
        }
        if (!scatter.empty()) {
            const double v = bytes(local);
            for (std::size_t i = 0; i < e.out.dims.size(); ++i)
                for (const auto &u : scatter)
                    if (contains(e.out.dims[i].axes, u))
                        local.dims[i].axes.push_back(u);
            local.unreduced = minus(local.unreduced, scatter);
            result.collectives.push_back(collective(CollectiveOp::ReduceScatter, e.out.name, scatter, v, false,
                                                    "partial sums over " + joinAxes(scatter)
                                                        + " are summed and scattered into the result"));
        }
        if (!reduce.empty()) {
            local.unreduced = minus(local.unreduced, reduce);
            result.collectives.push_back(collective(CollectiveOp::AllReduce, e.out.name, reduce, bytes(local), false,
                                                    "partial sums over " + joinAxes(reduce) + " are summed"));
        }

        // Result layout: move an axis between dims with an AllToAll, drop one with an AllGather;
        // an axis the result wants but does not have is a free local slice.
        std::vector<std::string> moved;
        std::vector<std::string> dropped;
        for (std::size_t i = 0; i < local.dims.size(); ++i)
            for (const auto &axis : minus(local.dims[i].axes, e.out.dims[i].axes)) {
                bool wantedElsewhere = false;
                for (std::size_t j = 0; j < e.out.dims.size(); ++j)
                    wantedElsewhere = wantedElsewhere || (j != i && contains(e.out.dims[j].axes, axis));
                (wantedElsewhere ? moved : dropped).push_back(axis);
            }
        if (!moved.empty()) {
            const double v = bytes(local) * shards(moved);
            for (std::size_t i = 0; i < local.dims.size(); ++i) {
                local.dims[i].axes = minus(local.dims[i].axes, moved);
                for (const auto &axis : moved)
                    if (contains(e.out.dims[i].axes, axis))
                        local.dims[i].axes.push_back(axis);
            }
            result.collectives.push_back(collective(CollectiveOp::AllToAll, e.out.name, moved, v, false,
                                                    "the result moves " + joinAxes(moved) + " to another dimension"));
        }
        if (!dropped.empty()) {
            for (auto &d : local.dims)
                d.axes = minus(d.axes, dropped);
            result.collectives.push_back(collective(CollectiveOp::AllGather, e.out.name, dropped, bytes(local), false,
                                                    "the result is replicated over " + joinAxes(dropped)));
        }

        const Chip &chip = m_t.chip();
        const bool achievable = m_mode == CostMode::Achievable;
        const double peak = chip.peakFlops(m_dtype) * (achievable ? chip.achievableFlopsFraction(m_dtype) : 1.0);
        const double hbm = chip.hbmBandwidth * (achievable ? chip.achievable.hbmEfficiency : 1.0);
        result.computeTime = result.flopsPerChip / peak;
        result.hbmTime = result.hbmBytesPerChip / hbm;
        const MatmulCollective *slowest = nullptr;
        for (const auto &c : result.collectives) {
            result.commsTime += c.cost.time;
            if (!slowest || c.cost.time > slowest->cost.time)
                slowest = &c;
        }
        const double local_ = std::max(result.computeTime, result.hbmTime);
        result.lowerBound = std::max(local_, result.commsTime);
        result.upperBound = local_ + result.commsTime;
        if (slowest && result.commsTime > local_)
            result.bound = std::string(linkName(slowest->cost.bindingLink));
        else
            result.bound = result.computeTime >= result.hbmTime ? "compute" : "hbm";
        return result;
    }

private:
    const Topology &m_t;
    const Dims &m_dims;
    double m_elementBytes;
    DType m_dtype;
    CostMode m_mode;
};

} // namespace

Expected<MatmulAnalysis> analyzeMatmul(const Topology &topology, const MatmulExpression &expression,
                                       const std::map<std::string, std::int64_t> &dims, DType dtype, CostMode mode)
{
    if (topology.chip().peakFlops(dtype) <= 0)
        return Error{"dtype", topology.chip().id + " has no FLOPs/s figure for " + std::string(dtypeName(dtype))};
    Analyzer analyzer(topology, dims, dtype, mode);
    if (auto error = analyzer.validate(expression))
        return *error;
    return analyzer.run(expression);
}

} // namespace meshplan::model
