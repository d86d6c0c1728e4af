"""The no-op rerun check: has anything that a run depends on changed?

A run's fingerprint covers the spec (as typed, with resolved paths), the
input files (path, size, modification time: what TFX's ExampleGen driver
fingerprints too), a user schema, the source of this framework's packages
and of user modules, and the installed TFX version. After a successful run
it is written with the run's outputs to `<root>/last_run.json`. A rerun
whose fingerprint matches, whose outputs all still exist, and whose ML
Metadata has had no execution since, has nothing to do. This check imports
neither TensorFlow nor TFX, which alone take ~10 s to import.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sqlite3
from typing import Any

from pipelines.spec import ResolvedSpec
from pipelines.steps.registry import target_of

__all__ = [
    "run_fingerprint",
    "code_fingerprint",
    "RunRecord",
    "read_record",
    "write_record",
    "is_up_to_date",
    "max_execution_id",
]

_PACKAGES = ("components", "pipelines", "compat")  # compat changes what the libraries do


def _hash_tree(digest, folder: str) -> None:
    for parent, dirs, files in sorted(os.walk(folder)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(parent, name)
                digest.update(os.path.relpath(path, folder).encode())
                with open(path, "rb") as handle:
                    digest.update(handle.read())


def _module_file(reference: str | None) -> str | None:
    if not reference:
        return None
    found = importlib.util.find_spec(reference.split(":")[0])
    return found.origin if found is not None else None


def _hash_code(digest) -> None:
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for package in _PACKAGES:
        _hash_tree(digest, os.path.join(here, package))


def code_fingerprint() -> str:
    """sha256 of this framework's Python source (`components/`, `pipelines/`), as the run fingerprint hashes it."""
    digest = hashlib.sha256()
    _hash_code(digest)
    return digest.hexdigest()


def run_fingerprint(resolved: ResolvedSpec) -> str:
    digest = hashlib.sha256()
    described = dataclasses.asdict(resolved)
    described["numeric_columns"] = sorted(described["numeric_columns"])
    digest.update(json.dumps(described, sort_keys=True, default=str).encode())
    for path in resolved.data_files:
        stat = os.stat(path)
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    _hash_code(digest)
    for path in (
        resolved.schema_path,
        resolved.transform_module_file,
        resolved.training_module_file,
        _module_file(resolved.spec.transform.module),
        _module_file(resolved.spec.model.build_model),
        *(_module_file(target_of(step.uses)) for step in resolved.spec.steps),
    ):
        if path and os.path.isfile(path):
            with open(path, "rb") as handle:
                digest.update(handle.read())
    digest.update(importlib.metadata.version("tfx").encode())
    return digest.hexdigest()


@dataclasses.dataclass
class RunRecord:
    fingerprint: str
    run_id: str
    max_execution_id: int
    outputs: list[str]
    summary: dict[str, Any]


def _record_path(resolved: ResolvedSpec) -> str:
    return os.path.join(resolved.root, "last_run.json")


def read_record(resolved: ResolvedSpec) -> RunRecord | None:
    try:
        with open(_record_path(resolved), encoding="utf-8") as handle:
            return RunRecord(**json.load(handle))
    except (OSError, ValueError, TypeError):
        return None


def write_record(resolved: ResolvedSpec, record: RunRecord) -> None:
    path = _record_path(resolved)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(dataclasses.asdict(record), handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def max_execution_id(metadata_path: str) -> int:
    """The newest execution id in ML Metadata (SQLite), 0 when there is none."""
    if not os.path.exists(metadata_path):
        return 0
    with sqlite3.connect(f"file:{metadata_path}?mode=ro", uri=True) as connection:
        try:
            row = connection.execute("SELECT MAX(id) FROM Execution").fetchone()
        except sqlite3.DatabaseError:
            return 0
    return row[0] or 0


def is_up_to_date(resolved: ResolvedSpec, record: RunRecord | None, fingerprint: str) -> bool:
    return (
        record is not None
        and record.fingerprint == fingerprint
        and record.max_execution_id == max_execution_id(resolved.metadata_path)
        and all(os.path.exists(path) for path in record.outputs)
    )
