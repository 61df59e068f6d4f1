"""Running the server: its socket, the kernels' warm-up and uvicorn."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Sequence

from ..errors import InputError

__all__ = ["listen", "serve"]


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (0: a free port).

    Raises
    ------
    InputError
        One line, when the address cannot be listened on (taken, or not this
        machine's).
    """
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be 0 to 65535, got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError) as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _local(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def serve(host: str = "127.0.0.1", port: int = 8765, maps: str | os.PathLike | None = None,
          rules: Sequence[str | os.PathLike] = (), *, cache_mb: float = 512,
          max_body_mb: float = 16, warm: bool = True) -> None:
    """Serve the API and the viewer until interrupted (Ctrl-C).

    Loads the rules, compiles (or loads from the cache) every kernel, listens,
    says where on stdout, and runs uvicorn.

    Parameters
    ----------
    host, port : str, int
        Where to listen: this machine only by default; port 0 takes a free one.
    maps, rules, cache_mb, max_body_mb
        As `create_app`.
    warm : bool
        Compile the kernels before listening (`engine.warm_up`).

    Raises
    ------
    InputError, RulesError
        A bad folder or rules file, or an address it cannot listen on.
    """
    import uvicorn

    from .._threads import usable_cores
    from ..warmup import warm_up
    from .app import create_app

    app = create_app(maps, rules, cache_mb=cache_mb, max_body_mb=max_body_mb)
    sock = listen(host, port)
    if warm:
        warm_up(progress=True, processes=usable_cores())
    shown_host, port = sock.getsockname()[:2]
    url = f"http://{f'[{shown_host}]' if ':' in shown_host else shown_host}:{port}"
    where = ("this machine only" if _local(host) else
             "every machine that can reach this one, without authentication")
    print(f"engine serve: {url}/ (viewer), {url}/docs (API); listening on {host}, {where}. "
          "Ctrl-C stops it.", flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5)
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
    sys.stdout.flush()
