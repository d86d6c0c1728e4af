"""Everything about TensorFlow Serving: configs, an embedded server, deployment.

Public API (imported lazily, so `python -m serving status` does not load
TensorFlow):

    deploy_version, DeployResult, DeployError, expected_predictions  (serving.deploy)
    ServingTarget, rollback, RollbackResult                          (serving.rollout)
    write_warmup_file                                                (serving.warmup_file)
    EmbeddedServer, ServerOptions                                    (serving.server)
    model_config, server_config, batching_parameters,
    monitoring_config, write_server_files                            (serving.config)

`serving` never imports `pipelines` or `components`.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "DeployError",
    "DeployResult",
    "EmbeddedServer",
    "RollbackResult",
    "ServerOptions",
    "ServingTarget",
    "batching_parameters",
    "deploy_version",
    "expected_predictions",
    "model_config",
    "monitoring_config",
    "rollback",
    "server_config",
    "write_server_files",
    "write_warmup_file",
]

_HOME = {
    "DeployError": "serving.deploy",
    "DeployResult": "serving.deploy",
    "deploy_version": "serving.deploy",
    "expected_predictions": "serving.deploy",
    "ServingTarget": "serving.rollout",
    "RollbackResult": "serving.rollout",
    "rollback": "serving.rollout",
    "write_warmup_file": "serving.warmup_file",
    "EmbeddedServer": "serving.server",
    "ServerOptions": "serving.server",
    "model_config": "serving.config",
    "server_config": "serving.config",
    "batching_parameters": "serving.config",
    "monitoring_config": "serving.config",
    "write_server_files": "serving.config",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'serving' has no attribute {name!r}; public names: {', '.join(__all__)}")
    return getattr(importlib.import_module(_HOME[name]), name)
