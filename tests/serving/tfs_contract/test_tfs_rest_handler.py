"""TF Serving's REST handler and URL parsing tests, over the wire.

Translated from tensorflow/serving's
`model_servers/http_rest_api_handler_test.cc` (URL forms, unsupported paths,
error codes and bodies, the answers on half_plus_two, the status and metadata
JSON) and `model_servers/http_rest_api_util_test.cc` (which paths parse, and
percent-escaped model names and labels). As there, the model is
`saved_model_half_plus_two_2_versions` with version 123 only (specific policy)
and the label `Version_Label` on it. A second model is served under the
name TF Serving's URL-parsing test decodes, with a label of the same
characters, so the decoding shows in real answers.
"""

from __future__ import annotations

import json
from http import client as http_client
from urllib.parse import quote

import pytest
from tfs_contract_helpers import HALF_PLUS_THREE, TWO_VERSIONS, expected_metadata, start_server, tfs_testdata

from serving import config as cfg
from serving.server.rest import request_body

MODEL = TWO_VERSIONS
LABEL = "Version_Label"
JSON = "application/json"  # TF Serving's only header, exactly
# The name and label of http_rest_api_util_test.cc, and their percent-escaped forms from its URLs.
RESERVED = "!#$%&'()*+,/:;=?@[]"
ODD_NAME, ODD_LABEL = "modelname" + RESERVED, "latest" + RESERVED
ODD_NAME_URL = "modelname%21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D"
ODD_LABEL_URL = "latest%21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D"
UINT64_MAX = str(2**64 - 1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tfs_testdata()
    odd = cfg.model_config("odd", data / HALF_PLUS_THREE, labels={ODD_LABEL: 123})
    odd.name = ODD_NAME  # TF Serving takes any model name; our config builder refuses '/' and ':'
    models = [
        cfg.model_config(MODEL, data / TWO_VERSIONS, policy=cfg.specific_policy([123]), labels={LABEL: 123}),
        odd,
    ]
    server = start_server(tmp_path_factory.mktemp("tfs_rest_handler"), *models)
    yield server
    server.stop()


def _call(server, method: str, path: str, body: bytes | str | None = None) -> tuple[int, str, bytes]:
    """One request with `path` sent as written (no re-encoding): status, Content-Type, body."""
    conn = http_client.HTTPConnection("127.0.0.1", server.rest_port, timeout=30)
    try:
        conn.request(method, path, body=body.encode() if isinstance(body, str) else body)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        conn.close()


def _error(raw: bytes) -> str:
    body = json.loads(raw)
    assert isinstance(body, dict) and isinstance(body.get("error"), str), body
    return body["error"]


# -- kPathRegex ----------------------------------------------------------------


def test_v1_paths_reach_the_api_and_others_do_not(server):
    """kPathRegex: `/v1/models` is the API's (a JSON error), `/statuspage` and `/index` are not."""
    status, content_type, body = _call(server, "GET", "/v1/models")
    assert (status, content_type) == (400, JSON)
    assert "Missing model name" in _error(body)
    for path in ("/statuspage", "/index"):
        status, _, body = _call(server, "GET", path)
        assert (status, body) == (404, b"404: Not Found")


def test_the_paths_match_in_any_case_but_the_verb_and_metadata_are_compared_exactly(server):
    """kPathRegex and the API regexes are `(?i)` (http_rest_api_util.h/.cc), so `/V1/MODELS/m` is the
    model's status; ProcessRequest then compares the verb and the subresource exactly (`== "predict"`,
    `== "metadata"`): `:PREDICT` is a malformed request and `/METADATA` is the status."""
    status, content_type, body = _call(server, "GET", f"/V1/MODELS/{MODEL}")
    assert (status, content_type) == (200, JSON)
    assert "model_version_status" in json.loads(body)
    status, _, body = _call(server, "GET", f"/v1/models/{MODEL}/METADATA")
    assert status == 200 and "model_version_status" in json.loads(body)
    status, _, body = _call(server, "POST", f"/v1/models/{MODEL}:PREDICT", '{"instances": [1.0]}')
    assert status == 400
    assert _error(body).startswith(f"Malformed request: POST /v1/models/{MODEL}:PREDICT. ")
    status, _, body = _call(server, "POST", f"/V1/Models/{MODEL}:predict", '{"instances": [1.0]}')
    assert (status, json.loads(body)) == (200, {"predictions": [2.5]})


# -- UnsupportedApiCalls, and the failure cases of the URL parser ------------


@pytest.mark.parametrize(
    "method, path, wanted",
    [
        ("GET", "/v1/foo", "Malformed request"),
        ("POST", "/v1/foo", "Malformed request"),
        ("GET", "/v1/models", "Missing model name"),
        ("GET", "/v1/models/debug/model_name", "Malformed request"),
        ("GET", "/v1/models/foo/version/50:predict", "Malformed request"),
        ("POST", "/v1/models/foo/version/50:predict", "Malformed request"),
        ("POST", "/v1/models/foo/version/50:regress", "Malformed request"),
        ("POST", "/v1/models/foo/versions/HELLO:regress", "Malformed request"),
        ("POST", "/v1/models/foo/versions/string:predict", "Malformed request"),
        ("POST", f"/v1/models/foo/versions/{UINT64_MAX}:regress", "Failed to convert version"),
        ("POST", f"/v1/models/foo/versions/{UINT64_MAX}:predict", "Failed to convert version"),
        ("GET", f"/v1/models/foo/versions/{UINT64_MAX}", "Failed to convert version"),
        ("POST", "/v1/models/foo/label/some_label:regress", "Malformed request"),
        ("POST", "/v1/models/foo/versions/50/labels/some_label:regress", "Malformed request"),
        ("POST", "/v1/models/foo/versions/some_label:regress", "Malformed request"),
    ],
)
def test_unsupported_api_calls_are_invalid_argument(server, method, path, wanted):
    """400 with TF Serving's words first; a version beyond int64 is refused before the body is read."""
    status, content_type, body = _call(server, method, path, b"")
    assert (status, content_type) == (400, JSON)
    assert _error(body).startswith(wanted)


@pytest.mark.parametrize(
    "method, path",
    [
        ("POST", "/v1/models"),
        ("GET", "/v1/models/foo:predict"),
        ("POST", "/v1/models/foo/metadata"),
        ("HEAD", "/v1/models/foo"),
        ("PUT", "/v1/models/foo:predict"),
    ],
)
def test_a_known_path_with_the_wrong_method_is_malformed_request(server, method, path):
    """`HttpRestApiHandler::ProcessRequest` dispatches POST+verb and GET+status only; any other
    method keeps its initial `InvalidArgument("Malformed request: ", method, " ", path)`: 400,
    no `Allow` header."""
    conn = http_client.HTTPConnection("127.0.0.1", server.rest_port, timeout=30)
    try:
        conn.request(method, path, body=b"" if method in ("POST", "PUT") else None)
        response = conn.getresponse()
        assert (response.status, response.getheader("Allow")) == (400, None)
        raw = response.read()
        if method != "HEAD":  # a HEAD answer has no body
            assert _error(raw).startswith(f"Malformed request: {method} {path}")
    finally:
        conn.close()


# -- PredictModelNameVersionErrors, PredictRequestErrors ----------------------


@pytest.mark.parametrize(
    "path",
    ["/v1/models/foo:predict", "/v1/models/foo/versions/50:predict", f"/v1/models/{MODEL}99:predict"]
    + [f"/v1/models/{MODEL}/versions/{v}:predict" for v in (99, 124)],
)
def test_predict_on_an_unknown_model_or_version_is_not_found(server, path):
    status, content_type, body = _call(server, "POST", path, '{ "instances": [1] }')
    assert (status, content_type) == (404, JSON)
    assert _error(body).startswith("Servable not found for request")


@pytest.mark.parametrize(
    "path, body, wanted",
    [
        (f"/v1/models/{MODEL}:predict", "", "JSON Parse error: The document is empty"),
        (f"/v1/models/{MODEL}:predict", "instances = [1, 2]", "JSON Parse error: Invalid value"),
        (f"/v1/models/{MODEL}:predict", '{ "instances": ["x", "y"] }', "not of expected type: float"),
        (
            f"/v1/models/{MODEL}/labels/Version_Nonexistent:predict",
            '{ "instances": ["x", "y"] }',
            "Unrecognized servable version label",
        ),
        (f"/v1/models/{MODEL}:predict", '{ "signature_name": 100 }', "'signature_name' key must be a string value."),
        ("/v1/models/foo/labels/some_label:predict", '{ "instances": [1] }', "Unrecognized servable version label"),
    ],
    ids=["empty", "not_json", "wrong_type", "unknown_label", "signature_name_type", "label_of_unknown_model"],
)
def test_predict_request_errors_are_invalid_argument(server, path, body, wanted):
    """400 with TF Serving's message as a substring; an unknown label is INVALID_ARGUMENT, checked
    before the model (ServerCore), and before the body's values."""
    status, content_type, raw = _call(server, "POST", path, body)
    assert (status, content_type) == (400, JSON)
    assert wanted in _error(raw)


@pytest.mark.parametrize(
    "body, reason",
    [
        ("   ", "The document is empty"),
        ('{"instances" [1]}', "Missing a colon after a name of object member."),
        ("{instances: [1]}", "Missing a name for object member."),
        ('{"instances": [1 2]}', "Missing a comma or ']' after an array element."),
        ('{"instances": [{"x": "]}"} {"x": 1}]}', "Missing a comma or ']' after an array element."),
        ('{"instances": [1], "signature_name": "a" "b": 1}', "Missing a comma or '}' after an object member."),
        ('{"instances": ["a]}', "Missing a closing quotation mark in string."),
    ],
)
def test_json_parse_errors_use_rapidjsons_words(server, body, reason):
    """TF Serving reports parse errors as rapidjson words them (`GetParseError_En`)."""
    status, _, raw = _call(server, "POST", f"/v1/models/{MODEL}:predict", body)
    assert status == 400
    assert _error(raw).startswith(f"JSON Parse error: {reason}")


@pytest.mark.parametrize("trailer", [" x", "}", '{"instances": [9.0]}', "\n\u00ff garbage"])
def test_bytes_after_the_json_body_are_ignored(server, trailer):
    """TF Serving parses with rapidjson's `kParseStopWhenDoneFlag` (`ParseJson`,
    util/json_tensor.cc): the first value is the request, what follows is not read."""
    status, _, raw = _call(server, "POST", f"/v1/models/{MODEL}:predict", '{"instances": [1.0, 2.0]}' + trailer)
    assert (status, json.loads(raw)) == (200, {"predictions": [2.5, 3.0]})


# -- Predict, Regress, Classify ------------------------------------------------


@pytest.mark.parametrize(
    "path, body, answer",
    [
        (
            f"/v1/models/{MODEL}:predict",
            '{"instances": [[1.0, 2.0], [3.0, 4.0]]}',
            {"predictions": [[2.5, 3.0], [3.5, 4.0]]},
        ),
        (f"/v1/models/{MODEL}/versions/123:predict", '{"instances": [1.0, 2.0]}', {"predictions": [2.5, 3.0]}),
        (f"/v1/models/{MODEL}/labels/{LABEL}:predict", '{"instances": [1.0, 2.0]}', {"predictions": [2.5, 3.0]}),
        (
            f"/v1/models/{MODEL}/versions/123:predict",
            '{"signature_name": "serving_default", "instances": [3.0, 4.0]}',
            {"predictions": [3.5, 4.0]},
        ),
        (
            f"/v1/models/{MODEL}/versions/123:predict",
            '{"signature_name": "serving_default", "inputs": [3.0, 4.0]}',
            {"outputs": [3.5, 4.0]},
        ),
        (
            f"/v1/models/{MODEL}:regress",
            '{"signature_name": "regress_x_to_y", "examples": [ { "x": 80.0 } ] }',
            {"results": [42]},
        ),
        (
            f"/v1/models/{MODEL}/versions/123:regress",
            '{"signature_name": "regress_x_to_y", "examples": [ { "x": 80.0 } ] }',
            {"results": [42]},
        ),
        (
            f"/v1/models/{MODEL}/labels/{LABEL}:regress",
            '{"signature_name": "regress_x_to_y", "examples": [ { "x": 80.0 } ] }',
            {"results": [42]},
        ),
        (
            f"/v1/models/{MODEL}:classify",
            '{"signature_name": "classify_x_to_y", "examples": [ { "x": 20.0 } ] }',
            {"results": [[["", 12]]]},
        ),
        (
            f"/v1/models/{MODEL}/labels/{LABEL}:classify",
            '{"signature_name": "classify_x_to_y", "examples": [ { "x": 10.0 } ] }',
            {"results": [[["", 7]]]},
        ),
    ],
    ids=[
        "predict_latest",
        "predict_version",
        "predict_label",
        "predict_signature_name",
        "predict_columnar",
        "regress_latest",
        "regress_version",
        "regress_label",
        "classify_latest",
        "classify_label",
    ],
)
def test_inference_answers_as_tf_serving(server, path, body, answer):
    """The exact answers of the Predict, Regress and Classify tests, with the one JSON header."""
    status, content_type, raw = _call(server, "POST", path, body)
    assert (status, content_type) == (200, JSON)
    assert json.loads(raw) == answer


# -- GetStatus, GetModelMetadata -----------------------------------------------

AVAILABLE_123 = {
    "model_version_status": [
        {"version": "123", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
    ]
}


@pytest.mark.parametrize("where", ["", "/versions/123", f"/labels/{LABEL}"], ids=["all", "version", "label"])
def test_get_status_answers_as_tf_serving(server, where):
    status, content_type, raw = _call(server, "GET", f"/v1/models/{MODEL}{where}")
    assert (status, content_type) == (200, JSON)
    assert json.loads(raw) == AVAILABLE_123


def test_get_model_metadata_equals_tf_servings_metadata_file(server):
    """As rapidjson compares documents: objects in any order, arrays in order."""
    status, content_type, raw = _call(server, "GET", f"/v1/models/{MODEL}/metadata")
    assert (status, content_type) == (200, JSON)
    assert json.loads(raw) == expected_metadata("saved_model_half_plus_two_2_versions_metadata.json")


# -- http_rest_api_util_test: percent-escapes in names and labels --------------


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", f"/v1/models/{ODD_NAME_URL}"),
        ("GET", f"/v1/models/{ODD_NAME_URL}/versions/123"),
        ("GET", f"/v1/models/{ODD_NAME_URL}/labels/{ODD_LABEL_URL}"),
        ("POST", f"/v1/models/{ODD_NAME_URL}:predict"),
        ("POST", f"/v1/models/{ODD_NAME_URL}/versions/123:predict"),
        ("POST", f"/v1/models/{ODD_NAME_URL}/labels/{ODD_LABEL_URL}:predict"),
    ],
)
def test_percent_escaped_names_and_labels_are_decoded(server, method, path):
    """`modelname%21...%5D` is the model `modelname!#$%&'()*+,/:;=?@[]`, its label decoded the same way."""
    status, _, raw = _call(server, method, path, '{"instances": [1.0]}' if method == "POST" else None)
    assert status == 200, raw
    body = json.loads(raw)
    if method == "POST":
        assert body == {"predictions": [3.5]}  # half_plus_three
    else:
        assert [s["version"] for s in body["model_version_status"]] == ["123"]


