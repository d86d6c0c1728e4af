"""deploy_version and rollback against real embedded servers."""

from __future__ import annotations

import pytest
from serving_helpers import MODEL, example, http, logit, probability, push

from serving import config as cfg
from serving.deploy import DeployError, deploy_version, expected_predictions, predictions_match
from serving.rollout import RollbackError, ServingTarget, rollback, wait_for_label
from serving.server.lifecycle.versions import State
from serving.warmup_file import read_warmup_file, warmup_path

ROWS = [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 0.5, 2.0]]
EXAMPLES = [example(x) for x in ROWS]


@pytest.fixture
def pinned(make_server, model_dir):
    """A server serving version 1 as `stable`, pinned (specific policy)."""
    return make_server(
        model_dir, policy=cfg.specific_policy([1]), labels={cfg.STABLE_LABEL: 1}, allow_config_reload=True
    )


def _labels_on_disk(server) -> tuple[list[int], dict[str, int]]:
    model = cfg.find_model(cfg.read_text_proto(server.config_path, cfg.ModelServerConfig), MODEL)
    return list(model.model_version_policy.specific.versions), dict(model.version_labels)


def _stable_logit(server) -> float:
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}/labels/stable:predict",
        {"signature_name": "serving_raw", "instances": [ROWS[0]]},
    )
    assert status == 200, body
    return body["predictions"][0]["logit"]


def _states(server) -> dict[int, str]:
    _, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}")
    return {int(s["version"]): s["state"] for s in body["model_version_status"]}


def test_deploy_over_grpc_promotes_a_verified_version(pinned, model_dir, exports):
    push(model_dir, 2, exports[2])
    target = ServingTarget(pinned.rest_url, pinned.config_path, pinned.grpc_address)  # reload over gRPC
    result = deploy_version(
        target,
        MODEL,
        2,
        EXAMPLES,
        expected_predictions(exports[2], EXAMPLES),
        p99_budget_ms=10_000,
        latency_requests=50,
    )
    assert (result.version, result.previous_version, result.latency_requests) == (2, 1, 50)
    assert result.checks == ("warmup_written", "available", "predictions", "latency", "promoted")
    assert 0 < result.p50_ms <= result.p99_ms <= 1000
    assert _stable_logit(pinned) == pytest.approx(logit(2, ROWS[0]), rel=1e-6)
    assert _labels_on_disk(pinned) == ([1, 2], {"stable": 2})
    assert len(read_warmup_file(warmup_path(model_dir / "2"))) == len(EXAMPLES)


@pytest.mark.parametrize(
    ("case", "version", "kwargs", "check", "reason"),
    [
        ("wrong predictions", 3, {"expected_from": 1}, "predictions", "row 0: served"),
        ("latency over budget", 2, {"p99_budget_ms": 0.001}, "latency", "> budget 0.001 ms"),
        ("broken export", 4, {}, "load", "failed to load"),
    ],
    ids=["wrong predictions", "latency over budget", "broken export"],
)
def test_failed_deploy_rolls_back_and_says_why(pinned, model_dir, exports, case, version, kwargs, check, reason):
    if version == 4:
        push(model_dir, 4, exports[1])
        (model_dir / "4" / "saved_model.pb").write_bytes(b"not a SavedModel")
    else:
        push(model_dir, version, exports[version])
    expected_from = exports[kwargs.pop("expected_from", min(version, 3))]
    with pytest.raises(DeployError) as caught:
        deploy_version(
            ServingTarget.embedded(pinned),
            MODEL,
            version,
            EXAMPLES,
            expected_predictions(expected_from, EXAMPLES),
            write_warmup=version != 4,
            latency_requests=20,
            timeout_s=30,
            **{"p99_budget_ms": 10_000, **kwargs},
        )
    error = caught.value
    assert (error.check, error.version, error.rolled_back_to) == (check, version, 1)
    assert reason in str(error) and "rolled back to version 1" in str(error)
    assert _stable_logit(pinned) == pytest.approx(logit(1, ROWS[0]), rel=1e-6)
    assert _states(pinned)[1] == "AVAILABLE" and _states(pinned)[version] == "END"
    assert _labels_on_disk(pinned) == ([1], {"stable": 1})


