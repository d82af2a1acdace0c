"""A fleet month of the bundled 16,384-GPU job mix (examples/fleets/mix-16k-h100.yaml), in process.

    python benchmarks/bench_fleet.py [--policy packed|random] [--days 30] [--samples 8]

Prints per fabric the wall time of ``fp.fleet`` (arrivals, placement, the shared fabric at the
sampled instants, the alternatives and the failure step) and how many instants were simulated.
The whole-process figure in the README is timed from outside the process (the same command under
``fabricplan fleet``), cold: a new process, nothing cached between fabrics.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default=None)
    parser.add_argument("--days", type=float, default=None)
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    import fabricplan as fp

    spec = fp.load_spec(ROOT / "examples" / "fleets" / "mix-16k-h100.yaml")
    for fabric in ("roce-v2", "infiniband-ndr"):
        start = time.perf_counter()
        result = fp.fleet(spec, fabric, policy=args.policy, days=args.days, samples=args.samples)[fabric]
        wall = time.perf_counter() - start
        print(f"{fabric}: {wall:.2f} s, policy {result.policy}, {result.simulated_instants} distinct instants "
              f"simulated, mean pace {result.mean_pace:.2f}")


if __name__ == "__main__":
    main()
