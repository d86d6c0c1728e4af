"""How a request finds its servable: model name, version or label, and the rules for labels.

`VersionLookups` is the request-side half of `ModelManager` (which inherits it): it reads the
manager's `_models`, `_retired`, `_lock` and `_changed` and the label flags, and never loads or
unloads anything.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping

from serving.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    did_you_mean,
    echoed,
    message,
)
from serving.protos import model_server_config_pb2
from serving.server.lifecycle.versions import ServedModel, State, VersionStatus
from serving.server.model.servable import Servable

__all__ = ["VersionLookups"]


class VersionLookups:
    """Request-side lookups of `ModelManager`: acquire, handle, status, wait_for, label checks."""

    # Set by ModelManager.__init__.
    _models: dict[str, ServedModel]
    _retired: dict[str, ServedModel]
    _lock: contextlib.AbstractContextManager  # a threading.RLock
    _changed: threading.Condition
    _allow_unavailable_labels: bool
    _force_any_labels: bool

    def _check_labels(
        self,
        config: model_server_config_pb2.ModelConfig,
        current: ServedModel | None,
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

    # -- requests ------------------------------------------------------------
    def _model(self, name: str, what: str) -> ServedModel:
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
            missing = "any versions" if version is None else f"version {version}"  # get_model_status_impl.cc
            model = model or self._model(name, f"Could not find {missing} of model {echoed(name)}")
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
