#pragma once
// The roofline (book ch. 1): compute time vs. communication time, intensity and which one binds.

#include "hardware/chip.h"

#include <optional>
#include <string_view>

namespace meshplan::model {

/// The resource an operation's bytes move over.
enum class Resource {
    Hbm,
    Ici,       ///< bidirectional per-axis ICI (the book's W_ici), times the axes used
    IciOneWay, ///< one ICI link, one direction
    Dcn,
    Pcie,
    Nvlink,    ///< per-GPU NVLink egress, one way
    ScaleOut,  ///< per-node scale-out egress (the book's W_node)
};

std::string_view resourceName(Resource resource);
std::optional<Resource> parseResource(std::string_view name);
/// Bytes/s of `resource` on `chip`; 0 when the chip has no such link. `axes` multiplies ICI.
double resourceBandwidth(const Chip &chip, Resource resource, int axes = 1);

struct Roofline {
    double tMath = 0;            ///< FLOPs / peak FLOPs/s
    double tComms = 0;           ///< bytes / bandwidth
    double tLower = 0;           ///< perfect overlap: max
    double tUpper = 0;           ///< no overlap: sum
    double intensity = 0;        ///< FLOPs per byte of the operation
    double criticalIntensity = 0; ///< FLOPs per byte of the hardware (the ridge point)
    bool computeBound = false;
};

Roofline roofline(double flops, double bytes, double peakFlops, double bandwidth);

} // namespace meshplan::model
