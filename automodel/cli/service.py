"""The service of ``automodel serve``: predictions, best p, observe and ranking as JSON over HTTP.

A long-lived process pays the imports once; each request then costs milliseconds (issue 35). Every
answer comes from the code paths of the commands: ``predict`` (:func:`automodel.cli.predict.predict_rows`
for model files, :func:`automodel.cli.predict.store_predictions` for a store's leader), ``best-p``
(:func:`automodel.cli.model.best_p_of`), ``observe`` and ``ranking`` (:mod:`automodel.store`).

The server is the standard library's :class:`http.server.ThreadingHTTPServer`: no dependency to add,
one thread per request (the work is numpy and the store, which release the lock or wait on I/O), and
everything it lacks for this job is a few lines here: a bound on the body (413), on the requests in
progress (503), on the time a request takes to arrive whole (408; a socket timeout alone let a body sent a
byte at a time hold a slot for ever), a bearer token, and a shutdown that finishes every request it
accepted. It binds to loopback by default; another address needs a token
(``AUTOMODEL_SERVE_TOKEN`` or ``--token-file``). It speaks plain HTTP: put it behind a TLS proxy to
reach it from elsewhere (README).
"""

from __future__ import annotations

import argparse
import hmac
import io
import ipaddress
import json
import os
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from automodel import __version__ as VERSION
from automodel.cli.common import MAX_BYTES, TIMEOUT_S, TOKEN_ENV
from automodel.errors import AutomodelError, DataError
from automodel.files import unique_keys
from automodel.names import listing, printable, shortened

__all__ = ["Service", "make_server", "openapi", "read_token", "MAX_ACTIVE", "MAX_CONNECTIONS", "MAX_TOKEN_BYTES",
           "ROUTES"]

#: requests in progress at once; more get 503
MAX_ACTIVE = 64
#: connections served at once (each a thread, until its request arrived whole or --timeout ran out);
#: more are answered 503 at once
MAX_CONNECTIONS = 1024
#: bytes a token file may have
MAX_TOKEN_BYTES = 1 << 16


