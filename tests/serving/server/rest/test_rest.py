"""The REST API against a real embedded server on 127.0.0.1."""

from __future__ import annotations

import base64
import http.client as http_client
import json
import urllib.parse

import pytest
from serving_helpers import LABELS, MODEL, b64, example, http, logit, probability

from serving import config as cfg

X = [1.0, 2.0, 3.0]


def test_model_status_reports_available_version(server):
    status, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}")
    assert status == 200
    assert body == {
        "model_version_status": [
            {"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
        ]
    }


def test_status_by_version_and_label(make_server, model_dir):
    server = make_server(model_dir, policy=cfg.specific_policy([1]), labels={"stable": 1})
    for path in (f"/v1/models/{MODEL}/versions/1", f"/v1/models/{MODEL}/labels/stable"):
        status, body = http(server.rest_url, "GET", path)
        assert status == 200
        assert [v["version"] for v in body["model_version_status"]] == ["1"]


def test_metadata_lists_signatures_like_tf_serving(server):
    status, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}/metadata")
    assert status == 200
    assert body["model_spec"] == {"name": MODEL, "signature_name": "", "version": "1"}
    signatures = body["metadata"]["signature_def"]["signature_def"]
    assert sorted(signatures) == ["classification", "regression", "serving_default", "serving_raw"]
    assert signatures["classification"]["method_name"] == "tensorflow/serving/classify"
    raw_input = signatures["serving_raw"]["inputs"]["x"]
    assert raw_input["dtype"] == "DT_FLOAT"
    assert [d["size"] for d in raw_input["tensor_shape"]["dim"]] == ["-1", "3"]


def test_predict_default_signature_on_b64_examples(server):
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:predict",
        {"instances": [b64(example(X)), b64(example([0, 0, 0]))]},
    )
    assert status == 200
    assert body["predictions"] == pytest.approx([probability(1, X), probability(1, [0, 0, 0])], rel=1e-6)


def test_predict_row_format_with_two_outputs_returns_objects(server):
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:predict",
        {"signature_name": "serving_raw", "instances": [X, [0, 0, 0]]},
    )
    assert status == 200
    assert [sorted(row) for row in body["predictions"]] == [["logit", "probability"]] * 2
    assert body["predictions"][0]["logit"] == pytest.approx(logit(1, X), rel=1e-6)


def test_predict_columnar_format_returns_outputs(server):
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}/versions/1:predict",
        {"signature_name": "serving_raw", "inputs": {"x": [X]}},
    )
    assert status == 200
    assert body["outputs"]["logit"] == pytest.approx([logit(1, X)], rel=1e-6)


def test_float32_outputs_use_shortest_decimal(server):
    _, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:predict",
        {"signature_name": "serving_raw", "inputs": [[0.1, 0.0, 0.0]]},
    )
    assert body["outputs"]["logit"] == [0.2]  # float32(0.1 + 0.1), not 0.20000000298023224


def test_classify_returns_label_score_pairs(server):
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:classify",
        {"signature_name": "classification", "examples": [{"x": X}]},
    )
    assert status == 200
    [[negative, positive]] = body["results"]
    assert (negative[0], positive[0]) == LABELS
    assert positive[1] == pytest.approx(probability(1, X), rel=1e-6)


def test_classify_with_context_merges_features(server):
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:regress",
        {"signature_name": "regression", "context": {"x": X}, "examples": [{}, {}]},
    )
    assert status == 200
    assert body["results"] == pytest.approx([logit(1, X)] * 2, rel=1e-6)


def test_regress_returns_one_value_per_example(server):
    status, body = http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:regress",
        {"signature_name": "regression", "examples": [{"x": X}, {"x": [1.0, 1.0, 1.0]}]},
    )
    assert status == 200
    assert body["results"] == pytest.approx([logit(1, X), logit(1, [1, 1, 1])], rel=1e-6)


