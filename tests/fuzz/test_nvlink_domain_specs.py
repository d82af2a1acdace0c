"""Bad multi-host NVLink domain specs and flags: exit 2 with one line naming the field."""

from __future__ import annotations

import pytest
import yaml

from project_paths import EXAMPLES

EXAMPLE = EXAMPLES / "gb200-nvl72.yaml"


def _spec(tmp_path, **cluster):
    data = yaml.safe_load(EXAMPLE.read_text())
    data["cluster"].update(cluster)
    data["cluster"] = {k: v for k, v in data["cluster"].items() if v is not None}
    if "nvlink_domain_gpus" not in data["cluster"]:  # 4-GPU hosts alone: tp must fit one host
        data["jobs"][0]["tp"] = 4
    path = tmp_path / "nvl.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("cluster, words", [
    (dict(nvlink_domain_gpus=70), ["nvlink_domain_gpus (70)", "multiple of gpus_per_node (4)"]),
    (dict(gpus=292), ["gpus (292)", "multiple of nvlink_domain_gpus (72)"]),
    (dict(scale_up_domain=144), ["scale_up_domain (144) exceeds nvlink_domain_gpus (72)"]),
    (dict(grow_to_gpus=300), ["grow_to_gpus (300)", "nvlink_domain_gpus (72)"]),
    (dict(nvlink_domain_gpus=2000), ["nvlink_domain_gpus"]),
    (dict(nvlink_domain_gpus=None), ["cluster.nvlink_domain_gpus", "srv_gb200_nvl72", "nvlink_domain_gpus: 72"]),
])
@pytest.mark.parametrize("command", ["step", "compare", "cost", "topology"])
def test_bad_domain_exits_2_with_one_line(cli, tmp_path, cluster, words, command):
    result = cli(command, _spec(tmp_path, **cluster))
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err
    assert "nvl.yaml" in lines[0]
    for word in words:
        assert word in lines[0]


def test_bad_gpus_per_host_flag_exits_2(cli):
    result = cli("collective", "--size", "1GiB", "--gpus", "144", "--gpus-per-node", "72", "--gpus-per-host", "5",
                 "--gpu", "gb200")
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1
    assert "gpus-per-host" in result.err and "multiple of GPUs per host (5)" in result.err
