#pragma once
// One accelerator's datasheet: peak FLOPs/s per dtype, HBM, links, and what is achievable in practice.

#include "base/dtype.h"
#include "base/expected.h"
#include "hardware/attentionkernel.h"
#include "hardware/decodeattention.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace meshplan::model {

enum class ChipFamily {
    Tpu,
    Gpu,
};

/// Which TPU slice axes have a wraparound link (book ch. 2): "full" chips (v5e, v6e) wrap only an
/// axis of exactly `wrapSize` chips; "multiple" chips (v4, v5p) wrap every axis of a slice made of
/// whole wrapSize^3 cubes (4x4x4, 4x4x8) and none of a smaller one (2x2x4).
enum class WrapRule {
    Full,
    Multiple,
};

/// TPU inter-chip interconnect: a torus of point-to-point links.
struct IciSpec {
    double linkBandwidth = 0;   ///< bytes/s, one way, per link (the book's W_ici one-way)
    int torusDims = 2;
    WrapRule wrapRule = WrapRule::Full;
    int wrapSize = 16;
    std::vector<int> maxShape;  ///< the largest slice (a pod)
    std::vector<int> hostShape; ///< chips attached to one host
    double hopLatency = 1e-6;   ///< seconds per hop (the book's T_min)

    /// Whether axis `axis` of a slice of `shape` has wraparound links.
    bool wraps(const std::vector<int> &shape, std::size_t axis) const;
    int chipsPerHost() const;
};

/// GPU scale-up domain: GPUs joined all-to-all by NVSwitches.
struct NvlinkSpec {
    double bandwidth = 0; ///< bytes/s per GPU, one way (450e9 on H100)
    int domainSize = 8;
    double latency = 3e-6; ///< seconds per collective step
    bool sharp = false;    ///< in-network reduction available
};

/// GPU scale-out network: a full-bisection fat tree above the NVLink domains.
struct ScaleOutSpec {
    double nodeEgressBandwidth = 0; ///< bytes/s per NVLink domain, one way (400e9 per H100 node)
    int nodesPerLeaf = 32;          ///< NVLink domains under one leaf group (a scalable unit)
    double latency = 6e-6;
};

/// Fractions of the advertised figures that real workloads reach; used by the achievable model.
struct Achievable {
    double flopsFraction = 1.0;
    /// The fraction of the listed 8-bit (fp8/int8) peak a whole 8-bit step reaches; 0 = flopsFraction.
    /// Lower than flopsFraction on GPUs: attention, casts and scaling stay in 16 bits, so a step
    /// gains far less than the doubled peak (NeMo fp8 runs reach 35-40% of it).
    double eightBitFlopsFraction = 0;
    /// The share of the bf16 peak the best large matmul reaches alone in a microbenchmark (the
    /// maximum achievable matmul FLOPs); 0 when unknown. flopsFraction / this is how much of a
    /// kernel's benchmark rate survives inside a whole training step, and the achievable model
    /// applies the same ratio to the attention kernels' benchmark rates.
    double matmulBenchmarkFraction = 0;
    /// The same for the listed fp8 peak; with matmulBenchmarkFraction it sets the 8-bit share of a
    /// step (fp8 benchmark x flopsFraction / bf16 benchmark) in place of eightBitFlopsFraction.
    double eightBitMatmulBenchmarkFraction = 0;
    /// The reduction depth (K, in elements at the 16-bit rate) whose time every output tile of a
    /// matmul pays once more for filling its pipeline and writing its result: a matmul of depth K
    /// runs at K / (K + this) of the large-K rate. 0: shape is not modelled.
    double matmulTileOverheadK = 0;
    double hbmEfficiency = 1.0;
    /// The share of a GPU's SMs a collective's kernels hold while they run beside compute: an
    /// overlapped collective is hidden, but the matmuls beside it lose this share of the chip for
    /// its duration. 0: collectives take nothing from compute (TPUs: ICI DMA engines move them).
    double collectiveSmShare = 0;
    /// The share of HBM bandwidth a decode step's weight and KV reads reach (many small
    /// bandwidth-bound kernels, not one streaming copy); 0 = hbmEfficiency.
    double decodeHbmEfficiency = 0;
    /// The share of the chip's achievable matmul rate a kernel built for the previous GPU
    /// generation's tensor-core instructions reaches (on Hopper: an SM80 kernel, mma.sync with no
    /// TMA or wgmma), where a stack runs one; 0 = the chip has no such gap listed.
    double legacyKernelShare = 0;
    double iciEfficiency = 1.0;
    double dcnEfficiency = 1.0;
    double nvlinkEfficiency = 1.0;
    double scaleOutEfficiency = 1.0;
};