def test_percent_escaped_metadata_path_names_the_decoded_model(server):
    status, _, raw = _call(server, "GET", f"/v1/models/{ODD_NAME_URL}/labels/{ODD_LABEL_URL}/metadata")
    assert status == 200
    assert json.loads(raw)["model_spec"] == {"name": ODD_NAME, "signature_name": "", "version": "123"}


def test_an_unknown_escaped_name_is_reported_decoded(server):
    status, _, raw = _call(server, "POST", f"/v1/models/{quote('no/such:model', safe='')}:predict", "{}")
    assert status == 404
    assert _error(raw).startswith("Servable not found for request: Latest(no/such:model)")


def test_a_missing_comma_deep_in_a_large_body_is_reported_without_holding_the_loop():
    """rapidjson's missing-comma reason needs the innermost open bracket; past 256 KiB of document
    both reasons are given instead of 64 passes over megabytes (16 MB nested 64 deep: 2.5 s)."""
    inner = "[" * 60 + "]" * 60
    text = "[" * 4 + (inner + ",") * (1_000_000 // (len(inner) + 1)) + "1 "
    reason = request_body._comma_reason(text)  # the bounded path: no bracket passes over 1 MB
    assert reason == "Missing a comma or ']' after an array element, or '}' after an object member."
    assert request_body._comma_reason("[" * 4 + inner + ",1 ") == "Missing a comma or ']' after an array element."
