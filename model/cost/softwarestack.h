#pragma once
// What the software that runs a plan (workload.stack) changes in its cost: which attention kernel
// it calls on a chip, and how much of the elementwise work it fuses. Each choice cites where the
// stack documents it.

#include "base/dtype.h"

#include <optional>
#include <string>
#include <string_view>

namespace meshplan::model {

struct AttentionKernelCurve;
struct Chip;
struct ModelSpec;
struct MoeSpec;
struct RematPolicy;
struct TrainingSpec;
enum class RematTensor; // plan/rematpolicy.h
enum class ExpertDispatch; // plan/plan.h

/// The fused attention kernel `stack` runs on `chip` among those the chip lists curves for
/// ("flash-attention-3", "cudnn", "flash-attention-2"), or "" when the chip lists none (TPUs:
/// the attention core then runs at the chip's matmul rate). An empty stack is a well-tuned one:
/// the fastest kernel the chip lists.
std::string_view attentionKernelFor(const Chip &chip, std::string_view stack);

/// Keys in one tile of a fused attention kernel's key loop: FlashAttention-2's forward kernels
/// for head dims up to 128 step through keys 64-128 at a time (kBlockN in its kernel traits),
/// FlashAttention-3 and cuDNN 128. A sliding window's far edge falls inside a tile the kernel
/// computes whole and masks.
inline constexpr double kAttentionTileKeys = 128.0;

/// The head dim a fused attention kernel tiles on: the larger of the query-key and the value head
/// dims (FlashAttention-3 pads both to the larger; MLA's are 192 and 128).
double kernelHeadDim(const ModelSpec &model);

/// A fused attention kernel's share of the bf16 peak over `model`'s layers (forward, or
/// `backward`), head dim as kernelHeadDim: the curve's at `kernelLength` tokens (the sequence over
/// the context-parallel degree). A local (sliding-window) layer's kernel walks at most W keys per
/// query, as a causal kernel over 2W tokens does on average, so its fixed cost per query tile is
/// amortised as at 2W: it runs at the curve's share there when 2W < kernelLength. Global and local
/// layers are weighed by the keys per query the kernel visits in a sequence of `seqLen` tokens
/// (causalAttendedKeys, with the window's edge tile).
double attentionKernelShare(const AttentionKernelCurve &curve, const ModelSpec &model, double kernelLength,
                            double seqLen, bool backward);
/// Whether torchtitan runs the plan's blocks compiled (torch.compile): `asked` is the plan's
/// workload.compile; absent, compiled when its matmuls run in 8 bits on 8-bit units (torchtitan's
/// Float8 converter needs torch.compile to fuse its scaling and casts, "required for competitive
/// performance"), eager otherwise (its config's default).
bool compilesBlocks(const Chip &chip, std::string_view stack, DType compute, std::optional<bool> asked);

/// HBM bytes per matmul-input element a step spends casting an 8-bit recipe's operands (the
/// quantization, its amax and the transposed copy the weight gradient reads): 8 where kernels of
/// their own do it (Transformer Engine, torchao), 0 where XLA fuses them into their neighbours (on
/// TPUs and under MaxText on GPUs) or `compute` runs on no 8-bit units.
double eightBitCastBytes(const Chip &chip, std::string_view stack, DType compute);

/// The hidden states per token an 8-bit recipe casts on their way into an MoE layer's experts,
/// each at eightBitCastBytes per element: every routed copy, as the grouped matmuls quantize the
/// permuted tokens, or fewer where `stack` quantizes a token once before an expert-parallel
/// all-to-all that carries it in fp8; plus the shared experts'.
double expertLayerCastInputs(std::string_view stack, const MoeSpec &moe, bool expertParallel);

/// Elements per token entering one layer's weight matmuls on a chip of `tensor` ranks, each cast
/// once by an 8-bit recipe: the normed input (once for attention and once for a dense MLP, unless
/// the block is parallel; an MoE layer's experts as expertLayerCastInputs counts), the attention
/// output and the MLP's activations (the routed and shared experts' per token).
double matmulInputsPerToken(const ModelSpec &m, std::string_view stack, double tensor, bool moe, bool expertParallel);

/// The share of a layer's elementwise intermediates (norms, activations, residual adds, biases)
/// that `stack` writes to HBM and reads back once more, per pass: 0.5 where a compiler or fused
/// kernels merge them into their neighbours, 1.0 for llm-foundry's eager MPT block; torchtitan's
/// counted from its LLaMA block, eager (2.25: its norms upcast to fp32 op by op) or compiled
/// (0.74), and DeepSpeed's Hugging Face models alike. `compiled` is compilesBlocks(); only
/// torchtitan and DeepSpeed read it.
double elementwiseTrafficShare(std::string_view stack, bool compiled);

/// HBM bytes per logit element that `stack`'s softmax cross-entropy moves in a training step,
/// forward and backward: the passes its loss kernels make over the [tokens, vocab / TP] logits.
/// `fused` is the plan's workload.loss_fusion: a fused kernel, the framework's unfused ops, or
/// (absent) what the stack does by default. XLA fuses it on TPUs and under MaxText whatever the
/// plan says. A compiled torchtitan or DeepSpeed plan (`compiled`, compilesBlocks()) compiles its
/// loss too.
double lossBytesPerLogit(const Chip &chip, std::string_view stack, std::optional<bool> fused, bool compiled);

/// Whether the stack keeps the residual stream's activations sharded over the tensor axis between
/// the tensor-parallel matmuls whatever the plan's sequence_parallel says (MaxText's logical axis
/// rules shard activation_embed over "tensor"; torchtitan's TP plan is always sequence-parallel):
/// they are then saved, normed and sent 1/TP each, as under Megatron's sequence parallelism. Only
/// in the achievable model.
bool shardsActivationsOverTensor(const Chip &chip, std::string_view stack);

/// The activation checkpointing a training step runs: the plan's remat as its stack reads it.
struct StepRemat {
    const RematPolicy *policy = nullptr; ///< the plan's, or a static one of the stack's
    /// The share of mlpwi the backward rebuilds where the policy rebuilds it: 1, or one of a gated
    /// MLP's two up projections.
    double mlpUpRebuilt = 1.0;
    /// Every norm, activation, rotary embedding, residual add and cast of the layer runs again in
    /// the backward, however few matmuls do (a policy that keeps only compute ops' outputs);
    /// otherwise they run again in the share of the layer's FLOPs that is rebuilt.
    bool rebuildsElementwise = false;

