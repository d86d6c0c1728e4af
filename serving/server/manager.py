"""Which model versions are served: file-system polling, version policy, labels.

The manager plays the part of TensorFlow Serving's ServerCore:

* every `poll_seconds` it lists `<base_path>/<version>` entries (names
  parsed as TensorFlow Serving's SimpleAtoi parses them, so `00000123` is
  version 123 loaded from `00000123/` and `-7` is version -7; a directory
  only once `saved_model.pb` is there, so half-copied exports are ignored,
  or `export.meta`, the SessionBundle format, which then fails to load
  visibly; a file named like a version fails to load too), picks the
  versions the policy wants (latest N, specific, all), loads new ones and
  unloads the others (newest first); a base path that is missing stops the
  poll for every model, as in TensorFlow Serving (the loaded versions keep
  serving, an error is logged);
* availability is preserved (TensorFlow Serving's AvailabilityPreservingPolicy):
  a new version is loaded (and warmed up) fully before it is published, and
  old versions are unloaded only once an aspired version is AVAILABLE (until
  then the newest old one keeps serving). Requests that already hold an old
  version finish on it; it is reported UNLOADING until they have;
* version labels (`stable`, `canary`) come from the config and may only point
  at AVAILABLE versions unless `allow_labels_for_unavailable` is set, as with
  `--allow_version_labels_for_unavailable_models` (which still refuses to
  move an existing label to an unavailable version);
* `reload` swaps in a new `ModelServerConfig` (HandleReloadConfigRequest); a
  removed model's versions are unloaded and stay END in GetModelStatus.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import grpc
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import get_model_status_pb2

from serving.config import ConfigError, policy_kind, read_text_proto, validate_server_config
from serving.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServingError,
    did_you_mean,
    echoed,
    message,
)
from serving.protos import model_server_config_pb2
from serving.server.servable import Servable

__all__ = [
    "MAX_VERSION",
    "ModelManager",
    "ModelsUnavailable",
    "State",
    "VersionStatus",
    "parse_version",
    "versions_on_disk",
]

log = logging.getLogger(__name__)
State = get_model_status_pb2.ModelVersionStatus.State
ModelServerConfig = model_server_config_pb2.ModelServerConfig


class ModelsUnavailable(ServingError):
    """New models of a reload did not become AVAILABLE (TensorFlow Serving: UNKNOWN)."""

    code = grpc.StatusCode.UNKNOWN


@dataclasses.dataclass(frozen=True)
class VersionStatus:
    """One version's state, as GetModelStatus reports it."""

    version: int
    state: int
    error: ServingError | None = None

    @property
    def state_name(self) -> str:
        return State.Name(self.state)


class _Model:
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


def _warn_unreadable(path: str, err: OSError) -> None:
    log.warning("Skipping %s under the model's base path: %s", path, err.strerror or err)


def versions_on_disk(base_path: str, unreadable: Callable[[str, OSError], None] = _warn_unreadable) -> dict[int, Path]:
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


def _load_error(err: Exception, name: str, version: int, path: Path) -> ServingError:
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


def _contents(path: Path, limit: int = 10_000) -> tuple:
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


def _aspired(config: model_server_config_pb2.ModelConfig, on_disk: list[int]) -> list[int]:
    policy = config.model_version_policy
    kind = policy_kind(policy)
    if kind == "all":
        return list(on_disk)
    if kind == "specific":
        return sorted(set(policy.specific.versions) & set(on_disk))
    count = policy.latest.num_versions or 1
    return on_disk[-count:]


def _stale_versions(loaded: set[int], aspired: set[int]) -> list[int]:
    """AvailabilityPreservingPolicy: loaded versions to unload, never the last one serving.

    While no aspired version is AVAILABLE (still loading, or failed), the
    newest of the others keeps serving; with nothing aspired, all go.
    """
    stale = sorted(loaded - aspired)
    if aspired and not loaded & aspired:
        stale = stale[:-1]
    return stale


