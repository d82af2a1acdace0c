"""The fleet the cluster will run: a job mix arriving and leaving over time, placed by a scheduler
policy, and the slowdown each job sees when all running jobs share the fabric.

* :mod:`fabricplan.fleet.arrivals`: the job kinds of a spec and their seeded Poisson arrivals;
* :mod:`fabricplan.fleet.schedule`: the cluster's leaf groups and the placement policies
  (``packed``, ``first_fit``, ``random`` or the user's callable), FIFO over the arrivals;
* :mod:`fabricplan.fleet.interference`: every running job's connections routed together on the
  design's cabled fabric (flow-level max-min), each job's pace shared and alone;
* :mod:`fabricplan.fleet.run`: :func:`run_fleet`, which composes them for one design.

``fabricplan.fleet(spec)`` (the package called) is :func:`fabricplan.api.fleet`. The package sits between ``plan`` and ``sim``: it reads a :class:`~fabricplan.design.FabricDesign`
and the spec, and the simulator; nothing below it imports it.
"""

from fabricplan.fleet.run import FleetJob, FleetResult, FleetSample, run_fleet

__all__ = ["FleetJob", "FleetResult", "FleetSample", "run_fleet"]


def _make_callable() -> None:
    from fabricplan._callable import make_callable

    make_callable(__name__, "fleet")


_make_callable()
