#pragma once
// A decode attention kernel's measured share of HBM bandwidth, by how many KV-cache bytes one
// layer's kernel reads on a chip: a small read cannot fill the chip (too few blocks, too little in
// flight), so a decode step at a small batch or a short context reads its cache well below the
// streaming rate.

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <utility>
#include <vector>

namespace meshplan::model {

struct DecodeAttentionCurve {
    /// From this many sequences a call is on the batched curve (the benchmark's batches of 16 and
    /// 64 agree at equal bytes).
    static constexpr double kBatchedFrom = 16.0;

    /// (KV kilobytes one kernel call reads, share of the HBM bandwidth), ascending, for a batch of
    /// kBatchedFrom or more sequences (the batched paged kernel). Never empty once read.
    std::vector<std::pair<double, double>> batched;
    /// The same for one sequence (the single-request kernel, which splits the cache to fill the chip).
    std::vector<std::pair<double, double>> single;
    /// The HBM bandwidth (bytes/s) of the GPU the curves were measured on; 0: unknown, the shares
    /// carry over to any chip as they are.
    double measuredBandwidth = 0;
    std::string source;

    /// The share of `bandwidth` (the chip's HBM bytes/s) at `bytes` read by one call over
    /// `sequences` sequences: log-linear in the bytes between measured points, flat past the
    /// largest; below the smallest the kernel takes the smallest point's time (a kernel has a
    /// floor), so the share falls in proportion. One request's time is interpolated between the
    /// single points' times instead, each held to no more than a larger read's, so that it never
    /// falls as the bytes grow. Between one and kBatchedFrom sequences,
    /// log-linear in the count between the single and the batched curve, but never slower than
    /// any larger whole count up to kBatchedFrom takes at the same context. On a chip of another
    /// bandwidth the batched shares carry over; a single request's time is its bytes at the
    /// single curve's top share of that bandwidth plus the time the measured call lost to filling
    /// the chip, which does not scale with the bandwidth.
    double share(double bytes, double sequences, double bandwidth = 0) const;
};

/// Reads {"batched": [[kb, share], ...], "single": [...], "source": "..."}; throws FieldError naming
/// `path` for a curve that is empty, unsorted or has a share outside (0, 1].
DecodeAttentionCurve decodeAttentionCurveFromJson(const nlohmann::json &object, const std::string &path);
nlohmann::json decodeAttentionCurveToJson(const DecodeAttentionCurve &curve);

} // namespace meshplan::model
