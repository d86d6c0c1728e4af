"""Deploy a pushed model version: load, verify, measure, promote, or roll back.

`deploy_version` is the step a pipeline runs after its Pusher has written
`<base_path>/<name>/<version>/`:

1. write the TensorFlow Serving warmup file from sample rows;
2. load the version next to the current `stable` one (labels untouched);
3. wait until it is AVAILABLE, then label it `canary`;
4. check that the served predictions for the sample rows match the ones the
   trained model gave (within a tolerance);
5. measure p50/p99 latency over a bounded number of single-row requests and
   hold p99 to a budget;
6. move `stable` to it.

Any failure rolls back: `stable` stays on (or returns to) the previous
version, the new version leaves serving, and `DeployError` says why. Clients
that must only ever see verified models call `/v1/models/<name>/labels/stable`;
un-labelled requests go to the highest loaded version, as in TensorFlow Serving.

Example:
    >>> target = ServingTarget("http://127.0.0.1:8501", Path("cfg/models.config"), "127.0.0.1:8500")
    >>> result = deploy_version(target, "penguins", 7, examples, expected, p99_budget_ms=50)
    >>> result.p99_ms
    3.2
"""

from __future__ import annotations

import base64
import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from serving.client import RestClient, ServerError
from serving.config import (
    CANARY_LABEL,
    STABLE_LABEL,
    find_model,
    pin_versions,
    replace_model,
)
from serving.errors import message
from serving.rollout import (
    ServingTarget,
    apply_config,
    available_versions,
    read_config,
    wait_for_label,
    wait_for_state,
)
from serving.savedmodel import DEFAULT_SIGNATURE
from serving.server.app import DEFAULT_MAX_REQUEST_BYTES
from serving.server.model.servable import Servable
from serving.server.wire.json_outputs import json_outputs
from serving.server.wire.tensor_checks import JsonFormat
from serving.warmup_file import write_warmup_file

__all__ = [
    "DeployError",
    "DeployResult",
    "ServingTarget",
    "deploy_version",
    "expected_predictions",
    "predictions_match",
    "request_batches",
]


@dataclasses.dataclass(frozen=True)
class DeployResult:
    """A successful deployment.

    Attributes:
        model_name: The model.
        version: The version now labelled `stable`.
        previous_version: The version `stable` pointed at before, if any.
        p50_ms: Median single-row predict latency measured against the server.
        p99_ms: 99th percentile of the same.
        latency_requests: How many requests the latency was measured over.
        checks: The checks that passed, in order.
    """

    model_name: str
    version: int
    previous_version: int | None
    p50_ms: float
    p99_ms: float
    latency_requests: int
    checks: tuple[str, ...]


class DeployError(RuntimeError):
    """A deployment failed and was rolled back.

    Attributes:
        check: The check that failed ("load", "predictions", "latency", ...).
        version: The version that was being deployed.
        rolled_back_to: The version `stable` points at now, or None.
    """

    def __init__(self, text: str, *, check: str, version: int, rolled_back_to: int | None) -> None:
        super().__init__(text)
        self.check = check
        self.version = version
        self.rolled_back_to = rolled_back_to


def _leaves(value: Any) -> list:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, np.ndarray):
        return _leaves(value.tolist())
    return [value]


def predictions_match(served: Sequence[Any], expected: Sequence[Any], *, rtol: float, atol: float) -> str | None:
    """Compares row-format predictions; returns None or what differs first.

    Rows are compared leaf by leaf (dict outputs by key): numbers within
    `atol + rtol * |expected|`, anything else exactly.
    """
    if len(served) != len(expected):
        return f"{len(served)} served rows for {len(expected)} expected"
    for row, (got, want) in enumerate(zip(served, expected)):
        if isinstance(want, dict) and isinstance(got, dict) and sorted(got) != sorted(want):
            return f"row {row}: outputs {sorted(got)} instead of {sorted(want)}"
        got_leaves, want_leaves = _leaves(got), _leaves(want)
        if len(got_leaves) != len(want_leaves):
            return f"row {row}: {len(got_leaves)} values instead of {len(want_leaves)}"
        for g, w in zip(got_leaves, want_leaves):
            if isinstance(w, bytes):
                w = w.decode("utf-8", "replace")
            numeric = isinstance(g, (int, float)) and isinstance(w, (int, float, np.number))
            if numeric and not (
                math.isclose(g, float(w), rel_tol=rtol, abs_tol=atol) or (math.isnan(g) and math.isnan(float(w)))
            ):
                return f"row {row}: served {g!r}, expected {w!r} (rtol={rtol}, atol={atol})"
            if not numeric and g != w:
                return f"row {row}: served {g!r}, expected {w!r}"
    return None


