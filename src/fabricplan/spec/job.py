"""What a training job is: model, parallelism, batch and its share of the cluster's time."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from fabricplan.catalog.models import TransformerShape

#: The spec's bound on a cluster's GPUs (ClusterSpec.cluster.gpus), also bounding parallel degrees.
MAX_GPUS = 10_000_000


class ModelDims(TransformerShape):
    """A transformer described by its dimensions instead of a preset name."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = "custom"


class UserbuffersSms(BaseModel):
    """SMs of a userbuffers configuration file's communicators (``num_sm``), where the job's file is
    known; a field left out keeps ``tp_overlap_config``'s value."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    attention_output: float | None = Field(
        default=None, ge=0, le=1024, description="proj_fprop's num_sm when it is a pipelined reduce-scatter "
                                                 "with set_sm_margin (0 for a ring exchange)")
    ffn_down: float | None = Field(
        default=None, ge=0, le=1024, description="fc2_fprop's num_sm when it is a pipelined reduce-scatter "
                                                 "with set_sm_margin (0 for a ring exchange)")
    bulk: float | None = Field(
        default=None, ge=0, le=1024, description="The mean num_sm of the four bulk collectives (qkv_dgrad, "
                                                 "qkv_wgrad, fc1_dgrad, fc1_wgrad)")


class JobSpec(BaseModel):
    """One training job of the workload mix."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: Literal["training"] = Field(default="training", description="A training job (the default); serving "
                                                                      "jobs are kind: serving")
    name: str = Field(min_length=1)
    model: str | ModelDims = Field(description="A model preset id (e.g. llama3-70b) or inline dimensions")
    # Upper bounds are sanity bounds: parallel degrees at most the 10-million-GPU cluster bound,
    # sequences and batches ~100x beyond published training runs (Llama 3: 16M-token batches,
    # 128K-token context).
    gpus: PositiveInt | None = Field(default=None, le=MAX_GPUS,
                                     description="GPUs the job runs on; None = the whole cluster")
    tp: PositiveInt = Field(default=1, le=MAX_GPUS, description="Tensor parallel size (inside the scale-up domain)")
    pp: PositiveInt = Field(default=1, le=MAX_GPUS, description="Pipeline parallel stages")
    virtual_pipeline_stages: PositiveInt = Field(
        default=1, le=10_000,
        description="Model chunks per pipeline stage (Megatron's virtual pipeline size, interleaved 1F1B "
                    "schedule): the bubble shrinks to (pp-1)/(v*m) of the ideal time and pipeline "
                    "send/recv grows v-fold (Narayanan et al., SC'21, section 2.2.2); 1 = plain 1F1B. "
                    "pp x virtual_pipeline_stages must not exceed the model's layers (plus the embedding and "
                    "loss slots when they count in the split)")
    account_for_embedding_in_pipeline_split: bool = Field(
        default=False,
        description="Count the input embedding as one layer when splitting layers over pipeline stages (Megatron-"
                    "Core's option of this name): the first stage holds one transformer layer fewer, and a model "
                    "chunk may hold only the embedding (Llama 3 405B: 126 layers + 2 slots = 16 stages x 8 "
                    "one-layer chunks, Dubey et al. 2024 section 3.3.2)")
    account_for_loss_in_pipeline_split: bool = Field(
        default=False,
        description="Count the output layer and loss as one layer when splitting layers over pipeline stages "
                    "(Megatron-Core's option of this name): the last stage holds one transformer layer fewer")
    dp: PositiveInt | None = Field(default=None, le=MAX_GPUS,
                                   description="Data parallel size; None = gpus / (tp*pp*cp)")
    ep: PositiveInt = Field(default=1, le=MAX_GPUS, description="Expert parallel size (MoE)")
    cp: PositiveInt = Field(default=1, le=MAX_GPUS, description="Context parallel size")
    zero_stage: Literal[0, 1, 2, 3] = Field(
        default=1, description="ZeRO stage: 0 all-reduces the gradients once per step; 1 (distributed optimizer) "
        "reduce-scatters them and gathers the weights once per step; 2 keeps only a gradient shard, so it "
        "reduce-scatters after every micro-batch; 3 = FSDP, which also gathers the weights for every "
        "micro-batch's forward and backward")
    global_batch_sequences: PositiveInt = Field(le=1_000_000_000,
                                                description="Sequences per optimizer step (at most 10^9)")
    micro_batch_sequences: PositiveInt = Field(default=1, le=1_000_000,
                                               description="Sequences per micro-batch (at most 10^6)")
    seq_len_tokens: PositiveInt = Field(le=100_000_000, description="Tokens per sequence (at most 10^8)")
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    gradient_dtype: Literal["fp32", "bf16", "fp16"] | None = Field(
        default=None,
        description="dtype of the gradients accumulated over micro-batches and reduced over data parallelism; "
                    "None = the frameworks' default for the precision: fp32 for bf16 and fp8 (Megatron-LM, NeMo's "
                    "distributed optimizer, torchtitan), fp16 for fp16. bf16 halves the gradient traffic "
                    "(NeMo grad_sync_dtype, Megatron-LM --grad-reduce-in-bf16)")
    recompute: Literal["none", "selective", "full"] = "selective"
    attention_kernel: Literal["flash", "unfused"] = Field(
        default="flash", description="Attention core kernel timed by the step model: flash (FlashAttention) or "
                                     "unfused (matmul + softmax, e.g. Megatron-LM before 2022)")
    sequence_parallel: bool = True
    dp_overlap: bool = Field(
        default=True, description="Overlap bucketed data-parallel gradient communication with the backward pass")
    tp_overlap: bool = Field(
        default=False, description="Overlap tensor-parallel collectives with GEMMs (Transformer Engine userbuffers)")
    tp_overlap_config: Literal["tuned", "te_default"] = Field(
        default="tuned",
        description="Userbuffers configuration of tp_overlap, for the SMs its communication kernels hold beside "
                    "the GEMMs: tuned (a per-model file, as NeMo's and Megatron-Bridge's H100 configurations) or "
                    "te_default (Transformer Engine's defaults: 16 SMs per bulk and pipelined communicator; "
                    "Megatron-LM's --tp-comm-overlap without --tp-comm-overlap-cfg)")
    tp_overlap_sms: UserbuffersSms | None = Field(
        default=None, description="The SMs of the job's own userbuffers file, where known (overrides "
                                  "tp_overlap_config's values field by field)")
    pipeline_scatter_gather: bool = Field(
        default=True,
        description="Pipeline sends split over the tensor-parallel ranks (Megatron-LM's scatter/gather "
                    "optimization, Narayanan et al. SC'21 §4.1; on by default since NVIDIA/Megatron-LM 72e4230, "
                    "2021-02): each rank sends 1/tp of the activation and the next stage all-gathers it over "
                    "NVLink. False: every rank sends the whole activation (Megatron-LM before 2021-02). "
                    "Ignored with sequence parallelism, whose stage outputs are already split over the ranks")
    # --- memory only (perf/memory.py); added for issue 27 ---
    activation_offload_layers: int = Field(
        default=0, ge=0, le=100_000,
        description="Transformer layers whose saved activations are offloaded to host memory between the forward "
                    "and the backward (Megatron-Core / Transformer Engine CPU offloading, Megatron-Bridge "
                    "cpu_offloading_num_layers): they hold no GPU memory for activations; the step time is "
                    "unchanged (the copies overlap compute)")
    share: float = Field(default=1.0, gt=0, le=1, description="Share of cluster time spent on this job (within "
                                                               "its phase, when the spec has phases)")
    phase: str | None = Field(default=None, description="The spec's phase this job runs in (phases[].name)")
    token_budget: float | None = Field(default=None, gt=0, le=1e18,
                                       description="Tokens to train, for GPU-hours (at most 10^18)")
    duration_hours: float | None = Field(
        default=None, gt=0, le=1e5, description="Median hours one run of this job lasts in the fleet "
                                                "(fabricplan fleet); None = the catalog's fleet_job_duration_hours")

    @model_validator(mode="after")
    def _batch(self) -> JobSpec:
        if self.global_batch_sequences % self.micro_batch_sequences:
            raise ValueError(
                f"global_batch_sequences ({self.global_batch_sequences}) must be a multiple of "
                f"micro_batch_sequences ({self.micro_batch_sequences})")
        return self


