"""Reader for the cabling file: which NIC port faces which switch port (and the cable length).

Format (YAML)::

    links:
      - nic: gpu01:eth2            # NIC name as in the NIC capture ("### nic" line / name file)
        switch: leaf01:Ethernet0   # switch hostname (or config_db file name) : port
        length_m: 5                # optional physical cable length [m] ("5m", "2.5 m", "0.1km" also accepted)

Errors are located as ``file:line``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from fabricplan.errors import InputError
from fabricplan.io import YAML_SAFE_LOADER
from fabricplan.ops.limits import CABLE_RANGE_M
from fabricplan.ops.model import CablingEntry
from fabricplan.ops.readers._common import read_structured
from fabricplan.units import parse_length

_KEYS = {"nic", "switch", "length_m", "length"}


def _scalar(node: yaml.Node, where: str, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise InputError(f"{what} must be a non-empty text value", location=where)
    return str(node.value).strip()


def read_cabling(path: Path | str) -> list[CablingEntry]:
    """Read a cabling file into :class:`CablingEntry` rows.

    Raises
    ------
    InputError
        Invalid YAML, a missing/extra field, a bad length, or a NIC or switch port cabled twice.
    """
    p = Path(path)
    source = str(p)
    # Strict parse first (duplicated keys, aliases, depth, huge numbers: errors with line and
    # column); then the node tree, for the line of each link.
    text, _data = read_structured(p, as_json=False)
    try:
        root = yaml.compose(text, Loader=YAML_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise InputError(f"invalid YAML: {problem}", location=f"{source}{line}") from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", location=source) from None
    if root is None:
        raise InputError("empty cabling file", location=f"{source}:1")
    items_node = root
    if isinstance(root, yaml.MappingNode):
        links = [v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "links"]
        if not links:
            raise InputError("expected a top-level 'links:' list", location=f"{source}:{root.start_mark.line + 1}")
        items_node = links[0]
    if not isinstance(items_node, yaml.SequenceNode):
        raise InputError("'links' must be a list", location=f"{source}:{items_node.start_mark.line + 1}")
    entries: list[CablingEntry] = []
    seen_nic: dict[str, str] = {}
    seen_port: dict[str, str] = {}
    for item in items_node.value:
        where = f"{source}:{item.start_mark.line + 1}"
        if not isinstance(item, yaml.MappingNode):
            raise InputError("each link must be a mapping with nic: and switch:", location=where)
        fields: dict[str, yaml.Node] = {}
        for key_node, value_node in item.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
            key_where = f"{source}:{key_node.start_mark.line + 1}"
            if key not in _KEYS:
                raise InputError(f"unknown field {key!r}; expected nic, switch, length_m", location=key_where)
            fields[key] = value_node
        for required in ("nic", "switch"):
            if required not in fields:
                raise InputError(f"link has no {required}:", location=where)
        nic = _scalar(fields["nic"], f"{source}:{fields['nic'].start_mark.line + 1}", "nic")
        switch_where = f"{source}:{fields['switch'].start_mark.line + 1}"
        switch = _scalar(fields["switch"], switch_where, "switch")
        if ":" not in switch or switch.startswith(":") or switch.endswith(":"):
            raise InputError(f"switch {switch!r} must be SWITCH:PORT (e.g. leaf01:Ethernet0)", location=switch_where)
        length = None
        length_node = fields.get("length_m") or fields.get("length")
        if length_node is not None:
            length_where = f"{source}:{length_node.start_mark.line + 1}"
            length = parse_length(_scalar(length_node, length_where, "length_m"), length_where,
                                  lo=CABLE_RANGE_M[0], hi=CABLE_RANGE_M[1], noun="cable length")
        if nic in seen_nic:
            raise InputError(f"NIC {nic!r} is cabled twice (also {seen_nic[nic]})", location=where)
        if switch in seen_port:
            raise InputError(f"switch port {switch!r} is cabled twice (also {seen_port[switch]})", location=where)
        seen_nic[nic] = where
        seen_port[switch] = where
        entries.append(CablingEntry(nic=nic, switch_port=switch, length_m=length, location=where))
    return entries
