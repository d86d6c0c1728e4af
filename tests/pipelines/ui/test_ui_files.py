"""The `ui` server on a real socket: only files under the root are served; unknown paths and runs are 404 pages."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

import pytest
from aiohttp.test_utils import TestClient, TestServer
from taxi_fixtures import REPO

from pipelines.ui.app import make_app, resolve_file

SECRET = "the content of a file outside the root"


@pytest.fixture
def root(tmp_path):
    """A pipeline root with an empty ML Metadata store, a report, and a secret next to (not under) it."""
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    root = tmp_path / "root"
    (root / "reports").mkdir(parents=True)
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(root / "metadata.sqlite")
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    metadata_store.MetadataStore(config)
    (root / "reports" / "run.html").write_text("<p>report</p>", encoding="utf-8")
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "reports" / "link.txt")
    return root


def fetch(root, paths: list[str]) -> list[tuple[int, str, dict]]:
    """(status, body, headers) for each path, from the app served on 127.0.0.1."""

    async def go():
        async with TestClient(TestServer(make_app(str(root)), host="127.0.0.1")) as client:
            results = []
            for path in paths:
                response = await client.get(path, allow_redirects=False)
                results.append((response.status, await response.text(), dict(response.headers)))
            return results

    return asyncio.run(go())


@pytest.mark.parametrize(
    "relative",
    ["../secret.txt", "reports/../../secret.txt", "/etc/passwd", "reports/link.txt", "reports", "nope.html", "a\x00b"],
)
def test_resolve_file_refuses_anything_but_a_file_under_the_root(root, relative):
    assert resolve_file(str(root), relative) is None


def test_resolve_file_finds_a_report(root):
    assert resolve_file(str(root), "reports/run.html") == os.path.realpath(root / "reports" / "run.html")


@pytest.mark.parametrize(
    "path",
    [
        "/files/../secret.txt",
        "/files/%2e%2e/secret.txt",
        "/files/reports/%2e%2e/%2e%2e/secret.txt",
        "/files/%2Fetc%2Fpasswd",
        "/files/reports/link.txt",
        "/files/",
        "/no/such/page",
        "/runs/latest/../../../secret.txt",
    ],
)
def test_hostile_and_unknown_paths_are_a_404_page_never_a_file_outside(root, path):
    ((status, body, headers),) = fetch(root, [path])
    assert status == 404
    assert SECRET not in body
    assert "Traceback" not in body
    assert headers["Content-Type"].startswith("text/html")


def test_report_under_the_root_is_served(root):
    ((status, body, _),) = fetch(root, ["/files/reports/run.html"])
    assert (status, body) == (200, "<p>report</p>")


def test_unknown_run_is_a_404_with_escaped_input(root):
    ((status, body, headers),) = fetch(root, ["/runs/%3Cscript%3Ealert(1)%3C%2Fscript%3E"])
    assert status == 404
    assert "<script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "no runs in ML Metadata yet" in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]


def test_runs_page_of_an_empty_root_says_how_to_run(root):
    ((status, body, _),) = fetch(root, ["/"])
    assert status == 200 and "No runs in ML Metadata yet" in body


def test_ui_on_a_folder_without_ml_metadata_is_one_line(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "pipelines", "ui", str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert completed.returncode == 2
    (line,) = completed.stderr.strip().splitlines()
    assert line.startswith("error: no ML Metadata under") and "Run the pipeline first" in line


def test_ui_on_a_taken_port_says_pick_another(root):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = subprocess.run(
            [sys.executable, "-m", "pipelines", "ui", str(root), "--port", str(port)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    assert completed.returncode == 2
    (line,) = completed.stderr.strip().splitlines()
    assert f"cannot listen on 127.0.0.1:{port}" in line and "Pick another with --port" in line