def test_prometheus_metrics_count_requests_per_model_and_status(server):
    http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [b64(example(X))]})
    http(server.rest_url, "POST", "/v1/models/nope:predict", {"instances": [1]})
    status, body = http(server.rest_url, "GET", cfg.PROMETHEUS_PATH)
    text = body["raw"]
    assert status == 200
    assert ':tensorflow:serving:request_count{model_name="lin",status="OK"} 1.0' in text
    assert ':tensorflow:serving:request_count{model_name="",status="NOT_FOUND"} 1.0' in text  # not served
    assert ':tensorflow:serving:request_latency_count{API="predict",entrypoint="REST",model_name="lin"} 1.0' in text
    assert 'tfserving_model_version_available{model_name="lin",model_version="1"} 1.0' in text


RAW = {"signature_name": "serving_raw"}
BAD_REQUESTS = [
    # (case, method, path, body, status, text in the error)
    ("malformed json", "POST", "/v1/models/lin:predict", b'{"instances": [', 400, "JSON Parse error"),
    ("empty body", "POST", "/v1/models/lin:predict", b"", 400, "The document is empty"),
    ("not an object", "POST", "/v1/models/lin:predict", b"[1, 2]", 400, "Is not object"),
    (
        "both formats",
        "POST",
        "/v1/models/lin:predict",
        {**RAW, "instances": [X], "inputs": [X]},
        400,
        "expecting only one of 'inputs' or 'instances'",
    ),
    ("no inputs", "POST", "/v1/models/lin:predict", {"rows": [X]}, 400, "Missing 'inputs' or 'instances' key"),
    ("empty instances", "POST", "/v1/models/lin:predict", {"instances": []}, 400, "No values in 'instances'"),
    (
        "string for float",
        "POST",
        "/v1/models/lin:predict",
        {**RAW, "instances": [["a", 1, 2]]},
        400,
        'JSON Value: "a" Type: String is not of expected type',
    ),
    (
        "bool for float",
        "POST",
        "/v1/models/lin:predict",
        {**RAW, "instances": [[True, 1.0, 2.0]]},
        400,
        "Type: True is not of expected type",
    ),
    ("wrong shape", "POST", "/v1/models/lin:predict", {**RAW, "instances": [[1.0, 2.0]]}, 400, "incompatible shape"),
    # TF Serving's json_tensor.cc words for items of different sizes and for an unknown key.
    ("ragged rows", "POST", "/v1/models/lin:predict", {**RAW, "instances": [X, [1.0]]}, 400, "tensor size: 3"),
    (
        "unknown input key",
        "POST",
        "/v1/models/lin:predict",
        {**RAW, "instances": [{"y": X}]},
        400,
        "JSON object: does not have named input: y",
    ),
    ("bad base64", "POST", "/v1/models/lin:predict", {"instances": [{"b64": "%%%"}]}, 400, "Unable to base64 decode"),
    (
        "not a tf.Example",
        "POST",
        "/v1/models/lin:predict",
        {"instances": [b64(b"garbage")]},
        400,
        "Could not parse example input",
    ),
    (
        "signature not a string",
        "POST",
        "/v1/models/lin:predict",
        {"signature_name": 3, "instances": [X]},
        400,
        "'signature_name' key must be a string",
    ),
    (
        "unknown signature",
        "POST",
        "/v1/models/lin:predict",
        {"signature_name": "serving_rwa", "instances": [X]},
        400,  # INVALID_ARGUMENT, as TF Serving's GetInfoMap
        'Serving signature name: "serving_rwa" not found in signature def',
    ),
    (
        "unknown model",
        "POST",
        "/v1/models/nope:predict",
        {"instances": [X]},
        404,
        "Servable not found for request: Latest(nope)",
    ),
    (
        "unknown version",
        "POST",
        "/v1/models/lin/versions/7:predict",
        {"instances": [X]},
        404,
        "Servable not found for request: Specific(lin, 7)",
    ),
    (
        "unknown label",
        "POST",
        "/v1/models/lin/labels/canary:predict",
        {"instances": [X]},
        400,  # TF Serving's ServerCore: INVALID_ARGUMENT (http_rest_api_handler_test.cc)
        "Unrecognized servable version label: canary",
    ),
    (
        "classify on a predict signature",
        "POST",
        "/v1/models/lin:classify",
        {"examples": [{"x": X}]},
        400,
        # TF Serving's default (--enable_signature_method_name_check=false): the shape is checked, not the method.
        "No classification inputs found in SignatureDef",
    ),
    (
        "regress on a classify signature",
        "POST",
        "/v1/models/lin:regress",
        {"signature_name": "classification", "examples": [{"x": X}]},
        400,
        "Expected one output Tensor.",  # PreProcessRegression: a classify signature has two outputs
    ),
    (
        "classify without examples",
        "POST",
        "/v1/models/lin:classify",
        {"signature_name": "classification"},
        400,
        "key 'examples' is expected",
    ),
    (
        "mixed feature kinds",
        "POST",
        "/v1/models/lin:regress",
        {"signature_name": "regression", "examples": [{"x": [1.0, "a", 2.0]}]},
        400,
        "Unexpected element type in feature: x",
    ),
    ("status of unknown model", "GET", "/v1/models/nope", None, 404, "Could not find any versions of model nope"),
    (
        "status of unknown version",
        "GET",
        "/v1/models/lin/versions/9",
        None,
        404,
        "Could not find version 9 of model lin",
    ),
    (
        "metadata of unknown model",
        "GET",
        "/v1/models/nope/metadata",
        None,
        404,
        "Servable not found for request: Latest(nope)",
    ),
    ("non-numeric version", "GET", "/v1/models/lin/versions/abc", None, 400, "Malformed request: GET"),
    ("predict with GET", "GET", "/v1/models/lin:predict", None, 400, "Malformed request: GET"),
]


