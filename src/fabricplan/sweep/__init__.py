"""Design-space sweeps: many compares over dotted-path axes, run in-process, on a local process pool
or on a Ray cluster, stored as one Parquet dataset per sweep, analysed into Pareto fronts, a
recommended-fabric map and crossover surfaces. Built on the public API (`fabricplan.api.compare`);
:mod:`fabricplan.sweep.adapter` is the one module that reads a compare result."""

from fabricplan.sweep.points import Sweep, load_sweep

__all__ = ["Sweep", "load_sweep"]
