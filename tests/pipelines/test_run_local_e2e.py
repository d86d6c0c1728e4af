"""End to end: the CLI runs a real TFX pipeline on a taxi sample, twice and more.

Asserted from ML Metadata: a rerun with nothing changed executes no
component and pushes no version; with --force every component comes from
TFX's cache; changing a training setting re-runs the Trainer and what
depends on it only. The pushed model is loaded and predicts on raw rows.
Deployment is on: each pushed version is verified on an embedded TF
Serving-compatible server and labelled `stable` in the model config; one
that misses its latency budget is rolled back and fails the run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from mlmd_queries import executions_after, max_execution_id
from taxi_fixtures import run_cli, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

UPSTREAM = ["ExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator", "DataGate", "Transform"]


def pushed_versions(serving_dir: str) -> list[str]:
    base = os.path.join(serving_dir, "taxi_sample")
    return sorted(os.listdir(base)) if os.path.isdir(base) else []


def served_config(serving_dir: str):
    """(versions kept loaded, the `stable` version) from the generated model config."""
    from serving import config as serving_config

    config = serving_config.read_text_proto(
        os.path.join(serving_dir, "taxi_sample.config", serving_config.MODEL_CONFIG_FILE),
        serving_config.ModelServerConfig,
    )
    model = serving_config.find_model(config, "taxi_sample")
    return sorted(str(v) for v in model.model_version_policy.specific.versions), str(model.version_labels["stable"])


@pytest.fixture(scope="module")
def first_run(taxi_sample_csv, tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e_root")
    spec = taxi_spec(
        taxi_sample_csv,
        str(root / "run"),
        slices=True,  # the example's slices: the summary names the worst one
        pipeline={"name": "taxi_sample"},
        push={"model_name": "taxi_sample"},
        deploy={"enabled": True, "p99_budget_ms": 2000, "sample_rows": 8},
    )
    spec_file = write_spec(root / "spec.yaml", spec)
    completed = run_cli(spec_file)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return {
        "spec": spec,
        "spec_file": spec_file,
        "root": root,
        "metadata": str(root / "run" / "metadata.sqlite"),
        "serving": str(root / "run" / "serving"),
        "stdout": completed.stdout,
    }


def test_first_run_prints_progress_and_summary_and_pushes(first_run):
    out = first_run["stdout"]
    # Small data: Beam stays on one thread (the rule, with the cores patched: test_beam_args.py).
    assert "Beam on" not in out.splitlines()[0], out
    for component in [*UPSTREAM, "Trainer", "Evaluator", "Pusher"]:
        assert f"] {component} " in out, out
    assert "Model: BLESSED" in out
    assert "binary_accuracy=" in out
    # The example's slices (`evaluation.slices`): the worst one of the gated metric is named.
    assert re.search(
        r"^Worst slice: binary_accuracy on (payment_type|trip_start_hour)=.+ = [0-9.]+ \([0-9,]+ rows", out, re.M
    ), out
    assert "Pushed: " in out and "taxi_sample" in out
    assert "Full log: " in out
    assert len(pushed_versions(first_run["serving"])) == 1
    states = executions_after(first_run["metadata"], 0)
    assert all(states[c] == "COMPLETE" for c in UPSTREAM + ["Trainer", "Evaluator", "Pusher", "Deployer"]), states


def test_first_run_deploys_the_pushed_version_as_stable(first_run):
    (version,) = pushed_versions(first_run["serving"])
    assert served_config(first_run["serving"]) == ([version], version)
    assert f"Serving: version {version} is `stable`" in first_run["stdout"]
    warmup = os.path.join(first_run["serving"], "taxi_sample", version, "assets.extra", "tf_serving_warmup_requests")
    assert os.path.getsize(warmup) > 0


def test_pushed_model_predicts_on_raw_rows(first_run, taxi_sample_csv):
    import csv

    import tensorflow as tf

    version = pushed_versions(first_run["serving"])[-1]
    model = tf.saved_model.load(os.path.join(first_run["serving"], "taxi_sample", version))
    features = first_run["spec"]["features"]
    with open(taxi_sample_csv, encoding="utf-8") as handle:
        rows = [row for _, row in zip(range(8), csv.DictReader(handle))]

    def example(row):
        feature = {}
        for name in features:
            value = row[name]
            if value == "":
                continue
            if name in ("payment_type", "company"):
                feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
            elif name in (
                "fare",
                "trip_miles",
                "pickup_latitude",
                "pickup_longitude",
                "dropoff_latitude",
                "dropoff_longitude",
            ):
                feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
            else:
                feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(float(value))]))
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    by_example = model.signatures["serving_default"](examples=tf.constant([example(r) for r in rows]))
    probability = by_example["probability"].numpy()
    assert probability.shape == (8,)
    assert ((probability >= 0) & (probability <= 1)).all()
    # The predicted class by name: a label expression's classes are "0" and "1" (positive at index 1).
    assert by_example["label"].numpy().tolist() == [b"1" if p > 0.5 else b"0" for p in probability]
    assert by_example["classes"].numpy().tolist() == [[b"0", b"1"]] * 8

    # The raw-tensor signature gives the same answers on complete rows.
    raw_signature = model.signatures["serving_raw"]
    specs = raw_signature.structured_input_signature[1]
    # Raw tensors cannot say "missing": compare on rows with gaps filled.
    complete = [{k: (v or ("" if k in ("payment_type", "company") else "0")) for k, v in r.items()} for r in rows]
    inputs = {}
    for name, spec in specs.items():
        values = [r[name] for r in complete]
        if spec.dtype == tf.string:
            inputs[name] = tf.constant(values)
        elif spec.dtype == tf.int64:
            inputs[name] = tf.constant([int(float(v)) for v in values], tf.int64)
        else:
            inputs[name] = tf.constant([float(v) for v in values], spec.dtype)
    by_raw = raw_signature(**inputs)["probability"].numpy()
    by_example_complete = model.signatures["serving_default"](examples=tf.constant([example(r) for r in complete]))
    assert by_raw == pytest.approx(by_example_complete["probability"].numpy(), abs=1e-5)

    classify = model.signatures["classification"](inputs=tf.constant([example(r) for r in rows]))
    assert classify["scores"].shape == (8, 2)
    assert classify["scores"].numpy()[:, 1] == pytest.approx(probability, abs=1e-5)
    assert classify["classes"].numpy().tolist() == [[b"0", b"1"]] * 8


def test_deployed_model_answers_rest_and_grpc_like_the_saved_model(first_run, taxi_sample_csv):
    """The pipeline's own model behind the embedded server, started from the generated config."""
    import base64
    import glob

    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import (
        classification_pb2,
        get_model_metadata_pb2,
        predict_pb2,
        prediction_service_pb2_grpc,
    )

    from serving import config as serving_config
    from serving.client import RestClient
    from serving.server import EmbeddedServer

    serving = first_run["serving"]
    (version,) = pushed_versions(serving)
    eval_files = glob.glob(
        os.path.join(first_run["root"], "run", "artifacts", "ExampleGen", "examples", "*", "Split-eval", "*")
    )
    rows = [r.numpy() for r in tf.data.TFRecordDataset(eval_files, compression_type="GZIP").take(4)]
    expected = (
        tf.saved_model.load(os.path.join(serving, "taxi_sample", version))
        .signatures["serving_default"](examples=tf.constant(rows))["probability"]
        .numpy()
    )
    config_dir = os.path.join(serving, "taxi_sample.config")
    files = serving_config.ServerFiles(
        Path(config_dir, serving_config.MODEL_CONFIG_FILE), None, Path(config_dir, serving_config.MONITORING_FILE)
    )
    server = EmbeddedServer.from_files(
        files, rest_port=0, grpc_port=0, allow_version_labels_for_unavailable_models=True
    ).start()
    try:
        with RestClient(server.rest_url) as client:
            status = client.status("taxi_sample", label="stable")
            assert status["model_version_status"][0]["state"] == "AVAILABLE"
            body = {"instances": [{"b64": base64.b64encode(row).decode()} for row in rows]}
            predictions = client.predict("taxi_sample", body, label="stable")["predictions"]
        assert [p["probability"] for p in predictions] == pytest.approx(expected.tolist(), abs=1e-5)

        with grpc.insecure_channel(server.grpc_address) as channel:
            stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
            request = predict_pb2.PredictRequest()
            request.model_spec.name = "taxi_sample"
            request.model_spec.version_label = "stable"
            request.inputs["examples"].CopyFrom(tf.make_tensor_proto(rows, dtype=tf.string))
            response = stub.Predict(request, timeout=30)
            assert response.model_spec.version.value == int(version)
            assert tf.make_ndarray(response.outputs["probability"]).tolist() == pytest.approx(
                expected.tolist(), abs=1e-5
            )

            classify = classification_pb2.ClassificationRequest()
            classify.model_spec.name = "taxi_sample"
            classify.model_spec.signature_name = "classification"
            for row in rows:
                classify.input.example_list.examples.add().ParseFromString(row)
            scores = [c.classes[1].score for c in stub.Classify(classify, timeout=30).result.classifications]
            assert scores == pytest.approx(expected.tolist(), abs=1e-5)

            metadata = get_model_metadata_pb2.GetModelMetadataRequest()
            metadata.model_spec.name = "taxi_sample"
            metadata.metadata_field.append("signature_def")
            assert "serving_raw" in str(stub.GetModelMetadata(metadata, timeout=30).metadata["signature_def"])
    finally:
        server.stop()


