"""Running the app on uvicorn with the limits a public endpoint needs.

uvicorn finishes in-flight requests on SIGTERM/SIGINT before the app's shutdown (graceful
shutdown, bounded by ``server.shutdown_timeout_s``), closes idle keep-alive connections after 5 s,
caps concurrent connections, and serves TLS when given a certificate and key.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import uvicorn

from .app import Server, build_app
from .errors import ServeConfigError
from .settings import ServeSettings

MAX_CONNECTIONS = 1024
"""Connections beyond this get a 503 from uvicorn instead of queueing without bound."""
GIL_SWITCH_S = 0.0005
"""How long the event loop may keep the GIL while a worker thread waits for it (Python's default:
5 ms). A model run gives the GIL up and takes it back around every kernel, and each take-back
could wait the whole interval while the loop parsed other requests."""


def uvicorn_config(app, settings: ServeSettings, host: str, port: int, certfile: Path | None, keyfile: Path | None):
    if (certfile is None) != (keyfile is None):
        raise ServeConfigError("TLS needs both --ssl-certfile and --ssl-keyfile")
    for path in (certfile, keyfile):
        if path is not None and not Path(path).is_file():
            raise ServeConfigError(f"TLS file {str(path)!r} does not exist")
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        access_log=False,  # the app logs each request itself, with the key's name and never the key
        timeout_keep_alive=5,
        timeout_graceful_shutdown=settings.server.shutdown_timeout_s,
        limit_concurrency=MAX_CONNECTIONS,
        h11_max_incomplete_event_size=64 * 1024,  # request line and headers
        ssl_certfile=None if certfile is None else str(certfile),
        ssl_keyfile=None if keyfile is None else str(keyfile),
    )


def serve(settings: ServeSettings, host: str, port: int, keys=None, env=None, certfile=None, keyfile=None) -> None:
    """Build the app and run it until a signal stops it."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.setswitchinterval(GIL_SWITCH_S)
    server = Server(settings, keys, env)
    uvicorn.Server(uvicorn_config(build_app(server), settings, host, port, certfile, keyfile)).run()
