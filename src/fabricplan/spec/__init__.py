"""The cluster spec users write (pydantic models), its loader and JSON Schema."""

from fabricplan.spec.job import JobSpec, ModelDims
from fabricplan.spec.load import check_references, load_spec, parse_spec, read_spec
from fabricplan.spec.models import (
    DEFAULT_FABRICS,
    Cluster,
    ClusterSpec,
    Constraints,
    Economics,
    FabricChoice,
    GpuInline,
    Operations,
    Topology,
)

__all__ = [
    "DEFAULT_FABRICS", "Cluster", "ClusterSpec", "Constraints", "Economics", "FabricChoice",
    "GpuInline", "JobSpec", "ModelDims", "Operations", "Topology", "check_references", "load_spec",
    "parse_spec", "read_spec",
]
