"""Image and text models trained by the real pipeline, served by the embedded
server on 127.0.0.1: raw JPEG/PNG bytes and raw strings over REST (row and
columnar) and gRPC, tf.Examples over Classify/MultiInference, class names in
the answers; the request limits of a declared image batch; the Deployer's
checks and warmup file on image rows."""

from __future__ import annotations

import base64
import io
import random

import grpc
import numpy as np
import pytest
import tensorflow as tf
from media_models import CLASSES, example, image_run, text_run
from PIL import Image
from serving_helpers import http, push
from tensorflow_serving.apis import (
    classification_pb2,
    inference_pb2,
    predict_pb2,
    prediction_service_pb2_grpc,
)

from serving import config as cfg
from serving.deploy import deploy_version, expected_predictions, request_batches
from serving.deployment_limits import ServerLimits
from serving.rollout import ServingTarget
from serving.server import EmbeddedServer
from serving.warmup_file import DEFAULT_WARMUP_BYTES, read_warmup_file, warmup_path

pytestmark = pytest.mark.e2e

# The declared batch: 8 images of at most 0.25 MiB (request memory budget 3 MiB, request size 4 MiB).
DECLARED_MB = 2.0


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return image_run(tmp_path_factory)


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return text_run(tmp_path_factory)


@pytest.fixture(scope="module")
def server(image, text, tmp_path_factory):
    """Both pushed models on one embedded server, limits sized for DECLARED_MB."""
    config = cfg.server_config(
        cfg.model_config(image.model_name, image.serving_dir / image.model_name),
        cfg.model_config(text.model_name, text.serving_dir / text.model_name),
    )
    files = cfg.write_server_files(tmp_path_factory.mktemp("media-cfg"), config)
    limits = ServerLimits.for_request_mb(DECLARED_MB)
    with EmbeddedServer.from_files(files, rest_port=0, grpc_port=0, **limits.server_options()) as running:
        yield running


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(server.grpc_address) as channel:
        yield prediction_service_pb2_grpc.PredictionServiceStub(channel)


def _b64(data: bytes) -> dict[str, str]:
    return {"b64": base64.b64encode(data).decode("ascii")}


def _images(image) -> list[bytes]:
    """The encoded images inside the run's sample rows (PNG and JPEG)."""
    return [tf.train.Example.FromString(row).features.feature["image"].bytes_list.value[0] for row in image.eval_rows]


def _in_process(run, signature: str, **inputs) -> dict[str, np.ndarray]:
    loaded = tf.saved_model.load(str(run.export_dir))
    outputs = loaded.signatures[signature](**{k: tf.constant(v) for k, v in inputs.items()})
    return {k: v.numpy() for k, v in outputs.items()}


def _post(server, model: str, verb: str, body: dict) -> dict:
    status, answer = http(server.rest_url, "POST", f"/v1/models/{model}:{verb}", body, timeout=120)
    assert status == 200, answer
    return answer


