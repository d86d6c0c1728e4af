"""TensorFlow Serving config files, built from its protobufs, written atomically.

Three files configure a model server, each a text-format protobuf:

* the model config (`ModelServerConfig`): which models, where their versions
  live, which versions to serve (`model_version_policy`) and version labels
  such as `stable` and `canary`;
* the batching parameters (`BatchingParameters`);
* the monitoring config (`MonitoringConfig`): where Prometheus scrapes.

Both `tensorflow_model_server` and the embedded server read the same files;
`validate_server_config` refuses what TensorFlow Serving's ServerCore refuses
(duplicate names, relative base paths, platforms other than `tensorflow`).

Example:
    >>> model = model_config("penguins", "/models/penguins",
    ...                      policy=specific_policy([3]), labels={"stable": 3})
    >>> files = write_server_files("/tmp/cfg", server_config(model),
    ...                            batching=batching_parameters())
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from google.protobuf import message as _message
from google.protobuf import text_format
from tensorflow_serving.config import file_system_storage_path_source_pb2

from serving.atomic import atomic_write_text
from serving.errors import InvalidArgument, did_you_mean, message
from serving.protos import (
    model_server_config_pb2,
    monitoring_config_pb2,
    session_bundle_config_pb2,
)

__all__ = [
    "BATCHING_FILE",
    "CANARY_LABEL",
    "MODEL_CONFIG_FILE",
    "MONITORING_FILE",
    "PROMETHEUS_PATH",
    "STABLE_LABEL",
    "BatchingParameters",
    "ConfigError",
    "ModelConfig",
    "ModelServerConfig",
    "MonitoringConfig",
    "ServerFiles",
    "all_policy",
    "batching_parameters",
    "find_model",
    "latest_policy",
    "model_config",
    "monitoring_config",
    "pin_versions",
    "policy_kind",
    "read_text_proto",
    "replace_model",
    "server_config",
    "specific_policy",
    "validate_server_config",
    "write_server_files",
    "write_text_proto",
]

STABLE_LABEL = "stable"
CANARY_LABEL = "canary"
PROMETHEUS_PATH = "/monitoring/prometheus/metrics"
MODEL_CONFIG_FILE = "models.config"
BATCHING_FILE = "batching.config"
MONITORING_FILE = "monitoring.config"

ModelConfig = model_server_config_pb2.ModelConfig
ModelServerConfig = model_server_config_pb2.ModelServerConfig
BatchingParameters = session_bundle_config_pb2.BatchingParameters
MonitoringConfig = monitoring_config_pb2.MonitoringConfig
VersionPolicy = file_system_storage_path_source_pb2.FileSystemStoragePathSourceConfig.ServableVersionPolicy

_M = TypeVar("_M", bound=_message.Message)


class ConfigError(ValueError):
    """A config value or file is invalid."""


def latest_policy(num_versions: int = 1) -> VersionPolicy:
    """Serve the `num_versions` highest versions found on disk."""
    if num_versions < 1:
        raise ConfigError(
            message(
                "Invalid value received for argument `num_versions`",
                expected="an integer >= 1",
                received=f"num_versions={num_versions}",
                fix="Pass 1 to serve only the newest version.",
            )
        )
    policy = VersionPolicy()
    policy.latest.num_versions = num_versions
    return policy


def specific_policy(versions: Iterable[int]) -> VersionPolicy:
    """Serve exactly these versions (those present on disk)."""
    versions = sorted({int(v) for v in versions})
    if not versions or versions[0] < 0:
        raise ConfigError(
            message(
                "Invalid value received for argument `versions`",
                expected="a non-empty list of version numbers >= 0",
                received=f"versions={versions}",
                fix="List the numeric version directories to serve.",
            )
        )
    policy = VersionPolicy()
    policy.specific.versions.extend(versions)
    return policy


def all_policy() -> VersionPolicy:
    """Serve every version found on disk."""
    policy = VersionPolicy()
    policy.all.SetInParent()
    return policy


def policy_kind(policy: VersionPolicy) -> str:
    """Returns 'latest' (the default when unset), 'specific' or 'all'."""
    return policy.WhichOneof("policy_choice") or "latest"


def model_config(
    name: str,
    base_path: str | os.PathLike,
    *,
    policy: VersionPolicy | None = None,
    labels: Mapping[str, int] | None = None,
) -> ModelConfig:
    """Builds one model's entry of the model server config.

    Args:
        name: The model name clients use in `/v1/models/<name>`.
        base_path: The directory holding the numeric version directories
            (made absolute; a URI such as gs://... is kept).
        policy: Which versions to serve; TensorFlow Serving's default (latest 1)
            when None.
        labels: Version labels, e.g. {"stable": 3, "canary": 4}.

    Returns:
        A `ModelConfig` with `model_platform: "tensorflow"`.
    """
    if not name or "/" in name or ":" in name:
        raise ConfigError(
            message(
                "Invalid value received for argument `name`",
                expected="a non-empty model name without '/' or ':'",
                received=f"name={name!r}",
                fix="Use a name such as 'penguins'.",
            )
        )
    path = str(base_path)
    if "://" not in path:  # TF Serving refuses relative base paths: written absolute
        path = os.path.abspath(path)
    config = ModelConfig(name=name, base_path=path, model_platform="tensorflow")
    if policy is not None:
        config.model_version_policy.CopyFrom(policy)
    for label, version in (labels or {}).items():
        config.version_labels[label] = int(version)
    return config


def server_config(*models: ModelConfig) -> ModelServerConfig:
    """Builds a `ModelServerConfig` listing `models` (names must be unique)."""
    names = [m.name for m in models]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(
            message(
                "Duplicate model names in the model server config",
                expected="each model name once",
                received=f"{duplicates} more than once",
                fix="Give each model its own name.",
            )
        )
    config = ModelServerConfig()
    config.model_config_list.config.extend(models)
    return config


def batching_parameters(
    *,
    max_batch_size: int = 32,
    batch_timeout_micros: int = 1000,
    num_batch_threads: int | None = None,
    max_enqueued_batches: int = 100,
    allowed_batch_sizes: Iterable[int] = (),
) -> BatchingParameters:
    """Builds `BatchingParameters` with TensorFlow Serving's knobs, validated.

    Args:
        max_batch_size: Largest batch handed to the model.
        batch_timeout_micros: How long the oldest request may wait for a batch
            to fill before it runs anyway.
        num_batch_threads: Batches run in parallel; the CPU count when None.
        max_enqueued_batches: Queue length in batches; more requests are
            rejected with UNAVAILABLE (HTTP 503).
        allowed_batch_sizes: Batches are padded up to the next of these sizes;
            increasing, the last equal to `max_batch_size`.

    Returns:
        The proto to write with `write_text_proto`.
    """
    threads = num_batch_threads if num_batch_threads is not None else (os.cpu_count() or 1)
    for arg, value in [
        ("max_batch_size", max_batch_size),
        ("num_batch_threads", threads),
        ("max_enqueued_batches", max_enqueued_batches),
    ]:
        if value < 1:
            raise ConfigError(
                message(
                    f"Invalid value received for argument `{arg}`",
                    expected="an integer >= 1",
                    received=f"{arg}={value}",
                    fix=f"Set {arg} to a positive integer.",
                )
            )
    if batch_timeout_micros < 0:
        raise ConfigError(
            message(
                "Invalid value received for argument `batch_timeout_micros`",
                expected="an integer >= 0",
                received=f"batch_timeout_micros={batch_timeout_micros}",
                fix="Use 0 to run batches as soon as a thread is free.",
            )
        )
    allowed = [int(s) for s in allowed_batch_sizes]
    if allowed and (allowed != sorted(set(allowed)) or allowed[-1] != max_batch_size or allowed[0] < 1):
        raise ConfigError(
            message(
                "Invalid value received for argument `allowed_batch_sizes`",
                expected=f"increasing positive sizes ending with max_batch_size={max_batch_size}",
                received=f"allowed_batch_sizes={allowed}",
                fix=f"Use e.g. [8, 16, {max_batch_size}].",
            )
        )
    params = BatchingParameters()
    params.max_batch_size.value = max_batch_size
    params.batch_timeout_micros.value = batch_timeout_micros
    params.num_batch_threads.value = threads
    params.max_enqueued_batches.value = max_enqueued_batches
    params.allowed_batch_sizes.extend(allowed)
    return params


def monitoring_config(path: str = PROMETHEUS_PATH) -> MonitoringConfig:
    """Builds a `MonitoringConfig` exposing Prometheus metrics at `path`."""
    if not path.startswith("/"):
        raise ConfigError(
            message(
                "Invalid value received for argument `path`",
                expected="a URL path starting with '/'",
                received=f"path={path!r}",
                fix=f"Use {PROMETHEUS_PATH!r}.",
            )
        )
    config = MonitoringConfig()
    config.prometheus_config.enable = True
    config.prometheus_config.path = path
    return config


def write_text_proto(path: str | os.PathLike, proto: _message.Message) -> Path:
    """Writes `proto` as a text proto, atomically (temp file, fsync, rename)."""
    return atomic_write_text(path, text_format.MessageToString(proto))


def read_text_proto(path: str | os.PathLike, proto_type: type[_M]) -> _M:
    """Parses a text-proto file into a new `proto_type` message.

    Raises:
        ConfigError: The file is missing or is not a valid `proto_type`.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            message(
                f"Config file {path} does not exist",
                expected=f"a text-format {proto_type.DESCRIPTOR.name} file",
                received="no file",
                fix="Create it with `python -m serving up` or write_server_files().",
            )
        ) from None
    try:
        return text_format.Parse(text, proto_type())
    except text_format.ParseError as err:
        raise ConfigError(
            message(
                f"Invalid protobuf file: '{path}'",
                expected=f"a text-format {proto_type.DESCRIPTOR.name}",
                received=f"a parse error: {err}",
                fix="Fix the line named above.",
            )
        ) from None


