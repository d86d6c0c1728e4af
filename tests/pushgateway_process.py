"""A real Prometheus Pushgateway on 127.0.0.1 for tests (Debian's `prometheus-pushgateway` binary).

    with running_pushgateway() as url:   # "http://127.0.0.1:<port>", in-memory only
        ...
        groups(url)                      # GET /api/v1/metrics: one entry per group

Skips the test when the binary is not installed (`apt-get install prometheus-pushgateway`).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import pytest
from ports import free_port

__all__ = ["running_pushgateway", "groups", "scrape"]


@contextlib.contextmanager
def running_pushgateway() -> Iterator[str]:
    """Starts a Pushgateway on a free 127.0.0.1 port without persistence; yields its URL; stops it."""
    binary = shutil.which("prometheus-pushgateway") or shutil.which("pushgateway")
    if binary is None:
        pytest.skip("no Pushgateway binary: install it with `apt-get install -y prometheus-pushgateway`")
    port = free_port()
    process = subprocess.Popen(
        [binary, f"--web.listen-address=127.0.0.1:{port}", "--persistence.file=", "--log.level=warn"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the Pushgateway did not start: {process.stderr.read().decode()}") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def groups(url: str) -> list[dict]:
    """The Pushgateway's groups (`GET /api/v1/metrics`), each with `labels` and its metric families."""
    with urllib.request.urlopen(f"{url}/api/v1/metrics", timeout=5) as response:
        return json.load(response)["data"]


def scrape(url: str) -> str:
    """The Pushgateway's `/metrics` page, as Prometheus scrapes it."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as response:
        return response.read().decode()
