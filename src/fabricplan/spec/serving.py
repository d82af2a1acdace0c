"""What a serving (inference) job is: model, parallel layout, request load, prompt and output lengths,
latency SLOs, disaggregated prefill/decode and weight updates from trainers (issue 29).

A serving job is a ``jobs[]`` entry with ``kind: serving``; training jobs are ``kind: training``
(the default, :class:`fabricplan.spec.job.JobSpec`). Its GPUs are replicas of ``tp x ep`` GPUs:
``tp`` tensor-parallel ranks inside the scale-up domain, ``ep`` attention data-parallel groups whose
GPUs hold the experts between them (expert-parallel decode of a mixture-of-experts model, the
all-to-all of small messages that crosses the fabric when a replica spans nodes). With
``disaggregated``, ``prefill_gpus`` of them run prefill and the rest decode, and each request's KV
cache crosses the fabric from a prefill replica to a decode replica (Zhong et al., "DistServe",
OSDI '24; Qin et al., "Mooncake", FAST '25). The model is ``fabricplan.perf.serving``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from fabricplan.spec.job import MAX_GPUS, ModelDims


class ServingJobSpec(BaseModel):
    """One serving job of the workload mix: a request stream served by replicas of the model."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: Literal["serving"] = Field(description="A serving (inference) job; training jobs are kind: training")
    name: str = Field(min_length=1)
    model: str | ModelDims = Field(description="A model preset id (e.g. llama3-70b) or inline dimensions")
    gpus: PositiveInt | None = Field(default=None, le=MAX_GPUS,
                                     description="GPUs the job serves on; None = the whole cluster")
    tp: PositiveInt = Field(default=1, le=MAX_GPUS, description="Tensor parallel size of a replica (inside the "
                                                                 "scale-up domain)")
    ep: PositiveInt = Field(default=1, le=MAX_GPUS,
                            description="Expert parallel size of a replica (MoE): ep attention groups of tp GPUs "
                                        "hold the experts between them; a replica is tp x ep GPUs")
    precision: Literal["bf16", "fp16", "fp8"] = Field(default="bf16", description="Weights and GEMMs")
    kv_cache_dtype: Literal["bf16", "fp16", "fp8"] | None = Field(
        default=None, description="KV cache element type; None = the precision's (fp8 weights keep a bf16 cache "
                                  "unless this says fp8, as vLLM's kv_cache_dtype 'auto' does)")
    prompt_tokens: PositiveInt = Field(le=10_000_000, description="Mean prompt (input) length [tokens]")
    output_tokens: PositiveInt = Field(le=10_000_000, description="Mean output length [tokens]")
    request_rate_per_s: float = Field(gt=0, le=1e9, description="Requests per second offered to the whole job")
    max_batch_sequences: PositiveInt | None = Field(
        default=None, le=1_000_000,
        description="Most sequences a decode replica batches at once; None = the catalog's serving_max_batch_sequences "
                    "(vLLM's max_num_seqs default); also bounded by the KV cache the GPUs' memory holds")
    disaggregated: bool = Field(default=False, description="Prefill and decode on separate replicas, the KV cache "
                                                           "sent over the fabric between them")
    prefill_gpus: PositiveInt | None = Field(
        default=None, le=MAX_GPUS, description="disaggregated only: GPUs of the job that run prefill (whole replicas); "
                                               "the rest decode")
    ttft_slo_ms: float | None = Field(default=None, gt=0, le=1e7,
                                      description="Time-to-first-token SLO [ms]; None = the catalog's serving_ttft_slo_ms")
    tpot_slo_ms: float | None = Field(default=None, gt=0, le=1e6,
                                      description="Time-per-output-token SLO [ms]; None = the catalog's serving_tpot_slo_ms")
    weight_update_interval_s: float | None = Field(
        default=None, gt=0, le=1e9,
        description="RL-style serving: fresh weights are broadcast from the trainers to every replica this often "
                    "[s], and the replicas pause while they arrive; None = no weight updates")
    share: float = Field(default=1.0, gt=0, le=1, description="Share of cluster time spent on this job (within its "
                                                               "phase, when the spec has phases)")
    phase: str | None = Field(default=None, description="The spec's phase this job runs in (phases[].name)")
    duration_hours: float | None = Field(
        default=None, gt=0, le=1e5, description="Median hours one run of this job lasts in the fleet (fabricplan "
                                                "fleet); None = the catalog's fleet_job_duration_hours")

    @model_validator(mode="after")
    def _pools(self) -> ServingJobSpec:
        if self.prefill_gpus is not None and not self.disaggregated:
            raise ValueError("prefill_gpus is set but disaggregated is false: prefill and decode share the replicas")
        if self.disaggregated and self.prefill_gpus is None:
            raise ValueError("disaggregated serving needs prefill_gpus (the GPUs that run prefill)")
        return self

    # --- what the training-side code reads of every job, at its serving meaning ---
    @property
    def replica_gpus(self) -> int:
        """GPUs of one replica: ``tp x ep``."""
        return self.tp * self.ep

    @property
    def pp(self) -> int:
        return 1

    @property
    def cp(self) -> int:
        return 1

    @property
    def kv_dtype(self) -> str:
        return self.kv_cache_dtype or ("bf16" if self.precision == "fp8" else self.precision)


class ServingLayout(BaseModel):
    """A serving job laid out on its GPUs (``serving_layout``)."""

    gpus: int
    replica_gpus: int
    prefill_replicas: int
    decode_replicas: int


def serving_layout(job: ServingJobSpec, gpus: int, scale_up_gpus: int, experts: int, where: str) -> ServingLayout:
    """Check that ``job`` lays out on ``gpus`` GPUs: tp divides the scale-up domain, replicas of
    ``tp x ep`` GPUs fill the GPUs, ep needs a mixture-of-experts model and divides its experts,
    a disaggregated job's prefill GPUs are whole replicas and leave at least one decode replica.
    InputError at ``where`` or ``where.<field>``."""
    from fabricplan.errors import InputError

    if job.tp > scale_up_gpus or scale_up_gpus % job.tp:
        raise InputError(f"tp ({job.tp}) must divide the scale-up domain ({scale_up_gpus} GPUs)", location=f"{where}.tp")
    if job.ep > 1 and experts == 1:
        raise InputError(f"ep ({job.ep}) > 1 needs a mixture-of-experts model; this one is dense (experts: 1)",
                         location=f"{where}.ep")
    if experts % job.ep:
        raise InputError(f"ep ({job.ep}) must divide the model's {experts} experts", location=f"{where}.ep")
    replica = job.replica_gpus
    if gpus % replica:
        raise InputError(f"a replica is tp x ep = {job.tp} x {job.ep} = {replica} GPUs, which does not divide the "
                         f"job's {gpus} GPUs", location=where)
    prefill = job.prefill_gpus or 0
    if job.disaggregated:
        if prefill % replica:
            raise InputError(f"prefill_gpus ({prefill}) must be whole replicas of {replica} GPUs",
                             location=f"{where}.prefill_gpus")
        if prefill >= gpus:
            raise InputError(f"prefill_gpus ({prefill}) leaves no GPU of the job's {gpus} to decode",
                             location=f"{where}.prefill_gpus")
    return ServingLayout(gpus=gpus, replica_gpus=replica, prefill_replicas=prefill // replica,
                         decode_replicas=(gpus - prefill) // replica)
