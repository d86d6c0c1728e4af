"""A PredictRequest's output_filter is checked before the model runs.

TF Serving's `PreProcessPrediction` (tensorflow_serving/servables/tensorflow/
predict_util.cc) checks every `output_filter` alias (unknown: "output tensor
alias not found in signature", repeated: "duplicate output tensor alias")
before `Session::Run`, so a refused request runs nothing. The stateful
`saved_model_counter` (TF Serving's own test model) shows it over the wire: a
refused `incr_counter` must leave the counter where it was.
"""

from __future__ import annotations

import grpc
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2
from tfs_contract_helpers import COUNTER, Stubs, start_server, tfs_testdata

from serving import config as cfg

MODEL = "counter"


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    server = start_server(
        tmp_path_factory.mktemp("tfs_output_filter"), cfg.model_config(MODEL, tfs_testdata() / COUNTER)
    )
    stubs = Stubs(server.grpc_address)
    yield stubs
    stubs.close()
    server.stop()


def _predict(stubs, signature_name: str, output_filter: list[str] = ()) -> predict_pb2.PredictResponse:
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = signature_name
    request.output_filter.extend(output_filter)
    return stubs.prediction.Predict(request, timeout=20)


def _counter(stubs, signature_name: str, output_filter: list[str] = ()) -> float:
    return float(tf.make_ndarray(_predict(stubs, signature_name, output_filter).outputs["output"]))


@pytest.mark.parametrize(
    "output_filter, text",
    [
        (["nope"], "output tensor alias not found in signature: nope"),
        (["output", "output"], "duplicate output tensor alias: output"),
        (["output", "nope"], "output tensor alias not found in signature: nope"),
    ],
    ids=["unknown", "duplicate", "valid_then_unknown"],
)
def test_a_refused_output_filter_does_not_run_the_model(stubs, output_filter, text):
    assert _counter(stubs, "reset_counter") == 0.0
    with pytest.raises(grpc.RpcError) as caught:
        _predict(stubs, "incr_counter", output_filter)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert text in caught.value.details()
    assert _counter(stubs, "get_counter") == 0.0  # incr_counter never ran


def test_a_valid_output_filter_runs_the_model_once(stubs):
    """The control: the same request with a valid filter increments the counter, once."""
    assert _counter(stubs, "reset_counter") == 0.0
    assert _counter(stubs, "incr_counter", ["output"]) == 1.0
    assert _counter(stubs, "get_counter") == 1.0
