"""One colour per fabric in every chart: the same fabric is the same colour in every report.

Colours follow the fabric profile id, never its rank or its position in a list, so roce-v2 is the
same colour in `compare --html`, `sweep report --html` and wherever a fabric is drawn. The bundled
profiles have a fixed colour each (`KNOWN`); any other id (a user's profile, a renamed fabric)
gets one of `PALETTE` chosen by a hash of the id (SHA-256, not Python's salted `hash`), so it too
is the same in every run and every report. Layout only: no number of the models lives here.
"""

from __future__ import annotations

import hashlib

#: The bundled fabric profiles (catalog/data/fabrics.yaml ids): Ethernet warm, InfiniBand cool.
KNOWN: dict[str, str] = {
    "ethernet-tcp": "#d62728",      # red
    "ethernet-tcpx": "#e377c2",     # pink
    "roce-v2": "#ff7f0e",           # orange
    "roce-spectrum-x": "#8c564b",   # brown
    "aws-efa": "#bcbd22",           # olive
    "infiniband-ndr": "#1f77b4",    # blue
    "infiniband-xdr": "#17becf",    # cyan
    "infiniband-hdr": "#2ca02c",    # green
    "infiniband-edr": "#9467bd",    # purple
}

#: Colours for ids outside `KNOWN` (hashed into), distinct from each other.
PALETTE: tuple[str, ...] = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
                            "#31a354", "#756bb1", "#636363", "#ad494a", "#a55194")


def fabric_colour(fabric: str) -> str:
    """The colour of the fabric with profile id `fabric`: fixed for a bundled profile, else the
    palette entry its id hashes to."""
    if fabric in KNOWN:
        return KNOWN[fabric]
    digest = hashlib.sha256(fabric.encode("utf-8")).digest()
    return PALETTE[int.from_bytes(digest[:8], "big") % len(PALETTE)]


def fabric_colours(fabrics: list[str] | tuple[str, ...]) -> dict[str, str]:
    """{fabric id: colour} for the fabrics of one chart (each independently of the others' order)."""
    return {fabric: fabric_colour(fabric) for fabric in fabrics}