def _noise_png(side: int, seed: int = 0) -> bytes:
    """A PNG of random pixels: it does not compress, so it is about 3 x side^2 bytes."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


# -- image model -------------------------------------------------------------


def test_rest_row_predict_on_raw_image_bytes_matches_the_model(server, image):
    images = _images(image)
    assert {data[:4] for data in images} == {b"\x89PNG", b"\xff\xd8\xff\xe0"}  # both formats

    body = _post(
        server,
        image.model_name,
        "predict",
        {"signature_name": "serving_raw", "instances": [{"image": _b64(data)} for data in images]},
    )
    expected = _in_process(image, "serving_raw", image=images)

    rows = body["predictions"]
    assert len(rows) == len(images)
    np.testing.assert_allclose([row["scores"] for row in rows], expected["scores"], rtol=1e-4, atol=1e-6)
    assert [row["label"] for row in rows] == [name.decode() for name in expected["label"]]
    assert {row["label"] for row in rows} <= set(CLASSES)
    assert all(row["classes"] == list(CLASSES) for row in rows)


def test_rest_columnar_predict_and_examples_agree_with_raw_bytes(server, image):
    images = _images(image)
    columnar = _post(
        server,
        image.model_name,
        "predict",
        {"signature_name": "serving_raw", "inputs": {"image": [_b64(d) for d in images]}},
    )["outputs"]
    examples = _post(server, image.model_name, "predict", {"instances": [_b64(row) for row in image.eval_rows]})[
        "predictions"
    ]

    np.testing.assert_allclose(columnar["scores"], [row["scores"] for row in examples], rtol=1e-4, atol=1e-6)
    assert columnar["label"] == [row["label"] for row in examples]


def test_grpc_predict_on_a_string_tensor_of_image_bytes(server, stub, image):
    images = _images(image)
    request = predict_pb2.PredictRequest()
    request.model_spec.name = image.model_name
    request.model_spec.signature_name = "serving_raw"
    request.inputs["image"].CopyFrom(tf.make_tensor_proto(images, dtype=tf.string))

    response = stub.Predict(request, timeout=60)

    expected = _in_process(image, "serving_raw", image=images)
    np.testing.assert_allclose(tf.make_ndarray(response.outputs["scores"]), expected["scores"], rtol=1e-4, atol=1e-6)
    assert list(tf.make_ndarray(response.outputs["label"])) == list(expected["label"])


def test_grpc_classify_and_rest_classify_return_class_names(server, stub, image):
    request = classification_pb2.ClassificationRequest()
    request.model_spec.name = image.model_name
    request.model_spec.signature_name = "classification"
    for row in image.eval_rows:
        request.input.example_list.examples.add().ParseFromString(row)

    results = stub.Classify(request, timeout=60).result.classifications
    rest = _post(
        server,
        image.model_name,
        "classify",
        {"signature_name": "classification", "examples": [{"image": _b64(d)} for d in _images(image)]},
    )["results"]

    expected = _in_process(image, "serving_raw", image=_images(image))
    assert len(results) == len(rest) == len(image.eval_rows)
    for got, over_rest, scores in zip(results, rest, expected["scores"]):
        assert [c.label for c in got.classes] == list(CLASSES)
        assert [name for name, _ in over_rest] == list(CLASSES)
        np.testing.assert_allclose([c.score for c in got.classes], scores, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose([score for _, score in over_rest], scores, rtol=1e-4, atol=1e-6)


def test_grpc_multi_inference_classifies_image_examples(stub, image):
    request = inference_pb2.MultiInferenceRequest()
    task = request.tasks.add()
    task.model_spec.name = image.model_name
    task.model_spec.signature_name = "classification"
    task.method_name = "tensorflow/serving/classify"
    for row in image.eval_rows[:3]:
        request.input.example_list.examples.add().ParseFromString(row)

    (result,) = stub.MultiInference(request, timeout=60).results

    expected = _in_process(image, "serving_raw", image=_images(image)[:3])
    rows = result.classification_result.classifications
    assert [[c.label for c in row.classes] for row in rows] == [list(CLASSES)] * 3
    np.testing.assert_allclose([[c.score for c in row.classes] for row in rows], expected["scores"], rtol=1e-4)


def test_declared_batch_of_images_is_served_and_a_larger_one_refused(server, stub, image):
    picture = _noise_png(290)
    assert 0.24 * 2**20 < len(picture) <= 0.25 * 2**20
    request = predict_pb2.PredictRequest()
    request.model_spec.name = image.model_name
    request.model_spec.signature_name = "serving_raw"

    request.inputs["image"].CopyFrom(tf.make_tensor_proto([picture] * 8, dtype=tf.string))
    assert tf.make_ndarray(stub.Predict(request, timeout=120).outputs["scores"]).shape == (8, len(CLASSES))
    rest = _post(
        server,
        image.model_name,
        "predict",
        {"signature_name": "serving_raw", "instances": [{"image": _b64(picture)}] * 8},
    )
    assert len(rest["predictions"]) == 8

    request.inputs["image"].CopyFrom(tf.make_tensor_proto([picture] * 13, dtype=tf.string))
    with pytest.raises(grpc.RpcError) as caught:
        stub.Predict(request, timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = caught.value.details()
    assert "over the per-request memory budget" in details
    assert f"at most {3 * 2**20} bytes (3.0 MiB)" in details
    assert "--request-memory-budget-mb" in details
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{image.model_name}:predict",
        {"signature_name": "serving_raw", "instances": [{"image": _b64(picture)}] * 13},
    )
    assert status == 413, body
    assert f"at most {ServerLimits.for_request_mb(DECLARED_MB).max_request_bytes} bytes" in body["error"]

    # The server keeps answering.
    small = _post(
        server,
        image.model_name,
        "predict",
        {"signature_name": "serving_raw", "instances": [{"image": _b64(_images(image)[0])}]},
    )
    assert small["predictions"][0]["label"] in CLASSES


def test_deployer_verified_image_rows_and_wrote_a_bounded_warmup_file(image):
    assert f"Serving: version {image.version} is `stable` (verified" in image.stdout
    config_dir = image.serving_dir / f"{image.model_name}.config"
    served = cfg.find_model(
        cfg.read_text_proto(config_dir / cfg.MODEL_CONFIG_FILE, cfg.ModelServerConfig), image.model_name
    )
    assert served.version_labels["stable"] == image.version

    path = warmup_path(image.serving_dir / image.model_name / str(image.version))
    logs = read_warmup_file(path)
    assert 1 <= len(logs) <= 8  # the Deployer's sample_rows
    assert path.stat().st_size <= DEFAULT_WARMUP_BYTES
    for log in logs:
        request = log.predict_log.request
        assert request.model_spec.signature_name == "serving_default"
        (row,) = request.inputs["examples"].string_val
        encoded = tf.train.Example.FromString(row).features.feature["image"].bytes_list.value[0]
        assert Image.open(io.BytesIO(encoded)).size == (16, 16)


def test_deploy_of_image_rows_larger_than_one_request_succeeds(image, tmp_path):
    """deploy_version against a server whose request size is below the sample rows' total."""
    rows = [example(image=_noise_png(200, seed=i), label=CLASSES[i % 3]) for i in range(6)]  # ~120 KB each
    limit = 400_000
    assert len(request_batches(rows, limit)) == 3  # one request would be ~960 KB
    model_dir = tmp_path / "models" / image.model_name
    model_dir.mkdir(parents=True)
    push(model_dir, 1, image.export_dir)
    config = cfg.server_config(
        cfg.model_config(image.model_name, model_dir, policy=cfg.specific_policy([1]), labels={cfg.STABLE_LABEL: 1})
    )
    files = cfg.write_server_files(tmp_path / "cfg", config)
    with EmbeddedServer.from_files(
        files,
        rest_port=0,
        grpc_port=None,
        max_request_bytes=limit,
        file_system_poll_wait_seconds=0.1,
        allow_version_labels_for_unavailable_models=True,  # a labelled first config, as TF Serving needs
    ) as small:
        push(model_dir, 2, image.export_dir)
        expected = expected_predictions(image.export_dir, rows)
        result = deploy_version(
            ServingTarget.embedded(small),
            image.model_name,
            2,
            rows,
            expected,
            p99_budget_ms=10_000,
            latency_requests=5,
            max_request_bytes=limit,
        )
        assert result.checks == ("warmup_written", "available", "predictions", "latency", "promoted")
        status, body = http(
            small.rest_url, "POST", f"/v1/models/{image.model_name}:predict", {"instances": [_b64(r) for r in rows]}
        )
        assert status == 413, body  # the rows in one request: what the check avoided
    assert len(read_warmup_file(warmup_path(model_dir / "2"))) == len(rows)


