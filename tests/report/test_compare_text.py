"""Terminal and Markdown renderings of `fabricplan compare` carry the whole report."""

from __future__ import annotations

from rich.console import Console

from fabricplan.report import compare_content as content
from fabricplan.report.compare_terminal import compare_renderables
from fabricplan.report.markdown import compare_markdown, markdown_text

from .conftest import make_report


def render_terminal(report) -> str:
    console = Console(record=True, width=160, color_system=None)
    for renderable in compare_renderables(report):
        console.print(renderable)
    return console.export_text()


def test_markdown_has_every_fabric_rule_and_the_recommendation(compare_report):
    text = compare_markdown(compare_report)
    for fabric in compare_report.fabrics:
        assert fabric.fabric in text
    for rule in compare_report.rules:
        assert rule.id in text
    recommended = compare_report.recommendation.recommended
    assert f"**Recommended: {recommended}" in text
    assert f"★ {recommended}" in text  # the recommended column is marked
    assert "> [!WARNING]" in text and "Rules and numbers disagree" in text
    for row in compare_report.sensitivity:
        assert row.factor in text
    assert text.count("✓") == sum(row.flips for row in compare_report.sensitivity)


def test_markdown_tables_are_well_formed(compare_report):
    """Every table row has as many cells as its header: no stray pipes from user text."""
    tables: list[list[str]] = []
    previous = ""
    for line in compare_markdown(compare_report).splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    assert len(tables) == 4  # comparison, rules, crossovers, sensitivity
    for table in tables:
        widths = {len(row.replace("\\|", "").split("|")) for row in table}
        assert len(widths) == 1, table


def test_markdown_escapes_user_text():
    report = make_report(spec_name="lab | <b>x</b>", job_names={"llama3-70b-pretrain": "job|<i>"})
    text = compare_markdown(report)
    assert "<b>" not in text and "<i>" not in text
    assert "lab \\| &lt;b&gt;x&lt;/b&gt;" in text
    assert markdown_text("a|b\nc") == "a\\|b c"


def test_terminal_has_every_fabric_rule_and_the_recommendation(compare_report):
    text = render_terminal(compare_report)
    for fabric in compare_report.fabrics:
        assert fabric.fabric in text
    for rule in compare_report.rules:
        assert rule.id in text
    recommended = compare_report.recommendation.recommended
    assert f"Recommended: {recommended}" in text
    assert "⚠ Rules and numbers disagree" in text
    for crossover in compare_report.crossovers:
        assert f"{crossover.fabric_a} vs {crossover.fabric_b}" in text
    for row in compare_report.sensitivity:
        assert row.factor in text


def test_comparison_rows_mark_the_best_value(compare_report):
    rows = {row.label: row for row in content.comparison_rows(compare_report)}
    fabrics = content.fabric_ids(compare_report)
    cheapest = min(compare_report.fabrics, key=lambda f: f.cost_per_useful_gpu_hour_usd).fabric
    assert rows["cost per useful GPU-hour"].best == {fabrics.index(cheapest)}
    busiest = max(compare_report.fabrics, key=lambda f: f.weighted_gpu_utilisation).fabric
    assert rows["GPU utilisation (job-weighted)"].best == {fabrics.index(busiest)}
    assert rows["rank"].best == set()  # not a metric
    assert "(excluded by check.tcp-exposed-comm)" in rows["rank"].formatted[fabrics.index("ethernet-tcp")]


def test_close_call_is_flagged():
    report = make_report()
    report.recommendation.close_call = True
    assert "Close call" in compare_markdown(report)
    assert "Close call" in render_terminal(report)


def test_no_feasible_fabric_is_never_shown_as_recommended(cli, tmp_path):
    # A 0.5 us SLA rules out every fabric (SLA001): the report says so instead of "#1 ★ recommended",
    # in the terminal, Markdown and HTML alike, and the JSON carries feasible=false with the reason.
    # Every output still prints, and the command exits 1 (nothing meets the constraints).
    spec = tmp_path / "sla.yaml"
    spec.write_text("name: sla\ncluster: {gpu: h100-sxm, gpus: 128}\nconstraints: {latency_sla_us: 0.5}\n"
                    "jobs: [{name: j, model: llama3-8b, tp: 8, global_batch_sequences: 64, seq_len_tokens: 4096}]\n")
    text = cli("compare", spec, "--quick", "-q")
    assert text.code == 1, text.err
    assert "No fabric meets the constraints" in text.out and "0.5 us latency SLA" in text.out
    assert "recommended" not in text.out.split("Recommendation")[0]
    assert "★" not in text.out
    markdown = cli("compare", spec, "--quick", "-q", "--markdown")
    assert markdown.code == 1
    assert "No fabric meets the constraints" in markdown.out and "★" not in markdown.out
    html = tmp_path / "r.html"
    assert cli("compare", spec, "--quick", "-q", "--html", html).code == 1
    page = html.read_text(encoding="utf-8")
    assert "No fabric meets the constraints" in page and "★" not in page
    result = cli("compare", spec, "--quick", "--json")
    assert result.code == 1
    report = result.json()
    assert report["recommendation"]["feasible"] is False
    assert "closest is infiniband-ndr" in report["recommendation"]["infeasible_reason"]


def test_step_shows_memory_per_gpu_and_flags_an_estimate_over_capacity(cli):
    # Llama-3 70B on 1,024 H100 fits (38.8 GiB of 74.5); Llama-3 405B's layout is over the estimate
    # (selective recompute) and says so with the numbers.
    from project_paths import EXAMPLES

    fits = cli("step", EXAMPLES / "llama70b-1024-h100.yaml", "--fabric", "roce-v2")
    assert fits.code == 0 and "memory per GPU:" in fits.out and "over capacity" not in fits.out
    over = cli("step", EXAMPLES / "llama405b-16k-h100.yaml", "--fabric", "roce-v2")
    assert over.code == 0 and "over capacity (estimate)" in over.out
    assert "full activation recomputation needs" in over.out.replace("\n", " ")


def test_step_says_per_fabric_when_zero2_gradients_wait_on_the_network(cli):
    # The 405B example is ZeRO 2 with 16 micro-batches: its fp32 reduce-scatter after every micro-batch
    # hides behind the compute on InfiniBand and outlasts it on kernel TCP; each fabric gets its own line.
    from project_paths import EXAMPLES

    out = cli("step", EXAMPLES / "llama405b-16k-h100.yaml", "--fabric", "infiniband-ndr",
              "--fabric", "ethernet-tcp").out.replace("\n", " ")
    tcp = out.split("note: ethernet-tcp: ZeRO 2: data-parallel traffic after every micro-batch")[1]
    assert "the step waits on the network" in tcp.split("note:")[0]
    ib = out.split("note: infiniband-ndr: ZeRO 2: data-parallel traffic after every micro-batch")[1]
    assert "waits on the network" not in ib.split("note:")[0]