class Service:
    """What the server answers, without the HTTP: ``handle(method, path, body)`` -> (status, JSON value).

    Parameters
    ----------
    store : str, optional
        The store of ``observe`` and ``ranking`` (and of predictions for an ``app``), opened once.
    models : str, optional
        A folder of model files, read once (every ``*.json``).
    """

    def __init__(self, store: str | None = None, models: str | Path | None = None) -> None:
        from automodel.cli.model_files import ModelFiles

        self.store = None
        if store:
            from automodel.store import open_store

            self.store = open_store(store)
        self.batches = _Batches()
        self.files = ModelFiles(models)

    @property
    def models(self) -> dict[str, Any]:
        """The models of ``--models`` by name, as the files held them when last read."""
        return self.files.models

    # -- the routes ------------------------------------------------------------------------------
    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        url = urlsplit(path)
        route = ROUTES.get(url.path)
        if route is None:
            return 404, {"error": f"no endpoint {url.path!r}; GET /openapi.json lists them"}
        wanted, name = route
        if method != wanted:
            return 405, {"error": f"{url.path} takes {wanted}, not {method}"}
        if method == "GET":
            body = {k: v[-1] for k, v in parse_qs(url.query).items()}
        elif not isinstance(body, dict):
            return 400, {"error": "the body must be one JSON object"}
        return 200, getattr(self, name)(body)

    def health(self, _: dict) -> dict:
        return {"status": "ok", "version": VERSION, "models": len(self.models), "store": self.store is not None}

    def openapi(self, _: dict) -> dict:
        return openapi()

    def list_models(self, _: dict) -> dict:
        return {"models": [{"name": k, "params": [m.roles.get(q, q) for q in m.params], "formula": m.formula}
                           for k, m in self.models.items()]}

    def _model(self, body: dict) -> Any:
        """The model a request names: ``model`` (a model file's) or ``app`` (a store's leader)."""
        name, app = body.get("model"), body.get("app")
        if (name is None) == (app is None):
            raise DataError("give either 'model' (a model of --models) or 'app' (an application of --store)")
        if not isinstance(name if app is None else app, str):
            raise DataError(f"'{'model' if app is None else 'app'}' must be a string (a name)")
        if name is not None:
            if name not in self.models:
                known = listing(list(self.models)) or "none (start with --models DIR)"
                raise DataError(f"no model {shortened(printable(repr(name)))}; known: {known}")
            return self.files.fresh(name)
        from automodel.cli.predict import ranked_model

        return ranked_model(self._store(), str(app), _rank(body))

    def _store(self) -> Any:
        if self.store is None:
            raise DataError("this service has no store (start it with --store)")
        return self.store

    def predict(self, body: dict) -> dict:
        from automodel.cli.predict import predict_rows, store_predictions
        from automodel.cli.common import jsonable

        rows = body.get("rows")
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            raise DataError("'rows' must be a non-empty list of objects, e.g. [{\"n\": 1000, \"p\": 8}]")
        level, band = _level(body), body.get("band", "run")
        if band not in ("run", "mean"):
            raise DataError(f"'band' must be 'run' or 'mean', got {shortened(repr(str(band)))}")
        if "app" in body and "model" not in body:
            self._store()
            found = store_predictions(self.store, str(body["app"]), _rank(body), [_numbers(r) for r in rows],
                                      level, band)
            bands = found["lower"] or [None] * len(rows), found["upper"] or [None] * len(rows)
            return jsonable({"formula": found["formula"], "rows": [
                {**values, "predicted": predicted, "lower": lower, "upper": upper}
                for values, predicted, lower, upper in zip(found["values"], found["predicted"], *bands)],
                "notes": found["forecasts"]})
        from automodel.data.rows import table_rows

        model = self._model(body)
        args = argparse.Namespace(data="the request", load_from=self.store, error="mse", window=None, level=level,
                                  band=band, parts=_flag(body, "parts"))
        out = table_rows(rows)  # no pandas: the rows as arrays, the model evaluated with numpy
        for column, values in predict_rows(args, model, out).items():
            out[column] = values
        formula = self.files.formula(body["model"], model) if "model" in body else model.formula
        return jsonable({"formula": formula, "rows": out})

    def best_p(self, body: dict) -> dict:
        from dataclasses import asdict

        from automodel.cli.common import jsonable
        from automodel.cli.model import best_p_of

        model = self._model(body)
        extras = body.get("params", {})
        if not isinstance(extras, dict):
            raise DataError("'params' must map extra parameters to values")
        found, said = best_p_of(model, _number(body, "n"), _number(body, "cpu"), _number(body, "bw"),
                                _numbers(extras), _integer(body, "p_max"), _integer(body, "p_min", 1), _level(body),
                                self.store)
        return jsonable({**asdict(found), "formula": model.formula, "notes": said})

    def observe(self, body: dict) -> dict:
        """Store the runs of one request. Requests for the same application and options that arrive
        while an observe of it is being stored are stored together by the next one (:class:`_Batches`):
        the application's lock is taken once for all of them, and the answer made once for all of them
        (each gets its own run ids)."""
        from dataclasses import asdict

        import pandas as pd

        from automodel.cli.common import jsonable
        from automodel.store import observe

        app, runs = body.get("app"), body.get("runs")
        if not isinstance(app, str) or not app:
            raise DataError("'app' must name the application")
        if not isinstance(runs, list) or not runs or not all(isinstance(r, dict) for r in runs):
            raise DataError("'runs' must be a non-empty list of objects, e.g. [{\"n\": 1000, \"p\": 8, \"time\": 2.5}]")
        roles = body.get("roles", {})
        if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
            raise DataError("'roles' must map roles (time, n, p, cpu, bw) to column names")
        from automodel.options import ROLE_NAMES

        unknown = [k for k in roles if k not in ("time", *ROLE_NAMES)]
        if unknown:  # passed on as keywords: a TypeError and a 500
            raise DataError(f"'roles': unknown role {shortened(repr(unknown[0]))}; expected time, n, p, cpu or bw")
        store, aggregate, duplicates = self._store(), body.get("aggregate"), _flag(body, "allow_duplicates")

        def work(parts: list[list[dict]]) -> list[dict]:
            """One observe of the runs of ``parts`` (requests), each answered with its own run ids."""
            rows = [row for part in parts for row in part]
            frame = pd.DataFrame(rows)  # an error names a row as its request does: runs[0] for the first
            frame.attrs = {"source": "the request", "lines": [f"runs[{i}]" for part in parts for i in range(len(part))]}
            report = observe(store, app, frame, aggregate=aggregate, allow_duplicates=duplicates,
                             parts=None if aggregate is not None else [len(part) for part in parts], **roles)
            answer = {**asdict(report), "leader_changed": report.leader_changed, "lines": report.lines()}
            answer.pop("part_run_ids")
            if aggregate is not None:
                return [jsonable(answer)]
            return [jsonable({**answer, "run_ids": ids}) for ids in report.part_run_ids]

        if aggregate is not None:  # repetitions combined: the runs of one request are not its rows
            return work([runs])[0]
        return self.batches.run(json.dumps([app, roles, duplicates], sort_keys=True), runs, work)

    def ranking(self, query: dict) -> dict:
        from automodel.cli.common import jsonable
        from automodel.store import ranking

        if not query.get("app"):
            raise DataError("ranking needs ?app=NAME")
        text = query.get("top", "10")
        if not re.fullmatch(r"[0-9]{1,9}", text):  # ASCII digits: int() also took "８", " 3 ", "1_0" and "-5"
            raise DataError(f"'top' must be a whole number >= 0 (0: every candidate), got {shortened(repr(text))}")
        top = int(text)
        return jsonable({"app": query["app"], "rows": ranking(self._store(), query["app"], top or None)})


