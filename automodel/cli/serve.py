"""``automodel serve``: predictions, best p, observe and ranking as JSON over HTTP, for schedulers.

The service itself is :mod:`automodel.cli.service`, imported when the command runs (``http.server``
stays out of every other command's start-up).
"""

from __future__ import annotations

import argparse

from automodel.cli.common import MAX_BYTES, STORE_HELP, TIMEOUT_S, TOKEN_ENV, number, whole

__all__ = ["register", "serve"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``serve`` subcommand to an argparse ``subparsers`` object."""
    s = sub.add_parser("serve", help="answer predict, best-p, observe and ranking as JSON over HTTP",
                       description="A long-lived service for schedulers and job scripts: JSON over HTTP "
                                   "(GET /openapi.json describes it). Loopback only unless a token is set "
                                   f"({TOKEN_ENV} or --token-file). SIGTERM: finish the requests in "
                                   "progress, then stop.")
    s.add_argument("--store", default=None, metavar="PATH|URL", help="the store of observe and ranking: " + STORE_HELP)
    s.add_argument("--models", default=None, metavar="DIR",
                   help="a folder of model files (automodel fit -o, automodel kernels --out), each model "
                        "named by its file's stem or its kernel")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument("--port", type=whole, default=8035, help="port (default 8035; 0: any free port)")
    s.add_argument("--token-file", default=None, metavar="FILE",
                   help=f"a file holding the bearer token (else {TOKEN_ENV}); required off loopback")
    s.add_argument("--max-bytes", type=whole, default=MAX_BYTES, metavar="N", help=f"largest request body (default {MAX_BYTES})")
    s.add_argument("--timeout", type=number, default=TIMEOUT_S, metavar="SECONDS",
                   help=f"seconds a request may take to arrive whole, headers and body (default {TIMEOUT_S:g})")
    s.set_defaults(handler=serve)


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT; then answer the requests in progress and stop."""
    import signal
    import sys
    import threading
    from typing import Any

    from automodel.cli.service import Service, make_server, read_token
    from automodel.errors import DataError

    token = read_token(args.token_file)
    service = Service(args.store, args.models)
    try:
        server = make_server(service, args.host, args.port, token, args.max_bytes, args.timeout)
    except OSError as exc:
        raise DataError(f"cannot listen on {args.host}:{args.port} ({exc.strerror})") from None

    def stop(*_: Any) -> None:  # from a thread: shutdown() waits for serve_forever, which runs here
        threading.Thread(target=server.shutdown, daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    host, port = server.server_address[:2]
    print(f"automodel serve: http://{host}:{port} ({len(service.models)} models, "
          f"{'a store' if service.store is not None else 'no store'}); GET /openapi.json", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()  # joins the request threads: every accepted request is answered
    print("automodel serve: stopped", file=sys.stderr, flush=True)
    return 0
