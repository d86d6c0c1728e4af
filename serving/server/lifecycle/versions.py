"""Version folders of a model on disk and the states of its versions.

What `ModelManager` polls: `<base_path>/<version>` entries (names parsed as TensorFlow Serving's
SimpleAtoi parses them), the versions a version policy aspires to, the ones to unload, and the
per-model record of loaded servables and statuses (`ServedModel`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

import grpc
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import get_model_status_pb2

from serving.config import policy_kind
from serving.errors import (
    FailedPrecondition,
    NotFound,
    ServingError,
    echoed,
)
from serving.protos import model_server_config_pb2
from serving.server.model.servable import Servable

__all__ = [
    "MAX_VERSION",
    "MIN_VERSION",
    "ServedModel",
    "State",
    "VersionStatus",
    "aspired_versions",
    "folder_contents",
    "load_error",
    "parse_version",
    "stale_versions",
    "note_once",
    "scan_base_path",
    "versions_on_disk",
    "warn_unreadable_once",
    "warn_unreadable",
]

log = logging.getLogger(__name__)
State = get_model_status_pb2.ModelVersionStatus.State


@dataclasses.dataclass(frozen=True)
class VersionStatus:
    """One version's state, as GetModelStatus reports it."""

    version: int
    state: int
    error: ServingError | None = None

    @property
    def state_name(self) -> str:
        return State.Name(self.state)


class ServedModel:
    def __init__(self, config: model_server_config_pb2.ModelConfig) -> None:
        self.config = config
        self.servables: dict[int, Servable] = {}
        self.statuses: dict[int, VersionStatus] = {}
        self.failures: dict[int, int] = {}
        # A version out of retries is tried again when its folder changes (a slow copy went on).
        self.failed_contents: dict[int, tuple] = {}
        self.unreadable: set[str] = set()  # base-path entries already warned about, to warn once
        self.last_warning = ""  # what the poller last logged about this model, to log each finding once


# A version directory counts once one of these is in it. `export.meta` is a
# SessionBundle (TF Serving's own test model bad_half_plus_two): TensorFlow
# Serving tries it and reports the failed load, so do we.
_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt", "export.meta")


# A version is an int64 (ModelSpec, SimpleAtoi of a folder name): a larger
# number is not a version (and could not be reported in GetModelStatus).
MAX_VERSION = 2**63 - 1
MIN_VERSION = -(2**63)
# absl's SimpleAtoi (base 10), which TF Serving's `ParseVersionNumber` calls: ASCII
# whitespace around, an optional sign, then digits (absl `safe_parse_sign_and_base`).
_VERSION_NAME = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t\n\v\f\r]*")


def parse_version(name: str) -> int | None:
    """The version a base-path child's name stands for, as TF Serving's `ParseVersionNumber`
    (`file_system_storage_path_source.cc`, absl::SimpleAtoi into an int64) reads it: `00000123`,
    `+7`, ` 7` and `-7` are 123, 7, 7 and -7; a number outside int64 is None."""
    match = _VERSION_NAME.fullmatch(name)
    if match is None:
        return None
    version = int(match.group(1))
    return version if MIN_VERSION <= version <= MAX_VERSION else None


def warn_unreadable(path: str, err: OSError) -> None:
    log.warning("Skipping %s under the model's base path: %s", path, err.strerror or err)


def versions_on_disk(base_path: str, unreadable: Callable[[str, OSError], None] = warn_unreadable) -> dict[int, Path]:
    """Version number to its path, as TensorFlow Serving finds them.

    Names are parsed as TF Serving's `ParseVersionNumber` parses them
    (`parse_version`: `00000123` is version 123, `-7` version -7); numbers
    beyond int64 are not versions. A directory counts once a model file is
    in it (a copy in progress is not a broken model); any other entry named
    like a version (a file) is a version, as TF Serving lists children
    without asking what they are, and fails to load. Of two entries with the
    same number (`123` and `0123`), the one with the longer name is used and
    the other is logged and ignored. An entry that cannot be read (a symlink
    loop, no permission) is skipped and passed to `unreadable`; the others
    are still found.
    """
    try:
        entries = sorted(os.scandir(base_path), key=lambda e: (len(e.name), e.name))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[int, Path] = {}
    for entry in entries:
        version = parse_version(entry.name)
        if version is None:
            continue
        try:
            if entry.is_dir():
                is_version = any((Path(entry.path) / f).is_file() for f in _MODEL_FILES)
            else:
                os.stat(entry.path)  # a dangling or looping symlink is unreadable, not a version
                is_version = True
        except OSError as err:
            unreadable(entry.path, err)
            continue
        if not is_version:
            continue
        if version in found:
            log.warning(
                "Duplicate version directories detected. Version %d will be loaded from %s, %s will be ignored.",
                version,
                entry.path,
                found[version],
            )
        found[version] = Path(entry.path)
    return dict(sorted(found.items()))