def test_first_deploy_keeps_the_unlabelled_version_on_failure(make_server, model_dir, exports):
    server = make_server(model_dir, policy=cfg.specific_policy([1]))  # serving 1, no labels yet
    push(model_dir, 3, exports[3])
    with pytest.raises(DeployError) as caught:
        deploy_version(
            ServingTarget.embedded(server),
            MODEL,
            3,
            EXAMPLES,
            expected_predictions(exports[1], EXAMPLES),
            p99_budget_ms=10_000,
            timeout_s=30,
        )
    assert caught.value.rolled_back_to == 1
    assert _stable_logit(server) == pytest.approx(logit(1, ROWS[0]), rel=1e-6)


def test_rollback_returns_stable_to_previous_version_and_unloads_current(pinned, model_dir, exports):
    push(model_dir, 2, exports[2])
    target = ServingTarget.embedded(pinned)
    deploy_version(
        target,
        MODEL,
        2,
        EXAMPLES,
        expected_predictions(exports[2], EXAMPLES),
        p99_budget_ms=10_000,
        latency_requests=10,
        keep_previous_loaded=False,
    )
    assert _states(pinned) == {2: "AVAILABLE", 1: "END"}

    result = rollback(target, MODEL, timeout=30)
    assert (result.from_version, result.to_version) == (2, 1)
    assert _stable_logit(pinned) == pytest.approx(logit(1, ROWS[0]), rel=1e-6)
    assert _states(pinned)[2] == "END"
    assert _labels_on_disk(pinned) == ([1], {"stable": 1})


def test_rollback_without_an_earlier_version_is_refused(pinned):
    with pytest.raises(RollbackError, match="No version to roll model 'lin' back to"):
        rollback(ServingTarget.embedded(pinned), MODEL, timeout=5)


def test_deploy_rejects_a_version_that_is_not_on_disk(pinned):
    with pytest.raises(ValueError, match="Version 9 of model 'lin' is not on disk"):
        deploy_version(ServingTarget.embedded(pinned), MODEL, 9, EXAMPLES, [0.5] * 3, p99_budget_ms=10)


@pytest.mark.parametrize(
    ("served", "expected", "verdict"),
    [
        ([0.5, {"a": 1.0}], [0.5, {"a": 1.0 + 1e-7}], None),
        ([0.5], [0.6], "row 0: served 0.5, expected 0.6 (rtol=0.0001, atol=1e-05)"),
        ([{"a": 1.0}], [{"b": 1.0}], "row 0: outputs ['a'] instead of ['b']"),
        (["cat"], [b"cat"], None),
        ([[1.0, 2.0]], [[1.0]], "row 0: 2 values instead of 1"),
        ([0.5], [0.5, 0.5], "1 served rows for 2 expected"),
    ],
)
def test_predictions_match(served, expected, verdict):
    assert predictions_match(served, expected, rtol=1e-4, atol=1e-5) == verdict


def test_expected_predictions_follow_the_rest_row_format(exports):
    assert expected_predictions(exports[1], EXAMPLES[:1]) == pytest.approx([probability(1, ROWS[0])], rel=1e-6)


def test_waiting_for_a_label_not_yet_in_the_config_times_out_instead_of_failing(pinned):
    """A label the server does not know yet is "not yet" (the server answers 400
    'Unrecognized servable version label', as TF Serving), not a failed rollout."""
    target = ServingTarget(pinned.rest_url, pinned.config_path, pinned.grpc_address)
    with pytest.raises(TimeoutError, match="did not move to version 1"):
        wait_for_label(target, MODEL, cfg.CANARY_LABEL, 1, timeout=0.3)


def test_waiting_for_a_label_reads_the_labelled_version_not_the_newest(make_server, model_dir, exports):
    """GetModelStatus ignores a label (TF Serving's get_model_status_impl.cc: every version), so
    the wait reads GetModelMetadata by label, whose `model_spec.version` is the labelled one
    (get_model_metadata_impl.cc). With 1 and 2 AVAILABLE and `stable` on 1, waiting for 2 waits."""
    push(model_dir, 2, exports[2])
    server = make_server(model_dir, policy=cfg.specific_policy([1, 2]), labels={cfg.STABLE_LABEL: 1})
    server.manager.wait_for(MODEL, 2, State.AVAILABLE, timeout=60)
    target = ServingTarget(server.rest_url, server.config_path, server.grpc_address)
    wait_for_label(target, MODEL, cfg.STABLE_LABEL, 1, timeout=30)
    with pytest.raises(TimeoutError, match="did not move to version 2"):
        wait_for_label(target, MODEL, cfg.STABLE_LABEL, 2, timeout=0.3)