_TENSORFLOW_MODEL_TYPE = model_server_config_pb2.ModelType.Value("TENSORFLOW")


def _is_relative(path: str) -> bool:
    """TensorFlow Serving's UriIsRelativePath: no scheme, no host, not absolute."""
    return "://" not in path and not path.startswith("/")


def _check_platform(model: ModelConfig) -> None:
    """ServerCore's GetPlatform and its routes: `tensorflow`, or the deprecated model_type TENSORFLOW."""
    fix = 'Set model_platform: "tensorflow" (and leave the deprecated model_type unset).'
    problem = None
    if model.model_type and model.model_platform:
        problem = (
            "Illegal setting both ModelServerConfig::model_type (deprecated) "
            f"and ModelServerConfig::model_platform, model name is {model.name}"
        )
    elif model.model_type and model.model_type != _TENSORFLOW_MODEL_TYPE:
        problem = f"ModelServerConfig::model_type choice {model.model_type} not supported."
    elif not model.model_type and not model.model_platform:
        problem = (
            "Illegal setting neither ModelServerConfig::model_type (deprecated) "
            f"nor ModelServerConfig::model_platform, model name is {model.name}"
        )
    elif model.model_platform not in ("", "tensorflow"):
        problem = f"Model {model.name} requests unsupported platform {model.model_platform}"
    if problem:
        raise InvalidArgument(
            message(
                problem,
                expected='model_platform: "tensorflow"',
                received=f"model_platform={model.model_platform!r}, model_type={model.model_type}",
                fix=fix,
            )
        )