class JobLayout(BaseModel):
    """A job's parallel degrees on its GPUs and its micro-batches per pipeline (``job_layout``)."""

    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    virtual_pipeline_stages: int
    micro_batches: int


def job_layout(job: JobSpec, gpus: int, scale_up_gpus: int, layers: int, experts: int, where: str) -> JobLayout:
    """Check that ``job`` lays out on ``gpus`` GPUs and return its degrees (one rule set for the spec
    check and the step model).

    tp x pp x cp divides the GPUs and tp x pp x cp x dp equals them; tp divides the scale-up domain;
    ep divides dp x cp and needs a mixture-of-experts model (``experts`` > 1); the global batch is a
    multiple of dp x micro-batch (micro-batches per pipeline = global / (dp x micro-batch));
    pp <= slots and pp x virtual stages <= slots (each model chunk holds a layer or the embedding or
    loss slot; slots = layers + the slots ``pipeline_slots`` counts), virtual stages need pp > 1.
    InputError at ``where`` or ``where.<field>``.
    """
    from fabricplan.errors import InputError

    tp, pp, cp, ep = job.tp, job.pp, job.cp, job.ep
    model_parallel = tp * pp * cp
    # Groups need not fill whole nodes (Megatron-Core lays them out across nodes in rank order:
    # fabricplan.design.groups); a degree that does not divide the GPUs is no layout at all.
    for name, degree in (("tp", tp), ("pp", pp), ("cp", cp)):
        if gpus % degree:
            raise InputError(f"{name} ({degree}) does not divide the job's {gpus} GPUs", location=f"{where}.{name}")
    if gpus % model_parallel:
        raise InputError(f"tp x pp x cp = {tp} x {pp} x {cp} = {model_parallel} does not divide the job's "
                         f"{gpus} GPUs", location=where)
    dp = job.dp or gpus // model_parallel
    if model_parallel * dp != gpus:
        raise InputError(f"tp x pp x cp x dp = {model_parallel * dp} but the job has {gpus} GPUs",
                         location=f"{where}.dp")
    if tp > scale_up_gpus or scale_up_gpus % tp:
        raise InputError(f"tp ({tp}) must divide the scale-up domain ({scale_up_gpus} GPUs)", location=f"{where}.tp")
    if (dp * cp) % ep:
        raise InputError(f"ep ({ep}) must divide dp x cp ({dp * cp})", location=f"{where}.ep")
    per_replica = dp * job.micro_batch_sequences
    if job.global_batch_sequences % per_replica:
        raise InputError(f"global_batch_sequences ({job.global_batch_sequences}) must be a multiple of "
                         f"dp x micro_batch_sequences ({dp} x {job.micro_batch_sequences})",
                         location=f"{where}.global_batch_sequences")
    if ep > 1 and experts == 1:
        raise InputError(f"ep ({ep}) > 1 needs a mixture-of-experts model; this one is dense (experts: 1)",
                         location=f"{where}.ep")
    slots = pipeline_slots(job, layers)
    counted = f"{layers} layers" + (f" + {slots - layers} embedding/loss slot{'s' if slots - layers > 1 else ''}"
                                    if slots > layers else "")
    if pp > slots:
        raise InputError(f"pp ({pp}) exceeds the model's {counted}", location=f"{where}.pp")
    if slots > layers and slots % pp:
        raise InputError(f"the model's {counted} = {slots} slots do not divide over pp = {pp} stages; with "
                         "account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split the slots "
                         "must split evenly (as Megatron-LM requires)", location=f"{where}.pp")
    virtual = job.virtual_pipeline_stages or 1
    if virtual > 1 and pp == 1:
        raise InputError("virtual_pipeline_stages > 1 needs pipeline parallelism (pp > 1)",
                         location=f"{where}.virtual_pipeline_stages")
    if pp * virtual > slots:
        raise InputError(f"pp x virtual_pipeline_stages = {pp} x {virtual} = {pp * virtual} exceeds the "
                         f"model's {counted} (each model chunk needs at least one layer; "
                         "account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split count "
                         "the embedding and the loss as one each)",
                         location=f"{where}.virtual_pipeline_stages")
    return JobLayout(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, virtual_pipeline_stages=virtual,
                     micro_batches=job.global_batch_sequences // per_replica)


def pipeline_slots(job: JobSpec, layers: int) -> int:
    """Layer slots split over the pipeline [-]: the transformer layers, plus one for the embedding and
    one for the output layer and loss when the job counts them (Megatron-Core adds 1 to num_layers for
    each of ``account_for_embedding_in_pipeline_split`` / ``account_for_loss_in_pipeline_split`` before
    dividing by the pipeline size)."""
    return layers + int(job.account_for_embedding_in_pipeline_split) + int(job.account_for_loss_in_pipeline_split)


def pipeline_stage_layers(job: JobSpec, layers: int, pp: int) -> list[int]:
    """Transformer layers on each of the ``pp`` pipeline stages, first to last [-].

    Balanced split of ``S = pipeline_slots(job, layers)`` slots: every stage holds ``floor(S/pp)``
    and the first ``S mod pp`` stages one more; the embedding slot (if counted) is the first stage's
    and the loss slot the last stage's, so those stages hold one transformer layer fewer (``job_layout``
    then requires ``S`` to divide by ``pp``, as Megatron-LM's arguments check does). Without the
    options: ``ceil(L/pp)`` on the fullest stage, ``floor(L/pp)`` on the last (which also runs the
    output layer)."""
    slots = pipeline_slots(job, layers)
    pp = max(int(pp), 1)
    base, extra = divmod(slots, pp)
    stages = [base + (1 if i < extra else 0) for i in range(pp)]
    if job.account_for_embedding_in_pipeline_split:
        stages[0] -= 1
    if job.account_for_loss_in_pipeline_split:
        stages[-1] -= 1
    return [max(n, 0) for n in stages]
