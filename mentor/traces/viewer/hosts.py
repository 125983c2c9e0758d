"""Which Host headers `serve` answers, so a page elsewhere cannot reach it by DNS rebinding."""

from __future__ import annotations

import ipaddress


def allowed_hosts(host: str, port: int) -> set[str]:
    """The Host headers `serve` answers: the bound name, `localhost`, `127.0.0.1` and `[::1]`, with the port (or
    without it on port 80). Bound to every address (0.0.0.0, ::), any IP address too: a name can be rebound by
    its DNS to this machine, an address cannot."""
    names = {"localhost", "127.0.0.1", "[::1]", host.lower()}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host.lower()}]")
    hosts = {f"{name}:{port}" for name in names} | (names if port == 80 else set())
    if host in ("", "0.0.0.0", "::"):
        hosts.add("*ip")
    return hosts


def host_allowed(header: str | None, hosts: set[str], port: int) -> bool:
    if not header:
        return False
    header = header.strip().lower()
    if header in hosts:
        return True
    if "*ip" in hosts:
        name, _, given = header.rpartition(":") if not header.endswith("]") else (header, "", "")
        if (given or "80") == str(port):
            try:
                ipaddress.ip_address(name.strip("[]"))
                return True
            except ValueError:
                return False
    return False
