"""Write the published JSON Schemas: the cluster spec and the sweep file (inputs) and the compare report
(--json output).

    python scripts/export_schemas.py          # rewrite schemas/*.schema.json
    python scripts/export_schemas.py --check  # exit 1 if a committed schema is out of date
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fabricplan.decide.models import CompareReport
from fabricplan.io import write_text_atomic
from fabricplan.spec import ClusterSpec
from fabricplan.sweep.model import SweepFile

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {
    "cluster-spec.schema.json": lambda: ClusterSpec.model_json_schema(mode="validation"),
    "compare-report.schema.json": lambda: CompareReport.model_json_schema(mode="serialization"),
    "sweep.schema.json": lambda: SweepFile.model_json_schema(mode="validation"),
}


def render(name: str) -> str:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **SCHEMAS[name]()}
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    stale = []
    for name in SCHEMAS:
        path = ROOT / "schemas" / name
        text = render(name)
        if "--check" in argv:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.parent.mkdir(exist_ok=True)
            write_text_atomic(path, text, what="JSON Schema")
            print(f"wrote {path.relative_to(ROOT)}")
    for name in stale:
        print(f"out of date: schemas/{name} (run python scripts/export_schemas.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
