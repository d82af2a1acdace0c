"""ETS001 — ETS bandwidth sums to 100 % and the RoCE traffic class has a guarantee.

NIC (mlnx_qos): the ``bw`` of ETS TCs sums to 100, strict/vendor TCs have 0, and the TC holding
the RoCE priority is ETS with bw > 0 (or strict). Switch (SCHEDULER): ``type`` is DWRR, WRR or
STRICT, ``weight`` is 1..100, and the RoCE queue's scheduler gives it a non-zero weight.

Passing::

    tc: 0 ... tsa: ets, bw: 50%    tc: 3 ... tsa: ets, bw: 50%    tc: 6 ... tsa: strict
    QUEUE|Ethernet0|3 -> scheduler.roce (DWRR, weight 50)

Failing::

    tc: 0 ... tsa: ets, bw: 100%   tc: 3 ... tsa: ets, bw: 0%     -> RoCE starves under load
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import CLASSIFICATION_OPTIONS, finding, interface, roce_priority
from fabricplan.ops.model import Link

ID = "ETS001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "ETS sums to 100 % and the RoCE traffic class has a bandwidth guarantee"
OPTIONS: dict[str, str] = {
    **CLASSIFICATION_OPTIONS,
    "ets_total_percent": "lint.ets_total_percent",
    "scheduler_weight_min": "lint.scheduler_weight_min",
    "scheduler_weight_max": "lint.scheduler_weight_max",
    "scheduler_types": "lint.scheduler_types",
}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def _tcbw_proposal(nic_tcs: dict, total: int) -> str:
    """Equal ETS shares for the ETS TCs (remainder to the first), 0 for the others."""
    ets = sorted(t.tc for t in nic_tcs.values() if t.tsa == "ets")
    if not ets:
        return "<give the RoCE TC an ETS share>"
    share, rest = divmod(total, len(ets))
    return ",".join(str(share + (rest if tc == ets[0] else 0)) if tc in ets else "0" for tc in range(8))


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    prio = roce_priority(link, options)
    total = options["ets_total_percent"]
    if nic is not None and nic.tcs:
        ets = {t.tc: t.bw_percent for t in nic.tcs.values() if t.tsa == "ets"}
        bad_strict = sorted(t.tc for t in nic.tcs.values() if t.tsa != "ets" and t.bw_percent)
        fix = f"mlnx_qos -i {interface(nic)} --tcbw {_tcbw_proposal(nic.tcs, total)} (ETS TCs sum to {total}, strict TCs 0)"
        if ets and sum(ets.values()) != total:
            yield finding(ID, link, f"NIC ETS bandwidth sums to {sum(ets.values())} %, not {total} %", fix,
                          {"nic": {"ets_bw_percent": ets}}, nic.where(f"tc{min(ets)}"))
        if bad_strict:
            yield finding(ID, link, f"NIC strict/vendor TC(s) {bad_strict} have a non-zero bw", fix,
                          {"nic": {"tcs": bad_strict}}, nic.where(f"tc{bad_strict[0]}"))
        roce_tc = nic.tc_of_priority(prio)
        if roce_tc is not None:
            tc = nic.tcs[roce_tc]
            if tc.tsa == "ets" and tc.bw_percent == 0:
                yield finding(ID, link, f"NIC RoCE TC {roce_tc} (priority {prio}) has an ETS guarantee of 0 %", fix,
                              {"nic": {"roce_tc": roce_tc, "tsa": tc.tsa, "bw_percent": tc.bw_percent}},
                              nic.where(f"tc{roce_tc}"))
    if port is None or not port.queues:
        return
    types = {t.upper() for t in options["scheduler_types"]}
    lo, hi = options["scheduler_weight_min"], options["scheduler_weight_max"]
    reported: set[str] = set()
    for queue, config in sorted(port.queues.items()):
        sched = config.scheduler
        if sched is None or sched.name in reported:
            continue
        where = port.locations.get(f"queue{queue}", port.source)
        sched_type = (sched.type or "").upper()
        if sched_type not in types:
            reported.add(sched.name)
            yield finding(ID, link, f"SCHEDULER {sched.name} has type {sched.type!r}, not one of {sorted(types)}",
                          f"set SCHEDULER|{sched.name} type to DWRR or STRICT",
                          {"switch": {"scheduler": sched.name, "type": sched.type}}, where)
        elif sched_type != "STRICT" and (sched.weight is None or not lo <= sched.weight <= hi):
            reported.add(sched.name)
            yield finding(ID, link, f"SCHEDULER {sched.name} ({sched_type}) weight {sched.weight} is outside {lo}..{hi}",
                          f"set SCHEDULER|{sched.name} weight in {lo}..{hi}",
                          {"switch": {"scheduler": sched.name, "weight": sched.weight}}, where)
    queue = port.queue_of_priority(prio)
    config = port.queues.get(queue)
    if config is None or config.scheduler is None:
        yield finding(ID, link, f"RoCE queue {queue} has no scheduler, so no bandwidth guarantee",
                      f'set QUEUE|{port.port}|{queue} scheduler to a DWRR scheduler with a weight (e.g. "scheduler.roce")',
                      {"switch": {"queue": queue}}, port.source)
