"""Which `Host` headers the REST port answers: a guard against DNS rebinding.

A web page can point a name it controls (`rebind.example`) at 127.0.0.1 and
have the browser read a server on this machine: the browser deems the
answer same-origin with the page. The request still carries the page's name
in its `Host` header. So a server bound to a loopback address answers only
its own names (`localhost`, `127.0.0.1`, `[::1]`, the address it is bound
to, each with or without the port); any other Host is refused with 403, as
Jupyter and Vite refuse one. A server bound to any other address (0.0.0.0, a
public IP) was bound there to serve other machines, under names this server
cannot know: it answers any Host.

A request without a Host header (HTTP/1.0) is answered: every browser sends
one, so it cannot be a rebinding page's.
"""

from __future__ import annotations

import ipaddress
import socket

from serving.errors import echoed, message

__all__ = ["allowed_hosts", "host_allowed", "host_refusal", "is_loopback"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether binding `host` serves this machine only ("" and 0.0.0.0 serve every interface)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: loopback where it resolves to loopback addresses only
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def _as_host_header(host: str) -> str:
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(bind_host: str, port: int) -> frozenset[str] | None:
    """The Host headers (lower case) a REST port bound to `bind_host`:`port` answers; None for any.

    Example:
        >>> sorted(allowed_hosts("127.0.0.1", 8501))
        ['127.0.0.1', '127.0.0.1:8501', '[::1]', '[::1]:8501', 'localhost', 'localhost:8501']
        >>> allowed_hosts("0.0.0.0", 8501) is None
        True
    """
    if not is_loopback(bind_host):
        return None
    names = {*LOOPBACK_NAMES, _as_host_header(bind_host)}
    return frozenset(names | {f"{name}:{port}" for name in names})


def _host_name(header: str) -> str:
    """`header` without its port and brackets, lower case: `[::1]:80` is `::1`, `LocalHost:8765` is `localhost`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def host_allowed(header: str | None, bind_host: str) -> bool:
    """Whether a server bound to `bind_host` answers `Host: header`, on any port (a forwarded port included).

    The names are `allowed_hosts`' own; the port is not compared, so `ssh -L 9000:127.0.0.1:8765` works.
    A missing Host (None) is answered, as the module says; an empty one is not.

    Example:
        >>> host_allowed("localhost:9000", "127.0.0.1"), host_allowed("rebind.example", "127.0.0.1")
        (True, False)
    """
    if header is None or not is_loopback(bind_host):
        return True
    return _host_name(header) in {name.strip("[]") for name in (*LOOPBACK_NAMES, _as_host_header(bind_host))}


def host_refusal(host: str, bind_host: str, port: int) -> str:
    """The 403 message for a request whose Host header is `host`."""
    return message(
        "Host not allowed: this server is bound to a loopback address and answers its own names only "
        "(a guard against DNS rebinding)",
        expected=f"a Host header of localhost, 127.0.0.1 or [::1] (with or without :{port})",
        received=f"Host: {echoed(host)}",
        fix=f"Send the request to http://127.0.0.1:{port}, or bind the server to a non-loopback address "
        f"(--host 0.0.0.0; now {bind_host}) to serve other names.",
    )