def load_error(err: Exception, name: str, version: int, path: Path) -> ServingError:
    """A failed load as the version's status: TensorFlow's code and words first, as TF Serving
    reports its loader's status (`LoaderHarness::Load`), then which version it was.

    NOT_FOUND for a missing saved_model.pb (TensorFlow's `ReadSavedModel`, cc/saved_model/reader.cc),
    DATA_LOSS for one that does not parse (`ReadBinaryProto`: "Can't parse ... as binary proto"), a
    TensorFlow error's own code; FAILED_PRECONDITION for what TF Serving's loader has no code for
    (a Python-only check, e.g. a signature whose inputs match no function argument).
    """
    if isinstance(err, ServingError):
        return err
    where = f"(version {version} of model {echoed(name)}, {path})"
    if isinstance(err, DecodeError):
        error: ServingError = ServingError(f"Can't parse {path / 'saved_model.pb'} as binary proto {where}: {err}")
        error.code = grpc.StatusCode.DATA_LOSS
        return error
    if isinstance(err, FileNotFoundError):
        return NotFound(f"{err} {where}")
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    code = getattr(err, "error_code", None)  # a tf.errors.OpError
    if isinstance(code, int):
        error = ServingError(f"{text} {where}")
        error.code = next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)
        return error
    return FailedPrecondition(f"{type(err).__name__}: {text} {where}")


def folder_contents(path: Path, limit: int = 10_000) -> tuple:
    """What a version folder holds (names, sizes, modification times), to see it change.

    Symlinks are not followed (a loop cannot hold it); at most `limit` entries
    are read.
    """
    found = []
    for root, dirs, files in os.walk(path, onerror=lambda err: found.append(("unreadable", str(err)))):
        for name in sorted(dirs + files):
            try:
                stat = os.stat(os.path.join(root, name), follow_symlinks=False)
            except OSError:
                continue
            found.append((root, name, stat.st_size, stat.st_mtime_ns))
            if len(found) >= limit:
                return tuple(sorted(found, key=repr))
    return tuple(sorted(found, key=repr))


def aspired_versions(config: model_server_config_pb2.ModelConfig, on_disk: list[int]) -> list[int]:
    policy = config.model_version_policy
    kind = policy_kind(policy)
    if kind == "all":
        return list(on_disk)
    if kind == "specific":
        return sorted(set(policy.specific.versions) & set(on_disk))
    count = policy.latest.num_versions or 1
    return on_disk[-count:]


def stale_versions(loaded: set[int], aspired: set[int]) -> list[int]:
    """AvailabilityPreservingPolicy: loaded versions to unload, never the last one serving.

    While no aspired version is AVAILABLE (still loading, or failed), the
    newest of the others keeps serving; with nothing aspired, all go.
    """
    stale = sorted(loaded - aspired)
    if aspired and not loaded & aspired:
        stale = stale[:-1]
    return stale


def note_once(model: ServedModel, level: int, text: str, *args) -> None:
    """Logs a finding of the poller once (TensorFlow Serving logs it on every poll)."""
    rendered = text % args
    if rendered != model.last_warning:
        model.last_warning = rendered
        log.log(level, "%s", rendered)


def warn_unreadable_once(model: ServedModel, path: str, err: OSError) -> None:
    """One warning per unreadable entry of a base path (not one per poll)."""
    if path not in model.unreadable:
        model.unreadable.add(path)
        warn_unreadable(path, err)


def scan_base_path(model: ServedModel, config: model_server_config_pb2.ModelConfig) -> dict[int, Path] | None:
    """The version folders of `config` (the poller's findings logged once), or None when its base path is missing (then nothing changes)."""
    if not os.path.isdir(config.base_path):
        # TensorFlow Serving's FileSystemStoragePathSource: an error, and no
        # aspired-versions update, so the loaded versions keep serving.
        note_once(
            model,
            logging.ERROR,
            "FileSystemStoragePathSource encountered a filesystem access error: Could not find base path %s "
            "for servable %s; no model's versions change (the loaded ones keep serving) until it is back.",
            config.base_path,
            config.name,
        )
        return None
    on_disk = versions_on_disk(config.base_path, lambda path, err: warn_unreadable_once(model, path, err))
    if not on_disk and not os.path.isdir(config.base_path):  # gone since the check above
        return None
    specific = policy_kind(config.model_version_policy) == "specific"
    wanted = config.model_version_policy.specific.versions
    missing = sorted(set(wanted) - set(on_disk)) if specific else []
    if specific and not wanted:
        note_once(model, logging.WARNING, "No specific versions requested for servable %s.", config.name)
    elif not on_disk:
        note_once(
            model,
            logging.WARNING,
            "No versions of servable %s found under base path %s. Did you forget to name your leaf directory "
            "as a number (eg. '/1/')? (A version folder counts once saved_model.pb is in it.)",
            config.name,
            config.base_path,
        )
    elif missing:
        note_once(
            model,
            logging.WARNING,
            "%s",
            " ".join(
                f"Version {version} of servable {config.name}, which was requested to be served as a 'specific' "
                "version in the servable's version policy, was not found in the file system."
                for version in missing
            ),
        )
    else:
        model.last_warning = ""
    return on_disk
