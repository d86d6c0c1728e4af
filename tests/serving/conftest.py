"""Fixtures: the tiny SavedModel of serving_helpers in three versions, real
embedded servers on free 127.0.0.1 ports, and gRPC stubs on a module's server."""

from __future__ import annotations

from pathlib import Path

import pytest
from serving_helpers import MODEL, WEIGHTS, export_linear, push
from tfs_contract_helpers import Stubs

from serving import config as cfg
from serving.server import EmbeddedServer


@pytest.fixture(scope="session")
def exports(tmp_path_factory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("exports")
    return {version: export_linear(root / str(version), w, b) for version, (w, b) in WEIGHTS.items()}


@pytest.fixture
def model_dir(tmp_path, exports) -> Path:
    """`<tmp>/models/lin` holding version 1."""
    base = tmp_path / "models" / MODEL
    base.mkdir(parents=True)
    push(base, 1, exports[1])
    return base


@pytest.fixture
def make_server(tmp_path):
    """Starts embedded servers on free 127.0.0.1 ports; stops them afterwards."""
    servers: list[EmbeddedServer] = []

    def make(
        model_dir: Path, *, policy=None, labels=None, batching=None, config_dir: Path | None = None, **options
    ) -> EmbeddedServer:
        config = cfg.server_config(cfg.model_config(MODEL, model_dir, policy=policy, labels=labels))
        files = cfg.write_server_files(config_dir or tmp_path / "cfg", config, batching=batching)
        options.setdefault("file_system_poll_wait_seconds", 0.1)
        if labels:  # as TF Serving, labels in the first config need this flag (its own tests pass it)
            options.setdefault("allow_version_labels_for_unavailable_models", True)
        server = EmbeddedServer.from_files(files, rest_port=0, grpc_port=0, **options)
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def server(make_server, model_dir) -> EmbeddedServer:
    """An embedded server serving version 1 of `lin` (latest policy)."""
    return make_server(model_dir)


@pytest.fixture(scope="module")
def stubs(server):
    """gRPC stubs on the module's `server` (for modules whose own `server` fixture is module-scoped)."""
    stubs = Stubs(server.grpc_address)
    yield stubs
    stubs.close()
