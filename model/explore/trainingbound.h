#pragma once
// Lower bounds on a training plan's step time and per-chip memory from its compute and its
// memory alone, before any collective is priced: what lets the plan search skip candidates and
// stay exact (a candidate is skipped only when its bounds already lose).

#include "cost/softwarestack.h"
#include "hardware/attentionkernel.h"
#include "hardware/collective.h"
#include "plan/placement.h"
#include "plan/plan.h"

#include <array>
#include <limits>

namespace meshplan::model {

/// The parts of a training plan the bound needs beyond the model, the chip and the workload.
struct TrainingShape {
    RoleDegrees degrees{1, 1, 1, 1, 1, 1};
    bool sequenceParallel = false;
    int zeroStage = 0;
    int microbatches = 1;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int virtualStages = 1;
    const RematPolicy *remat = nullptr;
};

struct TrainingBounds {
    double stepTimeS = 0; ///< at most the evaluated step.time_s
    double computeS = 0;  ///< the same without the bubble: at most step.compute_s
    double memory = 0;    ///< at most the evaluated memory_per_chip.total (the most loaded chip)
};

/// Bounds for the plans of one model, chip and training workload. The step-time bound is the
/// step's on-chip work as the cost model prices it (each layer's forward, backward and recompute
/// at the matmul, expert and attention-kernel rates, with their HBM terms) on a stage no busier
/// than the busiest, times the microbatches plus the schedule's bubble; the collectives and the
/// optimizer count as zero. The memory bound is the per-chip memory of the first, middle and last
/// pipeline stage as the cost model counts it. Neither depends on where roles are placed.
/// tst_plansearch checks both against evaluate() over whole spaces, so a change of the cost model
/// that would make them exceed an evaluation fails there.
class TrainingBound
{
public:
    TrainingBound(const Plan &plan, CostMode mode);

