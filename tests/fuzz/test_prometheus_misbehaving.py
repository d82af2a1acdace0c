"""A misbehaving Prometheus (issue 30): a loopback server (raw sockets, so framing can break) that
answers `health --prometheus` with deeply nested JSON, a truncated chunked body, a garbage status
line, malformed result shapes, an error body carrying newlines and ANSI escapes, a slow drip, an
HTTP 500 before success, NaN rates and counter resets, and host names holding ESC and NUL.

Each case ends in exit 2 with one `error:` line naming the URL, or, where the data is valid, in a
healthy verdict; never a traceback, and no control byte (other than the newline) on stdout or
stderr: the server's text is shown escaped (`errors.printable`)."""

from __future__ import annotations

import json
import re
import time

import pytest
from loopback import RawServer, http_answer

METRIC = "node_ethtool_received_prio3_pause_duration"
TIMES = [1000 + 15 * i for i in range(7)]
RANGE = ("--start", "1000", "--end", str(TIMES[-1]), "--step", "15s")
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _series(instance: str = "gpu01:9100", rates: list[str] | None = None) -> dict:
    rates = rates or ["100"] * len(TIMES)  # 100 us paused a second: 0.01 %, healthy
    return {"metric": {"instance": instance, "device": "eth0"}, "values": [[t, r] for t, r in zip(TIMES, rates)]}


def _data(path: str, matrix: list | None = None, vector: list | None = None):
    if path.endswith("/label/__name__/values"):
        return [METRIC]
    if path.endswith("/query_range"):
        return {"resultType": "matrix", "result": [_series()] if matrix is None else matrix}
    return {"resultType": "vector", "result": [] if vector is None else vector}


def _ok(data) -> bytes:
    return http_answer(json.dumps({"status": "success", "data": data}).encode())


def _answering(**shapes):
    """A respond() answering every path well except for the shapes given (matrix=..., vector=...)."""
    return lambda path, _count, conn: conn.sendall(_ok(_data(path, **shapes)))


def _clean(result) -> None:
    assert "Traceback" not in result.err + result.out
    assert not CONTROL.search(result.out), repr(result.out[:400])
    assert not CONTROL.search(result.err), repr(result.err[:400])


def _exit_2(result, url: str, *needles: str) -> None:
    _clean(result)
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {url}"), result.err
    assert "Healthy" not in result.out
    for needle in needles:
        assert needle in lines[0], lines[0]


def _deep(path, _count, conn):
    conn.sendall(http_answer(b'{"status": "success", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"))


def _truncated_chunked(path, _count, conn):
    body = json.dumps({"status": "success", "data": _data(path)}).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                 + f"{len(body) + 50:x}\r\n".encode() + body)  # the chunk is 50 bytes short, then the end


def _garbage_status(path, _count, conn):
    conn.sendall(b"HTTQ/9.9 2OO \x1b[2JOK\r\nContent-Length: 2\r\n\r\n{}")


def _error_with_escapes(path, _count, conn):
    body = json.dumps({"status": "error", "errorType": "bad_data",
                       "error": "parse error\nerror: forged line\x1b[2J\x1b]0;title\x07\x00end"}).encode()
    conn.sendall(http_answer(body, status="400 Bad Request"))


def _plain_error_with_escapes(path, _count, conn):
    conn.sendall(http_answer(b"proxy says no\r\nerror: forged\x1b[31m red\x1b[0m\x00", status="403 Forbidden",
                             content_type="text/plain"))


def _drip(path, _count, conn):
    body = json.dumps({"status": "success", "data": _data(path)}).encode()
    conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode())
    for byte in body:  # one byte a second: the whole answer would take minutes
        conn.sendall(bytes([byte]))
        time.sleep(1.0)