    /// The share of `t` the backward rebuilds: 0 kept or offloaded, 1 rebuilt (Remat::Custom).
    double rebuiltShare(RematTensor t) const;
};

/// How `stack` runs the plan's `remat` (which must outlive the result) for `model`, in the
/// achievable model (the ideal one keeps the plan's policy as the book reads it). "selective" is
/// Megatron's (the attention core rebuilt) except under torchtitan on a dense Llama-style block,
/// whose selective checkpointing keeps operator outputs: a Remat::Custom policy then says which.
/// "full" under torchtitan or composer on such a block stops its rebuild before the MLP's down
/// projection unless Float8 linears run eagerly on `chip` (its 8-bit units, not compiled).
StepRemat stepRemat(const Chip &chip, const TrainingSpec &training, const RematPolicy &remat, const ModelSpec &model);

/// Whether `stack` splits the data-parallel gradient reduction of a ZeRO 1-2 plan (`zeroStage`)
/// as Megatron-Core's distributed optimizer does: the gradients reduce-scattered behind the last
/// microbatch's backward, the updated weights all-gathered behind the next step's first forward
/// (overlap_grad_reduce, overlap_param_gather), in place of one all-reduce behind the backward.
bool gathersWeightsBehindForward(const Chip &chip, std::string_view stack, int zeroStage);

/// Whether `stack` overlaps the tensor-parallel collectives with the matmuls beside them by itself
/// (Transformer Engine's userbuffers in NeMo's recipes, which turn it on for layers wider than
/// d_model 4096; Megatron-LM's --tp-comm-overlap is off unless passed), for a plan with tensor
/// degree `tensor`, sequence parallelism on or off and layer width `dModel`. A plan's
/// parallelism.tensor_overlap, true or false, decides over it; this says what the stack does when
/// the plan does not say.
bool overlapsTensorCollectives(const Chip &chip, std::string_view stack, int tensor, bool sequenceParallel, double dModel);

/// Whether a plan's collective matmuls (parallelism.tensor_overlap) hide the backward pass's
/// tensor-parallel collectives as well as the forward's (and a recomputed forward's). torchtitan's
/// async TP does not: PyTorch measured "up to ~20%" faster forward passes and a step about 8%
/// faster on Llama 3 70B, so its backward's all-gathers and reduce-scatters stay exposed.
bool tensorOverlapCoversBackward(std::string_view stack);

/// Whether `stack` hides the backward pass's tensor-parallel collectives behind the same layer's
/// weight-gradient matmuls, which do not depend on them (XLA's async collective fusion, as
/// MaxText runs it on TPUs). The forward's collectives stay on the critical path.
bool overlapsTensorBackward(const Chip &chip, std::string_view stack);

/// HBM bytes per element that a context-parallel attention implementation moves beside its
/// kernels: for `perBlock` each block of the ring (one per context rank) and `fixed` once a pass.
struct RingBytes {
    double perBlock = 0;
    double fixed = 0;
    double total(double blocks) const { return perBlock * blocks + fixed; }
};

/// How a stack runs context-parallel attention where it differs from the ring the model prices by
/// default: keys and values passed from rank to rank, each pass hidden behind one block's
/// attention, partial outputs merged inside the kernels. Counted from the stack's code.
struct ContextParallelRing {
    /// Keys and values are all-gathered once and waited for after the first (diagonal) block:
    /// only that block's attention hides the gather, in the forward and again in the backward.
    bool gathersOnce = false;
    /// Keys and values carry every query head (repeated before the attention call).
    bool expandsKeyValueHeads = false;
    /// Bytes per element of the key/value gradients each rank sends on after every block of the
    /// backward (accumulated in fp32); the next block waits for the previous one's, the last is
    /// waited for after the loop. 0: the default ring's reduce-scatter prices them.
    double keyValueGradientBytes = 0;
    /// Forward: merging each further block's output (and log-sum-exp) into the running output,
    /// per attention-output element; copying keys and values into the send buffer, per element.
    RingBytes forwardOutput;
    RingBytes forwardKeyValue;
    /// Backward: accumulating each block's query and key/value gradients, per element.
    RingBytes backwardQuery;
    RingBytes backwardKeyValue;
};

/// The context-parallel attention `stack` runs on `chip`; a default-constructed value (the ring
/// the model prices) for stacks that run Transformer Engine's or XLA's, and on TPUs.
ContextParallelRing contextParallelRing(const Chip &chip, std::string_view stack);

/// Whether `stack` splits a sequence over its context ranks as DeepSpeed-Ulysses does: four
/// all-to-alls a layer and pass move the queries, keys and values from a share of the tokens to a
/// share of the heads and the attention output back, and each rank's attention kernel covers the
/// whole sequence for its heads, instead of a ring passing key/value blocks between kernels.
bool shardsHeadsOverContext(const Chip &chip, std::string_view stack);

/// The sequence length one attention kernel call covers on a rank: the whole sequence where the
/// stack shards heads over the context ranks (shardsHeadsOverContext), else one rank's block.
double attentionKernelLength(const Chip &chip, std::string_view stack, double seqLen, int context);

/// The share of the chip's matmul rate a serving stack's routed-expert matmuls run at: the
/// chip's legacy_kernel_share where the stack's grouped-GEMM kernels for `compute` are built for
/// the previous GPU generation (TensorRT-LLM's 16-bit MoE GEMMs on Hopper), 1 elsewhere.
double expertKernelShare(const Chip &chip, std::string_view stack, DType compute);

/// The GPU idle time a training MoE layer pays per local expert and forward-equivalent pass (a
/// forward 1, its backward 2) while the host catches up: Megatron-Core's dropless dispatchers copy
/// the tokens-per-expert counts to the host in every MoE layer and Transformer Engine issues the
/// experts' matmuls from the host, so on Hopper, where that layer cannot be captured in a CUDA
/// graph, the GPU waits for the host's launches. 0 for other stacks, other chips, and Blackwell,
/// whose recipes capture the layer (Transformer Engine's sm100-only fused grouped MLP).
double moeHostIssueSeconds(const Chip &chip, std::string_view stack);

/// Whether `stack`'s expert dispatch sends a token across the scale-out network once per node
/// that holds one of its experts, forwarding it over NVLink there (DeepEP, HybridEP, DeepSeek-V3's
/// own kernels), rather than once per routed copy as a plain all-to-all does. The plan's
/// parallelism.expert_dispatch (`asked`) overrides it. A well-tuned stack (none named) does, as do
/// NeMo and Megatron-Core on Hopper or later (DeepEP).
bool deduplicatesExpertDispatch(const Chip &chip, std::string_view stack, ExpertDispatch asked);
/// The same for a serving phase, whatever the stack: a prefill's dispatch does (DeepEP's normal
/// kernels forward over NVLink), a decode's does not (its low-latency kernels send every copy
/// straight to its expert's rank by RDMA), unless the plan's parallelism.expert_dispatch (`asked`)
/// says otherwise.
bool deduplicatesServingDispatch(ExpertDispatch asked, bool prefill);

/// Whether `stack` sends routed tokens at the experts' 8-bit compute dtype (the combine stays 16
/// bits), as DeepSeek-V3's recipe does; the frameworks named here dispatch 16-bit tokens and
/// quantize them inside the expert matmuls. A well-tuned stack (none named) dispatches 8-bit.
bool dispatchesExpertTokensInFp8(std::string_view stack);

/// How a training step's expert all-to-all moves a routed token: TrainingCost prices it and
/// TrainingBound bounds it from this one rule.
struct ExpertDispatchWire {
    double bytes = 0;          ///< per element, the dispatch and the combine averaged
    bool compactOut = false;   ///< dispatched at the compute dtype, narrower than the activations
    bool deduplicated = false; ///< once per destination node across the scale-out network, once per GPU inside (GPUs)
};
/// `computeBytes` and `flowBytes` are the compute dtype's and the activations' bytes per element;
/// the ideal model keeps the book's all-to-all (every copy, both dtypes averaged).
ExpertDispatchWire expertDispatchWire(const Chip &chip, std::string_view stack, ExpertDispatch asked,
                                      double computeBytes, double flowBytes, bool achievable);

/// The share of their matmul rate routed experts keep once their tokens are sorted, permuted and
/// un-permuted: 1 / (1 + cost x ridge / d_ff_expert), with `ridge` the achievable FLOPs per HBM
/// byte the step runs at. The cost is counted from the permutation's bytes on GPUs and calibrated
/// on MaxText's dispatch on TPUs (softwarestack.cpp).
double expertDispatchEfficiency(const Chip &chip, double ridge, double dFfExpert);
/// The same for a forward pass alone (a serving prefill): half a training step's permutation
/// bytes (the tokens move once, not again in the backward) for a third of its matmul FLOPs, so the
/// cost per FLOP is 1.5x the step's.
double forwardExpertDispatchEfficiency(const Chip &chip, double ridge, double dFfExpert);

} // namespace meshplan::model
