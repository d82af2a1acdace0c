"""The lint rules, registered explicitly (order = report order).

Each module has ``ID``, ``SEVERITY``, ``SCOPE`` ("link" or "fabric"), ``TITLE``, ``OPTIONS``
(option -> dotted path of its default in the catalog's ``ops_defaults``), ``defaults(catalog) ->
dict`` (the default options under that catalog, overlays applied) and ``check(link_or_fabric,
options, catalog) -> Iterator[Finding]``; its docstring shows a passing and a failing example.
"""

from fabricplan.ops.lint.rules import (
    classification_chain,
    cnp_path,
    dcqcn_enabled,
    dcqcn_uniform,
    ecn_before_pfc,
    ecn_wred,
    ets_bandwidth,
    link_unmatched,
    link_unpaired,
    lossless_priority_count,
    mtu_consistency,
    nic_headroom,
    pfc_priority_mismatch,
    pfc_watchdog,
    switch_headroom,
    trust_mode,
)

RULES = [
    link_unpaired,
    link_unmatched,
    trust_mode,
    classification_chain,
    pfc_priority_mismatch,
    lossless_priority_count,
    cnp_path,
    ets_bandwidth,
    ecn_wred,
    ecn_before_pfc,
    switch_headroom,
    nic_headroom,
    pfc_watchdog,
    mtu_consistency,
    dcqcn_enabled,
    dcqcn_uniform,
]

RULES_BY_ID = {rule.ID: rule for rule in RULES}
