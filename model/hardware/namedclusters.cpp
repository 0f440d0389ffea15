#include "hardware/namedclusters.h"

namespace meshplan::model {

const std::vector<NamedCluster> &namedClusters()
{
    using json = nlohmann::json;
    static const std::vector<NamedCluster> clusters{
        {"tpu-v5p-pod", "TPU v5p pod", "8,960 chips, the largest v5p slice (16x20x28)",
         json{{"chip", "tpu-v5p"}, {"topology", {16, 20, 28}}, {"slices", 1}}},
        {"tpu-v5e-256", "TPU v5e-256", "one full v5e pod, a 16x16 2D torus",
         json{{"chip", "tpu-v5e"}, {"topology", {16, 16}}, {"slices", 1}}},
        {"tpu-v6e-256", "TPU v6e-256", "one full Trillium pod, a 16x16 2D torus",
         json{{"chip", "tpu-v6e"}, {"topology", {16, 16}}, {"slices", 1}}},
        {"dgx-h100-superpod", "DGX H100 SuperPOD unit", "one scalable unit: 32 DGX H100 nodes, 256 GPUs",
         json{{"chip", "h100-sxm"}, {"topology", {{"nodes", 32}, {"gpus_per_node", 8}}}}},
        {"gb200-nvl72", "GB200 NVL72 rack", "72 Blackwell GPUs in one NVLink domain",
         json{{"chip", "gb200"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 72}}}}},
    };
    return clusters;
}

nlohmann::json defaultHardwareFor(const Chip &chip)
{
    using json = nlohmann::json;
    if (chip.ici) {
        const json shape = chip.ici->torusDims >= 3 ? json{4, 4, 4} : json{4, 4};
        return json{{"chip", chip.id}, {"topology", shape}, {"slices", 1}};
    }
    const int domain = chip.nvlink ? chip.nvlink->domainSize : 8;
    return json{{"chip", chip.id}, {"topology", {{"nodes", 1}, {"gpus_per_node", domain}}}};
}

} // namespace meshplan::model
