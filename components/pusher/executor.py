"""Pusher executor that never leaves a half-pushed model visible.

The model is copied to `<base>/.tmp-<version>-<pid>/` and renamed to
`<base>/<version>/` in one step, so a serving system polling `<base>` sees
either nothing or the whole model. A model whose content is already the
newest pushed version is not pushed again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from typing import Any

from absl import logging
from tfx import types
from tfx.components.pusher import executor as tfx_pusher_executor
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

__all__ = ["Executor", "model_fingerprint", "push_atomically"]

_FINGERPRINT_FILE = "assets.extra/model_fingerprint.txt"


def model_fingerprint(model_dir: str) -> str:
    """SHA-256 over the SavedModel's graph and variables."""
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(model_dir)):
        for name in sorted(files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, model_dir)
            if relative == _FINGERPRINT_FILE or relative.startswith("assets.extra"):
                continue
            digest.update(relative.encode())
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _versions(base: str) -> list[int]:
    if not os.path.isdir(base):
        return []
    return sorted(int(n) for n in os.listdir(base) if n.isdigit())


def push_atomically(model_dir: str, base: str) -> tuple[str, bool]:
    """Copies `model_dir` to `<base>/<version>` atomically.

    Returns:
        (version, pushed): `pushed` is False when the newest version already
        holds the same model (nothing is written then).
    """
    os.makedirs(base, exist_ok=True)
    fingerprint = model_fingerprint(model_dir)
    versions = _versions(base)
    if versions:
        latest = os.path.join(base, str(versions[-1]), _FINGERPRINT_FILE)
        if os.path.exists(latest) and open(latest).read().strip() == fingerprint:
            return str(versions[-1]), False
    version = max(int(time.time()), versions[-1] + 1 if versions else 0)
    staging = os.path.join(base, f".tmp-{version}-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(model_dir, staging)
        os.makedirs(os.path.join(staging, "assets.extra"), exist_ok=True)
        with open(os.path.join(staging, _FINGERPRINT_FILE), "w") as handle:
            handle.write(fingerprint + "\n")
        os.rename(staging, os.path.join(base, str(version)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return str(version), True


class Executor(tfx_pusher_executor.Executor):
    """Pushes a blessed model to a filesystem destination, atomically."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        model_push = artifact_utils.get_single_instance(output_dict[standard_component_specs.PUSHED_MODEL_KEY])
        if not self.CheckBlessing(input_dict):
            self._MarkNotPushed(model_push)
            return
        destination = pusher_pb2.PushDestination()
        proto_utils.json_to_proto(exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination)
        base = destination.filesystem.base_directory
        version, pushed = push_atomically(self.GetModelPath(input_dict), base)
        serving_path = os.path.join(base, version)
        logging.info("Model %s at %s.", "pushed" if pushed else "already pushed", serving_path)
        self._MarkPushed(model_push, pushed_destination=serving_path, pushed_version=version)
        model_push.set_int_custom_property("new_version", int(pushed))
