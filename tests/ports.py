"""A free TCP port on 127.0.0.1, for the tests that start real servers and worker processes."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the OS's pick; a server bound
    later may still lose it to another process, so prefer binding port 0 where the server allows)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