class _Pending:
    """One request's runs waiting in :class:`_Batches`: what it gets back, and when."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows, self.lead, self.result, self.error = rows, False, None, None
        self.wake = threading.Event()


class _Batches:
    """Group commit: the requests that queue for one key while a request of it is being stored are
    stored by the next one together (one observe of all their rows, each request a part of it), each
    answered with that observe's answer and the ``run_ids`` of its own part: a run two requests both hold
    is stored once, as if they had come one after the other (the rows were one batch, and a run sent
    twice its repetition: stored twice, and every request answered with the ids of all). A batch that
    fails is stored request by request, so bad input fails its own request only."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queues: dict[str, list[_Pending]] = {}
        self.busy: set[str] = set()

    def run(self, key: str, rows: list[dict], work: Callable[[list[list[dict]]], list[dict]]) -> dict:
        """``work(parts)`` of ``rows`` and the rows of the requests that queued with them, one part a
        request: this request's answer (the one of its part)."""
        entry = _Pending(rows)
        with self.lock:
            self.queues.setdefault(key, []).append(entry)
            if key not in self.busy:
                self.busy.add(key)
                entry.lead = True
        if not entry.lead:
            entry.wake.wait()  # answered, or handed the lead
        if entry.result is None and entry.error is None:
            with self.lock:
                batch = self.queues.pop(key)
            try:
                self._store(batch, work)
            finally:
                with self.lock:
                    waiting = self.queues.get(key)
                    if waiting:
                        waiting[0].lead = True
                        waiting[0].wake.set()
                    else:
                        self.busy.discard(key)
        if entry.error is not None:
            raise entry.error
        return entry.result

    @staticmethod
    def _store(batch: list[_Pending], work: Callable[[list[list[dict]]], list[dict]]) -> None:
        try:
            for e, answer in zip(batch, work([e.rows for e in batch])):
                e.result = answer
        except Exception as exc:  # noqa: BLE001  (handed to the requests; each is answered)
            if len(batch) == 1:
                batch[0].error = exc
            else:
                for e in batch:
                    try:
                        e.result = work([e.rows])[0]
                    except Exception as own:  # noqa: BLE001
                        e.error = own
        finally:
            for e in batch:
                if e.result is None and e.error is None:
                    e.error = RuntimeError("not stored")
                e.wake.set()