    /// One layer on one chip, per token (as cost/trainingcost.cpp's LayerCost).
    struct Layer {
        double matmulFlops = 0;    ///< forward, routed experts excluded
        double expertFlops = 0;    ///< forward, in routed experts
        double attentionFlops = 0; ///< the attention core as the kernel runs it
        double scoreElements = 0;  ///< naive attention's score row
        double weightElements = 0; ///< per layer, not per token
        double elementwise = 0;    ///< intermediates the elementwise kernels move
        double linearInputs = 0;   ///< matmul inputs an fp8 recipe casts
        double recomputeFlops = 0; ///< a custom policy's recompute at the matmul rate
        double recomputeExpert = 0; ///< ... at the experts' rate
        double recomputeAttention = 0; ///< ... at the attention kernel's forward rate
        double saved = 0;          ///< activation elements kept per token
        double selective = 0;      ///< ... with the attention core recomputed (the working layer of full remat)
    };
    /// A dense and a MoE layer: what depends only on the degrees, sequence parallelism and remat.
    struct Layers {
        Layer dense;
        Layer sparse;
        double attentionForward = 0;  ///< the attention kernel's rates at this context degree
        double attentionBackward = 0;
        /// Weight elements of the first, middle and last stage (each with its mirror under DualPipe).
        std::array<double, 3> stageElements{};
        std::array<double, 3> dualStageElements{};
        /// The routed experts' share of those (the rest is replicated over the expert ranks).
        std::array<double, 3> stageExpertElements{};
        std::array<double, 3> dualStageExpertElements{};
        int fewestDense = 0; ///< the fewest dense and MoE layers any stage holds
        int fewestMoe = 0;
    };
    Layers layers(const TrainingShape &shape) const;
    /// One microbatch: its tokens per chip and the busiest stage's work on it (and a DualPipe
    /// rank's, which runs a stage and its mirror). Depends on the layers and the microbatch count.
    struct Microbatch {
        double tokens = 0;
        double busiest = 0;
        double busiestDual = 0;
        double denseForward = 0; ///< one layer's forward, and backward with recompute
        double denseBackward = 0;
        double sparseForward = 0;
        double sparseBackward = 0;
    };
    Microbatch microbatch(const TrainingShape &shape, const Layers &layers) const;
    /// The bounds, with layers(shape) and microbatch(shape, layers) computed once for many shapes.
    TrainingBounds bounds(const TrainingShape &shape, const Layers &layers, const Microbatch &microbatch) const;
    TrainingBounds bounds(const TrainingShape &shape, const Layers &layers) const
    {
        return bounds(shape, layers, microbatch(shape, layers));
    }
    TrainingBounds bounds(const TrainingShape &shape) const { return bounds(shape, layers(shape)); }
    /// Communication no schedule hides, on a placement: the tensor-parallel activation
    /// collectives of the least loaded stage (unless overlapped: tensor_overlap, or a stack that
    /// does it), the pipeline's fill and drain, and what the FSDP weight gathers and gradient
    /// reduce-scatters take beyond the layer compute they hide behind (the expert all-to-alls are
    /// left out: a lower bound may count less than the step shows). That compute is bounded from
    /// above by `computeS`, the step's evaluated compute (step.compute_s) on another placement of the same
    /// knobs, which every layer of the busiest stage shares: without it (infinity) those terms
    /// count zero. At most the evaluated step.exposed_communication_s.
    double exposedCommunication(const TrainingShape &shape, const Placement &placement,
                                double computeS = std::numeric_limits<double>::infinity()) const
    {
        return exposedCommunication(shape, layers(shape), linkTimes(shape, placement), computeS / shape.microbatches);
    }
    /// One tensor-parallel activation collective (all-reduce, or all-gather and reduce-scatter
    /// with sequence parallelism), one pipeline send, and a dense and a MoE layer's FSDP weight
    /// gather and gradient reduce-scatter (over FSDP alone, and with ZeRO-3 over FSDP and data):
    /// they depend on the placement, the sequence parallelism and the microbatch size only, so
    /// many knobs share them.
    struct LinkTimes {
        double tensor = 0;
        double pipeline = 0;
        double expert = 0; ///< one expert dispatch (or combine) all-to-all
        std::array<std::array<double, 2>, 2> gather{};  ///< [ZeRO-3 over data][MoE layer]
        std::array<std::array<double, 2>, 2> scatter{};
    };
    LinkTimes linkTimes(const TrainingShape &shape, const Placement &placement) const;
    /// The same with the busiest stage's time per microbatch bounded by `layerTimeLimit`.
    double exposedCommunication(const TrainingShape &shape, const Layers &layers, const LinkTimes &times,
                                double layerTimeLimit) const;

private:
    Layer layer(const TrainingShape &shape, bool moe) const;
    /// The shape's remat as the plan's stack runs it (as the cost model reads it).
    StepRemat stepRematOf(const TrainingShape &shape) const;
    /// Forward, backward and recompute of one layer for one microbatch of `tokens`.
    /// A layer's forward, and its backward with the recompute, for one microbatch.
    std::pair<double, double> layerTime(const Layer &l, const TrainingShape &shape, double tokens, double attnFwd,
                                        double attnBwd) const;
    /// The shape's sequence parallelism, or the stack's own sharding of activations over tensor.
    bool sequenceParallel(const TrainingShape &shape) const
    {
        return shape.sequenceParallel
               || (m_stackShardsActivations && shape.degrees[static_cast<std::size_t>(Role::Tensor)] > 1);
    }
    int layersOnStage(int stage, int pipeline) const;
    int moeLayersOnStage(int stage, int pipeline) const;
    double stageElements(int stage, const TrainingShape &shape) const;
    double stageExpertElements(int stage, const TrainingShape &shape) const;
    /// The attention kernel's forward and backward rates at this context degree.
    std::pair<double, double> attentionRates(int context) const;

    const Plan &m_plan;
    ParamCounts m_params;
    CostMode m_mode;
    double m_peak = 0;
    double m_peak16 = 0;
    double m_hbm = 0;
    double m_expertEfficiency = 1;
    double m_elementwiseTraffic = 0;
    double m_lossBytes = 0; ///< bytes the loss streams per logit (0 in the ideal mode)
    double m_naivePasses = 0;
    double m_castBytes = 0;
    double m_attnBackwardFactor = 2;
    const AttentionKernelCurve *m_kernel = nullptr;
    double m_actBytes = 2;
    double m_flowBytes = 2;
    bool m_stackShardsActivations = false;
};

} // namespace meshplan::model