BROKEN = {
    "deeply_nested_json": (_deep, "nested more than 100 levels deep"),
    "truncated_chunked_body": (_truncated_chunked, "broken answer to /api/v1/label/__name__/values"),
    "garbage_status_line": (_garbage_status, "cannot reach Prometheus"),
    "metric_as_a_list": (_answering(matrix=[{"metric": ["instance", "gpu01"], "values": [[1000, "1"]]}]),
                         "series 1: 'metric' must be an object of labels, got a list"),
    "matrix_without_metric": (_answering(matrix=[{"values": [[1000, "1"]]}]), "'metric' must be an object of labels, got none"),
    "matrix_without_values": (_answering(matrix=[{"metric": {}}]), "series 1 has no 'values'"),
    "vector_without_metric": (_answering(vector=[{"value": [1000, "1"]}]), "resets(" + METRIC),
    "vector_without_value": (_answering(vector=[{"metric": {"instance": "gpu01:9100", "device": "eth0"}}]),
                             "series 1 has no 'value'"),
    "short_value_pair": (_answering(matrix=[{"metric": {"device": "eth0"}, "values": [[1000, "1"], [1015]]}]),
                         'each value must be [time, "number"], got 1 items'),
    "value_not_a_number": (_answering(matrix=[{"metric": {"device": "eth0"}, "values": [[1000, "lots"]]}]),
                           "value 'lots' is not a number"),
    "result_not_a_list": (_answering(matrix={"oops": 1}), "'result' must be a list, got dict"),
    "error_body_with_escapes": (_error_with_escapes, "HTTP 400: bad_data: parse error\\x0aerror: forged line\\x1b[2J"),
    "plain_error_body_with_escapes": (_plain_error_with_escapes, "HTTP 403: proxy says no\\x0d\\x0aerror: forged\\x1b[31m"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_answer_is_one_line_exit_2(cli, name):
    respond, needle = BROKEN[name]
    server = RawServer(respond)
    try:
        _exit_2(cli("health", "--prometheus", server.url, *RANGE), server.url, needle)
    finally:
        server.close()


def _drip_head(path, _count, conn):
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n":  # the status line itself drips
        conn.sendall(bytes([byte]))
        time.sleep(1.0)


@pytest.mark.parametrize("respond", [_drip, _drip_head], ids=["body", "status_line"])
def test_a_slow_drip_fails_at_the_deadline(cli, respond):
    server = RawServer(respond)
    try:
        _exit_2(cli("health", "--prometheus", server.url, *RANGE, "--prometheus-deadline", "2s"), server.url,
                "no whole answer to /api/v1/label/__name__/values within 2 s (--prometheus-deadline)")
    finally:
        server.close()
    assert server.paths == ["/api/v1/label/__name__/values"]  # given up, not retried past the deadline


def test_http_500_then_success_is_retried(cli):
    def respond(path, count, conn):
        if path.endswith("/query_range") and count == 1:
            conn.sendall(http_answer(b'{"status":"error","error":"try later"}', status="500 Internal Server Error"))
        else:
            conn.sendall(_ok(_data(path)))

    server = RawServer(respond)
    try:
        result = cli("health", "--prometheus", server.url, *RANGE, "--json")
    finally:
        server.close()
    _clean(result)
    assert result.code == 0, result.err
    assert server.paths.count("/api/v1/query_range") == 2  # the 500, then the answer
    doc = result.json()
    assert doc["findings"] == [] and doc["ports"][0]["entity"] == "gpu01:eth0"


def test_http_500_every_time_gives_up_after_the_retries(cli):
    server = RawServer(lambda path, _count, conn: conn.sendall(
        http_answer(b'{"status":"error","errorType":"internal","error":"boom"}', status="500 Internal Server Error")))
    try:
        _exit_2(cli("health", "--prometheus", server.url, *RANGE), server.url, "HTTP 500: internal: boom")
    finally:
        server.close()
    from fabricplan.ops.readers.prometheus_api import RETRIES

    assert server.paths == ["/api/v1/label/__name__/values"] * (RETRIES + 1)


def test_nan_rates_and_counter_resets_give_a_verdict(cli):
    labels = {"instance": "gpu01:9100", "device": "eth0"}
    matrix = [_series(rates=["100", "NaN", "100", "120", "+Inf", "100", "110"])]
    server = RawServer(_answering(matrix=matrix, vector=[{"metric": labels, "value": [TIMES[-1], "2"]}]))
    try:
        result = cli("health", "--prometheus", server.url, *RANGE, "--json")
    finally:
        server.close()
    _clean(result)
    assert result.code == 0, result.err
    doc = result.json()
    assert [f["rule"] for f in doc["findings"]] == ["CNT001"]  # the two resets, reported for care
    assert "2x" in doc["findings"][0]["message"]
    assert any("2 rates NaN, infinite or negative" in note for note in doc["notes"]), doc["notes"]


def test_host_names_with_esc_and_nul_are_escaped(cli):
    evil = "gpu\x1b[2J\x1b]0;owned\x07\x00x:9100"
    server = RawServer(_answering(matrix=[_series(instance=evil, rates=["900000"] * len(TIMES))]))
    try:
        text = cli("health", "--prometheus", server.url, *RANGE, "--fail-on", "warning")
        doc = cli("health", "--prometheus", server.url, *RANGE, "--json", "--fail-on", "warning")
    finally:
        server.close()
    for result in (text, doc):  # an answer holding control characters is refused in one line
        _clean(result)
        assert result.code == 2 and result.err.count("error:") == 1, result.err
        assert "control character U+001B" in result.err


def test_a_capture_with_esc_in_a_host_name_prints_it_escaped(cli, tmp_path):
    path = tmp_path / "scrape.prom"
    lines = []
    for t, value in ((1796112000, 0), (1796112015, 14_000_000)):  # paused 14 s of 15
        lines += [f"# time={t}", f'node_ethtool_received_prio3_pause_duration{{device="eth0",host="n\x1b[31m\x00"}} {value}']
    path.write_text("\n".join(lines) + "\n")
    result = cli("health", "--prom-text", path, "--fail-on", "warning")
    _clean(result)  # refused naming file:line, nothing raw printed
    assert result.code == 2 and f"{path}:2" in result.err and "control character" in result.err


def test_the_deadline_default_comes_from_the_catalog(cli, tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("ops_defaults:\n  health:\n    prometheus_request_deadline_s: "
                       '{value: 2, source: "test overlay", date: "2026-12-02", spread: {exact: true, reason: "test"}}\n')
    server = RawServer(_drip)
    try:
        _exit_2(cli("health", "--prometheus", server.url, *RANGE, "--catalog", overlay), server.url,
                "within 2 s (--prometheus-deadline)")
    finally:
        server.close()


@pytest.mark.parametrize(("args", "needle"), [
    (("--rtt", "x.csv", "--prometheus-deadline", "5s"), "--prometheus-deadline: --prometheus-deadline bounds requests"),
    (("--prometheus", "http://127.0.0.1:9", "--prometheus-deadline", "soon"), "--prometheus-deadline: deadline 'soon'"),
    (("--prometheus", "http://127.0.0.1:9", "--prometheus-deadline", "0s"), "--prometheus-deadline"),
    (("--prometheus", "http://127.0.0.1:9/\x1b[2J"), "the URL holds control characters"),
])
def test_bad_deadline_and_url_flags(cli, args, needle):
    result = cli("health", *args)
    _clean(result)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1 and needle in result.err, result.err


@pytest.mark.parametrize("framing", ["content_length", "chunked"])
def test_an_answer_above_the_body_limit_is_refused(monkeypatch, framing):
    from fabricplan.errors import InputError
    from fabricplan.ops.readers import prometheus_api

    monkeypatch.setattr(prometheus_api, "MAX_BODY_BYTES", 4096)
    body = json.dumps({"status": "success", "data": ["node_x" * 10] * 200}).encode()  # ~14 kB

    def respond(path, _count, conn):
        if framing == "content_length":
            conn.sendall(http_answer(body))
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + b"".join(f"{len(body[i:i + 1000]):x}\r\n".encode() + body[i:i + 1000] + b"\r\n"
                                    for i in range(0, len(body), 1000)) + b"0\r\n\r\n")

    server = RawServer(respond)
    client = prometheus_api.PrometheusClient(server.url, prometheus_api.Timeouts(5.0, 30.0, 60.0))
    try:
        with pytest.raises(InputError, match="larger than 4KiB: narrow the range") as caught:
            client.metric_names(1000.0, 1090.0)
    finally:
        server.close()
    assert caught.value.location == server.url


def test_retry_after_an_hour_still_ends_at_the_deadline(cli):
    server = RawServer(lambda path, _count, conn: conn.sendall(
        http_answer(b"slow down", status="429 Too Many Requests", content_type="text/plain",
                    headers="Retry-After: 3600\r\n")))
    try:
        _exit_2(cli("health", "--prometheus", server.url, *RANGE, "--prometheus-deadline", "2s"), server.url,
                "within 2 s (--prometheus-deadline)")
    finally:
        server.close()