struct Chip {
    std::string id;
    std::string name;
    ChipFamily family = ChipFamily::Tpu;
    std::array<double, kDTypeCount> peakFlopsByDType{}; ///< indexed by DType; 0 where the chip lists none
    std::int64_t hbmBytes = 0;
    double hbmBandwidth = 0;
    int cores = 1;
    std::optional<IciSpec> ici;
    double dcnBandwidth = 0; ///< bytes/s per chip
    double dcnLatency = 1e-5;
    double pcieBandwidth = 0;
    std::optional<NvlinkSpec> nvlink;
    std::optional<ScaleOutSpec> scaleOut;
    Achievable achievable;
    /// Fused attention kernels with published throughput on this chip, by name
    /// ("flash-attention-2", "flash-attention-3", "cudnn"); empty where none is sourced.
    std::map<std::string, AttentionKernelCurve, std::less<>> attentionKernels;
    /// The decode attention kernel's share of HBM bandwidth by bytes read; absent where none is
    /// sourced (the cache is then read at achievable.hbm_efficiency).
    std::optional<DecodeAttentionCurve> decodeAttention;
    double pricePerHour = 0;
    std::map<std::string, std::string> sources;
    /// For a chip written inline in a plan: the catalog chip whose measured figures it runs at where
    /// it lists none of its own (see chipFromJson), and which figures those are (achievable keys,
    /// "attention_kernels", "decode_attention"). Empty for a catalog chip or a complete one.
    std::string figuresFrom;
    std::vector<std::string> inheritedFigures;

    bool isTpu() const { return family == ChipFamily::Tpu; }
    /// The listed peak for this dtype, 0 if the chip lists none.
    double listedPeakFlops(DType type) const;
    /// The peak a matmul in this dtype runs at: the listed rate, or that of the nearest wider
    /// format the chip executes it in (int4 -> int8 -> bf16, fp4 -> fp8 -> bf16, fp8 -> bf16, fp16 -> bf16; fp32 at
    /// a quarter of bf16 when unlisted, as multi-pass bf16).
    double peakFlops(DType type) const;
    /// The share of a kernel's benchmark rate that survives inside a training step:
    /// achievable.flopsFraction / achievable.matmulBenchmarkFraction (at most 1), or 0 when the
    /// chip lists no matmul benchmark.
    double benchmarkDerating() const;
    /// The share of peakFlops(type) real workloads reach. For a listed fp8/int8 peak: the 8-bit
    /// matmul benchmark derated as the 16-bit one is (when both are known), else
    /// achievable.eightBitFlopsFraction when given; otherwise achievable.flopsFraction.
    double achievableFlopsFraction(DType type) const;
    /// Whether a matmul in `type` runs at the 16-bit rate: bf16 and fp16, and formats the chip
    /// runs as bf16 (fp8 on a chip without fp8 units).
    bool computesAtSixteenBitRate(DType type) const;
    /// Whether `type` is an 8-bit format (fp8, int8) the chip lists no rate for: its matmuls run
    /// as bf16 ones and its activations stay 16-bit.
    bool emulatesEightBit(DType type) const { return isEightBit(type) && listedPeakFlops(type) <= 0; }
    /// Whether `type` is an 8-bit format the chip has units for (an 8-bit recipe runs).
    bool hasEightBitUnits(DType type) const { return isEightBit(type) && listedPeakFlops(type) > 0; }
    /// The id of the chip whose measurement `figure` (an achievable key, "attention_kernels" or
    /// "decode_attention") is: figuresFrom where this chip took it from there, else its own id.
    std::string figureOwner(const std::string &figure) const;
    /// Where achievableFlopsFraction(type) comes from, in words and with the catalog's numbers,
    /// for the derivations.
    std::string achievableFlopsFractionNote(DType type) const;
    /// The share of the large-K matmul rate a matmul of reduction depth `k` reaches in `type`:
    /// k / (k + K0), where K0 is achievable.matmulTileOverheadK scaled by the dtype's peak over
    /// the 16-bit one (the fixed per-tile time is the same, the K loop runs faster). 1 when the
    /// chip lists no overhead.
    double matmulShapeEfficiency(double k, DType type) const;
    /// That K0 in `type`: 0 when the chip lists no overhead (every depth at the large-K rate).
    double matmulTileOverhead(DType type) const;
    /// k / (k + k0), or 1 where k0 or k is not positive: matmulShapeEfficiency at a known K0.
    static double shapeEfficiency(double k, double k0) { return k0 <= 0 || !(k > 0) ? 1.0 : k / (k + k0); }
};

/// Reads a chip from catalog/plan JSON (the keys of resources/chips.json); errors name the field.
/// With a `reference` (a catalog chip), every measured figure the object does not list, its
/// achievable fractions, attention kernel curves and decode attention curve, is the reference's:
/// a user's accelerator missing them would otherwise run at 100% of its datasheet.
Expected<Chip> chipFromJson(const nlohmann::json &object, const std::string &path, const Chip *reference = nullptr);
nlohmann::json chipToJson(const Chip &chip);

} // namespace meshplan::model