def _validate_models(config: ModelServerConfig) -> None:
    """ServerCore's ValidateModelConfigList, GetPlatform and route checks (INVALID_ARGUMENT)."""
    names = [m.name for m in config.model_config_list.config]
    for model in config.model_config_list.config:
        if not model.name:
            # TensorFlow Serving takes an empty name, which no request can then name.
            raise InvalidArgument(
                message(
                    "A model in model_config_list has no name",
                    expected="a non-empty name per model",
                    received=f"names {names}",
                    fix="Give each model the name clients use in /v1/models/<name>.",
                )
            )
        if names.count(model.name) > 1:
            raise InvalidArgument(
                message(
                    f"Illegal to list model {model.name} multiple times in config list",
                    expected="unique model names",
                    received=f"{names}",
                    fix="Give each model its own name.",
                )
            )
        if _is_relative(model.base_path):
            raise InvalidArgument(
                message(
                    f"Expected model {model.name} to have an absolute path or URI; got base_path()={model.base_path}",
                    expected="an absolute base_path",
                    received=repr(model.base_path),
                    fix="Write the full path of the folder holding the version folders.",
                )
            )
        _check_platform(model)


def validate_server_config(config: ModelServerConfig, *, reload: bool) -> None:
    """Raises InvalidArgument for a config ServerCore (or HandleReloadConfigRequest) refuses.

    At start an empty config (no `model_config_list`) serves no models, as
    ServerCore; a reload needs a `model_config_list`.
    """
    kind = config.WhichOneof("config")
    if kind == "model_config_list" or (kind is None and not reload):
        _validate_models(config)
        return
    raise InvalidArgument(
        message(
            "ServerModelConfig type not supported by HandleReloadConfigRequest. "
            "Only ModelConfigList is currently supported"
            if reload
            else "Missing custom_model_config_loader in ServerCore Options",
            expected="a ModelServerConfig with model_config_list",
            received=f"{kind or 'an empty config'}",
            fix="Put the models under model_config_list (custom model configs are not implemented).",
        )
    )


