"""The health checks on telemetry, registered explicitly (order = report order).

Each module is a unit like a lint rule (``ops/lint/rules``): ``ID``, ``SEVERITY``, ``SCOPE``
("port": one host/device/port's counters; "rtt": one RTT pair; "fabric": every port), ``TITLE``,
``OPTIONS`` (option -> dotted path of its default in ``ops_defaults``), ``defaults(catalog)`` and
``check(target, options, catalog)``. They run on the lint engine (``ops.lint.engine.run_units``)
and yield findings, plus measurements and "not available" notes (``ops.health.results``).
"""

from fabricplan.ops.health.checks import (
    cc_enabled,
    cnp_rate,
    counter_reset,
    counter_saturated,
    discards,
    ib_fatal,
    ib_symbol,
    ib_xmit_discards,
    ib_xmit_wait,
    link_down,
    model_load,
    pfc_pause,
    pfc_storm,
    pfc_tx_pause,
    pfcwd_storm,
    retransmit,
    rtt_tail,
)

CHECKS = [
    rtt_tail,
    pfc_storm,
    pfcwd_storm,
    pfc_pause,
    pfc_tx_pause,
    cc_enabled,
    cnp_rate,
    retransmit,
    discards,
    ib_symbol,
    link_down,
    ib_xmit_discards,
    ib_xmit_wait,
    ib_fatal,
    counter_reset,
    counter_saturated,
    model_load,
]

CHECKS_BY_ID = {check.ID: check for check in CHECKS}