# -- text model --------------------------------------------------------------


@pytest.mark.parametrize(
    "texts",
    [
        ["A great and lovely film!", "Awful, dull plot."],
        ["", "Ünïcödé wörds — ok?", "word " * 500],
    ],
    ids=["plain", "empty unicode long"],
)
def test_text_model_takes_raw_strings_over_rest_and_grpc(server, stub, text, texts):
    rest = _post(
        server,
        text.model_name,
        "predict",
        {"signature_name": "serving_raw", "instances": [{"review": t} for t in texts]},
    )["predictions"]
    request = predict_pb2.PredictRequest()
    request.model_spec.name = text.model_name
    request.model_spec.signature_name = "serving_raw"
    request.inputs["review"].CopyFrom(tf.make_tensor_proto([t.encode() for t in texts], dtype=tf.string))
    over_grpc = stub.Predict(request, timeout=60)

    expected = _in_process(text, "serving_raw", review=[t.encode() for t in texts])
    np.testing.assert_allclose([row["scores"] for row in rest], expected["scores"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(tf.make_ndarray(over_grpc.outputs["scores"]), expected["scores"], rtol=1e-4, atol=1e-6)
    assert {row["label"] for row in rest} <= {"neg", "pos"}


def test_text_model_classify_returns_class_names(server, text):
    rows = [{"review": "great lovely superb"}, {"review": "bad awful terrible"}]
    body = {"signature_name": "classification", "examples": rows}
    results = _post(server, text.model_name, "classify", body)["results"]
    expected = _in_process(text, "serving_raw", review=[r["review"].encode() for r in rows])
    assert [[name for name, _ in row] for row in results] == [["neg", "pos"]] * 2
    np.testing.assert_allclose([[s for _, s in row] for row in results], expected["scores"], rtol=1e-4, atol=1e-6)


def test_text_run_deployed_its_version(text):
    assert f"Serving: version {text.version} is `stable` (verified" in text.stdout
    logs = read_warmup_file(warmup_path(text.serving_dir / text.model_name / str(text.version)))
    reviews = [tf.train.Example.FromString(log.predict_log.request.inputs["examples"].string_val[0]) for log in logs]
    assert all(r.features.feature["review"].bytes_list.value[0] for r in reviews)


def test_random_words_never_fail_the_text_model(server, text):
    rng = random.Random(3)
    alphabet = "abcdefghijklmnopqrstuvwxyzäöü0123456789 .,!?-'\"\t\n"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))) for _ in range(50)]
    body = _post(
        server,
        text.model_name,
        "predict",
        {"signature_name": "serving_raw", "instances": [{"review": t} for t in texts]},
    )
    assert len(body["predictions"]) == 50