#: path -> (method, the :class:`Service` method that answers)
ROUTES = {"/health": ("GET", "health"), "/openapi.json": ("GET", "openapi"), "/models": ("GET", "list_models"),
          "/predict": ("POST", "predict"), "/best-p": ("POST", "best_p"), "/observe": ("POST", "observe"),
          "/ranking": ("GET", "ranking")}


def _not_json(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity`` are no JSON (RFC 8259), though Python's reader takes them:
    refused with their name, not read as a number a row's check would then call an empty cell."""
    raise ValueError(f"{name} is not a JSON number")


def _number(body: dict, key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"'{key}' must be a number, got {shortened(json.dumps(value))}")
    from automodel.data.numerals import as_float

    return as_float(value)  # 10**400: inf, which the checks of the commands refuse (float(): OverflowError)


def _numbers(values: dict) -> dict:
    return {str(k): _number(values, k) for k in values}


def _flag(body: dict, key: str) -> bool:
    """A JSON true or false (absent: false): the string "false" is no false (``bool`` of it is True)."""
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise DataError(f"'{key}' must be true or false, got {shortened(json.dumps(value))}")
    return value


def _level(body: dict) -> float:
    level = _number(body, "level")
    return 0.9 if level is None else level


def _integer(body: dict, key: str, default: int | None = None) -> int | None:
    """The field ``key`` of a body where its schema says integer (absent or null: ``default``): a JSON
    number that is a whole number >= 1 (``8`` or ``8.0``); a bool, a string (``"8"``, full-width
    ``"８"``) or a number with a fraction is refused in one line naming the field."""
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not value.is_integer()) or value < 1:
        raise DataError(f"'{key}' must be a whole number >= 1 (a JSON integer), got {shortened(json.dumps(value))}")
    return int(value)


def _rank(body: dict) -> int | None:
    return _integer(body, "rank")


def openapi() -> dict:
    """The OpenAPI 3 description of the service."""
    number = {"type": "number"}
    rows = {"type": "array", "items": {"type": "object", "additionalProperties": number},
            "example": [{"n": 400000, "p": 32}]}
    source = {"model": {"type": "string", "description": "a model of --models (file stem or kernel)"},
              "app": {"type": "string", "description": "an application of --store: its leader"},
              "rank": {"type": "integer", "minimum": 1, "description": "with app: the candidate at this rank"},
              "level": {**number, "default": 0.9}}
    error = {"description": "bad input: one line", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"error": {"type": "string"}}}}}}

    def post(summary: str, properties: dict, required: list[str]) -> dict:
        return {"post": {"summary": summary, "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"type": "object", "properties": properties, "required": required}}}},
            "responses": {"200": {"description": "the answer"}, "400": error}}}

    paths = {
        "/health": {"get": {"summary": "liveness (no token needed)", "security": [],
                            "responses": {"200": {"description": "status, version, models, store"}}}},
        "/openapi.json": {"get": {"summary": "this description", "responses": {"200": {"description": "OpenAPI"}}}},
        "/models": {"get": {"summary": "the models of --models", "responses": {"200": {"description": "names"}}}},
        "/predict": post("predicted times with their band (lower, upper) at each row",
                         {**source, "rows": rows, "band": {"enum": ["run", "mean"], "default": "run"},
                          "parts": {"type": "boolean"}}, ["rows"]),
        "/best-p": post("the process count with the least predicted time, and its range",
                        {**source, "n": number, "cpu": number, "bw": number, "p_min": {"type": "integer", "minimum": 1},
                         "p_max": {"type": "integer", "minimum": 1}, "params": {"type": "object"}}, []),
        "/observe": post("add runs to an application of the store; refit, re-rank, prune",
                         {"app": {"type": "string"}, "runs": {**rows, "example": [{"n": 400000, "p": 32,
                                                                                    "time": 0.0063}]},
                          "roles": {"type": "object"}, "aggregate": {"type": "string"},
                          "allow_duplicates": {"type": "boolean"}}, ["app", "runs"]),
        "/ranking": {"get": {"summary": "the live candidates of an application, best first",
                             "parameters": [{"name": "app", "in": "query", "required": True,
                                             "schema": {"type": "string"}},
                                            {"name": "top", "in": "query", "schema": {"type": "integer"}}],
                             "responses": {"200": {"description": "rows"}, "400": error}}},
    }
    return {"openapi": "3.0.3", "info": {"title": "automodel serve", "version": VERSION},
            "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
            "security": [{"token": []}], "paths": paths}


