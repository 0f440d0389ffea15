#include "cost/oproofline.h"

#include "hardware/roofline.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace meshplan::model {

namespace {

bool positive(double v)
{
    return v > 0 && std::isfinite(v);
}

/// The slope drawn for one link kind (value 0 when the chip has no such link).
RooflineCeiling linkSlope(const Topology &topology, LinkKind link)
{
    const Chip &chip = topology.chip();
    switch (link) {
    case LinkKind::Ici:
        // The book's W_ici: both directions of one axis's links (ch. 2); a collective over k axes
        // gets k times this.
        if (chip.ici && positive(chip.ici->linkBandwidth))
            return {"ICI (per axis)", resourceBandwidth(chip, Resource::Ici, 1), true};
        break;
    case LinkKind::Dcn:
        return {"DCN (per chip)", chip.dcnBandwidth, true};
    case LinkKind::Nvlink:
        if (chip.nvlink)
            return {"NVLink (per GPU)", chip.nvlink->bandwidth, true};
        break;
    case LinkKind::ScaleOut:
        // The node's scale-out NICs are shared by its GPUs.
        if (chip.scaleOut && !topology.axes().empty())
            return {"scale-out (per GPU)", chip.scaleOut->nodeEgressBandwidth / topology.axes().front().size, true};
        break;
    }
    return {{}, 0, true};
}

std::vector<RooflineCeiling> ceilingsOf(const Topology &topology)
{
    const Chip &chip = topology.chip();
    std::vector<RooflineCeiling> out;
    constexpr std::array<DType, kDTypeCount> kOrder{DType::Fp32, DType::Fp16, DType::Bf16, DType::Fp8,
                                                    DType::Int8, DType::Fp4,  DType::Int4};
    for (DType type : kOrder)
        if (const double peak = chip.listedPeakFlops(type); positive(peak))
            out.push_back({std::string(dtypeName(type)) + " peak", peak, false});
    if (positive(chip.hbmBandwidth))
        out.push_back({"HBM", chip.hbmBandwidth, true});

    bool ici = false, dcn = false, nvlink = false, scaleOut = false;
    for (const MeshAxis &axis : topology.axes()) {
        if (axis.size <= 1)
            continue;
        ici = ici || axis.link == LinkKind::Ici;
        dcn = dcn || axis.link == LinkKind::Dcn;
        nvlink = nvlink || axis.link == LinkKind::Nvlink;
        scaleOut = scaleOut || axis.link == LinkKind::ScaleOut;
    }
    for (LinkKind link : {LinkKind::Ici, LinkKind::Dcn, LinkKind::Nvlink, LinkKind::ScaleOut}) {
        const bool used = link == LinkKind::Ici ? ici : link == LinkKind::Dcn ? dcn : link == LinkKind::Nvlink ? nvlink : scaleOut;
        if (const RooflineCeiling slope = linkSlope(topology, link); used && positive(slope.value))
            out.push_back(slope);
    }
    return out;
}

} // namespace

OpRoofline opRoofline(const Plan &plan, const Evaluation &evaluation)
{
    OpRoofline r;
    const Chip &chip = plan.topology.chip();
    r.ceilings = ceilingsOf(plan.topology);
    const DType computeDtype =
        plan.kind == WorkloadKind::Training ? plan.training.computeDtype : plan.inference.computeDtype;
    r.computeDtype = dtypeName(computeDtype);
    r.computePeak = chip.peakFlops(computeDtype);
    if (positive(chip.hbmBandwidth))
        r.criticalIntensity = r.computePeak / chip.hbmBandwidth;

    for (const OperationCost &op : evaluation.operations) {
        RooflinePoint p;
        p.op = op.op;
        p.kind = op.kind;
        p.flops = op.flops;
        p.bytes = op.bytes;
        p.intensity = op.flops / op.bytes;
        p.timeS = op.timeS;
        p.achievedFlopsPerS = op.flops / op.timeS;
        // The side of the ridge at the rates the time was taken with (achievable: the chip's
        // FLOPs fraction and HBM efficiency move the ridge), so the bound never contradicts it.
        p.bound = op.timeS > op.memoryS ? "compute" : "hbm";
        p.countPerStep = static_cast<int>(std::min<std::int64_t>(op.countPerStep, 2'000'000'000));
        if (positive(p.flops) && positive(p.bytes) && positive(p.intensity) && positive(p.timeS)
            && positive(p.achievedFlopsPerS))
            r.points.push_back(std::move(p));
    }

    for (std::size_t i = 0; i < evaluation.collectives.size(); ++i) {
        const CollectiveUse &c = evaluation.collectives[i];
        if (c.countPerStep <= 0)
            continue;
        const double each = c.timeS / double(c.countPerStep);
        const double exposedEach = c.exposedS / double(c.countPerStep);
        // Exposed at all: the step pays the collective after (or before) its window.
        const bool exposed = positive(exposedEach) && exposedEach > 1e-12 * each;
        RooflinePoint p;
        p.op = c.purpose;
        const auto samePurpose = [&](const CollectiveUse &o) { return o.purpose == c.purpose; };
        if (std::count_if(evaluation.collectives.begin(), evaluation.collectives.end(), samePurpose) > 1)
            p.op += " " + std::string(collectiveName(c.op));
        p.kind = "collective";
        p.collectiveOp = collectiveName(c.op);
        p.axes = c.axes;
        p.link = linkName(c.link);
        p.flops = c.overlapFlops;
        p.bytes = c.bytesPerChip;
        p.commS = each;
        p.overlapS = c.overlapS;
        p.exposedS = exposed ? exposedEach : 0.0;
        p.timeS = exposed ? std::max(each, c.overlapS + exposedEach) : std::max(c.overlapS, each);
        p.achievedFlopsPerS = p.flops / p.timeS;
        p.bound = exposed ? std::string(linkName(c.link)) : std::string("compute");
        const RooflineCeiling slope = linkSlope(plan.topology, c.link);
        p.linkCeiling = slope.name;
        p.linkBandwidth = positive(slope.value) ? slope.value : c.bytesPerChip / each;
        p.effectiveBytes = p.linkBandwidth * (exposed ? p.timeS : each);
        p.intensity = p.flops / p.effectiveBytes;
        p.collective = static_cast<int>(i);
        p.countPerStep = static_cast<int>(std::min<std::int64_t>(c.countPerStep, 2'000'000'000));
        if (positive(p.flops) && positive(p.bytes) && positive(p.intensity) && positive(p.timeS)
            && positive(p.achievedFlopsPerS))
            r.points.push_back(std::move(p));
    }
    // Names are selection keys: a name met again (the same purpose and op twice) gets a number.
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        int seen = 1;
        for (std::size_t j = 0; j < i; ++j)
            seen += r.points[j].op == r.points[i].op || r.points[j].op.rfind(r.points[i].op + " #", 0) == 0;
        if (seen > 1)
            r.points[i].op += " #" + std::to_string(seen);
    }
    return r;
}

} // namespace meshplan::model
