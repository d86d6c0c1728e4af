"""TF Serving's Classify and Regress rules on a servable, over the wire.

Translated from tensorflow/serving's `servables/tensorflow/classifier_test.cc`
and `regressor_test.cc`. Those tests hand-build SignatureDefs over a fake
session that copies features of each tf.Example to the outputs (`class` bytes
and `score` floats to `classes`/`scores`, `output` to `outputs`), and a mock
session that returns tensors of the wrong rank, dtype or batch size. Here one
TF1 SavedModel per API is exported with the same signatures, the fake session
being real parse ops and the mock's tensors real slices and casts of them,
and a real embedded server answers gRPC and REST. Each test names the C++
TEST_P it translates; both of its parameters (method name check on/off) are
covered where they differ: the server has TF Serving's default, the check off.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow.core.protobuf import meta_graph_pb2
from tensorflow_serving.apis import classification_pb2, inference_pb2, predict_pb2, regression_pb2
from tfs_contract_helpers import start_server

from serving import config as cfg
from serving.savedmodel import CLASSIFY_METHOD, REGRESS_METHOD

CLASSIFIER, REGRESSOR = "classifier", "regressor"
VERSION = 1
V1 = tf.compat.v1


def _signature(serialized, outputs: dict, method: str) -> meta_graph_pb2.SignatureDef:
    signature = meta_graph_pb2.SignatureDef(method_name=method)
    signature.inputs["inputs"].CopyFrom(V1.saved_model.build_tensor_info(serialized))
    for alias, tensor in outputs.items():
        signature.outputs[alias].CopyFrom(V1.saved_model.build_tensor_info(tensor))
    return signature


def _failing(tensor):
    """`tensor`, but the run fails (the C++ MockSession's "Run totally failed")."""
    check = tf.debugging.Assert(tf.constant(False), ["Run totally failed"])
    with tf.control_dependencies([check]):
        return tf.identity(tensor)


def _classifier_signatures(serialized) -> dict[str, meta_graph_pb2.SignatureDef]:
    parsed = V1.io.parse_example(
        serialized, {"class": V1.io.VarLenFeature(tf.string), "score": V1.io.VarLenFeature(tf.float32)}
    )
    classes = tf.sparse.to_dense(parsed["class"], default_value="")
    scores = tf.sparse.to_dense(parsed["score"])
    plus_one = scores + 1.0

    def classify(method=CLASSIFY_METHOD, **outputs):
        return _signature(serialized, outputs, method)

    return {
        "serving_default": classify(classes=classes, scores=scores),
        "output_plus_one": classify(classes=classes, scores=plus_one),
        "invalid_regression_signature": _signature(serialized, {"outputs": plus_one}, REGRESS_METHOD),
        "ImproperlySizedScoresSignature": classify(classes=classes, scores=tf.tile(scores[:, :, None], [1, 1, 10])),
        "classes_only": classify(classes=classes),
        "scores_only": classify(scores=scores),
        "missing": meta_graph_pb2.SignatureDef(),
        "runs_fails": classify(classes=_failing(classes), scores=scores),
        "classes_batch_1": classify(classes=classes[:1], scores=scores),
        "classes_float": classify(classes=scores, scores=scores),
        "scores_batch_1": classify(classes=classes, scores=scores[:1]),
        "scores_string": classify(classes=classes, scores=classes),
        "three_scores_two_classes": classify(classes=classes, scores=tf.concat([scores, scores[:, :1]], axis=1)),
        "unsupported_method": classify(method="not/supported/method", classes=classes, scores=scores),
        "empty_method": classify(method="", classes=classes, scores=scores),
    }


def _regressor_signatures(serialized) -> dict[str, meta_graph_pb2.SignatureDef]:
    output = tf.sparse.to_dense(V1.io.parse_example(serialized, {"output": V1.io.VarLenFeature(tf.float32)})["output"])
    values = output[:, 0]  # [batch_size]

    def regress(outputs, method=REGRESS_METHOD):
        return _signature(serialized, {"outputs": outputs}, method)

    return {
        "serving_default": regress(values),
        "output_plus_one": regress(output + 1.0),  # [batch_size, 1]
        "invalid_classification_signature": _signature(serialized, {"classes": output + 1.0}, CLASSIFY_METHOD),
        "ImproperlySizedOutputSignature": regress(tf.tile(output[:, :, None], [1, 1, 10])),
        "missing": meta_graph_pb2.SignatureDef(),
        "runs_fails": regress(_failing(values)),
        "two_values": regress(tf.concat([values, values], axis=0)),
        "string_output": regress(tf.strings.as_string(values)),
        "unsupported_method": regress(values, method="not/supported/method"),
        "empty_method": regress(values, method=""),
    }


def _export(path: Path, signatures) -> None:
    graph = tf.Graph()
    with graph.as_default(), V1.Session(graph=graph) as session:
        serialized = V1.placeholder(tf.string, [None], name="input")
        builder = V1.saved_model.Builder(str(path))
        builder.add_meta_graph_and_variables(session, ["serve"], signature_def_map=signatures(serialized))
        builder.save()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("tfs_classify_regress")
    _export(root / CLASSIFIER / str(VERSION), _classifier_signatures)
    _export(root / REGRESSOR / str(VERSION), _regressor_signatures)
    models = [cfg.model_config(CLASSIFIER, root / CLASSIFIER), cfg.model_config(REGRESSOR, root / REGRESSOR)]
    server = start_server(root / "config", *models)
    yield server
    server.stop()


def _example(class_scores=(), output=None) -> tf.train.Example:
    """classifier_test's example(): `class` and `score` features; regressor_test's: `output`."""
    example = tf.train.Example()
    features = example.features.feature
    for label, score in class_scores:
        features["class"].bytes_list.value.append(label.encode())
        features["score"].float_list.value.append(score)
    if output is not None:
        features["output"].float_list.value.append(output)
    return example


TWO_EXAMPLES = [[("dos", 2), ("uno", 1)], [("cuatro", 4), ("tres", 3)]]


def _classify(stubs, signature_name="", examples=TWO_EXAMPLES, context=None):
    request = classification_pb2.ClassificationRequest()
    request.model_spec.name = CLASSIFIER
    request.model_spec.signature_name = signature_name
    if context is None:
        request.input.example_list.examples.extend(_example(e) for e in examples)
    else:
        request.input.example_list_with_context.context.CopyFrom(_example(context))
        request.input.example_list_with_context.examples.extend(_example(e) for e in examples)
    return stubs.prediction.Classify(request, timeout=20)


def _labels_and_scores(response) -> list[list[tuple[str, float]]]:
    return [[(c.label, c.score) for c in row.classes] for row in response.result.classifications]


def _rpc_error(call, *args, **kwargs) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- classifier_test.cc ---


@pytest.mark.parametrize(
    "signature_name, expected",
    [
        ("", [[("dos", 2), ("uno", 1)], [("cuatro", 4), ("tres", 3)]]),  # ExampleList
        ("output_plus_one", [[("dos", 3), ("uno", 2)], [("cuatro", 5), ("tres", 4)]]),  # ValidNamedSignature
        ("classes_only", [[("dos", 0), ("uno", 0)], [("cuatro", 0), ("tres", 0)]]),  # ClassesOnly
        ("scores_only", [[("", 2), ("", 1)], [("", 4), ("", 3)]]),  # ScoresOnly
        ("unsupported_method", [[("dos", 2), ("uno", 1)], [("cuatro", 4), ("tres", 3)]]),  # MethodNameCheck
        ("empty_method", [[("dos", 2), ("uno", 1)], [("cuatro", 4), ("tres", 3)]]),  # MethodNameCheck
    ],
    ids=["ExampleList", "ValidNamedSignature", "ClassesOnly", "ScoresOnly", "not_supported_method", "empty_method"],
)
def test_classify_example_list(stubs, signature_name, expected):
    """Two examples classify to their own labels and scores; a missing output leaves its field
    empty. MethodNameCheck with the check off (TF Serving's default flag): any method name works."""
    response = _classify(stubs, signature_name)
    assert _labels_and_scores(response) == expected
    spec = response.model_spec
    assert (spec.name, spec.version.value, spec.signature_name) == (
        CLASSIFIER,
        VERSION,
        signature_name or "serving_default",
    )


@pytest.mark.parametrize(
    "context, examples, expected",
    [
        ([("dos", 2), ("uno", 1)], [[], []], [[("dos", 2), ("uno", 1)], [("dos", 2), ("uno", 1)]]),
        (
            [("uno", 1), ("dos", 2)],
            [[], [("tres", 3), ("cuatro", 4)]],
            [[("uno", 1), ("dos", 2)], [("tres", 3), ("cuatro", 4)]],
        ),
    ],
    ids=["ExampleListWithContext", "ExampleListWithContext_DuplicateFeatures"],
)
def test_classify_example_list_with_context(stubs, context, examples, expected):
    """The context is merged into every example; an example's own feature wins over the context's."""
    assert _labels_and_scores(_classify(stubs, examples=examples, context=context)) == expected


def test_classify_zero_scores_are_present(server, stubs):
    """ZeroScoresArePresent: scores -1, 0, 1 of a scores-only signature, 0 included (REST shows it)."""
    response = _classify(stubs, "scores_only", examples=[[("minus", -1), ("zero", 0), ("one", 1)]])
    assert [c.score for c in response.result.classifications[0].classes] == [-1.0, 0.0, 1.0]
    body = {
        "signature_name": "scores_only",
        "examples": [{"class": ["minus", "zero", "one"], "score": [-1.0, 0.0, 1.0]}],
    }
    assert http(server.rest_url, "POST", f"/v1/models/{CLASSIFIER}:classify", body) == (
        200,
        {"results": [[["", -1.0], ["", 0.0], ["", 1.0]]]},
    )


@pytest.mark.parametrize(
    "signature_name, code, text",
    [
        # InvalidNamedSignature: a regression signature has neither classes nor scores.
        (
            "invalid_regression_signature",
            grpc.StatusCode.INVALID_ARGUMENT,
            'Expected classification signature outputs to contain at least one of "classes" or "scores"',
        ),
        # MalformedScores: rank 3.
        (
            "ImproperlySizedScoresSignature",
            grpc.StatusCode.INVALID_ARGUMENT,
            "Expected Tensor shape: [batch_size num_classes] but got [2,2,10]",
        ),
        # MissingClassificationSignature: an empty SignatureDef.
        ("missing", grpc.StatusCode.INVALID_ARGUMENT, "Expected one input Tensor."),
        ("classes_batch_1", grpc.StatusCode.INVALID_ARGUMENT, "Expected classes output batch size of 2. Got: 1"),
        ("classes_float", grpc.StatusCode.INVALID_ARGUMENT, "Expected classes Tensor of DT_STRING. Got: DT_FLOAT"),
        ("scores_batch_1", grpc.StatusCode.INVALID_ARGUMENT, "Expected scores output batch size of 2. Got: 1"),
        ("scores_string", grpc.StatusCode.INVALID_ARGUMENT, "Expected scores Tensor of DT_FLOAT. Got: DT_STRING"),
        (
            "three_scores_two_classes",
            grpc.StatusCode.INVALID_ARGUMENT,
            "Tensors class and score should match in dim_size(1). Got 2 vs. 3",
        ),
        # RunsFails: the session's own error comes back (here TensorFlow's INVALID_ARGUMENT of a failed Assert).
        ("runs_fails", grpc.StatusCode.INVALID_ARGUMENT, "Run totally failed"),
    ],
    ids=[
        "InvalidNamedSignature",
        "MalformedScores",
        "MissingClassificationSignature",
        "ClassesIncorrectTensorBatchSize",
        "ClassesIncorrectTensorType",
        "ScoresIncorrectTensorBatchSize",
        "ScoresIncorrectTensorType",
        "MismatchedNumberOfTensorClasses",
        "RunsFails",
    ],
)
def test_classify_errors(server, stubs, signature_name, code, text):
    """Each C++ error case: its status code and message substring, over gRPC and REST (400)."""
    error = _rpc_error(_classify, stubs, signature_name)
    assert error.code() == code
    assert text in error.details()
    body = {"signature_name": signature_name, "examples": [{"class": ["dos", "uno"], "score": [2.0, 1.0]}] * 2}
    status, answer = http(server.rest_url, "POST", f"/v1/models/{CLASSIFIER}:classify", body)
    assert (status, text in answer["error"]) == (400, True)


def _empty_input(request) -> None:
    request.input.SetInParent()


def _empty_example_list(request) -> None:
    request.input.example_list.SetInParent()


def _context_only(request) -> None:
    request.input.example_list_with_context.context.CopyFrom(_example([("dos", 2)], output=2.0))


@pytest.mark.parametrize("api", ["classify", "regress"])
@pytest.mark.parametrize(
    "fill",
    [_empty_input, _empty_example_list, _context_only],
    ids=["EmptyInput", "EmptyExampleList", "EmptyExampleListWithContext"],
)
def test_empty_input_is_invalid_argument(stubs, api, fill):
    """EmptyInput, EmptyExampleList, EmptyExampleListWithContext (both tests): "Input is empty"."""
    request = classification_pb2.ClassificationRequest() if api == "classify" else regression_pb2.RegressionRequest()
    request.model_spec.name = CLASSIFIER if api == "classify" else REGRESSOR
    fill(request)
    call = stubs.prediction.Classify if api == "classify" else stubs.prediction.Regress
    error = _rpc_error(call, request, timeout=20)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Input is empty" in error.details()


# --- regressor_test.cc ---


def _regress(stubs, signature_name="", outputs=(2.0, 3.0), context=None):
    request = regression_pb2.RegressionRequest()
    request.model_spec.name = REGRESSOR
    request.model_spec.signature_name = signature_name
    if context is None:
        request.input.example_list.examples.extend(_example(output=value) for value in outputs)
    else:
        request.input.example_list_with_context.context.CopyFrom(_example(output=context))
        request.input.example_list_with_context.examples.extend(_example() for _ in outputs)
    return stubs.prediction.Regress(request, timeout=20)


@pytest.mark.parametrize(
    "signature_name, expected",
    [
        ("", [2.0, 3.0]),  # BasicExampleList: outputs [batch_size]
        ("output_plus_one", [3.0, 4.0]),  # ValidNamedSignature: outputs [batch_size, 1]
        ("unsupported_method", [2.0, 3.0]),  # MethodNameCheck, the check off (TF Serving's default)
        ("empty_method", [2.0, 3.0]),
    ],
    ids=["BasicExampleList", "ValidNamedSignature", "not_supported_method", "empty_method"],
)
def test_regress_example_list(stubs, signature_name, expected):
    """One value per example; the answer's model_spec names the signature that ran."""
    response = _regress(stubs, signature_name)
    assert [r.value for r in response.result.regressions] == expected
    spec = response.model_spec
    assert (spec.name, spec.version.value, spec.signature_name) == (
        REGRESSOR,
        VERSION,
        signature_name or "serving_default",
    )


def test_regress_example_list_with_context(stubs):
    """BasicExampleListWithContext: two empty examples take `output` = 3 from the context."""
    assert [r.value for r in _regress(stubs, context=3.0).result.regressions] == [3.0, 3.0]


@pytest.mark.parametrize(
    "signature_name, outputs, text",
    [
        ("invalid_classification_signature", (2.0, 3.0), "No regression outputs found in SignatureDef"),
        (
            "ImproperlySizedOutputSignature",
            (2.0, 3.0),
            "Expected output Tensor shape to be either [batch_size] or [batch_size, 1] but got [2,1,10]",
        ),
        ("missing", (2.0, 3.0), "Expected one input Tensor."),
        ("two_values", (2.0,), "Input batch size did not match output batch size: 1 vs. 2"),
        ("string_output", (2.0,), "Expected output Tensor of DT_FLOAT.  Got: DT_STRING"),
        ("runs_fails", (2.0,), "Run totally failed"),
    ],
    ids=[
        "InvalidNamedSignature",
        "MalformedOutputs",
        "MissingRegressionSignature",
        "UnexpectedOutputTensorSize",
        "UnexpectedOutputTensorType",
        "RunsFails",
    ],
)
def test_regress_errors(server, stubs, signature_name, outputs, text):
    """Each C++ error case: INVALID_ARGUMENT and its message substring, over gRPC and REST (400)."""
    error = _rpc_error(_regress, stubs, signature_name, outputs)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert text in error.details()
    body = {"signature_name": signature_name, "examples": [{"output": value} for value in outputs]}
    status, answer = http(server.rest_url, "POST", f"/v1/models/{REGRESSOR}:regress", body)
    assert (status, text in answer["error"]) == (400, True)


@pytest.mark.parametrize(
    "api, body, expected",
    [
        (
            "classify",
            {"examples": [{"class": ["dos", "uno"], "score": [2.0, 1.0]}]},
            {"results": [[["dos", 2.0], ["uno", 1.0]]]},
        ),
        ("regress", {"signature_name": "output_plus_one", "examples": [{"output": 2.0}]}, {"results": [3.0]}),
        ("regress", {"context": {"output": 3.0}, "examples": [{}, {}]}, {"results": [3.0, 3.0]}),
    ],
    ids=["classify_ExampleList", "regress_ValidNamedSignature", "regress_BasicExampleListWithContext"],
)
def test_rest_answers_the_same(server, api, body, expected):
    """The REST form of the successful cases."""
    model = CLASSIFIER if api == "classify" else REGRESSOR
    assert http(server.rest_url, "POST", f"/v1/models/{model}:{api}", body) == (200, expected)


def test_multi_inference_fills_in_the_default_signature_name(stubs):
    """multi_inference.cc's MakeModelSpec: a task without signature_name runs `serving_default`, and
    its result's model_spec says so."""
    request = inference_pb2.MultiInferenceRequest()
    task = request.tasks.add()
    task.model_spec.name = CLASSIFIER
    task.method_name = CLASSIFY_METHOD
    request.input.example_list.examples.append(_example([("dos", 2), ("uno", 1)]))
    [result] = stubs.prediction.MultiInference(request, timeout=20).results
    assert [(c.label, c.score) for c in result.classification_result.classifications[0].classes] == [
        ("dos", 2.0),
        ("uno", 1.0),
    ]
    spec = result.model_spec
    assert (spec.name, spec.version.value, spec.signature_name) == (CLASSIFIER, VERSION, "serving_default")


@pytest.mark.parametrize("signature_name", ["unsupported_method", "empty_method"])
def test_predict_runs_a_signature_of_any_method_name(stubs, signature_name):
    """predict_util_test's MethodNameCheck with the check off (TF Serving's default flag): Predict
    runs a signature whose method name is "not/supported/method" or empty."""
    request = predict_pb2.PredictRequest()
    request.model_spec.name = CLASSIFIER
    request.model_spec.signature_name = signature_name
    serialized = _example([("dos", 2), ("uno", 1)]).SerializeToString()
    request.inputs["inputs"].CopyFrom(tf.make_tensor_proto([serialized], tf.string))
    response = stubs.prediction.Predict(request, timeout=20)
    assert tf.make_ndarray(response.outputs["classes"]).tolist() == [[b"dos", b"uno"]]
    assert tf.make_ndarray(response.outputs["scores"]).tolist() == [[2.0, 1.0]]
