"""automodel serve: the answers equal the commands' on 127.0.0.1, bad input is a one-line JSON error,
the bounds and the token hold, and SIGTERM loses no accepted observe (a server in a new process)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automodel import store as S
from automodel.cli.service import Service, make_server, openapi
from automodel.errors import DataError, ModelFileError
from automodel.model_file import load_model

DEMO = Path(__file__).resolve().parents[1] / "automodel" / "demo" / "cg_fast.csv"


def _call(url: str, path: str, body: object = None, token: str | None = None, raw: bytes | None = None
          ) -> tuple[int, object]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url + path, data=data, method="GET" if data is None else "POST")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def served(model_json, tmp_path_factory):
    """A service of ``model_json`` (as model ``m``) and a store with the first 32 runs of the demo, on
    127.0.0.1 at a free port, in a thread; its URL, folder and service."""
    folder = tmp_path_factory.mktemp("serve")
    (folder / "models").mkdir()
    (folder / "models" / "m.json").write_bytes(Path(model_json).read_bytes())
    S.observe(str(folder / "store.db"), "cg", pd.read_csv(DEMO).iloc[:32])
    service = Service(str(folder / "store.db"), folder / "models")
    server = make_server(service, "127.0.0.1", 0, max_bytes=4096)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", folder, service
    server.shutdown()
    server.server_close()


def test_health_models_and_the_openapi_description(served):
    url, _, _ = served
    assert _call(url, "/health") == (200, {"status": "ok", "version": "0.1.0", "models": 1, "store": True})
    status, described = _call(url, "/openapi.json")
    assert status == 200 and described == json.loads(json.dumps(openapi()))
    assert set(described["paths"]) == {"/health", "/openapi.json", "/models", "/predict", "/best-p", "/observe",
                                       "/ranking"}
    assert _call(url, "/models")[1]["models"][0]["name"] == "m"


def test_predict_and_best_p_are_the_models_answers(served, model_json):
    url, _, _ = served
    model = load_model(model_json)
    rows = [{"n": 2000, "p": 16}, {"n": 4000, "p": 32}]
    status, answer = _call(url, "/predict", {"model": "m", "rows": rows, "level": 0.8})
    frame = pd.DataFrame(rows)
    lower, upper = model.predict_interval(frame, level=0.8)
    assert status == 200 and answer["formula"] == model.formula
    np.testing.assert_allclose([r["predicted"] for r in answer["rows"]], model.predict(frame), rtol=1e-12)
    np.testing.assert_allclose([r["lower"] for r in answer["rows"]], lower, rtol=1e-12)
    np.testing.assert_allclose([r["upper"] for r in answer["rows"]], upper, rtol=1e-12)
    status, best = _call(url, "/best-p", {"model": "m", "n": 3000})
    found = model.best_p(n=3000)
    assert status == 200 and (best["p"], best["p_low"], best["p_high"]) == (found.p, found.p_low, found.p_high)
    status, best = _call(url, "/best-p", {"model": "m", "n": 3000, "p_min": 2, "p_max": 64.0})  # 64.0 is whole
    found = model.best_p(n=3000, p_min=2, p_max=64)
    assert status == 200 and (best["p"], best["p_low"], best["p_high"]) == (found.p, found.p_low, found.p_high)


def test_observe_predict_and_ranking_against_the_store(served):
    url, folder, _ = served
    run = pd.read_csv(DEMO).iloc[32]
    status, report = _call(url, "/observe", {"app": "cg", "runs": [{"n": float(run.n), "p": float(run.p), "time": float(run.time)}]})
    assert status == 200 and report["update_no"] == 2 and len(report["run_ids"]) == 1
    assert report["lines"][0].startswith("cg: update 2: 1 run(s) added")
    status, ranking = _call(url, "/ranking?app=cg&top=3")
    assert status == 200 and [r["rank"] for r in ranking["rows"]] == [1, 2, 3]
    leader = S.leader_model(str(folder / "store.db"), "cg")
    status, answer = _call(url, "/predict", {"app": "cg", "rows": [{"n": 400000, "p": 64}]})
    assert status == 200 and answer["formula"] == leader.formula
    assert answer["rows"][0]["predicted"] == pytest.approx(leader.predict({"n": [4e5], "p": [64.0]})[0], rel=1e-12)


def test_a_prediction_of_many_rows_of_an_app_reads_its_leader_once(served, monkeypatch):
    """The leader was read from the store and refitted once a row (0.1 s each): a request of a thousand
    rows held its thread for minutes, and a SIGTERM waited for it."""
    url, folder, _ = served
    reads = []
    leader_model = S.leader_model
    monkeypatch.setattr(S, "leader_model", lambda *a, **k: reads.append(a) or leader_model(*a, **k))
    rows = [{"n": 2000.0 * (i + 1), "p": float(2 ** (i % 7))} for i in range(40)]
    status, answer = _call(url, "/predict", {"app": "cg", "rows": rows, "level": 0.8})
    assert status == 200 and len(reads) == 1
    leader = leader_model(str(folder / "store.db"), "cg")
    lower, upper = leader.predict_interval(pd.DataFrame(rows), level=0.8)
    np.testing.assert_allclose([r["predicted"] for r in answer["rows"]], leader.predict(pd.DataFrame(rows)), rtol=1e-12)
    np.testing.assert_allclose([r["lower"] for r in answer["rows"]], lower, rtol=1e-12)
    np.testing.assert_allclose([r["upper"] for r in answer["rows"]], upper, rtol=1e-12)
    status, answer = _call(url, "/predict", {"app": "cg", "rows": [{"n": 1.0, "p": 1.0}, {"n": 1.0}]})
    assert status == 400 and answer["error"] == "rows, row 2: the model of 'cg' depends on p: give --p"


def test_best_p_and_predict_take_the_candidate_at_the_same_rank(served):
    """best-p read 'rank' as a position from 0: rank 1 was the second candidate of the ranking."""
    url, _, _ = served
    _, ranking = _call(url, "/ranking?app=cg&top=2")
    for rank, row in zip((1, 2), ranking["rows"]):
        status, best = _call(url, "/best-p", {"app": "cg", "n": 100000, "rank": rank})
        _, predicted = _call(url, "/predict", {"app": "cg", "rank": rank, "rows": [{"n": 100000, "p": 8}]})
        assert status == 200 and best["formula"] == predicted["formula"] == row["formula"]


def test_concurrent_observes_are_stored_once_and_bad_input_fails_alone(served):
    url, folder, _ = served
    before = len(S.runs(str(folder / "store.db"), "cg"))
    rows = [{"n": 60000.0 + 1000 * i, "p": 4.0, "time": 0.003 + 1e-5 * i} for i in range(8)]
    rows[3]["time"] = -1.0
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda r: _call(url, "/observe", {"app": "cg", "runs": [r]}), rows))
    assert [status for status, _ in answers] == [200] * 3 + [400] + [200] * 4
    assert all(len(a["run_ids"]) == 1 for status, a in answers if status == 200)
    assert len({a["run_ids"][0] for status, a in answers if status == 200}) == 7
    stored = S.runs(str(folder / "store.db"), "cg")
    assert len(stored) == before + 7 and -1.0 not in stored["time"].tolist()


def test_a_run_sent_by_several_clients_at_once_is_stored_once(served):
    """Requests that arrive together are stored as one observe: a run that several of them held was
    stored once a request (its repetitions in one batch), and each answered with the ids of all."""
    url, folder, _ = served
    before = len(S.runs(str(folder / "store.db"), "cg"))
    same = {"n": 123456.0, "p": 8.0, "time": 0.0055}
    own = [{"n": 70001.0 + i, "p": 2.0, "time": 0.004} for i in range(8)]
    bodies = [{"app": "cg", "runs": [same, own[i]]} for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda b: _call(url, "/observe", b), bodies))
    stored = S.runs(str(folder / "store.db"), "cg").set_index("id")
    assert [status for status, _ in answers] == [200] * 8 and len(stored) == before + 9
    ids = [a["run_ids"] for _, a in answers]
    assert sorted(len(i) for i in ids) == [1] * 7 + [2] and len({i for part in ids for i in part}) == 9
    for body, part in zip(bodies, ids):  # each answered with the ids of its own runs
        assert {float(stored.loc[i, "n"]) for i in part} <= {r["n"] for r in body["runs"]}


@pytest.mark.parametrize("path, body, status, text", [
    ("/predict", {"model": "m", "rows": [{"n": 1000}]}, 400, "column 'p': missing"),
    ("/predict", {"model": "nope", "rows": [{"n": 1, "p": 1}]}, 400, "no model 'nope'"),
    ("/predict", {"rows": [{"n": 1, "p": 1}]}, 400, "give either 'model'"),
    ("/predict", {"model": "m", "rows": []}, 400, "'rows' must be"),
    ("/predict", [1, 2], 400, "one JSON object"),
    ("/predict", {"model": [1, 2], "rows": [{"n": 1, "p": 1}]}, 400, "'model' must be a string"),
    ("/predict", {"model": "m", "rows": [{"n": [1, 2], "p": 1}]}, 400, "column 'n'"),
    ("/best-p", {"model": [[1]], "n": 4}, 400, "'model' must be a string"),
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": [1, 2]}]}, 400, "column 'time'"),
    ("/best-p", {"model": "m", "n": "big"}, 400, "'n' must be a number"),
    # a 400-digit integer was float()'s OverflowError: a 500 instead of the line that says what is wrong
    ("/best-p", {"model": "m", "n": 10 ** 400}, 400, "n must be a finite number, got inf"),
    ("/predict", {"app": "cg", "rows": [{"n": 10 ** 400, "p": 4}]}, 400, "column 'n': expected a positive"),
    ("/predict", {"model": "m", "rows": [{"n": 1, "p": 1}], "level": -10 ** 400}, 400, "level must be between"),
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": -1}]}, 400, "time"),
    # a key of 'roles' was a keyword of observe(): a TypeError and a 500
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": 1}], "roles": {"store": "x"}}, 400,
     "'roles': unknown role 'store'; expected time, n, p, cpu or bw"),
    # bool("false") is True: the string stored every duplicate; [] was read as the default aggregate
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": 1}], "allow_duplicates": "false"}, 400,
     "'allow_duplicates' must be true or false, got \"false\""),
    ("/predict", {"model": "m", "rows": [{"n": 1, "p": 1}], "parts": "no"}, 400, "'parts' must be true or false"),
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": 1}], "aggregate": []}, 400,
     "aggregate must be one of"),
    # a boolean was read as 1: p = true predicted the time on one process, time = true stored a run of 1 s
    ("/predict", {"model": "m", "rows": [{"n": 1000, "p": True}]}, 400,
     "rows, row 1, column 'p': expected a positive process count, got True"),
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": True}]}, 400,
     "runs, row 1, column 'time': expected a positive time, got True"),
    # a second row was named as a CSV's line, 'rows, row 3' for rows[1], or '<DataFrame>, row 1' for runs[1]
    ("/predict", {"model": "m", "rows": [{"n": 1000, "p": 2}, {"n": 1000, "p": 0}]}, 400,
     "rows, row 2, column 'p': expected a positive process count, got 0"),
    ("/observe", {"app": "cg", "runs": [{"n": 1, "p": 1, "time": 1}, {"n": 1, "p": 1, "time": -1}]}, 400,
     "runs, row 2, column 'time': expected a positive time, got -1"),
    # a field the schema says is an integer is a JSON integer: "8" and full-width "８" were read as 8
    ("/best-p", {"model": "m", "n": 3000, "p_max": "8"}, 400,
     "'p_max' must be a whole number >= 1 (a JSON integer), got \"8\""),
    ("/best-p", {"model": "m", "n": 3000, "p_max": "\uff18"}, 400, "'p_max' must be a whole number >= 1"),
    ("/best-p", {"model": "m", "n": 3000, "p_min": "2"}, 400, "'p_min' must be a whole number >= 1"),
    ("/best-p", {"model": "m", "n": 3000, "p_max": 8.5}, 400, "'p_max' must be a whole number >= 1"),
    ("/best-p", {"model": "m", "n": 3000, "p_min": True}, 400, "'p_min' must be a whole number >= 1"),
    ("/best-p", {"app": "cg", "n": 3000, "rank": "1"}, 400, "'rank' must be a whole number >= 1"),
    ("/ranking?app=nope", None, 400, "nope"),
    # int() of the query read full-width digits, spaces, underscores and negative counts
    ("/ranking?app=cg&top=%EF%BC%98", None, 400, "'top' must be a whole number >= 0"),
    ("/ranking?app=cg&top=1_0", None, 400, "'top' must be a whole number >= 0"),
    ("/ranking?app=cg&top=-5", None, 400, "'top' must be a whole number >= 0"),
    ("/nope", None, 404, "no endpoint"),
    ("/health", {}, 405, "takes GET"),
])
def test_bad_input_is_a_one_line_json_error(served, path, body, status, text):
    url, _, _ = served
    got, answer = _call(url, path, body)
    assert got == status and set(answer) == {"error"} and text in answer["error"] and "\n" not in answer["error"]


GOOD = {"n": 1000, "p": 2, "time": 1.0}


@pytest.mark.parametrize("path, body, error", [
    # /observe counted from 0 ('<DataFrame>, row 1' was the second run), /predict of a model from 2 (a CSV
    # file's line: 'rows, row 3'), /predict of an app from 0 ('rows[1]')
    ("/observe", {"app": "cg", "runs": [GOOD, {**GOOD, "time": -1}]},
     "runs, row 2, column 'time': expected a positive time, got -1"),
    ("/observe", {"app": "cg", "runs": [GOOD, {**GOOD, "p": "x"}]},
     "runs, row 2, column 'p': expected a positive process count, got 'x'"),
    ("/predict", {"model": "m", "rows": [{"n": 1000, "p": 2}, {"n": -1000, "p": 4}]},
     "rows, row 2, column 'n': expected a positive problem size, got -1000"),
    ("/predict", {"app": "cg", "rows": [{"n": 1000, "p": 2}, {"n": -1000, "p": 4}]},
     "rows, row 2, column 'n': expected a positive problem size, got -1000"),
    ("/predict", {"app": "cg", "rows": [{"n": 1000, "p": 2}, {"n": 1000}]},
     "rows, row 2: the model of 'cg' depends on p: give --p"),
    ("/predict", {"app": "cg", "rows": [{"n": 1000, "p": 2}, {"n": "x", "p": 4}]},
     "rows, row 2: 'n' must be a number, got \"x\""),
])
def test_every_row_the_service_names_is_counted_from_1(served, path, body, error):
    """The rows of a request are numbered as a person counts them, 1 for the first, whatever the
    endpoint, and the message reads as the CLI's of a file ('FILE, row N, column C: expected ...')."""
    url, _, _ = served
    assert _call(url, path, body) == (400, {"error": error})