@pytest.mark.parametrize(
    ("case", "method", "path", "body", "status", "text"), BAD_REQUESTS, ids=[row[0] for row in BAD_REQUESTS]
)
def test_bad_request_gets_tf_serving_error_and_server_stays_up(server, case, method, path, body, status, text):
    got_status, got_body = http(server.rest_url, method, path, body)
    assert (got_status, list(got_body)) == (status, ["error"])
    assert text in got_body["error"]
    assert "Expected" in got_body["error"] and "Received:" in got_body["error"]
    assert http(server.rest_url, "GET", f"/v1/models/{MODEL}")[0] == 200


def test_request_over_size_limit_gets_413(make_server, model_dir):
    server = make_server(model_dir, max_request_bytes=4096)
    body = {"signature_name": "serving_raw", "instances": [X] * 1000}
    status, payload = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", body)
    assert status == 413
    assert "Request body is too large" in payload["error"] and "at most 4096 bytes" in payload["error"]
    ok, _ = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {**RAW, "instances": [X]})
    assert ok == 200


def test_bytes_outputs_named_bytes_are_base64(server):
    # The `_bytes` suffix rule applies to outputs; inputs take {"b64": ...} anywhere.
    status, body = http(
        server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"inputs": {"examples": [b64(example(X))]}}
    )
    assert status == 200
    assert body["outputs"] == pytest.approx([probability(1, X)], rel=1e-6)
    assert base64.b64decode(b64(b"\x00\xff")["b64"]) == b"\x00\xff"


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        (f"/v1/models/{MODEL}:predict", {"instances": [b64(example(X))]}, 200),
        (f"/v1/models/{MODEL}:predict", {"instances": []}, 400),
        ("/v1/models/unknown", None, 404),
    ],
)
def test_json_answers_carry_json_content_type(server, path, body, status):
    """Answers and errors say `application/json`, TF Serving's header exactly (built once, not per answer)."""
    parsed = urllib.parse.urlsplit(server.rest_url)
    conn = http_client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request("POST" if body is not None else "GET", path, body=None if body is None else json.dumps(body))
        response = conn.getresponse()
        response.read()
        assert (response.status, response.getheader("Content-Type")) == (status, "application/json")
    finally:
        conn.close()
