"""Transformer FLOPs per token and model presets.

Forward FLOPs per token of one layer (multiply-add = 2 FLOPs), with ``h`` hidden, ``s`` sequence,
``g = kv_heads/heads``, ``f`` FFN size, ``m`` = 3 matrices for gated (SwiGLU) FFNs else 2, ``k``
experts per token::

    attention projections  2 h (h + 2 g h) + 2 h^2
    attention scores/values 4 s h                 (full s x s, as Narayanan et al. count it)
    FFN                    2 m h f k
    logits (once per token) 2 h V

Model FLOPs per token = 3 x forward (forward + backward). Hardware FLOPs add the recomputed
forward: full recomputation +1 x the layers' forward, selective recomputation +1 x the
attention scores/values term only (Korthikanti et al. 2022). For GPT-3 (f = 4h, g = 1) this is
Narayanan et al.'s ``72 B s l h^2 (1 + s/6h + V/12lh)`` (no recomputation) and
``96 B s l h^2 (1 + s/6h + V/16lh)`` (full recomputation).

References
----------
.. [1] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
   Megatron-LM", SC'21, Appendix (FLOPs per iteration).
.. [2] V. Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
   MLSys 2023 (arXiv:2205.05198).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.errors import InputError


@dataclass(frozen=True)
class TransformerDims:
    """A transformer's dimensions (see ``spec.job.ModelDims``)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    experts: int = 1
    experts_per_token: int = 1
    gated_ffn: bool = False

    @property
    def ffn_matrices(self) -> int:
        return 3 if self.gated_ffn else 2

    def parameters(self) -> float:
        """Parameter count (weights only, embeddings included once) [-]."""
        h, kv = self.hidden, self.hidden * self.kv_heads // self.heads
        attention = h * (h + 2 * kv) + h * h
        ffn = self.ffn_matrices * h * self.ffn_hidden * self.experts
        return float(self.layers * (attention + ffn) + self.vocab * h)

    def expert_parameters(self) -> float:
        """Parameters in the experts of a mixture-of-experts model (0 for a dense one) [-]."""
        if self.experts <= 1:
            return 0.0
        return float(self.experts * self.layers * self.ffn_matrices * self.hidden * self.ffn_hidden)

    def active_parameters(self) -> float:
        """Parameters touched per token (MoE: experts_per_token experts) [-]."""
        h, kv = self.hidden, self.hidden * self.kv_heads // self.heads
        attention = h * (h + 2 * kv) + h * h
        ffn = self.ffn_matrices * h * self.ffn_hidden * self.experts_per_token
        return float(self.layers * (attention + ffn) + self.vocab * h)


#: The fields of a model preset :func:`model_dims` reads.
_DIMENSIONS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts", "experts_per_token",
               "gated_ffn")


def model_dims(model, catalog) -> TransformerDims:
    """A preset id (catalog section ``models`` of ``catalog``) or a ``ModelDims``-like object ->
    :class:`TransformerDims`."""
    if isinstance(model, str):
        preset = catalog.model_preset(model, field="model")
        entry = {key: getattr(preset, key, None) for key in _DIMENSIONS}  # the fields, not a dump of the entry
        name = preset.id
    else:
        entry = model.model_dump() if hasattr(model, "model_dump") else dict(model)
        name = entry.get("name", "custom")
    hidden, heads = int(entry["hidden"]), int(entry["heads"])
    return TransformerDims(
        name=name, layers=int(entry["layers"]), hidden=hidden, heads=heads,
        kv_heads=int(entry.get("kv_heads") or heads), ffn_hidden=int(entry.get("ffn_hidden") or 4 * hidden),
        vocab=int(entry["vocab"]), experts=int(entry.get("experts") or 1),
        experts_per_token=int(entry.get("experts_per_token") or 1), gated_ffn=bool(entry.get("gated_ffn")))


@dataclass(frozen=True)
class FlopsPerToken:
    """Forward FLOPs per token by part [FLOP]."""

    layer_dense: float      # projections + FFN of all layers
    layer_attention: float  # s x s attention scores and values of all layers
    logits: float

    @property
    def forward(self) -> float:
        return self.layer_dense + self.layer_attention + self.logits


def forward_flops_per_token(dims: TransformerDims, seq_len_tokens: int) -> FlopsPerToken:
    """Forward FLOPs per token [FLOP] (formula in the module docstring)."""
    h = dims.hidden
    kv = h * dims.kv_heads / dims.heads
    projections = 2 * h * (h + 2 * kv) + 2 * h * h
    ffn = 2 * dims.ffn_matrices * h * dims.ffn_hidden * dims.experts_per_token
    attention = 4 * seq_len_tokens * h
    return FlopsPerToken(layer_dense=dims.layers * (projections + ffn), layer_attention=dims.layers * attention,
                         logits=2 * h * dims.vocab)


def training_flops_per_token(dims: TransformerDims, seq_len_tokens: int, recompute: str) -> tuple[float, float]:
    """(model FLOPs, hardware FLOPs) per trained token [FLOP] for recompute none/selective/full."""
    parts = forward_flops_per_token(dims, seq_len_tokens)
    model = 3 * parts.forward
    extra = {"none": 0.0, "selective": parts.layer_attention,
             "full": parts.layer_dense + parts.layer_attention}.get(recompute)
    if extra is None:
        raise InputError(f"unknown recompute '{recompute}'; known: none, selective, full", location="recompute")
    return model, model + extra
