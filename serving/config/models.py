"""The model config (`ModelServerConfig`): models, their version policies and labels, checked as
TensorFlow Serving's ServerCore checks them (duplicate names, relative base paths, platforms
other than `tensorflow`), and edits of it (`find_model`, `replace_model`, `pin_versions`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from tensorflow_serving.config import file_system_storage_path_source_pb2

from serving.config.text_proto import ConfigError
from serving.errors import InvalidArgument, did_you_mean, message
from serving.protos import (
    model_server_config_pb2,
)

__all__ = [
    "CANARY_LABEL",
    "ModelConfig",
    "ModelServerConfig",
    "STABLE_LABEL",
    "VersionPolicy",
    "all_policy",
    "find_model",
    "latest_policy",
    "model_config",
    "pin_versions",
    "policy_kind",
    "replace_model",
    "server_config",
    "specific_policy",
    "validate_server_config",
]

STABLE_LABEL = "stable"
CANARY_LABEL = "canary"


ModelConfig = model_server_config_pb2.ModelConfig
ModelServerConfig = model_server_config_pb2.ModelServerConfig


VersionPolicy = file_system_storage_path_source_pb2.FileSystemStoragePathSourceConfig.ServableVersionPolicy


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
