"""Deployer: puts a pushed model version in front of TensorFlow Serving, verified.

After the Pusher, it writes the warmup file, loads the new version on the
serving target next to the current `stable` one, waits until it is
AVAILABLE, checks that served predictions equal the trained model's on
sample eval rows, holds p99 latency to a budget, and moves the `stable`
label to it. On any failure `stable` stays where it was, the new version
leaves serving, and the run fails with the reason.

The target is a running server (`url` + the model config file it was
started with, e.g. from `python -m serving up`), or, when `url` is empty, an
embedded server started for the check and stopped after it. Either way the
model config file (`<serving_dir>/<model_name>.config/models.config` by
default) records the verified `stable` version for `tensorflow_model_server
--model_config_file` to serve.

`max_request_mb` (the spec's `deploy.max_request_mb`: rows per request x the
largest encoded image or text) sizes the embedded server's request limits
(`serving.deployment_limits`) and is recorded as `limits.json` beside the model
config file, where `python -m serving up --config-dir` reads it; 0 keeps the
server defaults and removes a `limits.json` an earlier deployment wrote.
Image and text rows work like table rows: the checks send the eval split's
serialized tf.Examples (`serving_default`), in as many requests as the request
size needs, and the warmup file holds as many of them as fit 4 MiB.
"""

import glob
import os
from pathlib import Path
from typing import TypedDict

from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from serving import config as cfg
from serving.deploy import DeployError, deploy_version, expected_predictions
from serving.deployment_limits import LIMITS_FILE, ServerLimits
from serving.rollout import ServingTarget
from serving.server import EmbeddedServer
from serving.server.app import DEFAULT_MAX_REQUEST_BYTES

__all__ = ["Deployer", "DeploymentFailed", "config_dir_for", "record_limits", "sample_examples", "server_limits"]


class DeployerOutputs(TypedDict):
    version: int
    p99_ms: float


class DeploymentFailed(RuntimeError):
    """The new version failed a check and was rolled back."""


def config_dir_for(serving_dir: str, model_name: str) -> str:
    return os.path.join(serving_dir, f"{model_name}.config")


def sample_examples(examples_uri: str, split: str, count: int) -> list:
    """The first `count` serialized tf.Examples of a split."""
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(examples_uri, f"Split-{split}", "*")))
    if not files:
        raise DeploymentFailed(f"no `{split}` examples under {examples_uri} to verify the model with.")
    compression = "GZIP" if files[0].endswith(".gz") else ""
    dataset = tf.data.TFRecordDataset(files, compression_type=compression).take(count)
    return [record.numpy() for record in dataset]


def server_limits(max_request_mb: float):
    """The request limits for `max_request_mb` (None for 0: the server defaults).

    Raises:
        DeploymentFailed: `max_request_mb` is negative or not finite.
    """

    if max_request_mb == 0:
        return None
    try:
        return ServerLimits.for_request_mb(max_request_mb)
    except ValueError as error:
        raise DeploymentFailed(str(error)) from None


def record_limits(config_dir: str, limits) -> None:
    """Writes `limits` to `<config_dir>/limits.json` for `python -m serving up`, or removes the file for None."""

    if limits is not None:
        limits.write(config_dir)
    elif os.path.exists(os.path.join(config_dir, LIMITS_FILE)):
        os.remove(os.path.join(config_dir, LIMITS_FILE))


def _embedded_server(config_dir: str, model_name: str, base_path: str, limits=None):

    config_file = Path(config_dir) / cfg.MODEL_CONFIG_FILE
    if config_file.exists():  # keep what earlier deployments made `stable`
        files = cfg.ServerFiles(config_file, None, Path(config_dir) / cfg.MONITORING_FILE)
    else:
        # First deployment: serve what is on disk (the new version is the newest).
        model = cfg.model_config(model_name, base_path, policy=cfg.latest_policy(1))
        files = cfg.write_server_files(config_dir, cfg.server_config(model))
    sizes = limits.server_options() if limits is not None else {}
    # A config that earlier deployments wrote labels `stable`: as TF Serving, a server starts from labels on versions
    # not yet loaded only with this option.
    server = EmbeddedServer.from_files(
        files,
        rest_port=0,
        grpc_port=0,
        file_system_poll_wait_seconds=0.2,
        allow_version_labels_for_unavailable_models=True,
        **sizes,
    )
    return server.start()


@component
def Deployer(
    model: InputArtifact[standard_artifacts.Model],
    pushed_model: InputArtifact[standard_artifacts.PushedModel],
    examples: InputArtifact[standard_artifacts.Examples],
    model_name: Parameter[str],
    serving_dir: Parameter[str],
    url: Parameter[str] = "",
    config_file: Parameter[str] = "",
    p99_budget_ms: Parameter[float] = 100.0,
    sample_rows: Parameter[int] = 20,
    max_request_mb: Parameter[float] = 0.0,
) -> DeployerOutputs:
    """Deploys the pushed version as `stable`, or rolls back and fails."""

    if not pushed_model.get_int_custom_property("pushed"):
        return {"version": -1, "p99_ms": 0.0}
    version = int(pushed_model.get_string_custom_property("pushed_version"))
    limits = server_limits(max_request_mb)
    rows = sample_examples(examples.uri, "eval", sample_rows)
    expected = expected_predictions(os.path.join(model.uri, "Format-Serving"), rows)
    server = None
    if url:
        target = ServingTarget(url, Path(config_file))
        record_limits(os.path.dirname(os.path.abspath(config_file)), limits)
    else:
        config_dir = config_dir_for(serving_dir, model_name)
        server = _embedded_server(config_dir, model_name, os.path.join(serving_dir, model_name), limits)
        record_limits(config_dir, limits)
        target = ServingTarget.embedded(server)
    # A running server (`url`) may not have been restarted with the declared limits: stay within the default too.
    max_request_bytes = min(
        limits.max_request_bytes if limits else DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_BYTES
    )
    try:
        result = deploy_version(
            target,
            model_name,
            version,
            rows,
            expected,
            p99_budget_ms=p99_budget_ms,
            max_request_bytes=max_request_bytes,
        )
    except DeployError as error:
        raise DeploymentFailed(
            f"version {version} of `{model_name}` failed the `{error.check}` check and was rolled back "
            f"(stable: {error.rolled_back_to}). {error}"
        ) from None
    except ValueError as error:
        if "already 'stable'" not in str(error):
            raise
        return {"version": version, "p99_ms": 0.0}
    finally:
        if server is not None:
            server.stop()
    return {"version": result.version, "p99_ms": round(result.p99_ms, 3)}
