"""DCQCN002 — DCQCN parameters are identical across the fabric.

Senders with different ``rpg_*`` settings react differently to the same congestion and the
more aggressive ones take the bandwidth. Every ``roce_rp``/``roce_np`` parameter is compared
across all NICs; NICs that differ from the most common value are reported.

Passing::

    every NIC: roce_rp/rpg_min_dec_fac = 50, roce_np/min_time_between_cnps = 4, …

Failing::

    gpu03:eth2 roce_rp/rpg_min_dec_fac = 80 while the other NICs have 50
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.rules._common import finding, interface
from fabricplan.ops.model import Fabric, Link

ID = "DCQCN002"
SEVERITY = "warning"
SCOPE = "fabric"
TITLE = "DCQCN parameters identical across all NICs"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    """This rule has no options."""
    return {}


def check(fabric: Fabric, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    link_of = {link.nic.name: link for link in fabric.links if link.nic is not None}
    nics = [nic for nic in fabric.nics if nic.dcqcn is not None]
    if len(nics) < 2:
        return
    values: dict[str, Counter[int]] = {}
    for nic in nics:
        for role, params in (("roce_rp", nic.dcqcn.rp), ("roce_np", nic.dcqcn.np)):
            for name, value in params.items():
                values.setdefault(f"{role}/{name}", Counter())[value] += 1
    # Most common value; ties go to the smallest value so the choice is stable.
    reference = {key: max(counter.items(), key=lambda item: (item[1], -item[0]))[0]
                 for key, counter in values.items() if len(counter) > 1}
    if not reference:
        return
    for nic in nics:
        params = {f"roce_rp/{k}": v for k, v in nic.dcqcn.rp.items()}
        params.update({f"roce_np/{k}": v for k, v in nic.dcqcn.np.items()})
        differing = {key: (params[key], ref) for key, ref in sorted(reference.items())
                     if key in params and params[key] != ref}
        if not differing:
            continue
        link: Link | str = link_of.get(nic.name, nic.name)
        first = next(iter(differing))
        yield finding(ID, link,
                      "DCQCN parameters differ from the rest of the fabric: "
                      + ", ".join(f"{k} {v} (fabric {r})" for k, (v, r) in differing.items()),
                      "; ".join(f"echo {r} > /sys/class/net/{interface(nic)}/ecn/{k}" for k, (_, r) in differing.items()),
                      {"nic": {k: v for k, (v, _) in differing.items()}, "fabric": {k: r for k, (_, r) in differing.items()}},
                      nic.dcqcn.locations.get(first, nic.source))