def test_rerun_with_nothing_changed_executes_nothing(first_run):
    before = max_execution_id(first_run["metadata"])
    versions = pushed_versions(first_run["serving"])
    completed = run_cli(first_run["spec_file"])
    assert completed.returncode == 0, completed.stderr
    assert "Up to date" in completed.stdout
    assert max_execution_id(first_run["metadata"]) == before
    assert pushed_versions(first_run["serving"]) == versions


def test_forced_rerun_is_served_from_tfx_cache(first_run):
    before = max_execution_id(first_run["metadata"])
    versions = pushed_versions(first_run["serving"])
    completed = run_cli(first_run["spec_file"], "--force")
    assert completed.returncode == 0, completed.stderr
    states = executions_after(first_run["metadata"], before)
    expected = UPSTREAM + ["Trainer", "Evaluator", "Pusher"]
    assert {c: states.get(c) for c in expected} == {c: "CACHED" for c in expected}
    assert pushed_versions(first_run["serving"]) == versions


def test_changing_a_training_setting_reruns_trainer_and_downstream_only(first_run):
    spec = dict(first_run["spec"])
    spec["training"] = dict(spec["training"], train_steps=250)
    spec_file = write_spec(first_run["root"] / "spec_more_steps.yaml", spec)
    before = max_execution_id(first_run["metadata"])
    completed = run_cli(spec_file)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    states = executions_after(first_run["metadata"], before)
    assert {c: states.get(c) for c in UPSTREAM} == {c: "CACHED" for c in UPSTREAM}
    assert {c: states.get(c) for c in ("Trainer", "Evaluator", "Pusher", "Deployer")} == {
        c: "COMPLETE" for c in ("Trainer", "Evaluator", "Pusher", "Deployer")
    }
    first, second = pushed_versions(first_run["serving"])
    # The new version is `stable`; the previous one stays loaded for an instant rollback.
    assert served_config(first_run["serving"]) == ([first, second], second)


def test_a_version_over_the_latency_budget_is_rolled_back_and_fails_the_run(first_run):
    stable_before = served_config(first_run["serving"])[1]
    spec = dict(first_run["spec"])
    spec["training"] = dict(spec["training"], train_steps=300)
    spec["deploy"] = dict(spec["deploy"], p99_budget_ms=0.001)
    spec_file = write_spec(first_run["root"] / "spec_tight_budget.yaml", spec)

    completed = run_cli(spec_file)

    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Run failed at Deployer" in completed.stderr
    assert "`latency` check and was rolled back" in completed.stderr, completed.stderr
    rejected = pushed_versions(first_run["serving"])[-1]
    versions, stable = served_config(first_run["serving"])
    assert stable == stable_before
    assert rejected != stable and rejected not in versions
