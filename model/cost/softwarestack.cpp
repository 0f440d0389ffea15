// Stacks and the attention kernels they call.
#include "cost/softwarestack.h"
#include "hardware/attentionkernel.h"
#include "hardware/chip.h"
#include "plan/plan.h"
#include "plan/rematpolicy.h"
#include "transformer/modelspec.h"

#include <algorithm>

#include <initializer_list>

namespace meshplan::model {

namespace {

// Routed experts run as grouped (ragged) matmuls over sorted tokens. Sorting, permuting and
// un-permuting each routed token moves O(d_model) bytes through HBM per expert visit, against
// O(d_model x d_ff_expert) FLOPs of its matmuls, so the overhead relative to the matmuls is
// proportional to the chip's C / W_hbm over d_ff_expert:
//   efficiency = 1 / (1 + dispatchCost x (C / W_hbm) / d_ff_expert).
// TPUs (XLA's sort-based dispatch in MaxText): one constant calibrated on DeepSeek-V2-Lite
// (d_ff 1408) on v5p, where it gives 0.5; Mixtral's 14336-wide experts on v6e then run at ~0.75
// (MaxText, 13.5 s per step).
constexpr double kExpertDispatchCostTpu = 10.4;
// GPUs: counted from Megatron-Core's fused permutation (moe_permute_fusion): per routed token and
// pass the permute reads and writes d_model elements and the un-permute reads and writes them
// again (the routing weight folded in), 4 x d_model x 2 bytes, in the forward and again in the
// backward, against the gated expert's 6 x d_model x d_ff_expert FLOPs forward and twice that
// backward. One efficiency serves every pass, so the step's average: 16 / 18 = 0.89.
constexpr double kExpertDispatchCostGpu = 16.0 / 18.0;
// A forward pass alone moves each routed token once (8 x d_model bytes on GPUs) against the
// forward's 6 x d_model x d_ff_expert FLOPs: 8 / 6 against the step's 16 / 18, a factor of 1.5.
// The bytes are bf16's: an engine that dispatches fp8 permutes 1-byte tokens on the way in (about
// 6 x d_model bytes), which this leaves a quarter high. The TPU constant, calibrated on whole
// steps, is scaled by the same factor; no TPU MoE serving run checks it yet.
constexpr double kForwardDispatchScale = (8.0 / 6.0) / kExpertDispatchCostGpu;

// Transformer Engine's fused cast-transpose kernels, per element of an 8-bit matmul's input: the
// forward cast (read 2, write 1); the gradient's cast (read 2, write 1) and the transposed copy the
// weight-gradient matmul reads (write 1, read 1).
constexpr double kForwardCastBytes = 3.0;
constexpr double kBackwardCastBytes = 3.0 + 2.0;

// The softmax cross-entropy over the logits, in HBM bytes per logit element per training step.
// Megatron-LM's vocab-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py; the
// fused variant is the opt-in --cross-entropy-loss-fusion) upcasts the bf16 logits to fp32 (read 2,
// write 4), takes the max (read 4), subtracts it (4 + 4), exponentiates (4 + 4), sums (4) and
// divides (4 + 4) in the forward; the backward scales the saved softmax (4 + 4) and casts the
// gradient back to bf16 (4 + 2): 52 bytes. Megatron-DeepSpeed keeps the same function, and NeMo
// runs it when its loss fusion is off. Recipes that pass --cross-entropy-loss-fusion with
// Transformer Engine's kernel (NVIDIA's MoE model zoo does) say "loss_fusion": true.
constexpr double kLossBytesMegatron = 52.0;
// torchtitan: F.cross_entropy(pred.float(), labels) run eagerly (torchtitan/components/loss.py):
// the upcast (2 + 4), log_softmax (three reads and a write of fp32: 16), the NLL backward's dense
// zero-filled gradient (4), log_softmax's backward (three reads and a write: 16) and the cast back
// (4 + 2): 48 bytes. llm-foundry's 'torch_crossentropy' is the same. torchtitan wraps the loss in
// torch.compile when training.compile is on (components/loss.py, build_cross_entropy_loss), so a
// plan with "compile": true gets the fused loss unless its loss_fusion says otherwise.
constexpr double kLossBytesTorch = 48.0;
// One-pass fused kernels over bf16 logits: Transformer Engine's Triton cross entropy, which
// NeMo's model configs select (cross_entropy_loss_fusion with cross_entropy_fusion_impl "te"),
// and flash-attn's Triton cross entropy, llm-foundry's default loss_fn 'fused_crossentropy':
// the forward reads the logits once for the running max and sum (2), the backward reads them
// and writes the gradient in their place (2 + 2): 6 bytes. A well-tuned stack does this.
constexpr double kLossBytesFused = 6.0;
// XLA fuses the upcast, max and sum of exponentials into reductions over the bf16 logits (two
// reads: 4) and the backward's softmax-minus-one-hot into one read and write (2 + 2): 8 bytes.
constexpr double kLossBytesXla = 8.0;

// torchtitan's LLaMA block, eager (torch.compile off, its config's default) and compiled: HBM bytes
// per token and layer in the forward, counted from torchtitan@9dec370 torchtitan/models/llama/
// model.py and models/norms.py with d = d_model, kv = the key/value width, f = d_ff. Eager: each
// RMSNorm upcasts (read 2d, write 4d), squares (4d + 4d), means (4d), scales (4d + 4d), casts back
// (4d + 2d) and multiplies by its weight (2d + 2d): 36d, twice; the rotary embedding upcasts q and
// k, multiplies them as complex numbers and casts back: 20 (d + kv); repeat_kv copies k and v out
// to all query heads: 4 (d + kv); the attention output's transpose is made contiguous: 4d; two
// residual adds: 12d; SiLU and the gate product: 10f. In all 112d + 24kv + 10f. Compiled, Inductor
// fuses each residual add into the norm after it (read 4d, write 4d: 16d for the two), the rotary
// embedding into one pass over q and k (4 (d + kv)), and SiLU with the gate product (read 4f, write
// 2f); the expanded k and v (4d) and the output transpose (4d) are still written: 24d + 4 (d + kv)
// + 6f. This model counts 2 x 2 bytes x (2 norms x 2d + q, k, v + attention output + the gated
// MLP's 3f) = 24d + 8kv + 12f at a share of 1. For LLaMA 3.1 8B (kv = d/4, f = 3.5d) that is 153d
// eager and 50d compiled against 68d: 2.25 and 0.74 (70B: 2.24 and 0.74; 405B: 2.30 and 0.75).
// Measured: torchtitan's LLaMA 3.1 8B on 8 H100 runs 5,762 tokens/s per GPU eager and 6,667
// compiled (docs/performance.md, Table 1), 0.39 s a step; the counted 1.5 shares price 0.32 s of
// it at the page's 2.4 TB/s HBM2e.
// DeepSpeed runs a model it does not write, most often a Hugging Face Transformers one (FlagPerf's
// DeepSpeed cases, at transformers 4.30.2 and 4.34.1), whose LLaMA-style block uses the same eager
// ops: LlamaRMSNorm upcasts, squares, means, scales, casts back and multiplies by its weight, as
// torchtitan's norm does; the rotary embedding (q x cos + rotate_half(q) x sin, rotate_half a
// negation and a torch.cat, in q's dtype) moves the same 20 bytes per element of q and k; SiLU,
// the gate product and the residual adds are the same kernels. So it carries the same shares.
// A model that swaps in fused kernels (Liger's RMSNorm, RoPE and SwiGLU, as ALST runs) is priced
// compiled ("compile": true); Megatron-DeepSpeed's fused kernels would be Megatron's 0.5.
constexpr double kEagerBlockTraffic = 2.25;
constexpr double kCompiledBlockTraffic = 0.74;

// GPU idle per local expert and forward-equivalent pass of a Megatron-Core MoE layer on Hopper
// (moeHostIssueSeconds: 1.893 s / (48 x 64 x 3 x 8)).
constexpr double kMoeHostIssuePerExpertS = 25.7e-6;

// The widest layer NeMo's recipes leave without tensor-parallel communication overlap (their
// 7B/8B-class models, d_model 4096); every userbuffers configuration they ship is wider.
constexpr double kNemoWidestWithoutOverlap = 4096.0;

// Whether a Megatron plan on `chip` runs Megatron-Core's current MoE recipes (DeepEP's dispatch,
// and dropless layers that wait for the host) rather than the 2021-22 Megatron-LM of the
// published A100 runs. DeepEP came with Hopper (SM90); a GPU with fp8 units is taken as an NVIDIA
// part of that generation or later (an inline chip of another vendor's with fp8 would be read so
// too).
bool runsCurrentMoeRecipes(const Chip &chip)
{
    return !chip.isTpu() && chip.listedPeakFlops(DType::Fp8) > 0;
}

// Megatron-LM and NeMo (Megatron-Bridge) both train through Megatron-Core.
bool runsMegatronCore(std::string_view stack)
{
    return stack == "megatron" || stack == "nemo";
}

std::string_view firstListed(const Chip &chip, std::initializer_list<std::string_view> preference)
{
    for (std::string_view name : preference)
        if (chip.attentionKernels.find(name) != chip.attentionKernels.end())
            return name;
    return {};
}

// Every program on a TPU, and MaxText's on GPUs, is one XLA computation: elementwise steps fuse
// into their neighbours.
bool compiledByXla(const Chip &chip, std::string_view stack)
{
    return chip.isTpu() || stack == "maxtext";
}

} // namespace

std::string_view attentionKernelFor(const Chip &chip, std::string_view stack)
{
    if (chip.attentionKernels.empty())
        return {};
    // Megatron-LM and NeMo call Transformer Engine's DotProductAttention, which prefers cuDNN's
    // fused attention on Hopper and Blackwell and FlashAttention-2 on Ampere (TE docs,
    // "Attention backends"). MaxText on GPUs uses the same TE kernel (attention: cudnn_flash_te).
    if (stack == "megatron" || stack == "nemo" || stack == "maxtext")
        return firstListed(chip, {"cudnn", "flash-attention-2"});
    // torchtitan calls PyTorch's scaled_dot_product_attention, whose flash backend is
    // FlashAttention-2; DeepSpeed's models (Hugging Face's flash_attention_2, Megatron-DeepSpeed's
    // --use-flash-attn) and Composer/llm-foundry call the flash-attn package (FlashAttention-2).
    if (stack == "torchtitan" || stack == "deepspeed" || stack == "composer")
        return firstListed(chip, {"flash-attention-2", "cudnn"});
    // No stack named: a well-tuned one, the fastest kernel with published numbers on the chip.
    return firstListed(chip, {"flash-attention-3", "cudnn", "flash-attention-2"});
}

double kernelHeadDim(const ModelSpec &model)
{
    if (model.mla)
        return double(std::max(model.mla->qkNopeHeadDim + model.mla->qkRopeHeadDim, model.mla->vHeadDim));
    return double(model.headDim);
}

double attentionKernelShare(const AttentionKernelCurve &curve, const ModelSpec &model, double kernelLength,
                            double seqLen, bool backward)
{
    const double headDim = kernelHeadDim(model);
    const auto share = [&](double length) {
        return backward ? curve.backwardShare(length, headDim) : curve.forwardShare(length, headDim);
    };
    const double global = share(kernelLength);
    if (!model.slidingWindow || 2.0 * double(model.slidingWindow->window) >= kernelLength)
        return global;
    // Keys per query as the kernel visits them, summed over the layers (causalAttendedKeys): S/2
    // in each global layer, the rest in the local ones.
    const double allWork = model.layers * causalAttendedKeys(model, seqLen, kAttentionTileKeys);
    const double globalWork = (model.layers - model.slidingWindow->localLayers) * seqLen / 2.0;
    const double localWork = allWork - globalWork;
    return allWork / (localWork / share(2.0 * double(model.slidingWindow->window)) + globalWork / global);
}

bool compilesBlocks(const Chip &chip, std::string_view stack, DType compute, std::optional<bool> asked)
{
    // torchtitan@b5bcd76 torchtitan/components/quantization/float8.md: model_compile_enabled is
    // set "when torch.compile is enabled for the model (required for competitive performance).
    // torch.compile fuses the float8 scaling/casting kernels", and every Float8 row of its
    // performance tables is compiled.
    return asked.value_or(stack == "torchtitan" && compute == DType::Fp8 && chip.hasEightBitUnits(compute));
}

double elementwiseTrafficShare(std::string_view stack, bool compiled)
{
    if (stack == "torchtitan" || stack == "deepspeed")
        return compiled ? kCompiledBlockTraffic : kEagerBlockTraffic;
    // Composer/llm-foundry runs PyTorch eagerly too (its benchmark configs do not compile), but
    // its MPT block is leaner: one low-precision LayerNorm kernel, GeLU and no rotary embedding.
    // Each norm, activation and residual add reads its input from HBM and writes its output back.
    if (stack == "composer")
        return 1.0;
    // XLA (MaxText) fuses elementwise chains into the neighbouring matmuls and reductions, and
    // Megatron/NeMo call fused kernels (bias-GeLU, bias-dropout-add, Transformer Engine's
    // LayerNorm-Linear and LayerNorm-MLP): about half of the book's ~20 intermediates per layer
    // still make a round trip. This is the share the calibration runs were fitted with.
    return 0.5;
}

double eightBitCastBytes(const Chip &chip, std::string_view stack, DType compute)
{
    // XLA recognises the quantize / dequantize pattern around a dot and calls the 8-bit matmul
    // with the scales (cuBLASLt's fp8 API on GPUs: NVIDIA JAX-Toolbox, "User Guide on Native
    // XLA-FP8"); the quantization and the amax reduction fuse into the op that produces the
    // operand, as every elementwise step does under XLA.
    if (!chip.hasEightBitUnits(compute) || compiledByXla(chip, stack))
        return 0.0;
    return kForwardCastBytes + kBackwardCastBytes;
}

double expertLayerCastInputs(std::string_view stack, const MoeSpec &moe, bool expertParallel)
{
    // Megatron-Core hands the permuted rows to Transformer Engine's grouped linear, which quantizes
    // each expert's (experts.py at NVIDIA/Megatron-LM@d98e8a6); torchtitan's grouped fp8 matmuls
    // quantize after the all-to-all too. Under an 8-bit recipe the condition below is
    // expertDispatchWire's compactOut: the forward's quantization moved before the wire, while the
    // backward's casts and transposes stay per copy.
    const double routed = moe.expertsPerToken;
    const double shared = moe.sharedExperts > 0 ? 1.0 : 0.0; // the shared experts are one module
    if (!expertParallel || !dispatchesExpertTokensInFp8(stack))
        return routed + shared;
    return (kForwardCastBytes + kBackwardCastBytes * routed) / (kForwardCastBytes + kBackwardCastBytes) + shared;
}

double matmulInputsPerToken(const ModelSpec &m, std::string_view stack, double tensor, bool moe, bool expertParallel)
{
    const double d = double(m.dModel);
    const double attnOut = m.heads / tensor * attentionHeadDims(m).second;
    if (!moe)
        return (m.parallelBlock ? 1.0 : 2.0) * d + attnOut + double(m.dFf) / tensor;
    const MoeSpec &e = *m.moe;
    const double mlpHidden = (e.expertsPerToken + e.sharedExperts) * double(e.dFfExpert) / tensor;
    return (1.0 + expertLayerCastInputs(stack, e, expertParallel)) * d + attnOut + mlpHidden;
}

double lossBytesPerLogit(const Chip &chip, std::string_view stack, std::optional<bool> fused, bool compiled)
{
    if (compiledByXla(chip, stack))
        return kLossBytesXla;
    // Unfused by default: Megatron-LM, and eager torchtitan and DeepSpeed. A Hugging Face model
    // computes its loss inside forward(), so compiling the model compiles the loss with it.
    const bool unfusedByDefault = stack == "megatron" || ((stack == "torchtitan" || stack == "deepspeed") && !compiled);
    if (fused.value_or(!unfusedByDefault))
        return kLossBytesFused;
    // A Hugging Face model's eager loss upcasts the logits, copies the shifted ones and runs
    // F.cross_entropy: the torch count plus a copy (4 + 4), 56 bytes, nearer Megatron's 52 (which
    // Megatron-DeepSpeed runs) than torchtitan's 48.
    const bool megatronLoss = stack == "megatron" || stack == "deepspeed" || stack == "nemo";
    return megatronLoss ? kLossBytesMegatron : kLossBytesTorch;
}

bool overlapsTensorCollectives(const Chip &chip, std::string_view stack, int tensor, bool sequenceParallel, double dModel)
{
    // Transformer Engine splits each sequence-parallel all-gather and reduce-scatter into chunks
    // that ride beside the pieces of the matmul (userbuffers). It needs sequence parallelism and
    // two or more tensor ranks: the overlap "silently disables itself when sequence parallelism
    // is off or TP < 2" (Megatron-Bridge docs/training/communication-overlap.md). NeMo's recipes
    // turn it on model by model, with a userbuffers configuration tuned to the layer's width:
    // NeMo-Framework-Launcher ships them for hidden sizes 5120 to 16384 only
    // (launcher_scripts/conf/training/tp_overlap, ub_cfg_*_h5120_* and up), its llama2_7b and
    // llama3_8b configs set ub_tp_comm_overlap False, and NeMo 2's llama2_7b, llama3_8b, gemma_7b,
    // chatglm3_6b and baichuan2_7b recipes pass tp_comm_overlap=False, while the 12B to 405B ones
    // (mistral_nemo_12b, nemotron4_15b, llama3_70b, gpt3_175b, llama31_405b) pass True
    // (NVIDIA/NeMo nemo/collections/llm/recipes). So a NeMo plan overlaps past d_model 4096 and
    // not at or below it; NVIDIA's own small Nemotron recipes, which turn it on at every width,
    // are the exception a plan names with "tensor_overlap": true. Megatron-LM leaves it to a flag
    // that is off unless passed (--tp-comm-overlap; ModelParallelConfig.tp_comm_overlap = False,
    // megatron/core/model_parallel_config.py at NVIDIA/Megatron-LM@d98e8a6), so a megatron plan
    // runs them exposed unless it says "tensor_overlap": true. Published Hopper runs go both ways:
    // Megatron-Core's own scaling table passes the flag at every width (MS, MW rows), while
    // FlagPerf's Megatron cases and the Megatron-MoE-ModelZoo's Qwen3 rows do not (FP, Z rows).
    // torchtitan's async TP is an opt-in flag. With no stack named only the plan's tensor_overlap
    // overlaps them: Meta's LLaMA-3 405B runs on 8,192 and 16,384 H100s (their own stack) come out
    // 20-30% fast when their sequence-parallel collectives are hidden. XLA on TPUs is left as the
    // MaxText runs were calibrated.
    if (chip.isTpu() || tensor < 2 || !sequenceParallel)
        return false;
    return stack == "nemo" && dModel > kNemoWidestWithoutOverlap;
}

double StepRemat::rebuiltShare(RematTensor t) const
{
    return policy->rebuilds(t) ? (t == RematTensor::MlpWi ? mlpUpRebuilt : 1.0) : 0.0;
}

StepRemat stepRemat(const Chip &chip, const TrainingSpec &training, const RematPolicy &remat, const ModelSpec &model)
{
    StepRemat step{&remat};
    const std::string_view stack = training.stack;
    // The counts below are a Llama (or MPT) block's. torchtitan's MoE and latent-attention blocks
    // run other matmuls in another order (and routed experts as grouped GEMMs the 9dec370 save
    // list does not name), and a parallel block reads one norm for both halves: they keep the
    // plain reading.
    if (model.moe || model.mla || model.parallelBlock)
        return step;
    if (remat.kind == Remat::Full && (stack == "torchtitan" || stack == "composer")) {
        // Both wrap each block in PyTorch's non-reentrant checkpoint: torchtitan's
        // ptd_checkpoint_wrapper defaults to CheckpointImpl.NO_REENTRANT (torchtitan 9dec370,
        // _apply_ac_to_transformer_block), and Composer picks it when activation_checkpointing_
        // reentrant is false (composer v0.16.4, dist_strategy.py), as every llm-foundry pretrain
        // yaml asks (b2a43a1; its benchmark sweep ran PyTorch 2.1.0). That checkpoint stops the
        // rebuilt forward as soon as every tensor the backward saved has been rebuilt
        // (torch/utils/checkpoint.py: "By default, non-reentrant checkpoint stops recomputation
        // as soon as it has computed all needed Tensors"). The last op of a block that saves
        // anything is the MLP's down projection, whose inputs are packed before its kernel runs,
        // so the rebuild stops there: the down projection (a third of a gated block's MLP FLOPs,
        // half a plain one's) and the last residual add are never run again. That is the policy
        // that saves nothing but the layer input. Compiled, AOTAutograd's partitioner keeps only
        // what the backward reads and drops the same matmul. Float8 linears run eagerly
        // (torchao's, and Transformer Engine's, which llm-foundry checkpoints reentrantly) are
        // autograd Functions whose saved tensors are packed after their forward has run: the
        // down projection runs again there. Megatron's and DeepSpeed's checkpoints are reentrant
        // and rerun the whole forward.
        const DType compute = training.computeDtype;
        if (compute == DType::Fp8 && chip.hasEightBitUnits(compute)
            && !compilesBlocks(chip, stack, compute, training.compile))
            return step;
        static const RematPolicy earlyStop{Remat::Custom, "full", {}, {}};
        step.policy = &earlyStop;
        step.rebuildsElementwise = true;
        return step;
    }
    if (stack != "torchtitan")
        return step;
    if (remat.kind != Remat::Selective)
        return step;
    // torchtitan's selective activation checkpointing, "op" (its Llama 3 8B config's choice; the
    // 70B and 405B configs run full), is a per-operator policy: the block's forward runs under
    // create_selective_checkpoint_contexts with MUST_SAVE for the outputs of aten.mm, the SDPA
    // flash and efficient kernels, the functional reduce-scatter and abs/max (fp8 amax), "except
    // every second mm", counted per block (torchtitan 9dec370,
    // torchtitan/parallelisms/parallelize_llama.py, _save_list and _apply_ac_to_transformer_block).
    // A Llama block's matmuls run wq, wk, wv, wo, then w1, w3, w2 (model.py: w2(silu(w1(x)) *
    // w3(x))), so wq, wv, w1 and w2 are kept and wk, wo and w3 rebuilt; w2's output only enters
    // the next block's kept input. The attention output is kept, so the core is not run again.
    // Every other op (the norms, the rotary embedding, SiLU and the gate product, the residual
    // adds, fp8 casts) is PREFER_RECOMPUTE and runs again. A plain MLP's second mm is its down
    // projection, which the backward does not read: its up projection is kept whole.
    static const RematPolicy gated{
        Remat::Custom, "selective",
        {RematTensor::QueryProj, RematTensor::ValueProj, RematTensor::Context, RematTensor::MlpWo}, {}};
    static const RematPolicy plain{
        Remat::Custom, "selective",
        {RematTensor::QueryProj, RematTensor::ValueProj, RematTensor::Context, RematTensor::MlpWi, RematTensor::MlpWo}, {}};
    const bool gatedMlp = model.mlp == MlpKind::Gated;
    step.policy = gatedMlp ? &gated : &plain;
    step.mlpUpRebuilt = gatedMlp ? 0.5 : 1.0;
    step.rebuildsElementwise = true;
    return step;
}

bool gathersWeightsBehindForward(const Chip &chip, std::string_view stack, int zeroStage)
{
    // Megatron-Core's DistributedDataParallelConfig: overlap_grad_reduce "overlap grad
    // reduce-scatter with backward compute", overlap_param_gather "overlap param all-gather with
    // forward compute in distributed optimizer" (megatron/core/distributed/
    // distributed_data_parallel_config.py): each bucket's weights are gathered in a forward
    // pre-hook as the first microbatch reaches it. Megatron-LM's and NeMo's performance recipes
    // run the distributed optimizer with both on; a plan writes it as ZeRO 1 or 2.
    return !chip.isTpu() && zeroStage >= 1 && zeroStage <= 2 && runsMegatronCore(stack);
}

bool shardsActivationsOverTensor(const Chip &chip, std::string_view stack)
{
    // MaxText's logical axis rules map activation_embed (and norm) to the "tensor" mesh axis
    // (AI-Hypercomputer/maxtext@000e9355 MaxText/configs/base.yml, logical_axis_rules): between
    // the tensor-parallel matmuls the [batch, length, embed] activations stay split over the
    // tensor axis, and XLA turns each layer's all-reduce into a reduce-scatter and an all-gather.
    // That is what Megatron calls sequence parallelism, split on the embedding instead of the
    // sequence. torchtitan's tensor-parallel plan applies "tensor + sequence parallelism to every
    // transformer block": its norms are SequenceParallel and the blocks take and give Shard(1)
    // activations (pytorch/torchtitan@018740b7 torchtitan/models/llama3/infra/parallelize.py,
    // apply_tp). Only where the plan names one of them: other stacks make it a choice.
    (void)chip;
    return stack == "maxtext" || stack == "torchtitan";
}

ContextParallelRing contextParallelRing(const Chip &chip, std::string_view stack)
{
    ContextParallelRing ring;
    if (chip.isTpu() || stack != "torchtitan")
        return ring;
    // torchtitan's context parallelism is PyTorch's (torch.distributed.tensor.experimental
    // context_parallel, _templated_ring_attention and its backward), counted at torchtitan
    // 9dec370 / torch 1963fc8 and unchanged in later PyTorch:
    // - its LLaMA attention repeats the KV heads to the query heads before calling SDPA
    //   (torchtitan/models/llama/model.py, repeat_kv), so the ring moves every head's keys and values;
    // - the rotate method defaults to "allgather" (config_manager.py,
    //   experimental.context_parallel_rotate_method): _AllGatherRotater gathers every rank's keys
    //   and values once and the loop waits for them at its second block;
    // - the key/value gradients are accumulated in fp32 (_ContextParallelOptions.convert_to_f32)
    //   and sent to the next rank after every block (an ALL_TO_ALL rotater, whatever the rotate
    //   method);
    // - each block's output is merged in eager ops in fp32 (_SDPAMerger): to(fp32) 2+4 bytes,
    //   out - block_out 4+4+4, sigmoid x difference 4+4, out - that 4+4+4: 38 bytes per output
    //   element for every block after the first on the rank that merges them all in full (the
    //   last; the others update half the output and re-concatenate it, 27 bytes), and 6 + 6 bytes
    //   for the first block's upcast and the final downcast; keys and values are copied into the
    //   send buffer (torch.cat, 2+2 bytes) before every block but the last, and once made
    //   contiguous;
    // - the backward adds each block's query gradient into an fp32 buffer (4+2+4 bytes) and its
    //   key/value gradients into the received fp32 buffer (a half-chunk add and a torch.cat on the
    //   last rank: 13 bytes), re-concatenates them for sending (4+4) and copies keys and values
    //   for the next rank (2+2): 10 bytes per query and 25 per key/value element each block, plus
    //   zero-filling (4) and the final downcasts (4+2).
    ring.gathersOnce = true;
    ring.expandsKeyValueHeads = true;
    ring.keyValueGradientBytes = 4.0;
    ring.forwardOutput = {38.0, 12.0};
    ring.forwardKeyValue = {4.0, 4.0};
    ring.backwardQuery = {10.0, 10.0};
    ring.backwardKeyValue = {25.0, 10.0};
    return ring;
}

bool shardsHeadsOverContext(const Chip &chip, std::string_view stack)
{
    // DeepSpeed's sequence parallelism is Ulysses (Jacobs et al. 2023, arXiv 2309.14509), in both
    // of its forms, counted at deepspeedai/DeepSpeed@edaa722: Megatron-DeepSpeed's
    // DistributedAttention (deepspeed/sequence/layer.py) and the Hugging Face integration of
    // Arctic Long Sequence Training (deepspeed/runtime/sequence_parallel/ulysses_sp.py,
    // UlyssesSPAttentionHF). Before the attention core each of q, k and v goes through one
    // all-to-all that trades a 1/N share of the tokens for a 1/N share of the heads (key/value
    // heads repeated up to N where there are fewer); the core runs the ordinary local kernel on
    // the whole sequence; one more all-to-all sends the output back. The backward runs the same
    // four on the gradients (_SeqAllToAll / _DimZeroAllToAll backward). Each waits for its input:
    // the overlap stream (sp_overlap_comm) is opt-in, off by default. DeepSpeed has no ring.
    return !chip.isTpu() && stack == "deepspeed";
}

double attentionKernelLength(const Chip &chip, std::string_view stack, double seqLen, int context)
{
    return shardsHeadsOverContext(chip, stack) ? seqLen : seqLen / double(std::max(1, context));
}

bool tensorOverlapCoversBackward(std::string_view stack)
{
    // torchtitan's async TP is PyTorch's micro-pipelined TP (torchtitan's --parallelism.
    // enable_async_tensor_parallel turns on Inductor's micro_pipeline_tp pass, which rewrites an
    // all-gather feeding matmuls and a matmul feeding a reduce-scatter into symmetric-memory
    // fused ops; torch/_inductor/fx_passes/micro_pipeline_tp.py). Its authors measured "up to ~20%
    // forward pass speedup and ~8% E2E speedup in Llama3 70B" (PyTorch dev-discuss, "[Distributed
    // w/ TorchTitan] Introducing Async Tensor Parallelism in PyTorch", Aug 2024). Under full
    // activation checkpointing (torchtitan's 70B default) a step is a forward, a recomputed forward
    // and a backward of twice a forward: a forward and a recomputed forward running 1/1.2 of their
    // time save 8.3% of the step, so the backward's collectives gain next to nothing. torchtitan's
    // own Llama 3.1 70B table agrees: 256 H100s with FSDP 32 and TP 8 train 876 rather than 829
    // tokens/s per GPU with it, 5.7% (pytorch/torchtitan@820504e^ docs/performance.md, Table 4).
    // Transformer Engine's userbuffers overlap (NeMo, Megatron's --tp-comm-overlap) splits the
    // backward's data-gradient collectives too.
    return stack != "torchtitan";
}

bool overlapsTensorBackward(const Chip &chip, std::string_view stack)
{
    // MaxText's run scripts start XLA with async collective fusion and compute/collective overlap
    // on the TensorCore (LIBTPU_INIT_ARGS --xla_tpu_enable_async_collective_fusion,
    // --xla_tpu_overlap_compute_collective_tc, e.g. MaxText/configs/v5p/512b.sh): the scheduler
    // starts a collective as soon as its operand is ready and runs independent work beside it. In
    // the backward pass a layer's input-gradient all-reduce is independent of its weight-gradient
    // matmuls; in the forward pass the next layer waits for it.
    return chip.isTpu() && stack == "maxtext";
}

double expertKernelShare(const Chip &chip, std::string_view stack, DType compute)
{
    // TensorRT-LLM runs its MoE layers through its own CUTLASS grouped GEMMs (moe_gemm). Through
    // v0.9, the last release whose performance tables are static batches, the 16-bit ones were
    // CUTLASS 2.x kernels built for SM80 (launchers/fused_moe_gemm_launcher_sm80, dispatched for
    // SM90 too); Hopper-native TMA warp-specialized grouped GEMMs came later. On an H100 they run
    // as FlashAttention-2 does, at about 1.7x an A100's speed instead of 3.2x (the chip's
    // legacy_kernel_share). Its dense layers call cuBLAS, Hopper-native. 8-bit (fp8) MoE GEMMs
    // have no SM80 form and are left at the chip's rate.
    const bool sixteenBit = compute == DType::Bf16 || compute == DType::Fp16;
    if (stack == "tensorrt-llm" && sixteenBit && chip.achievable.legacyKernelShare > 0)
        return chip.achievable.legacyKernelShare;
    return 1.0;
}

double moeHostIssueSeconds(const Chip &chip, std::string_view stack)
{
    // Megatron-Core's dropless token dispatchers read the tokens-per-expert counts on the host in
    // every MoE layer (`.tolist()` in token_dispatcher.py and experts.py, NVIDIA/Megatron-LM
    // d98e8a6), and Transformer Engine launches one matmul per local expert from the host. On
    // Hopper the layer cannot be captured whole: Megatron-Bridge's CUDA-graph card lists "dropless
    // Hopper MoE full-iteration capture remains blocked when dynamic tokens_per_expert reaches the
    // host and static rank capacity requires an sm100-only operation-fuser GroupedMLP"
    // (skills/nemo-mbridge-perf-cuda-graphs/card.yaml at NVIDIA-NeMo/Megatron-Bridge@228e9a3), so
    // the GPU idles while the host issues each MoE layer. Measured by Nsight Systems on its
    // Qwen3-30B-A3B recipe on 16 H100 (skills/nemo-mbridge-perf-moe-comm-overlap/SKILL.md, EP 16,
    // overlap off, router and preprocess already graphed): GPU-active 22.821 s in a 24.7138 s step,
    // 1.893 s idle over 48 MoE layers x 64 microbatches x 3 forward-equivalent passes x 8 local
    // experts = 25.7 us each. Its Qwen3.5-35B-A3B control on the same GPUs, with twice the local
    // experts, idles 4.204 s in 26.048 s. Blackwell recipes capture the layer; TPUs run one program.
    const bool hopper = runsCurrentMoeRecipes(chip) && chip.listedPeakFlops(DType::Fp4) <= 0;
    return hopper && runsMegatronCore(stack) ? kMoeHostIssuePerExpertS : 0.0;
}

bool deduplicatesExpertDispatch(const Chip &chip, std::string_view stack, ExpertDispatch asked)
{
    if (asked != ExpertDispatch::Stack)
        return asked == ExpertDispatch::Deduplicated;
    if (stack == "megatron")
        return runsCurrentMoeRecipes(chip);
    // NeMo's Megatron-Bridge performance recipes run the flex dispatcher (DeepEP, or HybridEP) for
    // their MoE models (scripts/performance/configs/*/..._workload_base_configs.py,
    // moe_flex_dispatcher_backend); a recipe that sets moe_token_dispatcher_type "alltoall" says
    // so in its plan (NVIDIA-NeMo/Megatron-Bridge@17a381f). Megatron-LM's MoE guide runs
    // "alltoall" for standard EP > 1 setups and the flex dispatcher, which "removes redundant
    // tokens during cross-node communication", when asked (megatron/core/transformer/moe/README.md,
    // its dispatcher table; NVIDIA/Megatron-LM@d98e8a6), and its performance tips put
    // "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep" first among the
    // flags to enable: DeepEP needs Hopper, so a Megatron plan deduplicates from Hopper on; torchtitan's comm_backend defaults to "standard",
    // PyTorch's all_to_all_single (torchtitan/models/common/config_utils.py); DeepSpeed-MoE and
    // MegaBlocks (composer) call a plain all-to-all; MaxText's ragged all-to-all sends each copy.
    return stack.empty() || stack == "nemo";
}

bool deduplicatesServingDispatch(ExpertDispatch asked, bool prefill)
{
    if (asked != ExpertDispatch::Stack)
        return asked == ExpertDispatch::Deduplicated;
    return prefill;
}

bool dispatchesExpertTokensInFp8(std::string_view stack)
{
    // Megatron-Core (and NeMo over it) dispatch the bf16 hidden states: DeepEP's fused dispatch
    // takes them as they are, HybridEP asserts "does not support fp8 dispatch now", and the
    // moe_dispatch_fwd_dtype option ("bf16" by default) quantizes only with the Blackwell-only
    // ncclep backend (megatron/core/transformer/moe/fused_a2a.py, transformer_config.py at
    // NVIDIA/Megatron-LM@d98e8a6). torchtitan's Float8 and MXFP8 recipes quantize inside the
    // grouped matmuls, after the all-to-all. DeepSeek-V3 dispatches fp8 (report sec. 3.3.2).
    // (Megatron's MoE README lists "50% EP dispatch volume" among FP8's benefits; in its code
    // that is the opt-in mxfp8 wire above, not what an fp8 recipe does by itself.)
    return stack.empty();
}

ExpertDispatchWire expertDispatchWire(const Chip &chip, std::string_view stack, ExpertDispatch asked,
                                      double computeBytes, double flowBytes, bool achievable)
{
    ExpertDispatchWire wire;
    wire.compactOut = computeBytes < flowBytes && (!achievable || dispatchesExpertTokensInFp8(stack));
    wire.bytes = wire.compactOut ? 0.5 * (computeBytes + flowBytes) : flowBytes;
    // A TPU's all-to-all runs over ICI and DCN with no forwarding step to save.
    wire.deduplicated = achievable && !chip.isTpu() && deduplicatesExpertDispatch(chip, stack, asked);
    return wire;
}

double expertDispatchEfficiency(const Chip &chip, double ridge, double dFfExpert)
{
    if (!(dFfExpert > 0))
        return 1.0;
    return 1.0 / (1.0 + (chip.isTpu() ? kExpertDispatchCostTpu : kExpertDispatchCostGpu) * ridge / dFfExpert);
}

double forwardExpertDispatchEfficiency(const Chip &chip, double ridge, double dFfExpert)
{
    // The cost multiplies the ridge: scaling one scales the other.
    return expertDispatchEfficiency(chip, kForwardDispatchScale * ridge, dFfExpert);
}

} // namespace meshplan::model
