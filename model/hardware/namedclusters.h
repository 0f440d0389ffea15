#pragma once
// Clusters people name when they plan: a TPU v5p pod, a v5e-256, a DGX H100 SuperPOD unit, a
// GB200 NVL72 rack, and a sensible first size for any single chip of the catalog.

#include "hardware/chip.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace meshplan::model {

struct NamedCluster {
    std::string id;          ///< "tpu-v5p-pod"
    std::string name;        ///< "TPU v5p pod"
    std::string description; ///< where the shape comes from
    nlohmann::json hardware; ///< the plan's "hardware" object
};

const std::vector<NamedCluster> &namedClusters();

/// The smallest usual unit of `chip`: a 4x4x4 cube for 3D-torus TPUs, a 4x4 slice for 2D ones,
/// one NVLink domain for GPUs.
nlohmann::json defaultHardwareFor(const Chip &chip);

} // namespace meshplan::model
