#include "hardware/roofline.h"

#include <algorithm>
#include <array>
#include <limits>

namespace meshplan::model {

namespace {
struct ResourceInfo {
    Resource resource;
    std::string_view name;
};
constexpr std::array<ResourceInfo, 7> kResources{{
    {Resource::Hbm, "hbm"},
    {Resource::Ici, "ici"},
    {Resource::IciOneWay, "ici-one-way"},
    {Resource::Dcn, "dcn"},
    {Resource::Pcie, "pcie"},
    {Resource::Nvlink, "nvlink"},
    {Resource::ScaleOut, "scale-out"},
}};
} // namespace

std::string_view resourceName(Resource resource)
{
    for (const auto &info : kResources)
        if (info.resource == resource)
            return info.name;
    return "?";
}

std::optional<Resource> parseResource(std::string_view name)
{
    for (const auto &info : kResources)
        if (info.name == name)
            return info.resource;
    return std::nullopt;
}

double resourceBandwidth(const Chip &chip, Resource resource, int axes)
{
    switch (resource) {
    case Resource::Hbm:
        return chip.hbmBandwidth;
    case Resource::Ici:
        return chip.ici ? 2.0 * chip.ici->linkBandwidth * std::max(1, axes) : 0.0;
    case Resource::IciOneWay:
        return chip.ici ? chip.ici->linkBandwidth : 0.0;
    case Resource::Dcn:
        return chip.dcnBandwidth;
    case Resource::Pcie:
        return chip.pcieBandwidth;
    case Resource::Nvlink:
        return chip.nvlink ? chip.nvlink->bandwidth : 0.0;
    case Resource::ScaleOut:
        return chip.scaleOut ? chip.scaleOut->nodeEgressBandwidth : 0.0;
    }
    return 0.0;
}

Roofline roofline(double flops, double bytes, double peakFlops, double bandwidth)
{
    Roofline r;
    r.tMath = peakFlops > 0 ? flops / peakFlops : 0.0;
    r.tComms = bandwidth > 0 ? bytes / bandwidth : 0.0;
    r.tLower = std::max(r.tMath, r.tComms);
    r.tUpper = r.tMath + r.tComms;
    r.intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
    r.criticalIntensity = bandwidth > 0 ? peakFlops / bandwidth : 0.0;
    r.computeBound = r.tMath >= r.tComms;
    return r;
}

} // namespace meshplan::model
