"""TF Serving's MultiInference rules, over the wire.

Translated from tensorflow/serving's `servables/tensorflow/multi_inference_test.cc`
and `multi_inference_helper_test.cc` (MultiInferenceTest) onto TF Serving's own
`saved_model_half_plus_two_cpu` (TF1; regress_x_to_y: y = 0.5x + 2,
regress_x_to_y2: y2 = 0.5x + 3, classify_x_to_y: scores only) served in place
as `test_model`. The C++ tests call the runner on a bundle (or ServerCore);
here a real embedded server answers gRPC MultiInference (there is no REST
form). Each test names the C++ TYPED_TEST_P it translates.
"""

from __future__ import annotations

import grpc
import pytest
from tensorflow_serving.apis import inference_pb2
from tfs_contract_helpers import HALF_PLUS_TWO, Stubs, start_server, tfs_testdata

from serving import config as cfg
from serving.savedmodel import CLASSIFY_METHOD, PREDICT_METHOD, REGRESS_METHOD

MODEL = "test_model"
VERSION = 123


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    model = cfg.model_config(MODEL, tfs_testdata() / HALF_PLUS_TWO)
    server = start_server(tmp_path_factory.mktemp("tfs_multi_inference"), model)
    stubs = Stubs(server.grpc_address)
    yield stubs
    stubs.close()
    server.stop()


def _request(*tasks, x=2.0, model=MODEL, version=None) -> inference_pb2.MultiInferenceRequest:
    """C++ AddInput({{"x", x}}) (none when x is None) and PopulateTask(signature, method) per task."""
    request = inference_pb2.MultiInferenceRequest()
    if x is not None:
        request.input.example_list.examples.add().features.feature["x"].float_list.value.append(x)
    for signature_name, method_name, *task_model in tasks:
        task = request.tasks.add()
        task.model_spec.name = task_model[0] if task_model else model
        task.model_spec.signature_name = signature_name
        if version is not None:
            task.model_spec.version.value = version
        task.method_name = method_name
    return request


def _values(result: inference_pb2.InferenceResult) -> list[float]:
    if result.HasField("regression_result"):
        return [r.value for r in result.regression_result.regressions]
    return [c.score for row in result.classification_result.classifications for c in row.classes]


@pytest.mark.parametrize("version", [None, VERSION], ids=["latest", "version_in_task"])
@pytest.mark.parametrize(
    "tasks, expected",
    [
        ([("regress_x_to_y", REGRESS_METHOD)], [[3.0]]),
        ([("regress_x_to_y", REGRESS_METHOD), ("regress_x_to_y2", REGRESS_METHOD)], [[3.0], [4.0]]),
        ([("regress_x_to_y", REGRESS_METHOD), ("classify_x_to_y", CLASSIFY_METHOD)], [[3.0], [3.0]]),
    ],
    ids=["ValidSingleSignatureTest", "MultipleValidRegressSignaturesTest", "RegressAndClassifySignaturesTest"],
)
def test_valid_tasks_answer_each_with_its_model_spec(stubs, tasks, expected, version):
    """One result per task, in order; each result's model_spec is its task's, with the version that
    ran (the helper test also sets the version in the tasks)."""
    request = _request(*tasks, version=version)
    response = stubs.prediction.MultiInference(request, timeout=20)
    assert [_values(result) for result in response.results] == expected
    for task, result in zip(request.tasks, response.results):
        spec = result.model_spec
        assert (spec.name, spec.signature_name, spec.version.value) == (MODEL, task.model_spec.signature_name, VERSION)


def test_classification_result_has_a_score_and_no_label(stubs):
    """RegressAndClassifySignaturesTest's classification: one class, score 3, no label."""
    response = stubs.prediction.MultiInference(_request(("classify_x_to_y", CLASSIFY_METHOD)), timeout=20)
    [classification] = response.results[0].classification_result.classifications
    assert [(c.label, c.score) for c in classification.classes] == [("", 3.0)]


@pytest.mark.parametrize(
    "request_proto, code, text",
    [
        (_request(("regress_x_to_y", REGRESS_METHOD), x=None), grpc.StatusCode.INVALID_ARGUMENT, "Input is empty"),
        (
            _request(("regress_x_to_y", REGRESS_METHOD), ("regress_x_to_y", REGRESS_METHOD, "ModelDoesNotExist")),
            grpc.StatusCode.INVALID_ARGUMENT,
            "must access the same model name",
        ),
        (
            _request(("regress_x_to_y", REGRESS_METHOD), ("regress_x_to_y", REGRESS_METHOD)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "Duplicate evaluation of signature: regress_x_to_y",
        ),
        (
            _request(("serving_default", PREDICT_METHOD)),
            grpc.StatusCode.UNIMPLEMENTED,
            "Unsupported signature method_name: tensorflow/serving/predict",
        ),
        (
            _request(("regress_x_to_y", REGRESS_METHOD), ("", REGRESS_METHOD, "")),
            grpc.StatusCode.INVALID_ARGUMENT,
            "Found ModelSpec with an empty model name.",
        ),
    ],
    ids=[
        "MissingInputTest",
        "InconsistentModelSpecsInRequestTest",
        "EvaluateDuplicateSignaturesTest",
        "UsupportedSignatureTypeTest",
        "empty_model_name_in_a_later_task",
    ],
)
def test_bad_requests_get_tf_serving_codes_and_messages(stubs, request_proto, code, text):
    """Each C++ error case: its status code and message substring."""
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.MultiInference(request_proto, timeout=20)
    assert caught.value.code() == code
    assert text in caught.value.details()


def test_undefined_signature_is_invalid_argument_with_tf_serving_wording(stubs):
    """UndefinedSignatureTest: INVALID_ARGUMENT "Requested signature not found in model graph", as TF
    Serving answers, its wording first."""
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.MultiInference(_request(("ThisSignatureDoesNotExist", REGRESS_METHOD)), timeout=20)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("Requested signature not found in model graph: ThisSignatureDoesNotExist")
    assert "signature not found" in caught.value.details()


@pytest.mark.parametrize(
    "model, version",
    [("nonexistent_model", None), (MODEL, 7)],
    ids=["unknown_model", "unknown_version"],
)
def test_first_task_model_spec_picks_the_servable(stubs, model, version):
    """ModelSpecOverride's wire half (RunMultiInferenceWithServerCore): the servable is the first
    task's model spec; one that names no loaded servable is NOT_FOUND, before the tasks are checked."""
    request = _request(("regress_x_to_y", REGRESS_METHOD), model=model, version=version)
    request.tasks.add().model_spec.name = "another_model"  # checked only once the servable is found
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.MultiInference(request, timeout=20)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "Servable not found for request" in caught.value.details()


def test_no_tasks_is_invalid_argument(stubs):
    """No tasks: TF Serving's helper looks up an empty ModelSpec ("ModelSpec has no name specified."),
    INVALID_ARGUMENT; this server says what is missing, with the same code."""
    with pytest.raises(grpc.RpcError) as caught:
        stubs.prediction.MultiInference(_request(), timeout=20)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "MultiInferenceRequest has no tasks" in caught.value.details()
