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

The package's modules: `models` (models, policies, labels, validation), `server_files`
(the three files, batching and monitoring protos), `text_proto` (reading/writing text protos,
`ConfigError`). Every public name is importable from `serving.config`.
"""

from __future__ import annotations

from serving.config.models import (
    CANARY_LABEL,
    STABLE_LABEL,
    ModelConfig,
    ModelServerConfig,
    VersionPolicy,
    all_policy,
    find_model,
    latest_policy,
    model_config,
    pin_versions,
    policy_kind,
    replace_model,
    server_config,
    specific_policy,
    validate_server_config,
)
from serving.config.server_files import (
    BATCHING_FILE,
    MODEL_CONFIG_FILE,
    MONITORING_FILE,
    PROMETHEUS_PATH,
    BatchingParameters,
    MonitoringConfig,
    ServerFiles,
    batching_parameters,
    monitoring_config,
    write_server_files,
)
from serving.config.text_proto import ConfigError, read_text_proto, write_text_proto

__all__ = [
    "BATCHING_FILE",
    "BatchingParameters",
    "CANARY_LABEL",
    "ConfigError",
    "MODEL_CONFIG_FILE",
    "MONITORING_FILE",
    "ModelConfig",
    "ModelServerConfig",
    "MonitoringConfig",
    "PROMETHEUS_PATH",
    "STABLE_LABEL",
    "VersionPolicy",
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