def _handler(service: Service, token: str | None, max_bytes: int, timeout: float, active: threading.Semaphore
             ) -> type[BaseHTTPRequestHandler]:
    """The request handler class of one server."""

    class Handler(BaseHTTPRequestHandler):
        server_version = f"automodel/{VERSION}"

        def do_GET(self) -> None:  # noqa: N802  (http.server's names)
            self._answer("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._answer("POST")

        def setup(self) -> None:
            super().setup()
            self.rfile = io.BufferedReader(_DeadlineReader(self.connection, time.monotonic() + timeout))

        def _answer(self, method: str) -> None:
            try:
                status, value = self._request(method)
                self.connection.settimeout(timeout)  # the answer's writes: the socket's timeout, not what was left
                if status is None:  # read whole and allowed: the work takes a slot of those in progress
                    if not active.acquire(blocking=False):
                        return self._send(503, {"error": f"busy: {MAX_ACTIVE} requests in progress; retry"})
                    try:
                        status, value = self._work(method, value)
                    finally:
                        active.release()
                self._send(status, value)
            except (ConnectionError, TimeoutError) as exc:  # a client that hung up or stopped reading: one
                self.close_connection = True  # line in the log, not a traceback of 25 per connection
                self.log_error("%s %s: the client left before its answer (%s)", method,
                               urlsplit(self.path).path[:80], type(exc).__name__)

        def _request(self, method: str) -> tuple[int | None, Any]:
            """(None, the JSON body) of an allowed request read whole, else (status, error)."""
            if token is not None and urlsplit(self.path).path != "/health":
                given = self.headers.get("Authorization", "")
                if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                    return 401, {"error": "missing or wrong token (Authorization: Bearer TOKEN)"}
            if method != "POST":
                return None, None
            length = _body_length(self.headers, max_bytes)
            if isinstance(length, tuple):
                self.close_connection = True  # the body's end is unknown: what follows is no next request
                return length
            try:
                data = self.rfile.read(length)
            except TimeoutError:
                self.close_connection = True
                return 408, {"error": f"the request did not arrive whole within {timeout:g} s"}
            if len(data) < length:  # the client closed its side early: a cut body is no body
                self.close_connection = True
                return 400, {"error": f"the body ended after {len(data)} of the {length} bytes of its Content-Length"}
            try:
                return None, json.loads(data or b"null", parse_constant=_not_json, object_pairs_hook=unique_keys)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: nested
                # 10^4 deep, the request thread's traceback and the connection closed without an answer
                return 400, {"error": f"the body is not JSON ({str(exc).splitlines()[0][:80]})"}

        def _work(self, method: str, body: Any) -> tuple[int, Any]:
            try:
                return service.handle(method, self.path, body)
            except AutomodelError as exc:
                from automodel.names import printable

                return 400, {"error": printable(str(exc))}
            except Exception as exc:  # noqa: BLE001  (a service answers; the log keeps the details)
                self.log_error("%s on %s: %r", type(exc).__name__, self.path, exc)
                return 500, {"error": f"internal error ({type(exc).__name__})"}

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """http.server's own refusals (a method without a ``do_`` here, a request line or a header
            too long, a request line that is no HTTP, an HTTP version it does not speak) as the one-line
            JSON error of every other answer, not an HTML page; a method it does not know is 405, as
            one an endpoint does not take (it was 501, a server error for a client's mistake)."""
            from automodel.names import printable

            if code == 501:
                code, message = 405, f"no endpoint takes {self.command[:20]!r}; they take GET or POST"
            self.log_error("code %d, message %s", code, message)
            self.close_connection = True
            text = message or self.responses.get(code, ("bad request",))[0]
            self._send(code, {"error": printable(text)}, body=self.command != "HEAD")

        def _send(self, status: int, value: Any, body: bool = True) -> None:
            data = json.dumps(value, allow_nan=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (http.server's name)
            if os.environ.get("AUTOMODEL_SERVE_LOG"):
                super().log_message(format, *args)

        def log_error(self, format: str, *args: Any) -> None:  # noqa: A002
            super().log_message(format, *args)  # errors always go to stderr

    Handler.timeout = timeout  # the socket's: a silent client is dropped
    return Handler


#: a Content-Length: ASCII digits only (``str.isdigit`` takes '²' and '٣', which ``int`` refuses or reads)
_DIGITS = re.compile(r"[0-9]+")


def _body_length(headers: Any, max_bytes: int) -> int | tuple[int, dict]:
    """The length of a POST's body its headers declare, or the (status, error) that refuses them: no
    Content-Length, or one that is not a whole number of bytes, or two that differ (411, 400); a
    Transfer-Encoding (411: the body is read by its length, and a chunked one would be read as
    garbage); more than ``max_bytes`` (413, also with thousands of digits, which ``int`` refuses)."""
    if headers.get("Transfer-Encoding") is not None:
        return 411, {"error": "a POST body is read by its Content-Length; send one, not a Transfer-Encoding"}
    given = {v.strip() for v in headers.get_all("Content-Length") or ()}
    if len(given) > 1:
        return 400, {"error": "the request has two Content-Lengths that differ"}
    value = given.pop() if given else ""
    if not _DIGITS.fullmatch(value):
        return 411, {"error": "a POST needs a Content-Length, a whole number of bytes"}
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(max_bytes)) or int(digits) > max_bytes:
        shown = digits if len(digits) <= 24 else f"a {len(digits)}-digit number of"
        return 413, {"error": f"the body has {shown} bytes, more than {max_bytes}"}
    return int(digits)


class _DeadlineReader(io.RawIOBase):
    """The reads of a request's socket, every one of them ending by ``deadline`` (``time.monotonic()``),
    so that a request sent a byte at a time (each byte within the socket's timeout) cannot hold its
    thread for ever: what has not arrived by then is a :class:`TimeoutError`.
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(left)
        return self.sock.recv_into(buffer)


def make_server(service: Service, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                max_bytes: int = MAX_BYTES, timeout: float = TIMEOUT_S) -> ThreadingHTTPServer:
    """A server of ``service`` bound to ``host:port`` (not yet serving). It refuses an address other than
    loopback without a ``token``. Its request threads are joined when it closes (``server_close``), so
    every request it accepted is answered first.

    Raises
    ------
    DataError
        A ``port`` outside 0-65535, a ``max_bytes`` below 1 or a ``timeout`` that is not a finite number
        of seconds > 0 and at most :data:`threading.TIMEOUT_MAX` (a NaN timeout was a traceback in every
        request's thread), or a ``host`` beyond loopback without a ``token``; one line each, before
        anything is bound.
    """
    _check_listening(port, max_bytes, timeout)
    if not token and not _loopback(host):
        raise DataError(f"--host {host}: binding beyond loopback needs a token ({TOKEN_ENV} or --token-file); "
                        "and put the service behind a TLS proxy")
    return _Server((host, port), _handler(service, token or None, max_bytes, timeout,
                                          threading.Semaphore(MAX_ACTIVE)))


def _check_listening(port: Any, max_bytes: Any, timeout: Any) -> None:
    """Refuse, in one line, what the server cannot listen or wait with (:func:`make_server`): a timeout
    beyond :data:`threading.TIMEOUT_MAX` (about 292 years) started a server whose every request was an
    OverflowError traceback in the log and a connection closed unanswered (``settimeout``)."""
    import math
    from threading import TIMEOUT_MAX

    from automodel.data.cells import shown

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise DataError(f"--port: expected a port number from 0 to 65535 (0: any free port), got {shown(port)}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise DataError(f"--max-bytes: expected a number of bytes >= 1, got {shown(max_bytes)}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (math.isfinite(timeout)
                                                                                  and 0 < timeout <= TIMEOUT_MAX):
        raise DataError(f"--timeout: expected a finite number of seconds > 0, at most {TIMEOUT_MAX:.0f} (what a "
                        f"socket waits), got {shown(timeout)}")


class _Server(ThreadingHTTPServer):
    """The standard library's threading server with a listen queue for many clients at once (the
    default 5 resets connections under 50 concurrent clients), request threads that are joined at
    close (not daemons), so that a shutdown answers every request it accepted, and at most
    :data:`MAX_CONNECTIONS` connections served at once: one more is answered 503 at once, without a
    thread (each connection had one, until its request arrived or its time ran out: a client opening
    connections faster than ``--timeout`` closes them made threads without bound)."""

    request_queue_size = 256
    daemon_threads = False
    block_on_close = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.open = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.open.acquire(blocking=False):
            _refuse(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.open.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.open.release()


def _refuse(connection: socket.socket) -> None:
    """Answer 503 on a new connection without reading its request (a few bytes into an empty send
    buffer: the accepting thread never waits)."""
    data = json.dumps({"error": f"busy: {MAX_CONNECTIONS} connections open; retry"}).encode()
    try:
        connection.setblocking(False)
        connection.send(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(data), data))
    except OSError:
        pass


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: str | None) -> str | None:
    """The bearer token: the text of the file ``path`` (white space around it dropped), else the
    environment's :data:`TOKEN_ENV`.

    Raises
    ------
    DataError
        A file that is missing, not a regular file (a FIFO or ``/dev/zero``, whose read would never end),
        not UTF-8, longer than :data:`MAX_TOKEN_BYTES` or empty, or a token (of the file or the
        environment) with a character that is not visible ASCII; one line naming it.
    """
    from automodel.files import decode, read_bytes

    if path is None:
        return _visible(os.environ.get(TOKEN_ENV) or None, TOKEN_ENV)
    what, label = "a bearer token", f"--token-file {path}"
    data = read_bytes(path, what, DataError, MAX_TOKEN_BYTES + 1)
    if len(data) > MAX_TOKEN_BYTES:
        raise DataError(f"{label}: longer than {MAX_TOKEN_BYTES:,} bytes, expected {what}")
    text = decode(data, label, what, DataError).strip()
    if not text:
        raise DataError(f"--token-file {path}: empty")
    return _visible(text, label)


def _visible(token: str | None, label: str) -> str | None:
    """``token`` when it is visible ASCII (what an ``Authorization`` header carries as it is): a header
    is read as Latin-1, so a token with 'é' or a control character never matched, and every request was
    a 401 with the right token."""
    bad = next((c for c in token or "" if not "!" <= c <= "~"), None)
    if bad is not None:
        raise DataError(f"{label}: the token holds {ascii(bad)}, expected visible ASCII characters (a bearer token)")
    return token