class ModelManager:
    """Loads, serves and unloads model versions. Thread-safe.

    Args:
        config: The model server config.
        poll_seconds: File-system poll interval; <= 0 polls only on start and
            reload (TensorFlow Serving's `--file_system_poll_wait_seconds`).
        prepare: Called on a freshly loaded servable before it is published
            (warmup replay); an exception fails the load.
        on_change: Called with (model, version, available) on publish/unload.
        max_load_retries: Load attempts per version after the first failure.
        allow_labels_for_unavailable: Allow new labels on versions not yet
            loaded (`--allow_version_labels_for_unavailable_models`); moving an
            existing label to an unavailable version is still refused, as
            TensorFlow Serving refuses it.
        force_allow_any_labels_for_unavailable: Allow any label on any version
            (`--force_allow_any_version_labels_for_unavailable_models`).
        config_path: If set with `config_poll_seconds` > 0, the file is read and
            applied every period, changed or not (TensorFlow Serving's
            `--model_config_file_poll_wait_seconds`).
        config_poll_seconds: See `config_path`.
        unload_timeout: How long an unload waits for in-flight requests.
    """

    def __init__(
        self,
        config: ModelServerConfig,
        *,
        poll_seconds: float = 1.0,
        prepare: Callable[[Servable], None] | None = None,
        on_change: Callable[[str, int, bool], None] | None = None,
        max_load_retries: int = 5,
        allow_labels_for_unavailable: bool = False,
        force_allow_any_labels_for_unavailable: bool = False,
        config_path: Path | None = None,
        config_poll_seconds: float = 0.0,
        unload_timeout: float = 30.0,
    ) -> None:
        validate_server_config(config, reload=False)
        self._config = ModelServerConfig()
        self._config.CopyFrom(config)
        self._models = {m.name: _Model(m) for m in config.model_config_list.config}
        # Models a reload removed: their END states stay visible in GetModelStatus,
        # as in TensorFlow Serving's ServableStateMonitor.
        self._retired: dict[str, _Model] = {}
        self._poll_seconds = poll_seconds
        self._prepare = prepare or (lambda servable: None)
        self._on_change = on_change or (lambda model, version, available: None)
        self._max_load_retries = max_load_retries
        self._allow_unavailable_labels = allow_labels_for_unavailable
        self._force_any_labels = force_allow_any_labels_for_unavailable
        self._config_path = config_path
        self._config_poll_seconds = config_poll_seconds
        self._unload_timeout = unload_timeout
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._poll_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        """Checks labels, loads the initial versions, then starts polling.

        As TF Serving's ServerCore::ReloadConfig, labels are checked before any version loads: a config with labels
        starts only with `allow_labels_for_unavailable` (`--allow_version_labels_for_unavailable_models`).
        """
        with self._lock:
            for model in self._models.values():
                self._check_labels(model.config, None, previous_labels={})
        self.poll_once()
        self._thread = threading.Thread(target=self._run, name="model-poller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self._unload_timeout + 5)

    def _run(self) -> None:
        last_config_check = time.monotonic()
        while not self._stop.is_set():
            self._wake.wait(self._poll_seconds if self._poll_seconds > 0 else None)
            self._wake.clear()
            if self._stop.is_set():
                return
            if (
                self._config_path
                and self._config_poll_seconds > 0
                and (time.monotonic() - last_config_check >= self._config_poll_seconds)
            ):
                last_config_check = time.monotonic()
                self._reload_config_file()
            try:
                self.poll_once()
            except Exception:
                log.exception("Model poll failed")

    def _reload_config_file(self) -> None:
        """TF Serving's `Server::PollFilesystemAndReloadConfig` (model_servers/server.cc): the file is
        read and applied every period, changed or not, so a reload that failed (a label on a version
        still loading) is tried again, and the file wins over a HandleReloadConfigRequest."""
        try:
            config = read_text_proto(self._config_path, ModelServerConfig)
        except (OSError, ConfigError) as err:
            log.error("Failed to read ModelServerConfig file: %s", err)
            return
        changed = config != self.config
        try:
            self.reload(config)
        except ServingError as err:  # TensorFlow Serving's words, then ours
            log.error("PollFilesystemAndReloadConfig failed to ReloadConfig: %s (file %s)", err, self._config_path)
            return
        log.log(logging.INFO if changed else logging.DEBUG, "Reloaded model config from %s", self._config_path)

    # -- config --------------------------------------------------------------
    @property
    def config(self) -> ModelServerConfig:
        with self._lock:
            copy = ModelServerConfig()
            copy.CopyFrom(self._config)
            return copy

    def _check_labels(
        self,
        config: model_server_config_pb2.ModelConfig,
        current: _Model | None,
        previous_labels: Mapping[str, int],
    ) -> None:
        """ServerCore::UpdateModelVersionLabelMap: labels point at AVAILABLE versions.

        With `allow_labels_for_unavailable`, a new label (or one left where it
        was) may point anywhere; moving an existing label to another version
        still needs that version AVAILABLE.
        """
        if self._force_any_labels:
            return
        for label, version in config.version_labels.items():
            available = sorted(current.servables) if current is not None else []
            if version in available:
                continue
            moved = previous_labels.get(label, version) != version
            if self._allow_unavailable_labels and not moved:
                continue
            raise FailedPrecondition(
                message(
                    f"Request to assign label to version {version} of model {config.name}, "
                    "which is not currently available for inference",
                    expected=f"label {label!r} on an AVAILABLE version ({available})",
                    received=f"{label}={version}"
                    + (f" (moved from version {previous_labels[label]})" if moved else ""),
                    fix="Load the version first (add it to the version policy and wait until it is AVAILABLE), "
                    "then move the label"
                    + (
                        "; allow_version_labels_for_unavailable_models covers new labels only, not moved ones."
                        if self._allow_unavailable_labels
                        else "; or start the server with allow_version_labels_for_unavailable_models."
                    ),
                )
            )

    def reload(self, config: ModelServerConfig) -> None:
        """Applies a new config: models added/removed, policies and labels changed.

        As ServerCore::ReloadConfig: a model keeps its loaded versions when only
        its policy, labels or base path change (new versions load before old
        ones unload); a removed model's versions are unloaded and reported END.
        As ServerCore, it returns once the models new to the config are loaded
        (a model with no version on disk yet is not waited for; TensorFlow
        Serving waits for it); other changes are applied by the poller right
        after this returns.

        Raises:
            InvalidArgument: The config is malformed, or not a model_config_list.
            FailedPrecondition: A label points at a version that is not AVAILABLE.
            ModelsUnavailable: A new model's versions failed to load (the config
                is applied all the same, as in TensorFlow Serving).
        """
        validate_server_config(config, reload=True)
        with self._lock:
            for model_config in config.model_config_list.config:
                current = self._models.get(model_config.name)
                previous = dict(current.config.version_labels) if current is not None else {}
                self._check_labels(model_config, current, previous)
            models = {}
            for model_config in config.model_config_list.config:
                model = self._models.get(model_config.name) or self._readded(model_config)
                if model.config.base_path != model_config.base_path:
                    model.last_warning = ""
                # A version out of load retries stays failed across reloads, as TF Serving keeps it in
                # error while it stays aspired (`enable_reload_servables_with_error` is off in its binary).
                model.config = model_config
                models[model_config.name] = model
            removed = [m for name, m in self._models.items() if name not in models]
            added = [m for name, m in models.items() if name not in self._models]
            self._models = models
            self._retired.update((m.config.name, m) for m in removed)
            self._config = ModelServerConfig()
            self._config.CopyFrom(config)
        for model in removed:
            for version in sorted(model.servables):
                self._unload(model, version)
        self._load_new_models(added)
        self._wake.set()

    def _load_new_models(self, added: list[_Model]) -> None:
        """ServerCore::WaitUntilModelsAvailable: loads the new models now; UNKNOWN if one fails."""
        with self._lock:
            earlier = [dict(model.statuses) for model in added]  # a re-added model's END states from before
        with self._poll_lock:
            for model in added:
                self._sync_model(model)
        with self._lock:
            failed = [
                (model.config.name, status)
                for model, before in zip(added, earlier, strict=True)
                if not model.servables
                for status in model.statuses.values()
                if status.state == State.END and status.error is not None and before.get(status.version) is not status
            ]
        if failed:
            details = ", ".join(
                f"{{name: {name} version: {s.version} due to error: {s.error.text}}}" for name, s in failed
            )
            raise ModelsUnavailable(
                message(
                    f"{len({name for name, _ in failed})} model(s) did not become available: {{{details}}}",
                    expected="every model new to the config AVAILABLE",
                    received=f"failed loads of {sorted({name for name, _ in failed})}",
                    fix="Fix or replace those version directories; the config is applied, the poller retries "
                    "max_num_load_retries times.",
                )
            )

    def _readded(self, config: model_server_config_pb2.ModelConfig) -> _Model:
        """A model new to the config; one removed earlier keeps its old versions' END states."""
        model = _Model(config)
        retired = self._retired.pop(config.name, None)
        if retired is not None:
            model.statuses.update(retired.statuses)
        return model

    # -- polling -------------------------------------------------------------
    def poll_once(self) -> None:
        """Brings every model to its aspired versions (loads, then unloads).

        As TensorFlow Serving's `PollFileSystemForConfig` (file_system_storage_path_source.cc), a
        model whose base path is missing fails the whole poll: no model's versions change until
        it is back (the loaded versions keep serving).
        """
        with self._poll_lock:
            with self._lock:
                models = list(self._models.values())
            missing = next((m for m in models if not os.path.isdir(m.config.base_path)), None)
            if missing is not None:
                self._scan(missing, missing.config)  # logs it, once
                return
            for model in models:
                self._sync_model(model)

    def _set_status(self, model: _Model, status: VersionStatus) -> None:
        with self._lock:
            model.statuses[status.version] = status
            self._changed.notify_all()

    def _note(self, model: _Model, level: int, text: str, *args) -> None:
        """Logs a finding of the poller once (TensorFlow Serving logs it on every poll)."""
        rendered = text % args
        if rendered != model.last_warning:
            model.last_warning = rendered
            log.log(level, "%s", rendered)

    @staticmethod
    def _warn_unreadable(model: _Model, path: str, err: OSError) -> None:
        """One warning per unreadable entry of a base path (not one per poll)."""
        if path not in model.unreadable:
            model.unreadable.add(path)
            _warn_unreadable(path, err)

    def _scan(self, model: _Model, config: model_server_config_pb2.ModelConfig) -> dict[int, Path] | None:
        """The version folders of `config`, or None when its base path is missing (then nothing changes)."""
        if not os.path.isdir(config.base_path):
            # TensorFlow Serving's FileSystemStoragePathSource: an error, and no
            # aspired-versions update, so the loaded versions keep serving.
            self._note(
                model,
                logging.ERROR,
                "FileSystemStoragePathSource encountered a filesystem access error: Could not find base path %s "
                "for servable %s; no model's versions change (the loaded ones keep serving) until it is back.",
                config.base_path,
                config.name,
            )
            return None
        on_disk = versions_on_disk(config.base_path, lambda path, err: self._warn_unreadable(model, path, err))
        if not on_disk and not os.path.isdir(config.base_path):  # gone since the check above
            return None
        specific = policy_kind(config.model_version_policy) == "specific"
        wanted = config.model_version_policy.specific.versions
        missing = sorted(set(wanted) - set(on_disk)) if specific else []
        if specific and not wanted:
            self._note(model, logging.WARNING, "No specific versions requested for servable %s.", config.name)
        elif not on_disk:
            self._note(
                model,
                logging.WARNING,
                "No versions of servable %s found under base path %s. Did you forget to name your leaf directory "
                "as a number (eg. '/1/')? (A version folder counts once saved_model.pb is in it.)",
                config.name,
                config.base_path,
            )
        elif missing:
            self._note(
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

    def _sync_model(self, model: _Model) -> None:
        with self._lock:
            config = model.config
        on_disk = self._scan(model, config)
        if on_disk is None:
            return
        aspired = _aspired(config, list(on_disk))
        for version in sorted(aspired, reverse=True):  # the newest first, as TF Serving
            with self._lock:
                skip = version in model.servables
                out_of_retries = model.failures.get(version, 0) > self._max_load_retries
            if skip:
                continue
            contents = _contents(on_disk[version])
            if out_of_retries and contents == model.failed_contents.get(version):
                continue  # unchanged since its last failed load: tried again once it changes
            self._load(model, config, on_disk[version], version, contents)
        with self._lock:
            if model is not self._models.get(config.name):
                stale = sorted(model.servables)  # removed by a reload during the load: nothing is aspired
            elif model.config is not config:
                return  # changed by a reload meanwhile: the next poll decides
            else:
                stale = _stale_versions(set(model.servables), set(aspired))
        for version in stale:
            self._unload(model, version)

    def _load(
        self,
        model: _Model,
        config: model_server_config_pb2.ModelConfig,
        path: Path,
        version: int,
        contents: tuple = (),
    ) -> None:
        self._set_status(model, VersionStatus(version, State.LOADING))
        started = time.monotonic()
        try:
            servable = Servable.load(config.name, version, path)
            self._prepare(servable)
        except Exception as err:  # noqa: BLE001 - any load error is reported in the status
            with self._lock:
                model.failures[version] = model.failures.get(version, 0) + 1
                model.failed_contents[version] = contents  # as before the attempt: a change since is retried
            error = _load_error(err, config.name, version, path)
            log.error("%s", error)
            self._set_status(model, VersionStatus(version, State.END, error))
            return
        with self._lock:
            model.servables[version] = servable
            model.statuses[version] = VersionStatus(version, State.AVAILABLE)
            model.failures.pop(version, None)
            model.failed_contents.pop(version, None)
            self._changed.notify_all()
        self._on_change(config.name, version, True)
        log.info("Loaded %s version %d in %.2fs", config.name, version, time.monotonic() - started)

    def _unload(self, model: _Model, version: int) -> None:
        with self._lock:
            servable = model.servables.pop(version, None)
            if servable is None:
                return
            model.statuses[version] = VersionStatus(version, State.UNLOADING)
            self._changed.notify_all()
        self._on_change(model.config.name, version, False)
        if not servable.wait_idle(self._unload_timeout):
            log.warning(
                "Unloading %s version %d with %d requests still in flight",
                model.config.name,
                version,
                servable.in_flight,
            )
        self._set_status(model, VersionStatus(version, State.END))
        log.info("Unloaded %s version %d", model.config.name, version)

    # -- requests ------------------------------------------------------------
    def _model(self, name: str, what: str) -> _Model:
        model = self._models.get(name)
        if model is None:
            raise NotFound(
                message(
                    what,
                    expected=f"one of the served models {sorted(self._models)}",
                    received=f"model name {echoed(name)!r}",
                    fix="Check the model name in the request." + did_you_mean(echoed(name), self._models),
                )
            )
        return model

    def _label_version(self, name: str, label: str) -> int:
        """The version `label` points at; as ServerCore, checked before the model itself (INVALID_ARGUMENT)."""
        model = self._models.get(name)
        labels = dict(model.config.version_labels) if model is not None else {}
        if label not in labels:
            name, label = echoed(name), echoed(label)
            raise InvalidArgument(
                message(
                    f"Unrecognized servable version label: {label}",
                    expected=f"one of the labels of model {name!r}: {sorted(labels)}"
                    if model is not None
                    else f"a served model (one of {sorted(self._models)}) and one of its labels",
                    received=f"label {label!r}" + ("" if model is not None else f" of unknown model {name!r}"),
                    fix="Use an existing label, or request a version number."
                    + did_you_mean(label if model is not None else name, labels if model is not None else self._models),
                )
            )
        return labels[label]

    @staticmethod
    def _require_name(name: str) -> None:
        """ServerCore's check of a request's ModelSpec: a name is required (INVALID_ARGUMENT)."""
        if not name:
            raise InvalidArgument(
                message(
                    "ModelSpec has no name specified",
                    expected="model_spec.name set to a served model",
                    received="an empty model name",
                    fix="Set model_spec.name (REST: /v1/models/<name>).",
                )
            )

    def acquire(self, name: str, version: int | None = None, label: str | None = None) -> Servable:
        """Returns the servable for a request and counts it in flight.

        Pair with `Servable.release()`, or use `handle()`.

        Raises:
            InvalidArgument: No model name, or an unknown label (also of an
                unknown model), as TensorFlow Serving's ServerCore.
            NotFound: Unknown model, or the version is not AVAILABLE.
        """
        with self._lock:
            model = self._models.get(name)
            if model is not None and model.servables and version is None and label is None:  # the common case
                servable = model.servables[max(model.servables)]
                servable.acquire()
                return servable
            self._require_name(name)
            if label is not None:
                version = self._label_version(name, label)
            shown = echoed(name)
            request = f"Latest({shown})" if version is None else f"Specific({shown}, {version})"
            model = self._model(name, f"Servable not found for request: {request}")
            if version is None:
                failed = [s for s in model.statuses.values() if s.state == State.END and s.error is not None]
                if not model.servables and failed:
                    # TensorFlow Serving's code and wording, plus the reason.
                    newest = max(failed, key=lambda s: s.version)
                    raise NotFound(
                        message(
                            f"Servable not found for request: {request}",
                            expected="at least one AVAILABLE version",
                            received=f"versions {sorted(s.version for s in failed)} failed to load; "
                            f"version {newest.version}: {newest.error.text}",
                            fix="Fix or replace the version directory (failed versions are retried max_num_load_retries "
                            "times, then whenever their folder changes).",
                        )
                    )
                if not model.servables:
                    raise NotFound(
                        message(
                            f"Servable not found for request: {request}",
                            expected="at least one AVAILABLE version",
                            received="none loaded yet",
                            fix=f"Wait until GET /v1/models/{name} shows a version AVAILABLE.",
                        )
                    )
                servable = model.servables[max(model.servables)]
            else:
                servable = model.servables.get(version)
                if servable is None:
                    raise NotFound(
                        message(
                            f"Servable not found for request: Specific({name}, {version})",
                            expected=f"one of the AVAILABLE versions {sorted(model.servables)}",
                            received=f"version {version}" + (f" (label {label!r})" if label else ""),
                            fix="Request an available version, or wait until this one is AVAILABLE.",
                        )
                    )
            servable.acquire()
            return servable

    @contextlib.contextmanager
    def handle(self, name: str, version: int | None = None, label: str | None = None) -> Iterator[Servable]:
        """`acquire` as a context manager."""
        servable = self.acquire(name, version, label)
        try:
            yield servable
        finally:
            servable.release()

    def knows(self, name: str) -> bool:
        """Whether `name` is a model of the config, or one a reload removed (its status is kept)."""
        return name in self._models or name in self._retired

    def status(self, name: str, version: int | None = None) -> list[VersionStatus]:
        """Version states of a model, newest first (GetModelStatus).

        A request's version label is not passed: TensorFlow Serving's
        `GetModelStatusWithModelSpec` (model_servers/get_model_status_impl.cc)
        reads only the version, and answers every version otherwise, for any
        label, known or not. The version a label points at is in
        GetModelMetadata's `model_spec.version`.

        Raises:
            NotFound: Unknown model or version.
        """
        with self._lock:
            model = self._retired.get(name) if name not in self._models else None
            model = model or self._model(name, f"Could not find any versions of model {echoed(name)}")
            if version is not None:
                found = model.statuses.get(version)
                if found is None:
                    raise NotFound(
                        message(
                            f"Could not find version {version} of model {name}",
                            expected=f"one of the known versions {sorted(model.statuses)}",
                            received=f"version {version}",
                            fix="Check the version number.",
                        )
                    )
                return [found]
            if not model.statuses:
                raise NotFound(
                    message(
                        f"Could not find any versions of model {name}",
                        expected=f"numeric version directories under {model.config.base_path}",
                        received="none found yet",
                        fix="Export a SavedModel into <base_path>/<version>/.",
                    )
                )
            return [model.statuses[v] for v in sorted(model.statuses, reverse=True)]

    def wait_for(self, name: str, version: int, state: int, timeout: float) -> VersionStatus:
        """Blocks until `version` of `name` reaches `state`; for tests and tools.

        Raises:
            TimeoutError: The state was not reached in time (the last status is
                in the message).
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                model = self._models.get(name) or self._retired.get(name)
                current = model.statuses.get(version) if model else None
                if current is not None and current.state == state:
                    return current
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        message(
                            f"Version {version} of model {name} did not reach {State.Name(state)} in {timeout}s",
                            expected=State.Name(state),
                            received=current.state_name
                            + (f" ({current.error.text})" if current and current.error else "")
                            if current
                            else "no status",
                            fix="Check the server log and the version directory.",
                        )
                    )
                self._changed.wait(min(remaining, 0.5))
