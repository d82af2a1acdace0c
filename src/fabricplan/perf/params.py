"""The numbers of ``perf_defaults`` (catalog/data/perf_defaults.yaml) as the performance models read them.

Each accessor takes the catalog it reads (overlays apply), always passed: ``None`` is a TypeError,
never the bundled catalog (the public API and the CLI resolve the catalog once). Units and sources
sit beside each value in the data file.
"""

from __future__ import annotations

from fabricplan.catalog.catalog import require_catalog


def perf_value(name: str, catalog) -> float | dict | str:
    """The ``value`` of a ``perf_defaults`` parameter as stored (number, table or id):
    :meth:`fabricplan.catalog.Catalog.perf_value` of ``catalog`` (overlays apply; ``None``: TypeError)."""
    return require_catalog(catalog, "perf_value", name).perf_value(name)


def perf_parameter(name: str, catalog) -> float:
    """A number from ``perf_defaults`` of ``catalog``."""
    return float(perf_value(name, catalog))  # type: ignore[arg-type]


def perf_table(name: str, catalog) -> dict:
    """A mapping-valued ``perf_defaults`` entry of ``catalog``, as a new dict."""
    return dict(perf_value(name, catalog))  # type: ignore[arg-type]


def gradient_bytes_per_parameter(precision: str, gradient_dtype: str | None = None, *, catalog) -> float:
    """Bytes per gradient element a job accumulates, holds and reduces over data parallelism.

    ``gradient_dtype`` (fp32, bf16, fp16) when the job sets it; otherwise the frameworks' default for
    the training ``precision``: fp32 main gradients for bf16 and fp8 (Megatron-LM forces it for bf16,
    NeMo's distributed optimizer and torchtitan reduce in fp32), the parameter dtype for fp16
    (Megatron-LM without ``--accumulate-allreduce-grads-in-fp32``). Sources: ``perf_defaults.yaml``
    ``gradient_bytes_per_parameter`` and ``half_precision_gradient_bytes_per_parameter``.
    """
    dtype = gradient_dtype or ("fp16" if precision == "fp16" else "fp32")
    name = "gradient_bytes_per_parameter" if dtype == "fp32" else "half_precision_gradient_bytes_per_parameter"
    return perf_parameter(name, catalog)
