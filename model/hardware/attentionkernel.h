#pragma once
// A fused attention kernel's measured throughput on one chip, by sequence length (book ch. 7-8: the
// attention core is a batched matmul whose efficiency, unlike a weight matmul's, depends on T).

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <utility>
#include <vector>

namespace meshplan::model {

/// How a kernel's throughput changes with the head dimension, relative to head dim 128 (the
/// curves' own): a kernel is compiled for a few head dims and pads any other up to the next one,
/// computing on zeros, and its matmuls per score shrink with the head dim while its softmax does
/// not, so small heads run below large ones.
struct HeadDimScaling {
    std::vector<int> compiled;                       ///< head dims with a kernel, ascending; empty: no padding
    std::vector<std::pair<double, double>> forward;  ///< (compiled head dim, throughput / head dim 128's)
    std::vector<std::pair<double, double>> backward; ///< the same for the backward; empty: the forward's
    std::string source;

    /// The head dim the kernel computes on: the smallest compiled one that holds `headDim`.
    double paddedHeadDim(double headDim) const;
    /// The useful throughput at `headDim` relative to head dim 128: the kernel's relative rate at
    /// the padded head dim (log-linear between measured ones, flat beyond), times headDim / padded.
    double factor(double headDim, bool backwardPass) const;
};

/// Published throughput of one causal attention kernel (head dim 128, bf16) at several sequence
/// lengths, each as a share of the chip's dense bf16 peak, counted as the kernel papers count it:
/// forward 4·T²·heads·head_dim/2 FLOPs per sequence, backward 2.5x that (the kernel recomputes
/// the scores QKᵀ instead of storing them).
struct AttentionKernelCurve {
    std::vector<std::pair<double, double>> forward;  ///< (sequence length, share of bf16 peak), ascending
    std::vector<std::pair<double, double>> backward; ///< the same for the backward pass
    std::string source;
    HeadDimScaling headDims;                         ///< empty: every head dim runs as 128 does

    /// The share at `seqLen` and `headDim`: log-linear between measured lengths, flat beyond the
    /// ends (long sequences saturate the kernel; short ones are not extrapolated below the
    /// shortest point), scaled by the head dim's factor.
    double forwardShare(double seqLen, double headDim) const { return shareAt(forward, seqLen) * headDims.factor(headDim, false); }
    double backwardShare(double seqLen, double headDim) const { return shareAt(backward, seqLen) * headDims.factor(headDim, true); }

    static double shareAt(const std::vector<std::pair<double, double>> &points, double seqLen);
};

/// Reads {"forward": [[T, share], ...], "backward": [...], "source": "...", "head_dims":
/// {"compiled": [...], "forward": [[d, relative], ...], "backward": [...], "source": "..."}};
/// throws FieldError naming `path` for a curve that is empty, unsorted or has a share outside
/// (0, 1] (a relative head-dim rate may reach 2).
AttentionKernelCurve attentionKernelCurveFromJson(const nlohmann::json &object, const std::string &path);
nlohmann::json attentionKernelCurveToJson(const AttentionKernelCurve &curve);

} // namespace meshplan::model
