"""Servers the tests start on loopback: a free port to start one on, and the wait until it answers."""

import socket
import subprocess
import time
import urllib.request


def free_port() -> int:
    """A loopback port nobody listened on a moment ago (and nobody listens on now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, proc: subprocess.Popen, name: str, within_s: float, log_path: str | None = None,
                  poll_s: float = 1.0) -> None:
    """Returns once `url` answers (a 2xx; `/health` for the servers here); raises RuntimeError as soon as `proc`
    (the server, called `name`) exits, or after `within_s` (a hang guard). A log path is named in the error."""
    deadline = time.monotonic() + within_s
    log = f"; its log: {log_path}" if log_path else ""
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:  # refused while it starts (HTTPError, a 5xx while it warms up, is an OSError too)
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}{log}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} was not ready within {within_s} s{log}") from None
            time.sleep(poll_s)
