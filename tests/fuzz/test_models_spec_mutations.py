"""Random mutations of the bundled examples through topology/cost/step/compare (hypothesis): a
value anywhere in the spec replaced by a huge, negative, zero, tiny, NaN or infinite number, a
value of the wrong type, or a key removed. Every run exits 0 or 2; an exit 2 is one `error:` line
naming the spec file; never a traceback; each case within a bound of work (fabric sizings counted,
not seconds: a wall-clock bound failed on a busy machine)."""

from __future__ import annotations

import math

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from project_paths import EXAMPLES

EXAMPLE_DOCUMENTS = {path.name: yaml.safe_load(path.read_text(encoding="utf-8"))
                     for path in sorted(EXAMPLES.glob("*.yaml"))}
#: The full compare (scale search, crossovers, sensitivity) re-validates the spec at other sizes.
COMMANDS = (("topology",), ("cost",), ("step",), ("compare", "--quick", "--quiet"), ("compare", "--quiet"))
#: Fabric sizings one command may ask for on a mutated spec (a full compare of a bundled example asks
#: for 210-480; a mutation that made the design search or the scale curve run away would ask for more).
MAX_SIZINGS_PER_CASE = 5_000

NUMBERS = st.one_of(
    st.integers(20, 299).map(lambda digits: 10 ** digits),          # huge, under the reader's 300-digit limit
    st.integers(20, 299).map(lambda digits: -(10 ** digits)),
    st.sampled_from([0, -1, 1, 2, 3, 7, 2 ** 31, 2 ** 63, 10 ** 7 + 1]),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 1e-300, 0.0, -0.0, 0.5, 1.5]),
)
WRONG_TYPES = st.sampled_from([None, True, False, "", "x", "1e400", "8GiB", [], [1, 2], {}, {"a": 1}])
VALUES = st.one_of(NUMBERS, WRONG_TYPES)


def _paths(node, prefix=()):
    """Every key/index path into the document (inner nodes and leaves)."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield (*prefix, index)
            yield from _paths(child, (*prefix, index))


def _mutated(document, path, value, delete):
    copy = yaml.safe_load(yaml.safe_dump(document))
    node = copy
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


@st.composite
def mutations(draw):
    name = draw(st.sampled_from(sorted(EXAMPLE_DOCUMENTS)))
    document = EXAMPLE_DOCUMENTS[name]
    path = draw(st.sampled_from(list(_paths(document))))
    return name, _mutated(document, path, draw(VALUES), draw(st.booleans())), path


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mutations(), command=st.sampled_from(COMMANDS))
def test_mutated_examples_exit_0_or_2_with_one_line(cli, tmp_path, case, command):
    from fabricplan import topology
    from fabricplan.design.design import clear_cache

    name, document, path = case
    spec = tmp_path / f"mutated-{name}"
    spec.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    real, sizings = topology.size_fabric, [0]

    def counting(**kwargs):
        sizings[0] += 1
        return real(**kwargs)

    clear_cache()
    topology.size_fabric = counting
    try:
        result = cli(command[0], spec, *command[1:])
    finally:
        topology.size_fabric = real
    assert sizings[0] <= MAX_SIZINGS_PER_CASE, (path, sizings[0])
    assert "Traceback" not in result.err, result.err
    assert result.code in (0, 2), (path, result.code, result.err)
    if result.code == 2:
        lines = result.err.strip().splitlines()
        assert len(lines) == 1, (path, result.err)
        assert lines[0].startswith(f"error: {spec}"), (path, lines[0])
    else:
        assert result.out.strip(), path
        assert "$inf" not in result.out and "nan%" not in result.out.lower(), (path, result.out[-400:])