def find_model(config: ModelServerConfig, name: str) -> ModelConfig:
    """Returns the config of model `name` (a copy).

    Raises:
        ConfigError: No model has that name.
    """
    for model in config.model_config_list.config:
        if model.name == name:
            copy = ModelConfig()
            copy.CopyFrom(model)
            return copy
    names = [m.name for m in config.model_config_list.config]
    raise ConfigError(
        message(
            f"Model {name!r} is not in the model server config",
            expected=f"one of {names}",
            received=f"{name!r}",
            fix="Check the model name." + did_you_mean(name, names),
        )
    )


def replace_model(config: ModelServerConfig, model: ModelConfig) -> ModelServerConfig:
    """Returns a copy of `config` with the entry named `model.name` replaced."""
    find_model(config, model.name)
    updated = ModelServerConfig()
    updated.CopyFrom(config)
    for entry in updated.model_config_list.config:
        if entry.name == model.name:
            entry.CopyFrom(model)
    return updated


def pin_versions(model: ModelConfig, versions: Iterable[int], labels: Mapping[str, int]) -> ModelConfig:
    """Returns a copy of `model` serving exactly `versions`, with `labels`.

    Labels must point at served versions, as TensorFlow Serving requires.
    """
    versions = sorted({int(v) for v in versions})
    stray = {k: v for k, v in labels.items() if v not in versions}
    if stray:
        raise ConfigError(
            message(
                "Version labels point at versions that are not served",
                expected=f"labels on versions {versions}",
                received=f"{stray}",
                fix="Add those versions to `versions` or drop the labels.",
            )
        )
    pinned = ModelConfig()
    pinned.CopyFrom(model)
    pinned.model_version_policy.CopyFrom(specific_policy(versions))
    pinned.version_labels.clear()
    for label, version in labels.items():
        pinned.version_labels[label] = int(version)
    return pinned


@dataclasses.dataclass(frozen=True)
class ServerFiles:
    """Paths of the config files a model server is started with."""

    model_config: Path
    batching: Path | None
    monitoring: Path


def write_server_files(
    directory: str | os.PathLike,
    config: ModelServerConfig,
    *,
    batching: BatchingParameters | None = None,
    monitoring: MonitoringConfig | None = None,
) -> ServerFiles:
    """Writes the model, batching and monitoring configs into `directory`.

    Args:
        directory: Created if missing.
        config: The model server config.
        batching: Batching parameters; no batching file when None.
        monitoring: Monitoring config; Prometheus at the default path when None.

    Returns:
        The written paths (models.config, batching.config, monitoring.config).
    """
    directory = Path(directory)
    batching_path = None
    if batching is not None:
        batching_path = write_text_proto(directory / BATCHING_FILE, batching)
    return ServerFiles(
        model_config=write_text_proto(directory / MODEL_CONFIG_FILE, config),
        batching=batching_path,
        monitoring=write_text_proto(directory / MONITORING_FILE, monitoring or monitoring_config()),
    )
