"""Which model versions are served: file-system polling, version policy, labels.

The manager plays the part of TensorFlow Serving's ServerCore:

* every `poll_seconds` it lists `<base_path>/<version>` directories (numeric
  names, parsed as integers as TensorFlow Serving does, so `00000123` is
  version 123 loaded from `00000123/`; and only once `saved_model.pb` is
  there, so `.tmp-*` or half-copied exports are ignored, or `export.meta`,
  the SessionBundle format, which then fails to load visibly), picks the
  versions the policy wants (latest N, specific, all), loads new ones and
  unloads the others (newest first); a base path that is missing changes
  nothing (the loaded versions keep serving, an error is logged);
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
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import grpc
from tensorflow_serving.apis import get_model_status_pb2

from serving.config import ConfigError, policy_kind, read_text_proto, validate_server_config
from serving.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServingError,
    did_you_mean,
    message,
)
from serving.protos import model_server_config_pb2
from serving.server.servable import Servable

__all__ = ["MAX_VERSION", "ModelManager", "ModelsUnavailable", "State", "VersionStatus", "versions_on_disk"]

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
        self.last_warning = ""  # what the poller last logged about this model, to log each finding once


# A version directory counts once one of these is in it. `export.meta` is a
# SessionBundle (TF Serving's own test model bad_half_plus_two): TensorFlow
# Serving tries it and reports the failed load, so do we.
_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt", "export.meta")


# A version is an int64 (ModelSpec, SimpleAtoi of a folder name): a larger
# number is not a version (and could not be reported in GetModelStatus).
MAX_VERSION = 2**63 - 1


def versions_on_disk(base_path: str) -> dict[int, Path]:
    """Version number to its directory, as TensorFlow Serving parses them.

    Names are parsed as integers (`00000123` is version 123); numbers beyond
    int64 are not versions. Of two directories with the same number (`123`
    and `0123`), the one with the longer name is used and the other is logged
    and ignored.
    """
    try:
        entries = sorted(os.scandir(base_path), key=lambda e: (len(e.name), e.name))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[int, Path] = {}
    for entry in entries:
        if not (
            entry.name.isascii()
            and entry.name.isdigit()
            and int(entry.name) <= MAX_VERSION
            and entry.is_dir()
            and any((Path(entry.path) / f).is_file() for f in _MODEL_FILES)
        ):
            continue
        version = int(entry.name)
        if version in found:
            log.warning(
                "Duplicate version directories detected. Version %d will be loaded from %s, %s will be ignored.",
                version,
                entry.path,
                found[version],
            )
        found[version] = Path(entry.path)
    return dict(sorted(found.items()))


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
        config_path: If set with `config_poll_seconds` > 0, the file is re-read
            when it changes (TensorFlow Serving's `--model_config_file_poll_wait_seconds`).
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
        self._config_mtime = config_path.stat().st_mtime_ns if config_path and config_path.exists() else None
        self._unload_timeout = unload_timeout
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._poll_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        """Loads the initial versions, checks labels, then starts polling."""
        self.poll_once()
        with self._lock:
            for model in self._models.values():
                self._check_labels(model.config, model, previous_labels={})
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
                self._reload_if_file_changed()
            try:
                self.poll_once()
            except Exception:
                log.exception("Model poll failed")

    def _reload_if_file_changed(self) -> None:
        try:
            mtime = self._config_path.stat().st_mtime_ns
            if mtime == self._config_mtime:
                return
            self._config_mtime = mtime
            config = read_text_proto(self._config_path, ModelServerConfig)
        except (OSError, ConfigError) as err:
            log.error("Failed to read ModelServerConfig file: %s", err)
            return
        try:
            self.reload(config)
            log.info("Reloaded model config from %s", self._config_path)
        except ServingError as err:  # TensorFlow Serving's words, then ours
            log.error("PollFilesystemAndReloadConfig failed to ReloadConfig: %s (file %s)", err, self._config_path)

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
                model.config = model_config
                model.failures.clear()
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
        """Brings every model to its aspired versions (loads, then unloads)."""
        with self._poll_lock:
            with self._lock:
                models = list(self._models.values())
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

    def _scan(self, model: _Model, config: model_server_config_pb2.ModelConfig) -> dict[int, Path] | None:
        """The version folders of `config`, or None when its base path is missing (then nothing changes)."""
        if not os.path.isdir(config.base_path):
            # TensorFlow Serving's FileSystemStoragePathSource: an error, and no
            # aspired-versions update, so the loaded versions keep serving.
            self._note(
                model,
                logging.ERROR,
                "FileSystemStoragePathSource encountered a filesystem access error: Could not find base path %s "
                "for servable %s; the versions already loaded keep serving until it is back.",
                config.base_path,
                config.name,
            )
            return None
        on_disk = versions_on_disk(config.base_path)
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
                skip = version in model.servables or model.failures.get(version, 0) > self._max_load_retries
            if not skip:
                self._load(model, config, on_disk[version], version)
        with self._lock:
            if model is not self._models.get(config.name):
                stale = sorted(model.servables)  # removed by a reload during the load: nothing is aspired
            elif model.config is not config:
                return  # changed by a reload meanwhile: the next poll decides
            else:
                stale = _stale_versions(set(model.servables), set(aspired))
        for version in stale:
            self._unload(model, version)

    def _load(self, model: _Model, config: model_server_config_pb2.ModelConfig, path: Path, version: int) -> None:
        self._set_status(model, VersionStatus(version, State.LOADING))
        started = time.monotonic()
        try:
            servable = Servable.load(config.name, version, path)
            self._prepare(servable)
        except Exception as err:  # noqa: BLE001 - any load error is reported in the status
            with self._lock:
                model.failures[version] = model.failures.get(version, 0) + 1
            error = (
                err
                if isinstance(err, ServingError)
                else FailedPrecondition(
                    f"Failed to load servable version {version} of model {config.name} from {path}: "
                    f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                )
            )
            log.error("%s", error)
            self._set_status(model, VersionStatus(version, State.END, error))
            return
        with self._lock:
            model.servables[version] = servable
            model.statuses[version] = VersionStatus(version, State.AVAILABLE)
            model.failures.pop(version, None)
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
                    received=f"model name {name!r}",
                    fix="Check the model name in the request." + did_you_mean(name, self._models),
                )
            )
        return model

    def _label_version(self, name: str, label: str) -> int:
        """The version `label` points at; as ServerCore, checked before the model itself (INVALID_ARGUMENT)."""
        model = self._models.get(name)
        labels = dict(model.config.version_labels) if model is not None else {}
        if label not in labels:
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
            request = f"Latest({name})" if version is None else f"Specific({name}, {version})"
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
                            fix="Fix or replace the version directory, then reload the config "
                            "(failed versions are retried max_num_load_retries times).",
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

    def status(self, name: str, version: int | None = None, label: str | None = None) -> list[VersionStatus]:
        """Version states of a model, newest first (GetModelStatus).

        A label is resolved to its version (TensorFlow Serving ignores it and
        answers every version).

        Raises:
            NotFound: Unknown model or version.
            InvalidArgument: Unknown label.
        """
        with self._lock:
            model = self._retired.get(name) if name not in self._models else None
            model = model or self._model(name, f"Could not find any versions of model {name}")
            if label is not None:  # TensorFlow Serving ignores the label here and answers every version
                version = self._label_version(name, label)
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
