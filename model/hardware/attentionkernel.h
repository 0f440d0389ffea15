#pragma once
// A fused attention kernel's measured throughput on one chip, by sequence length (book ch. 7-8: the
// attention core is a batched matmul whose efficiency, unlike a weight matmul's, depends on T).

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <utility>
#include <vector>

namespace meshplan::model {

/// Published throughput of one causal attention kernel (head dim 128, bf16) at several sequence
/// lengths, each as a share of the chip's dense bf16 peak, counted as the kernel papers count it:
/// forward 4·T²·heads·head_dim/2 FLOPs per sequence, backward 2.5x that (the kernel recomputes
/// the scores QKᵀ instead of storing them).
struct AttentionKernelCurve {
    std::vector<std::pair<double, double>> forward;  ///< (sequence length, share of bf16 peak), ascending
    std::vector<std::pair<double, double>> backward; ///< the same for the backward pass
    std::string source;

    /// The share at `seqLen`: log-linear between measured lengths, flat beyond the ends (long
    /// sequences saturate the kernel; short ones are not extrapolated below the shortest point).
    double forwardShare(double seqLen) const { return shareAt(forward, seqLen); }
    double backwardShare(double seqLen) const { return shareAt(backward, seqLen); }

    static double shareAt(const std::vector<std::pair<double, double>> &points, double seqLen);
};

/// Reads {"forward": [[T, share], ...], "backward": [...], "source": "..."}; throws FieldError
/// naming `path` for a curve that is empty, unsorted or has a share outside (0, 1].
AttentionKernelCurve attentionKernelCurveFromJson(const nlohmann::json &object, const std::string &path);
nlohmann::json attentionKernelCurveToJson(const AttentionKernelCurve &curve);

} // namespace meshplan::model
