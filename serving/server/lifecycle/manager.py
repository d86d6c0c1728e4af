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

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from serving.config import ConfigError, read_text_proto, validate_server_config
from serving.errors import (
    ServingError,
    message,
)
from serving.protos import model_server_config_pb2
from serving.server.lifecycle.lookups import VersionLookups
from serving.server.lifecycle.versions import (
    ServedModel,
    State,
    VersionStatus,
    aspired_versions,
    folder_contents,
    load_error,
    scan_base_path,
    stale_versions,
)
from serving.server.model.servable import Servable

__all__ = ["ModelManager", "ModelServerConfig", "ModelsUnavailable"]


log = logging.getLogger(__name__)
ModelServerConfig = model_server_config_pb2.ModelServerConfig


class ModelsUnavailable(ServingError):
    """New models of a reload did not become AVAILABLE (TensorFlow Serving: UNKNOWN)."""

    code = grpc.StatusCode.UNKNOWN


class ModelManager(VersionLookups):
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
        self._models = {m.name: ServedModel(m) for m in config.model_config_list.config}
        # Models a reload removed: their END states stay visible in GetModelStatus,
        # as in TensorFlow Serving's ServableStateMonitor.
        self._retired: dict[str, ServedModel] = {}
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

    def _load_new_models(self, added: list[ServedModel]) -> None:
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

    def _readded(self, config: model_server_config_pb2.ModelConfig) -> ServedModel:
        """A model new to the config; one removed earlier keeps its old versions' END states."""
        model = ServedModel(config)
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
                scan_base_path(missing, missing.config)  # logs it, once
                return
            for model in models:
                self._sync_model(model)

    def _set_status(self, model: ServedModel, status: VersionStatus) -> None:
        with self._lock:
            model.statuses[status.version] = status
            self._changed.notify_all()

    def _sync_model(self, model: ServedModel) -> None:
        with self._lock:
            config = model.config
        on_disk = scan_base_path(model, config)
        if on_disk is None:
            return
        aspired = aspired_versions(config, list(on_disk))
        for version in sorted(aspired, reverse=True):  # the newest first, as TF Serving
            with self._lock:
                skip = version in model.servables
                out_of_retries = model.failures.get(version, 0) > self._max_load_retries
            if skip:
                continue
            contents = folder_contents(on_disk[version])
            if out_of_retries and contents == model.failed_contents.get(version):
                continue  # unchanged since its last failed load: tried again once it changes
            self._load(model, config, on_disk[version], version, contents)
        with self._lock:
            if model is not self._models.get(config.name):
                stale = sorted(model.servables)  # removed by a reload during the load: nothing is aspired
            elif model.config is not config:
                return  # changed by a reload meanwhile: the next poll decides
            else:
                stale = stale_versions(set(model.servables), set(aspired))
        for version in stale:
            self._unload(model, version)

    def _load(
        self,
        model: ServedModel,
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
            error = load_error(err, config.name, version, path)
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

    def _unload(self, model: ServedModel, version: int) -> None:
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
