"""Move versions and labels on a running server: apply a config, wait, roll back.

A serving target is a running model server plus the model config file it was
started with. Changing what it serves always goes the same way:

1. build the new `ModelServerConfig` from the protobufs;
2. send it to the server (in-process call, or gRPC HandleReloadConfigRequest)
   and, once accepted, write it to the config file atomically so a restart
   serves the same thing; without either, write the file and rely on the
   server polling it (`--model_config_file_poll_wait_seconds`);
3. wait, by polling the REST status API with a deadline, until the versions
   reach the expected states.

Labels only ever point at AVAILABLE versions, so every step is valid for
`tensorflow_model_server` without `--allow_version_labels_for_unavailable_models`.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from serving.client import RestClient, ServerError, reload_config
from serving.config import (
    STABLE_LABEL,
    find_model,
    pin_versions,
    read_text_proto,
    replace_model,
    write_text_proto,
)
from serving.errors import message
from serving.protos import model_server_config_pb2

__all__ = [
    "RollbackError",
    "RollbackResult",
    "ServingTarget",
    "apply_config",
    "available_versions",
    "read_config",
    "rollback",
    "versions_on_disk",
    "wait_for_label",
    "wait_for_state",
]

ModelServerConfig = model_server_config_pb2.ModelServerConfig


@dataclasses.dataclass(frozen=True)
class ServingTarget:
    """Where a model is served.

    Attributes:
        rest_url: REST base URL, e.g. "http://127.0.0.1:8501".
        config_path: The model config file the server was started with.
        grpc_address: "host:port" for HandleReloadConfigRequest, if any.
        server: An in-process EmbeddedServer, reloaded by a direct call.
    """

    rest_url: str
    config_path: Path
    grpc_address: str | None = None
    server: Any = None

    @classmethod
    def embedded(cls, server) -> ServingTarget:
        """The target for a running in-process `EmbeddedServer`."""
        if server.config_path is None:
            raise ValueError(
                message(
                    "The embedded server has no config file",
                    expected="a server built with EmbeddedServer.from_files",
                    received="a server built from an in-memory config",
                    fix="Write the config with write_server_files() and start the server from the files.",
                )
            )
        return cls(
            rest_url=server.rest_url, config_path=server.config_path, grpc_address=server.grpc_address, server=server
        )


class RollbackError(RuntimeError):
    """A rollback could not be done (no previous version, or it failed to load)."""


@dataclasses.dataclass(frozen=True)
class RollbackResult:
    model_name: str
    from_version: int
    to_version: int


def read_config(target: ServingTarget) -> ModelServerConfig:
    return read_text_proto(target.config_path, ModelServerConfig)


def apply_config(target: ServingTarget, config: ModelServerConfig, timeout: float = 60.0) -> None:
    """Makes the server serve `config` and persists it to the config file.

    Raises:
        ServerError: The server rejected the config; the file is unchanged.
    """
    if target.server is not None:
        target.server.reload_config(config)
    elif target.grpc_address:
        reload_config(target.grpc_address, config, timeout=timeout)
    write_text_proto(target.config_path, config)


def versions_on_disk(base_path: str | os.PathLike) -> list[int]:
    """Numeric version directories holding a saved_model.pb, ascending."""
    base = Path(base_path)
    if not base.is_dir():
        return []
    return sorted(
        int(p.name)
        for p in base.iterdir()
        if p.name.isascii() and p.name.isdigit() and (p / "saved_model.pb").is_file()
    )


def available_versions(target: ServingTarget, name: str) -> list[int]:
    """Versions of `name` the server reports AVAILABLE, ascending."""
    with RestClient(target.rest_url) as client:
        try:
            entries = client.status(name)["model_version_status"]
        except ServerError as err:
            if err.http_status == 404:
                return []
            raise
    return sorted(int(e["version"]) for e in entries if e["state"] == "AVAILABLE")


def _state(client: RestClient, name: str, version: int) -> tuple[str, str]:
    try:
        entry = client.status(name, version=version)["model_version_status"][0]
    except ServerError as err:
        if err.http_status == 404:
            return "UNKNOWN", ""
        raise
    status = entry.get("status", {})
    return entry["state"], status.get("error_message", "") if status.get("error_code", "OK") != "OK" else ""


def wait_for_state(target: ServingTarget, name: str, version: int, states: set[str], timeout: float) -> str:
    """Polls the REST status of `version` until its state is in `states`.

    Returns:
        The state reached.

    Raises:
        TimeoutError: Not reached in time, or the version failed to load
            (END with an error) while AVAILABLE was expected.
    """
    deadline = time.monotonic() + timeout
    with RestClient(target.rest_url, timeout=min(timeout, 10.0)) as client:
        while True:
            state, error = _state(client, name, version)
            if state in states:
                return state
            if error and "AVAILABLE" in states:
                raise TimeoutError(
                    message(
                        f"Version {version} of model {name!r} failed to load",
                        expected=f"state in {sorted(states)}",
                        received=f"{state}: {error}",
                        fix="Fix the exported model (see the error) and push a new version.",
                    )
                )
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    message(
                        f"Version {version} of model {name!r} did not reach {sorted(states)} within {timeout}s",
                        expected=f"state in {sorted(states)}",
                        received=state,
                        fix="Check the server log, or raise the timeout for large models.",
                    )
                )
            time.sleep(0.05)


_UNKNOWN_LABEL = "Unrecognized servable version label"


def wait_for_label(target: ServingTarget, name: str, label: str, version: int, timeout: float) -> None:
    """Polls until `label` resolves to `version` on the server.

    Asks GetModelMetadata by label (`GET /v1/models/<name>/labels/<label>/metadata`): its
    `model_spec.version` is the version serving under the label (TF Serving's
    `SavedModelGetSignatureDef` answers with the handle's id, get_model_metadata_impl.cc).
    GetModelStatus cannot tell: TF Serving ignores its label and lists every version.
    """
    deadline = time.monotonic() + timeout
    with RestClient(target.rest_url, timeout=min(timeout, 10.0)) as client:
        while True:
            try:
                if int(client.metadata(name, label=label)["model_spec"]["version"]) == version:
                    return
            except ServerError as err:
                # Not there yet: an unknown model or unloaded version (404), or an unknown label
                # (400, TF Serving's words).
                if not (err.http_status == 404 or _UNKNOWN_LABEL in str(err)):
                    raise
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    message(
                        f"Label {label!r} of model {name!r} did not move to version {version} within {timeout}s",
                        expected=f"{label} -> {version}",
                        received="another version or no label",
                        fix="Check that the server reloads its config (gRPC address or config file polling).",
                    )
                )
            time.sleep(0.05)


def rollback(
    target: ServingTarget, name: str, *, to_version: int | None = None, timeout: float = 120.0
) -> RollbackResult:
    """Moves `stable` back to the previous version and unloads the current one.

    Args:
        target: The serving target.
        name: The model name.
        to_version: The version to return to; by default the highest version
            on disk below the current `stable` one.
        timeout: Seconds to wait for each state change.

    Returns:
        Which version was left and which now serves as `stable`.

    Raises:
        RollbackError: No `stable` label, or no earlier version to return to.
        TimeoutError: The previous version did not become AVAILABLE.
    """
    config = read_config(target)
    model = find_model(config, name)
    if STABLE_LABEL not in model.version_labels:
        raise RollbackError(
            message(
                f"Model {name!r} has no '{STABLE_LABEL}' label to roll back",
                expected=f"version_labels {{ key: '{STABLE_LABEL}' }} in {target.config_path}",
                received=f"labels {dict(model.version_labels)}",
                fix="Deploy with serving.deploy.deploy_version, which maintains the label.",
            )
        )
    current = model.version_labels[STABLE_LABEL]
    earlier = [v for v in versions_on_disk(model.base_path) if v < current]
    previous = to_version if to_version is not None else (earlier[-1] if earlier else None)
    if previous is None or previous == current or previous not in versions_on_disk(model.base_path):
        raise RollbackError(
            message(
                f"No version to roll model {name!r} back to",
                expected=f"a version directory other than {current} under {model.base_path}",
                received=f"versions on disk {versions_on_disk(model.base_path)}, to_version={to_version}",
                fix="Pass to_version, or restore an earlier export into the base path.",
            )
        )
    # Step 1: load the previous version next to the current one; stable unchanged.
    apply_config(target, replace_model(config, pin_versions(model, [previous, current], {STABLE_LABEL: current})))
    wait_for_state(target, name, previous, {"AVAILABLE"}, timeout)
    # Step 2: stable -> previous, and the current version leaves serving.
    apply_config(target, replace_model(read_config(target), pin_versions(model, [previous], {STABLE_LABEL: previous})))
    wait_for_label(target, name, STABLE_LABEL, previous, timeout)
    wait_for_state(target, name, current, {"END", "UNKNOWN"}, timeout)
    return RollbackResult(name, current, previous)
