"""The ui answers its loopback names only: a DNS-rebinding page (another `Host`) gets a 403, never a file."""

from __future__ import annotations

import asyncio
import http.client

import pytest
from aiohttp.test_utils import TestClient, TestServer
from ui_process import running_ui

from pipelines.ui.app import make_app
from serving.server.guards.host_check import host_allowed

SECRET = "training examples under the root"


@pytest.fixture
def root(tmp_path):
    """A pipeline root with an empty ML Metadata store and a file under it."""
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    root = tmp_path / "root"
    (root / "artifacts").mkdir(parents=True)
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(root / "metadata.sqlite")
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    metadata_store.MetadataStore(config)
    (root / "artifacts" / "data.csv").write_text(SECRET, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "header", ["127.0.0.1", "127.0.0.1:8765", "localhost", "LocalHost:8765", "[::1]", "[::1]:8765"]
)
def test_loopback_names_are_answered_on_loopback(header):
    assert host_allowed(header, "127.0.0.1")


@pytest.mark.parametrize(
    "header",
    ["", "rebind.example", "rebind.example:8765", "localhost.rebind.example", "127.0.0.1.nip.io", "[::2]:80"],
)
def test_other_hosts_are_refused_on_loopback(header):
    assert not host_allowed(header, "127.0.0.1")


def test_a_request_without_host_is_answered():
    """Every browser sends Host, so a DNS-rebinding page cannot omit it (HTTP/1.0 clients do)."""
    assert host_allowed(None, "127.0.0.1")


def test_the_bound_loopback_address_is_answered():
    assert host_allowed("127.0.0.2:8765", "127.0.0.2") and not host_allowed("127.0.0.3:8765", "127.0.0.2")


def test_a_deliberate_non_loopback_bind_answers_any_host():
    assert host_allowed("ui.example.org", "0.0.0.0") and host_allowed("ui.example.org:80", "10.1.2.3")


def fetch(root, path: str, host: str) -> tuple[int, str]:
    """(status, body) of `path` asked with `Host: host` of the app served on 127.0.0.1."""

    async def go():
        async with TestClient(TestServer(make_app(str(root)), host="127.0.0.1")) as client:
            response = await client.get(path, headers={"Host": host}, allow_redirects=False)
            return response.status, await response.text()

    return asyncio.run(go())


@pytest.mark.parametrize("path", ["/files/artifacts/data.csv", "/", "/files/metadata.sqlite", "/no/such/page"])
def test_a_rebinding_host_gets_403_with_one_line(root, path):
    status, body = fetch(root, path, "rebind.example")
    assert status == 403
    assert SECRET not in body
    (line,) = body.strip().splitlines()
    assert "Expected Host localhost, 127.0.0.1 or [::1]. Received: Host 'rebind.example'." in line


@pytest.mark.parametrize("host", ["localhost:1234", "127.0.0.1", "[::1]:1234"])
def test_a_loopback_host_gets_the_file(root, host):
    assert fetch(root, "/files/artifacts/data.csv", host) == (200, SECRET)


def test_the_ui_command_refuses_a_rebinding_host(root):
    """`python -m pipelines ui ROOT` as a user starts it: a foreign Host is refused, 127.0.0.1 answered."""
    answers = {}
    with running_ui(str(root)) as ui:
        for host in ("rebind.example", f"127.0.0.1:{ui.port}"):
            connection = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=60)
            connection.request("GET", "/files/artifacts/data.csv", headers={"Host": host})
            response = connection.getresponse()
            answers[host] = (response.status, response.read().decode())
            connection.close()
    port = ui.port
    assert answers["rebind.example"][0] == 403 and SECRET not in answers["rebind.example"][1]
    assert answers[f"127.0.0.1:{port}"] == (200, SECRET)
