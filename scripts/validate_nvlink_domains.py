"""NVLink-domain section of docs/validation.md: GB200 and GB300 NVL72 all-reduce, in one rack and across racks,
against published nccl-tests figures (rows in ``validation/nvlink.py``).

Run: ``PYTHONPATH=src python scripts/validate_nvlink_domains.py [--output docs/validation.md] [--check]``.

Writes the section between the ``<!-- nvlink-domain-validation -->`` markers of the output file (appended
when the markers are missing; the rest of the file is kept), split into the row the model was calibrated
on and the rows only checked. Exits 1 when a row is past its tolerance. ``--check`` prints without writing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/_sections.py, however this is loaded
from _sections import section_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the repository's validation/ package
BEGIN = "<!-- nvlink-domain-validation:begin -->"
END = "<!-- nvlink-domain-validation:end -->"


def _table(rows, results) -> list[str]:
    out = ["| system | size | measured busbw (GB/s) | model (GB/s) | error | tolerance | pass | why this tolerance |",
           "|---|---|---|---|---|---|---|---|"]
    for row, (model, error, ok) in zip(rows, results):
        measured = " / ".join(f"{v:.2f}" for v in row.measured_busbw)
        tolerance = "bound" if row.kind == "bound" else f"±{row.tolerance:.0%}"
        forced = f", {row.algorithm} forced" if row.algorithm else ""
        out.append(f"| {row.name}{forced} | {row.size_bytes // 2 ** 30} GiB | {measured} (mean {row.measured:.1f}) | "
                   f"{model:.1f} | {error:+.1%} | {tolerance} | {'yes' if ok else '**no**'} | {row.reason} |")
    return out


def render() -> tuple[str, int]:
    from fabricplan.catalog import load_catalog
    from fabricplan.perf.params import perf_parameter
    from validation.nvlink import AZURE, COREWEAVE, ROWS, VERDA, check

    catalog = load_catalog()  # the bundled data: this script checks it against the published rows
    results = [check(row, catalog) for row in ROWS]
    calibrated = [(r, x) for r, x in zip(ROWS, results) if r.calibrated]
    checked = [(r, x) for r, x in zip(ROWS, results) if not r.calibrated]
    lines = [BEGIN, "## NVLink domains: GB200 and GB300 NVL72 all-reduce in one rack and across racks", "",
             "Model: `collective_time` with a multi-host NVLink domain (72 GPUs, 4 per compute tray, 72 ConnectX-7 "
             "400G NICs per rack; `cluster.nvlink_domain_gpus`), NCCL 2.30.7 tuner constants, the InfiniBand NDR "
             "profile without CollNet/SHARP (the runs did not enable it). In one domain NVLS runs at NCCL's "
             "Blackwell nvlsEfficiency times `mnnvl_nvls_data_path_efficiency` "
             f"({perf_parameter('mnnvl_nvls_data_path_efficiency', catalog):.3f} on GB200; "
             f"`mnnvl_nvls_data_path_efficiency_sm103`, {perf_parameter('mnnvl_nvls_data_path_efficiency_sm103', catalog):.3f}, "
             "on GB300, whose NCCL constants are GB200's); across domains NCCL's channel limits "
             "decide how many of a rack's 72 NICs carry traffic (NVLS/NVLSTree: 32 head NICs; Ring/Tree: the "
             "search stops at nChannels x NIC >= the GPU's NVLink, 16 NICs on NDR), and every algorithm's busbw "
             "is capped at the one-domain NVLS busbw.", "",
             f"Sources: [CW] {COREWEAVE}; [AZ] {AZURE}; [VE] {VERDA}.", "",
             "### Calibrated on", ""]
    lines += _table(*zip(*calibrated))
    lines += ["", "### Checked only", ""]
    lines += _table(*zip(*checked))
    lines += ["", "Rows 1-6 are [CW], the tray row [AZ], the GB300 rows [VE]. Multi-rack rows: 2 racks stay within 3 % of one rack "
              "in the measurement and in the model (the one-domain bound). The 20-rack row is half the one-rack "
              "figure in the measurement, a drop the model does not reproduce (it gives the hardware bound: NVLSTree "
              "over 32 head NICs per rack is not NIC-bound on 400G); it is checked as a bound only. GB300: NCCL treats "
              "Blackwell Ultra (sm103) as Blackwell (every sm100 constant applies from cc 10.0), and with GB200's "
              "in-domain efficiency the model was 5.4 % and 8.9 % below the published 8 and 16 GiB figures; the "
              "GB300 efficiency is calibrated on the 8 GiB row, and the cause of the difference (hardware, firmware "
              "or the unstated NCCL release) is not identified. The measured GB300 curve still rises from 8 to 16 GiB "
              "(+4 %), which the model's flat large-size rate does not follow (it is 3.7 % low at 16 GiB, 4 % high at "
              "4 GiB); the 1 GiB figure (727 GB/s) is below the ramp the model carries (+21 %) and is not checked, "
              "as the GB200 rows start at 2 GiB. Not validated: multi-rack rows with SHARP. Not used: 811 GB/s busbw "
              "on 8 GPUs over 2 trays of one NVL72 (lixueduan.com, \"GB200 MNNVL\" nccl-tests post, 2025; size and "
              "algorithm not stated); the model gives 669 GB/s (NVLS) there, so the in-domain NVLS efficiency "
              "may fall with the number of trays rather than stay at the one 72-GPU calibration.", "", END, ""]
    failed = sum(1 for _, _, ok in results if not ok)
    return "\n".join(lines), failed


def main(argv: list[str] | None = None) -> int:
    def rendered() -> tuple[str, list[str]]:
        section, failed = render()
        return section, [f"{failed} NVLink-domain row(s)"] if failed else []

    return section_main(__doc__.splitlines()[0], BEGIN, END, rendered, argv)


if __name__ == "__main__":
    sys.exit(main())
