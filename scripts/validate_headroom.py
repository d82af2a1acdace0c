"""Headroom section of docs/validation.md: the ``sonic`` model against the vendors' lossless PG tables
(NVIDIA Spectrum and Broadcom Trident/Tomahawk).

Run: ``PYTHONPATH=src python scripts/validate_headroom.py [--output docs/validation.md] [--check]``.

Reads every ``tests/fixtures/ops/vendor_tables/*.yaml`` (a SKU's ASIC, the SONiC inputs its table
needs and whether it is gated) and the table's rows from ``ops_defaults.yaml``
``headroom.vendor_pg_profiles`` (a SKU's ``pg_profile_lookup.ini`` with repository, file and
commit), computes the model for each (speed, cable) row with the
SKU's ASIC and inputs, and writes the section between the ``<!-- headroom-validation -->``
markers of the output file (appended when the markers are missing; the rest of the file is kept).
Error = model / vendor - 1. Exits 1 when a gated SKU is past tolerance: median |XOFF error| or
median |size error| above ``TOLERANCE_PERCENT``, or any row under-estimating XOFF or size by more
than it. ``--check`` only compares and prints, without writing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/_sections.py, however this is loaded
from _sections import write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "tests" / "fixtures" / "ops" / "vendor_tables"
BEGIN = "<!-- headroom-validation:begin -->"
END = "<!-- headroom-validation:end -->"
#: A few percent: the Lua rounds every value up to 1 KB, so one step is 1-5 % of a small xoff.
TOLERANCE_PERCENT = 3.0


@dataclass
class SkuResult:
    sku: str
    asic: str
    source: dict
    gated: bool
    inputs: dict
    basis: str
    rows: int
    exact: int
    xoff_errors: list[float]
    size_errors: list[float]
    not_gated_reason: str = ""

    @property
    def failures(self) -> list[str]:
        out = []
        for what, errors in (("xoff", self.xoff_errors), ("size", self.size_errors)):
            if abs(statistics.median(errors)) > TOLERANCE_PERCENT:
                out.append(f"median {what} error {statistics.median(errors):+.1f} %")
            if min(errors) < -TOLERANCE_PERCENT:
                out.append(f"{what} under-estimated by {-min(errors):.1f} %")
        return out


def evaluate(path: Path, catalog) -> SkuResult:
    """Model vs one vendor table, with the constants of ``catalog``."""
    from fabricplan.ops import defaults, headroom

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["rows"] = defaults.value(f"headroom.vendor_pg_profiles.{doc['sku']}", catalog)["rows"]
    inputs = doc["inputs"]
    eight = set(doc.get("eight_lane_speeds_mbps", []))
    xoff_err, size_err, exact = [], [], 0
    for speed, cable, size, xon, xoff in doc["rows"]:
        result = headroom.sonic_headroom(
            speed, cable, inputs["port_mtu"], inputs["lossless_mtu"], doc["asic"],
            inputs["small_packet_percentage"], eight_lanes=speed in eight,
            shared_headroom_pool=inputs["shared_headroom_pool"], sku=doc["sku"],
            algorithm=inputs.get("algorithm", "current"), catalog=catalog)
        xoff_err.append((result.xoff_bytes / xoff - 1) * 100)
        size_err.append((result.size_bytes / size - 1) * 100)
        exact += (result.size_bytes, result.xon_bytes, result.xoff_bytes) == (size, xon, xoff)
    return SkuResult(doc["sku"], doc["asic"], doc["source"], bool(doc.get("gated")), inputs,
                     doc.get("inputs_basis", ""), len(doc["rows"]), exact, xoff_err, size_err,
                     doc.get("not_gated_reason", ""))


#: Broadcom tables whose held-out cable rows are not gated, and why (shown in the section).
BROADCOM_NOT_GATED = {
    "th2-7260-d96c16": "not linear in cable length: at 50G xoff grows 39,936 B from 5 m to 40 m but 45,760 B from "
                       "40 m to 300 m, so a 40 m row interpolated from 5 m and 300 m is 31-34 % short",
    "th5-z9864f": "xoff is capped at 258,572 B at 300 m for 10G-100G (the same value for every speed), so a 40 m "
                  "row interpolated from 5 m and 300 m over-estimates (safe side) by up to 17.7 %",
}


@dataclass
class BroadcomResult:
    table: str
    asic: str
    source: str
    skus: list
    rows: int
    exact: int
    held_out: list[float]
    reference_xoff: list[float]
    reference_missing: int

    @property
    def gated(self) -> bool:
        return self.table not in BROADCOM_NOT_GATED and bool(self.held_out)

    @property
    def failures(self) -> list[str]:
        out = [] if self.exact == self.rows else [f"only {self.exact} of {self.rows} rows exact with the SKU's table"]
        if self.gated:
            if abs(statistics.median(self.held_out)) > TOLERANCE_PERCENT:
                out.append(f"median held-out xoff error {statistics.median(self.held_out):+.1f} %")
            if min(self.held_out) < -TOLERANCE_PERCENT:
                out.append(f"held-out xoff under-estimated by {-min(self.held_out):.1f} %")
        return out


def evaluate_broadcom(catalog) -> list[BroadcomResult]:
    """The Broadcom model against every bundled Broadcom table (``headroom.broadcom.tables``).

    * exact: the model as lint runs it (the SKU's own table, ``--sku``) at every row of the table;
    * held out: every row between a speed's shortest and longest cable is removed and predicted from
      the remaining rows (the model's cable term), error = model / vendor - 1;
    * reference: ``--asic`` alone (the ASIC's reference table) against this SKU's rows.
    """
    from fabricplan.errors import InputError
    from fabricplan.ops import defaults, headroom

    out = []
    for name, entry in defaults.group("headroom.broadcom.tables", catalog).items():
        value = entry["value"]
        asic, sku = value["asic"], value["skus"][0]
        cell = defaults.value(f"headroom.broadcom.asic.{asic}", catalog)["cell_size_bytes"]
        exact, held, ref, missing = 0, [], [], 0
        for speed, cable, size, xon, xoff, *_ in value["rows"]:
            own = headroom.broadcom_headroom(speed, cable, asic, sku=sku, catalog=catalog)
            exact += (own.size_bytes, own.xon_bytes, own.xoff_bytes) == (size, xon, xoff)
            try:
                ref.append((headroom.broadcom_headroom(speed, cable, asic, catalog=catalog).xoff_bytes / xoff - 1) * 100)
            except InputError:
                missing += 1
        for speed in sorted({r[0] for r in value["rows"]}):
            rows = sorted((r for r in value["rows"] if r[0] == speed), key=lambda r: r[1])
            for k in range(1, len(rows) - 1):
                raw, *_ = headroom.broadcom_xoff(rows[:k] + rows[k + 1:], rows[k][1])
                held.append((headroom._ceil(raw, cell) / rows[k][4] - 1) * 100)
        out.append(BroadcomResult(name, asic, entry["source"], value["skus"], len(value["rows"]), exact, held,
                                  ref, missing))
    return out


def render_broadcom(results: list[BroadcomResult]) -> list[str]:
    lines = [
        "",
        "### Broadcom Trident/Tomahawk: cell-based tables",
        "",
        "SONiC computes no headroom for Broadcom ASICs: with the traditional buffer model buffermgrd takes the "
        "(speed, cable) row of the SKU's `pg_profile_lookup.ini`, and SKUs share one table per ASIC generation "
        "(`device/common/profiles/<gen>/.../BALANCED`). The model (`--model sonic --asic tomahawk` or `--sku`) uses "
        "the SKU's own table when bundled, else the ASIC's reference table, and between two cable lengths "
        "interpolates xoff linearly, rounded up to a whole cell; size is the row's guaranteed minimum (xoff then "
        "comes from the pool's shared headroom). Tables with file and commit: `ops_defaults.yaml` "
        "`headroom.broadcom.tables`.",
        "",
        "Columns: *exact* = rows the model reproduces with the SKU's table (size, xon, xoff; gated: all); "
        "*held-out* = each row between a speed's shortest and longest cable removed and predicted from the "
        f"others (gated: median |error| <= {TOLERANCE_PERCENT:g} %, no under-estimate beyond it); *ASIC "
        "reference* = `--asic` alone against this table (not gated: vendors' tables for one ASIC differ).",
        "",
        "| table (first SKU) | ASIC | source commit | rows | exact | held-out n | held-out median | held-out worst | "
        "ASIC reference xoff range (rows without a speed) | status |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        commit = r.source.split("(commit ")[1][:10]
        held = (f"{len(r.held_out)} | {_pct(statistics.median(r.held_out))} | {_pct(_worst(r.held_out))}"
                if r.held_out else "0 | - | -")
        ref = f"{_range(r.reference_xoff)} ({r.reference_missing})" if r.reference_xoff else f"- ({r.reference_missing})"
        status = "FAIL: " + "; ".join(r.failures) if r.failures else ("ok" if r.gated else "exact rows ok; held-out not gated")
        lines.append(f"| {r.table} ({r.skus[0]}) | {r.asic} | {commit} | {r.rows} | {r.exact} | {held} | {ref} | {status} |")
    lines += ["", "Held-out rows not gated:", ""]
    lines += [f"* `{name}`: {why}." for name, why in BROADCOM_NOT_GATED.items()]
    lines += ["* Tomahawk4 is not modelled: SONiC's only TH4 table (`device/common/profiles/th4/gen/BALANCED`) is a "
              "byte-for-byte copy of Tomahawk's `th/gen` (208 B cells), so there is no TH4-specific data. "
              "`--asic trident2` on a Dell S6000 under-estimates its own table (`td2-6000`) by up to 26 %: lint "
              "therefore uses the SKU's table whenever `DEVICE_METADATA.hwsku` names a bundled one."]
    return lines


def _pct(x: float) -> str:
    return f"{x:+.1f} %"


def _worst(errors: list[float]) -> float:
    return max(errors, key=abs)


def _range(errors: list[float]) -> str:
    return f"{min(errors):+.1f} .. {max(errors):+.1f} %"


def render(results: list[SkuResult], broadcom: list[BroadcomResult]) -> str:
    lines = [
        BEGIN,
        "## PFC headroom: `sonic` model vs the vendors' lossless PG tables",
        "",
        "Generated by `PYTHONPATH=src python scripts/validate_headroom.py`; do not edit by hand. "
        "The model is SONiC's `buffer_headroom_mellanox.lua` as of sonic-swss commit 422271e7 (2026-08-01), or an "
        "earlier version of its accounting (`--algorithm 2024|2020`, `ops_defaults.yaml` `headroom.sonic.algorithm`), with the "
        "ASIC constants of sonic-buildimage `platform/mellanox/asic_table.j2` (commit fb4dee11). The reference is "
        "each SKU's `pg_profile_lookup.ini` (speed x cable -> size, xon, xoff), stored with repository, file and "
        "commit in `ops_defaults.yaml` (`headroom.vendor_pg_profiles`); per-SKU inputs in `tests/fixtures/ops/vendor_tables/`. Error = model / vendor - 1; negative = the model asks "
        "for less headroom than the vendor (unsafe).",
        "",
        f"Tolerance (gated SKUs): median |error| <= {TOLERANCE_PERCENT:g} % for XOFF and size, and no row "
        f"under-estimating XOFF or size by more than {TOLERANCE_PERCENT:g} %. A gated SKU is one whose table one "
        "version of the accounting (column *algorithm*, `--algorithm`) reproduces with a consistent set of SONiC "
        "inputs (listed); the other tables are shown with the closest inputs found and are not gated (reasons "
        "under the table).",
        "",
        "| SKU | ASIC | table commit (date) | algorithm | inputs: port MTU / lossless MTU / small % / SHP | rows | exact | "
        "XOFF median | XOFF worst | XOFF range | size median | size range | status |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        i = r.inputs
        status = ("ok" if not r.failures else "FAIL: " + "; ".join(r.failures)) if r.gated else "not gated"
        lines.append(
            f"| {r.sku} | {r.asic} | {r.source['commit'][:10]} ({r.source['commit_date']}) | {i.get('algorithm', 'current')} | "
            f"{i['port_mtu']} / {i['lossless_mtu']} / {i['small_packet_percentage']} / "
            f"{'yes' if i['shared_headroom_pool'] else 'no'} | {r.rows} | {r.exact} | "
            f"{_pct(statistics.median(r.xoff_errors))} | {_pct(_worst(r.xoff_errors))} | "
            f"{_range(r.xoff_errors)} | {_pct(statistics.median(r.size_errors))} | {_range(r.size_errors)} | {status} |")
    failed = [r for r in results if r.gated and r.failures]
    lines += [
        "",
        "Notes:",
        "",
        "* The gated inputs are what the table needs, found by searching SONiC's documented values "
        "(port MTU 9100/9216, lossless MTU 1024/4096, small-packet share 0-100 %) under each algorithm version "
        "(`--algorithm`); the SHP column follows the table (size = xon means a shared headroom pool). 800G rows "
        "whose xon is twice the pipeline latency, and the ACS-MSN4700 400G rows, are computed as 8-lane ports.",
        "* `2020` is the accounting of NVIDIA's static tables of 2020-07 (the ACS-MSN* files were last changed in "
        "0db7e88313; 5356244e53 only added a copyright header): the 2020-12 Lua's terms (fixed 3.8 KB peer "
        "response, unrounded worst-case factor, small-packet share in packets, 8-lane pipeline twice less 1 KB) "
        "with exact cable and gearbox terms (bytes = 2 x L x speed / c / 8 and speed x delay / 8000; the Lua "
        "divided both by 8 x 1024). With it and SONiC's 2020 default of 100 % small packets the four tables "
        "are exact on every row, ACS-MSN3800 with the 400 gearbox delay of `peripheral_table.j2`. `2024` is "
        "sonic-swss 3943093d without the 2026 compensations.",
        "* Not gated, and why:",
        *[f"  * {r.sku}: {r.not_gated_reason}" for r in results if not r.gated and r.not_gated_reason],
        "* Lint takes the vendor's own profile as the reference when a config carries it "
        "(docs/network-engineers.md).",
        "",
        f"Gated SKUs past tolerance: {len(failed)}",
        *render_broadcom(broadcom),
        "",
        f"Broadcom tables past tolerance: {sum(1 for r in broadcom if r.failures)}",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "docs" / "validation.md"))
    parser.add_argument("--check", action="store_true", help="compare and print only; do not write")
    args = parser.parse_args(argv)
    from fabricplan.catalog import load_catalog

    catalog = load_catalog()  # the bundled constants: this script validates them
    results = [evaluate(p, catalog) for p in sorted(TABLES.glob("*.yaml"))]
    results.sort(key=lambda r: (r.asic, r.sku))
    broadcom = evaluate_broadcom(catalog)
    section = render(results, broadcom)
    if args.check:
        print(section)
    else:
        write_section(args.output, BEGIN, END, section)
    failed = [r for r in results if r.gated and r.failures]
    for r in failed:
        print(f"past tolerance: {r.sku}: {'; '.join(r.failures)}", file=sys.stderr)
    for r in broadcom:
        if r.failures:
            print(f"past tolerance: {r.table}: {'; '.join(r.failures)}", file=sys.stderr)
    return 1 if failed or any(r.failures for r in broadcom) else 0


if __name__ == "__main__":
    sys.exit(main())
