"""Exposition text read with the official client library (`prometheus_client.parser`): what it
keeps of the format (counter names as written, TYPE lines, escapes), and host names from a capture
kept printable (`errors.printable`)."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError, printable
from fabricplan.ops.readers.prom_text import read_exposition

CATALOG = load_catalog()


def test_a_counter_typed_without_total_keeps_its_name(tmp_path):
    # The library renames samples of a `# TYPE x counter` family to x_total; the reader must not.
    path = tmp_path / "gpu01.prom"
    path.write_text("# time=1796112000\n"
                    "# TYPE node_ethtool_received_prio3_pause_duration counter\n"
                    'node_ethtool_received_prio3_pause_duration{device="eth0"} 1000\n'
                    "# time=1796112015\n"
                    "# TYPE node_ethtool_received_prio3_pause_duration counter\n"
                    'node_ethtool_received_prio3_pause_duration{device="eth0"} 16000\n')
    (series,) = read_exposition(path, catalog=CATALOG).series
    assert (series.counter, series.priority, series.host, series.device) == ("rx_pause_duration", 3, "gpu01", "eth0")
    assert list(series.t_s) == [1796112000.0, 1796112015.0] and list(series.values) == [1000.0, 16000.0]


def test_escaped_label_values_and_millisecond_timestamps(tmp_path):
    path = tmp_path / "x.prom"
    path.write_text('node_infiniband_link_downed_total{device="a\\"b\\\\c",port="1",instance="n7:9100"} 2 '
                    "1796112000500\n")
    (series,) = read_exposition(path, catalog=CATALOG).series
    assert series.device == 'a"b\\c' and series.host == "n7"
    assert series.t_s[0] == pytest.approx(1796112000.5)


def test_control_characters_in_a_host_name_are_escaped(tmp_path):
    path = tmp_path / "x.prom"
    path.write_text('# time=1796112000\nnode_infiniband_link_downed_total{device="d",port="1",host="n\\u\x1b[2Jx\x00"} 2\n')
    with pytest.raises(InputError, match=r"x\.prom:2: control character U\+001B"):
        read_exposition(path, catalog=CATALOG)


def test_the_library_refusal_names_the_line(tmp_path):
    path = tmp_path / "x.prom"
    path.write_text("# time=1796112000\n\n# HELP a b\n" 'node_infiniband_link_downed_total{device="d",port="1"} 2\n'
                    "node_infiniband_link_downed_total{device=d} 2\n")
    with pytest.raises(InputError, match=r"x\.prom:5: not Prometheus exposition text"):
        read_exposition(path, catalog=CATALOG)


@pytest.mark.parametrize(("text", "shown"), [
    ("plain host-01", "plain host-01"),
    ("a\nerror: forged", "a\\x0aerror: forged"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("nul\x00bell\x07del\x7f", "nul\\x00bell\\x07del\\x7f"),
    ("rtl\u202eevil\u2028sep", "rtl\\u202eevil\\u2028sep"),
    ("µs é", "µs é"),
])
def test_printable(text, shown):
    assert printable(text) == shown
    assert printable(text).isprintable()


def test_printable_clips():
    assert printable("x" * 50, 10) == "xxxxxxx..."