def _instances(examples: Sequence[bytes]) -> list[dict[str, str]]:
    return [{"b64": base64.b64encode(e).decode("ascii")} for e in examples]


# A predict body around its instances, and the JSON around one base64 value (`{"b64": ""}, `).
_BODY_BYTES = 256
_INSTANCE_BYTES = 16


def request_batches(examples: Sequence[bytes], max_request_bytes: int) -> list[list[bytes]]:
    """Splits rows into consecutive batches whose base64 REST bodies fit `max_request_bytes`.

    Image rows are large: 20 eval photos of 1 MiB are a 27 MiB body, over the
    server's limit, so the predictions check sends them in several requests.
    A row too large for a body of its own is still sent alone; the server's
    answer (413) then names the limit.

    Args:
        examples: Serialized rows, in order.
        max_request_bytes: The server's largest request body.

    Returns:
        The rows in order, in non-empty batches.
    """
    batches: list[list[bytes]] = []
    size = max_request_bytes  # forces a new batch for the first row
    for example in examples:
        cost = 4 * math.ceil(len(example) / 3) + _INSTANCE_BYTES
        if size + cost > max_request_bytes:
            batches.append([])
            size = _BODY_BYTES
        batches[-1].append(example)
        size += cost
    return batches


def _measure(
    target: ServingTarget, name: str, version: int, examples: Sequence[bytes], signature_name: str, requests: int
) -> list[float]:
    bodies = [{"signature_name": signature_name, "instances": row} for row in (_instances([e]) for e in examples)]
    timings = []
    with RestClient(target.rest_url) as client:
        for i in range(min(5, requests)):  # connection set-up and first-call costs are not latency
            client.predict(name, bodies[i % len(bodies)], version=version)
        for i in range(requests):
            started = time.perf_counter()
            client.predict(name, bodies[i % len(bodies)], version=version)
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def deploy_version(
    target: ServingTarget,
    model_name: str,
    version: int,
    examples: Sequence[bytes],
    expected: Sequence[Any],
    *,
    p99_budget_ms: float,
    signature_name: str = DEFAULT_SIGNATURE,
    input_name: str | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    latency_requests: int = 200,
    timeout_s: float = 120.0,
    write_warmup: bool = True,
    keep_previous_loaded: bool = True,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> DeployResult:
    """Serves `version` as `stable` after checking it, or rolls back.

    Args:
        target: The running server and its model config file.
        model_name: The model name in the config.
        version: The version directory just pushed under the model's base path.
        examples: Sample rows as serialized tf.Example strings.
        expected: What the trained model predicted for each row, in the REST
            row format of `signature_name` (a value, list, or dict of outputs
            per row), e.g. from `expected_predictions()`.
        p99_budget_ms: Largest acceptable p99 latency of a single-row request.
        signature_name: The signature taking serialized tf.Examples.
        input_name: Its input; found from the SignatureDef when None.
        rtol: Relative tolerance for numeric predictions.
        atol: Absolute tolerance for numeric predictions.
        latency_requests: Requests to measure latency over (bounded cost).
        timeout_s: Seconds to wait for each load/unload/label change.
        write_warmup: Write `<version>/assets.extra/tf_serving_warmup_requests`.
        keep_previous_loaded: Keep the previous version loaded (not labelled)
            after promotion, so a rollback is instant.
        max_request_bytes: The server's largest request body: the
            predictions check splits the rows into requests that fit
            (`request_batches`), as image rows may not fit in one.

    Returns:
        A `DeployResult` with the measured latency.

    Raises:
        DeployError: A check failed; the deployment was rolled back.
        ValueError: Bad arguments; nothing was changed.
    """
    if not examples or len(examples) != len(expected):
        raise ValueError(
            message(
                "Invalid sample rows for deploy_version",
                expected="a non-empty list of examples and one expected prediction per example",
                received=f"{len(examples)} examples, {len(expected)} expected predictions",
                fix="Pass the rows and the trained model's predictions for them.",
            )
        )
    if p99_budget_ms <= 0 or latency_requests < 1:
        raise ValueError(
            message(
                "Invalid latency settings for deploy_version",
                expected="p99_budget_ms > 0 and latency_requests >= 1",
                received=f"p99_budget_ms={p99_budget_ms}, latency_requests={latency_requests}",
                fix="Pass a positive budget in milliseconds.",
            )
        )
    config = read_config(target)
    model = find_model(config, model_name)
    version_dir = Path(model.base_path) / str(version)
    if not (version_dir / "saved_model.pb").is_file():
        raise ValueError(
            message(
                f"Version {version} of model {model_name!r} is not on disk",
                expected=f"a SavedModel in {version_dir}",
                received="no saved_model.pb",
                fix="Run the Pusher first, or pass the version it pushed.",
            )
        )
    previous = model.version_labels.get(STABLE_LABEL)
    if previous is None:  # first deployment with labels: keep what serves now
        serving_now = [v for v in available_versions(target, model_name) if v != version]
        previous = serving_now[-1] if serving_now else None
    if previous == version:
        raise ValueError(
            message(
                f"Version {version} of model {model_name!r} is already '{STABLE_LABEL}'",
                expected="a newly pushed version",
                received=f"version {version}",
                fix="Push a new version; use serving.rollout.rollback to go back.",
            )
        )
    kept = [previous] if previous is not None else []
    stable = {STABLE_LABEL: previous} if previous is not None else {}
    checks: list[str] = []

    def fail(check: str, reason: str) -> DeployError:
        restore = pin_versions(model, kept, stable) if kept else _serve_nothing(model)
        apply_config(target, replace_model(read_config(target), restore))
        wait_for_state(target, model_name, version, {"END", "UNKNOWN"}, timeout_s)
        return DeployError(
            message(
                f"Deploying version {version} of model {model_name!r} failed the {check} check; rolled back"
                + (f" to version {previous}" if previous is not None else ""),
                expected="all checks to pass",
                received=reason,
                fix="See the reason; fix the model or the budget and push a new version.",
            ),
            check=check,
            version=version,
            rolled_back_to=previous,
        )

    if write_warmup:
        write_warmup_file(
            version_dir, examples, model_name=model_name, signature_name=signature_name, input_name=input_name
        )
        checks.append("warmup_written")
    try:
        apply_config(target, replace_model(read_config(target), pin_versions(model, kept + [version], stable)))
        wait_for_state(target, model_name, version, {"AVAILABLE"}, timeout_s)
        apply_config(
            target,
            replace_model(
                read_config(target), pin_versions(model, kept + [version], {**stable, CANARY_LABEL: version})
            ),
        )
        wait_for_label(target, model_name, CANARY_LABEL, version, timeout_s)
    except (TimeoutError, ServerError) as err:
        raise fail("load", str(err)) from None
    checks.append("available")

    try:
        served = []
        with RestClient(target.rest_url) as client:
            for batch in request_batches(examples, max_request_bytes):
                body = {"signature_name": signature_name, "instances": _instances(batch)}
                served.extend(client.predict(model_name, body, label=CANARY_LABEL)["predictions"])
    except (ServerError, KeyError, OSError) as err:
        raise fail("predictions", f"the canary did not answer: {err}") from None
    mismatch = predictions_match(served, expected, rtol=rtol, atol=atol)
    if mismatch:
        raise fail("predictions", mismatch)
    checks.append("predictions")

    try:
        timings = _measure(target, model_name, version, examples, signature_name, latency_requests)
    except (ServerError, OSError) as err:
        raise fail("latency", f"a latency request failed: {err}") from None
    p50, p99 = (float(np.percentile(timings, q)) for q in (50, 99))
    if p99 > p99_budget_ms:
        raise fail("latency", f"p99 {p99:.2f} ms over {len(timings)} requests > budget {p99_budget_ms} ms")
    checks.append("latency")

    served_versions = kept + [version] if keep_previous_loaded else [version]
    try:
        apply_config(
            target, replace_model(read_config(target), pin_versions(model, served_versions, {STABLE_LABEL: version}))
        )
        wait_for_label(target, model_name, STABLE_LABEL, version, timeout_s)
    except (TimeoutError, ServerError) as err:
        raise fail("promote", str(err)) from None
    checks.append("promoted")
    return DeployResult(model_name, version, previous, round(p50, 3), round(p99, 3), len(timings), tuple(checks))


def _serve_nothing(model):
    """A copy of `model` that serves no version (first deployment failed)."""
    empty = type(model)()
    empty.CopyFrom(model)
    empty.model_version_policy.specific.SetInParent()
    del empty.model_version_policy.specific.versions[:]
    empty.version_labels.clear()
    return empty


def expected_predictions(
    export_dir: str | Path,
    examples: Sequence[bytes],
    *,
    signature_name: str = DEFAULT_SIGNATURE,
    input_name: str | None = None,
) -> list[Any]:
    """Runs a SavedModel in-process and returns its REST row-format predictions.

    Use it to get `expected` for `deploy_version` from the exported model
    itself (the trained model's own answers for the sample rows).
    """
    servable = Servable.load("expected", 0, Path(export_dir))
    signature = servable.signature(signature_name)
    alias = input_name or next(a for a, spec in signature.inputs.items() if spec.dtype == tf.string)
    outputs = signature.run({alias: np.array(list(examples), dtype=object)})
    return json_outputs(outputs, JsonFormat.ROW)["predictions"]