def test_bounds_and_unreadable_bodies(served):
    url, _, _ = served
    # json kept the last of two equal keys: the request was answered for a model it did not only name
    status, answer = _call(url, "/predict", raw=b'{"model": "m", "model": "m", "rows": [{"n": 1, "p": 1}]}')
    assert (status, answer) == (400, {"error": 'the body is not JSON (the key "model" is given twice in one object)'})
    assert _call(url, "/predict", raw=b"{bad")[0] == 400
    status, answer = _call(url, "/predict", raw=b" " * 5000)
    assert status == 413 and "more than 4096" in answer["error"]
    status, answer = _call(url, "/predict", raw=b"[" * 2000 + b"]" * 2000)  # the connection closed unanswered
    assert status == 400 and answer["error"].startswith("the body is not JSON (maximum recursion depth exceeded")
    status, answer = _call(url, "/predict", raw=b'{"rows": [{"n": NaN, "p": 2}]}')  # Python's reader takes NaN
    assert status == 400 and answer["error"] == "the body is not JSON (NaN is not a JSON number)"


def _exchange(url: str, data: bytes) -> tuple[int, dict]:
    """Send ``data`` as it is on a new connection to ``url``, close the sending side, and read the
    status and JSON body of the answer (within 5 s)."""
    import socket

    host, port = url.rsplit("/", 1)[-1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


BODY = b'{"model": "m", "rows": [{"n": 2000, "p": 16}]}'


@pytest.mark.parametrize("request_, status, text", [
    # str.isdigit() takes '²' and int() refuses it; int() refuses 5000 digits: both were a traceback
    # in the request's thread and the connection closed unanswered
    ("POST /predict HTTP/1.1\r\nContent-Length: \u00b2\r\n\r\n".encode("latin-1") + BODY, 411,
     "a POST needs a Content-Length, a whole number of bytes"),
    (b"POST /predict HTTP/1.1\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n" + BODY, 413,
     "the body has a 5000-digit number of bytes, more than 4096"),
    # more declared than sent, the client's side closed: the part was read as the whole body (200)
    (b"POST /predict HTTP/1.1\r\nContent-Length: 500\r\n\r\n" + BODY, 400,
     f"the body ended after {len(BODY)} of the 500 bytes of its Content-Length"),
    (b"POST /predict HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 46\r\n\r\n" + BODY, 400,
     "two Content-Lengths that differ"),
    (b"POST /predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 46\r\n\r\n" + BODY, 411,
     "not a Transfer-Encoding"),
    # http.server's own refusals were HTML pages, an unknown method a 501
    (b"DELETE /predict HTTP/1.1\r\n\r\n", 405, "no endpoint takes 'DELETE'; they take GET or POST"),
    (b"GET /health?" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414, "Request-URI Too Long"),
], ids=["superscript-length", "5000-digit-length", "cut-body", "two-lengths", "chunked", "unknown-method",
        "long-line"])
def test_what_http_server_refuses_is_a_one_line_json_error(served, request_, status, text):
    url, _, _ = served
    got, answer = _exchange(url, request_)
    assert got == status and set(answer) == {"error"} and text in answer["error"] and "\n" not in answer["error"]


def test_a_client_that_hangs_up_before_its_answer_is_one_line_in_the_log(served, capsys):
    """The answer's write to a client gone (a reset) was a traceback of 25 lines in the server's log
    for each such connection."""
    import socket
    import struct
    import time

    url, _, _ = served
    body = json.dumps({"app": "cg", "rows": [{"n": 2000.0 + i, "p": 16.0} for i in range(50)]}).encode()
    host, port = url.rsplit("/", 1)[-1].split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(b"POST /predict HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # closed with a reset
    err = ""
    for _ in range(50):
        time.sleep(0.05)
        err += capsys.readouterr().err
        if "left before its answer" in err:
            break
    assert "POST /predict: the client left before its answer" in err and "Traceback" not in err
    assert _call(url, "/health")[0] == 200


def test_connections_beyond_the_bound_are_answered_503_at_once(model_json, tmp_path, monkeypatch):
    """Each connection had a thread until its request arrived or --timeout ran out: connections opened
    faster than that made threads without bound. Beyond MAX_CONNECTIONS: 503 at once, no thread."""
    import socket

    from automodel.cli import service as serve_module

    monkeypatch.setattr(serve_module, "MAX_CONNECTIONS", 4)
    server = make_server(Service(None, tmp_path), "127.0.0.1", 0, timeout=5)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    idle = [socket.create_connection(server.server_address) for _ in range(4)]
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert _call(url, "/health") == (503, {"error": "busy: 4 connections open; retry"})
        idle.pop().close()  # its thread ends when the request is seen to be cut off
        for _ in range(40):
            if server.open.acquire(blocking=False):
                server.open.release()
                break
            threading.Event().wait(0.05)
        assert _call(url, "/health")[0] == 200
    finally:
        for s in idle:
            s.close()
        server.shutdown()
        server.server_close()


def test_a_request_sent_a_byte_at_a_time_is_dropped_and_holds_no_slot(model_json, tmp_path):
    """Each byte within the socket's timeout kept a request's read (and a slot of the 64 in progress) for
    ever: 64 such bodies made every other request a 503. The whole request now has ``timeout`` seconds."""
    import socket
    import time

    from automodel.cli import service as serve_module

    (tmp_path / "m.json").write_bytes(Path(model_json).read_bytes())
    server = make_server(Service(None, tmp_path), "127.0.0.1", 0, timeout=0.4)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    address = server.server_address
    slow = [socket.create_connection(address) for _ in range(serve_module.MAX_ACTIVE + 2)]
    try:
        for s in slow:
            s.sendall(b"POST /best-p HTTP/1.0\r\nContent-Length: 100\r\n\r\n{")
        time.sleep(0.1)
        url = f"http://127.0.0.1:{address[1]}"
        assert _call(url, "/best-p", {"model": "m", "n": 1000})[0] == 200  # the slow ones hold no slot
        for _ in range(4):  # a byte every 0.15 s, within the socket's 0.4 s, until the server hangs up
            time.sleep(0.15)
            for s in slow:
                with contextlib.suppress(OSError):
                    s.sendall(b" ")
        slow[0].settimeout(5)
        answer = slow[0].recv(4096)
        assert answer.startswith(b"HTTP/1.0 408") and b"did not arrive whole within 0.4 s" in answer
    finally:
        for s in slow:
            s.close()
        server.shutdown()
        server.server_close()


def test_a_token_is_required_where_set_and_beyond_loopback(tmp_path):
    with pytest.raises(DataError, match="needs a token"):
        make_server(Service(), "0.0.0.0", 0)  # refused before anything is bound
    server = make_server(Service(), "127.0.0.1", 0, token="s3cret")
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert _call(url, "/health")[0] == 200  # liveness needs no token
        assert _call(url, "/models")[0] == 401 and _call(url, "/models", token="wrong")[0] == 401
        assert _call(url, "/models", token="s3cret") == (200, {"models": []})
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("flag, value, message", [
    ("--port", "99999", "--port: expected a port number from 0 to 65535"),  # was an OverflowError traceback
    ("--timeout", "nan", "--timeout: expected a finite number of seconds > 0, at most 9223372036"),  # a traceback a request
    ("--timeout", "0", "--timeout: expected a finite number of seconds > 0, at most 9223372036"),
    ("--max-bytes", "-1", "--max-bytes: expected a number of bytes >= 1, got -1"),  # every body refused
    ("--token-file", "/dev/zero", "/dev/zero: is a character device, expected a bearer token"),  # read forever
    ("--token-file", "{fifo}", "is a FIFO (named pipe), expected a bearer token"),  # waited for a writer
    ("--token-file", "{latin1}", "not UTF-8 text (byte 0xe9 at offset 1), expected a bearer token"),
    # a header is read as Latin-1: a UTF-8 'é' in the token never matched, every request a 401
    ("--token-file", "{utf8}", "the token holds '\\xe9', expected visible ASCII characters"),
])
def test_what_serve_cannot_listen_with_is_one_line_before_it_binds(tmp_path, capsys, flag, value, message):
    from automodel.cli import main

    fifo, latin1, utf8 = tmp_path / "fifo", tmp_path / "token", tmp_path / "utf8"
    os.mkfifo(fifo)
    latin1.write_bytes(b"s\xe9cret")
    utf8.write_text("s\u00e9cret", encoding="utf-8")
    assert main(["serve", "--port", "0", flag, value.format(fifo=fifo, latin1=latin1, utf8=utf8)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_timeout_no_socket_can_wait_is_refused_before_the_server_binds(tmp_path):
    """--timeout 1e300 started a server whose every request was an OverflowError traceback of the socket's
    settimeout in its thread, and a connection closed without an answer."""
    with pytest.raises(DataError, match="^--timeout: expected a finite number of seconds > 0, at most 9223372036"):
        make_server(Service(None, tmp_path), "127.0.0.1", 0, timeout=1e300)


def test_sigterm_loses_no_accepted_observe(tmp_path):
    runs = pd.read_csv(DEMO)
    db = tmp_path / "store.db"
    S.observe(str(db), "cg", runs.iloc[:8])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    server = subprocess.Popen([sys.executable, "-m", "automodel", "serve", "--store", str(db), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = server.stdout.readline().split()[2]
        extra = runs.iloc[8:32]

        def post(i: int) -> int:
            if i == 8:
                server.send_signal(signal.SIGTERM)  # while the others are in flight
            row = extra.iloc[i]
            try:
                return _call(url, "/observe", {"app": "cg", "runs": [{"n": float(row.n), "p": float(row.p), "time": float(row.time)}]})[0]
            except OSError:  # refused or reset once the server stopped accepting: not accepted
                return 0

        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(post, range(len(extra))))
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    accepted = [i for i, s in enumerate(statuses) if s == 200]
    assert accepted and all(s in (0, 200, 503) for s in statuses)
    stored = S.runs(str(db), "cg")
    assert len(stored) == 8 + len(accepted)  # each accepted run stored once
    assert sorted(stored["time"].tolist()[8:]) == sorted(extra["time"].iloc[accepted].tolist())


def test_a_model_file_changed_in_place_is_read_again(model_json, tmp_path):
    from automodel.model.core import Model, TermModel
    from automodel.space.terms import ONE

    (tmp_path / "m.json").write_bytes(Path(model_json).read_bytes())
    service = Service(None, tmp_path)
    body = {"model": "m", "rows": [{"n": 2000, "p": 16}]}
    before = service.handle("POST", "/predict", body)[1]
    assert service.handle("POST", "/predict", body)[1] == before  # unchanged file: the loaded model
    Model(TermModel((ONE,), (2.5,)), ("n", "p"), {"n": "n", "p": "p", "time": "time"}).save(tmp_path / "m.json")
    os.utime(tmp_path / "m.json", ns=(0, service.files.stamps[tmp_path / "m.json"][0] + 10 ** 9))
    after = service.handle("POST", "/predict", body)[1]
    assert after["rows"][0]["predicted"] == 2.5 and after["formula"] != before["formula"]
    # rewritten as a models file without 'm': a KeyError, answered 500
    model = Model(TermModel((ONE,), (1.0,)), ("n", "p"), {"n": "n", "p": "p", "time": "time"})
    from automodel.model_file import save_models

    save_models({"other": model}, tmp_path / "m.json")
    os.utime(tmp_path / "m.json", ns=(0, service.files.stamps[tmp_path / "m.json"][0] + 2 * 10 ** 9))
    with pytest.raises(DataError, match=r"^no model 'm': .*m\.json no longer holds it$"):
        service.handle("POST", "/predict", body)


def test_the_models_listed_while_a_file_is_read_again_are_a_whole_set(model_json, tmp_path, monkeypatch):
    """GET /models iterated the models while a request read a changed file again and changed that very
    dictionary: 'dictionary changed size during iteration', answered 500."""
    from automodel.model.core import Model, TermModel
    from automodel.model_file import save_models
    from automodel.space.terms import ONE

    (tmp_path / "a.json").write_bytes(Path(model_json).read_bytes())
    (tmp_path / "m.json").write_bytes(Path(model_json).read_bytes())
    service = Service(None, tmp_path)
    model = Model(TermModel((ONE,), (1.0,)), ("n", "p"), {"n": "n", "p": "p", "time": "time"})
    formula = Model.formula

    def rewritten(self: Model) -> str:  # the first model listed: m.json is refitted, and read by a request
        if not (tmp_path / "done").exists():
            (tmp_path / "done").touch()
            save_models({"m": model, "m2": model}, tmp_path / "m.json")
            os.utime(tmp_path / "m.json", ns=(0, service.files.stamps[tmp_path / "m.json"][0] + 10 ** 9))
            service.files.fresh("m")
        return formula.fget(self)

    monkeypatch.setattr(Model, "formula", property(rewritten))
    assert [m["name"] for m in service.handle("GET", "/models", None)[1]["models"]] == ["a", "m"]
    assert [m["name"] for m in service.handle("GET", "/models", None)[1]["models"]] == ["a", "m", "m2"]


@pytest.mark.parametrize("target, message", [("gone.json", "m.json: no such file, expected a model JSON file"),
                                             ("m.json", "m.json: cannot be read (too many levels of symbolic links)")])
def test_a_dangling_or_looping_link_in_the_models_folder_is_one_line(tmp_path, target, message):
    """os.stat of the link, before the model file's own checks, was a traceback."""
    (tmp_path / "m.json").symlink_to(tmp_path / target)
    with pytest.raises(ModelFileError) as err:
        Service(None, tmp_path)
    assert str(err.value).endswith(message) and "\n" not in str(err.value)
