"""TF Serving's contract on TF2 SavedModels, exported here the way TF Serving's tests export them.

Translated from tensorflow/serving's `tensorflow_model_server_test.py`
(test_tf_saved_model_save, test_tf_saved_model_save_multiple_signatures,
test_sequential_keras_saved_model_save): each writes `<base>/00000123` with
`tf.saved_model.save` and predicts x = 2.0 over gRPC. Plus SignatureDef input
keys that differ from the function's argument names (column names with
spaces, rewritten after export), which TF Serving serves by tensor name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow_serving.apis import predict_pb2
from tfs_contract_helpers import start_server

from serving import config as cfg
from serving.server.model.binding import BindingError, bind_arguments


def _export_tf_saved_model_save(base: Path) -> None:
    root = tf.train.Checkpoint()
    root.v1 = tf.Variable(3.0)
    root.v2 = tf.Variable(2.0)
    root.f = tf.function(lambda x: {"y": root.v1 * root.v2 * x})
    tf.saved_model.save(root, str(base / "00000123"), root.f.get_concrete_function(tf.TensorSpec(None, tf.float32)))


def _export_multiple_signatures(base: Path) -> None:
    root = tf.train.Checkpoint()
    root.f = tf.function(lambda x: {"y": 1.0}, input_signature=[tf.TensorSpec(None, tf.float32)])
    root.g = tf.function(lambda x: {"y": 2.0}, input_signature=[tf.TensorSpec(None, tf.float32)])
    tf.saved_model.save(
        root, str(base / "00000123"), signatures={"serving_default": root.f, "custom_signature_key": root.g}
    )


def _export_keras_sequential(base: Path) -> None:
    model = tf.keras.models.Sequential()
    model.add(tf.keras.layers.Input(dtype="float32", shape=(1,), name="x"))
    model.add(tf.keras.layers.Lambda(lambda x: x, name="y"))
    tf.saved_model.save(model, str(base / "00000123"))


class _Columns(tf.Module):
    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.float32, name="mean_radius"),
            tf.TensorSpec([None], tf.float32, name="mean_texture"),
        ]
    )
    def serve(self, mean_radius, mean_texture):
        return {"score": 10.0 * mean_radius + mean_texture}


def _export_renamed_columns(base: Path) -> None:
    """Signature keys rewritten to column names with spaces; placeholders keep the sanitized names."""
    module = _Columns()
    export = base / "00000123"
    tf.saved_model.save(module, str(export), signatures={"serving_default": module.serve.get_concrete_function()})
    saved_model = saved_model_pb2.SavedModel.FromString((export / "saved_model.pb").read_bytes())
    signature = saved_model.meta_graphs[0].signature_def["serving_default"]
    for old, new in [("mean_radius", "mean radius"), ("mean_texture", "mean texture")]:
        signature.inputs[new].CopyFrom(signature.inputs[old])
        del signature.inputs[old]
    (export / "saved_model.pb").write_bytes(saved_model.SerializeToString())


EXPORTS = {
    "tf_saved_model_save": _export_tf_saved_model_save,
    "multiple_signatures": _export_multiple_signatures,
    "keras_sequential": _export_keras_sequential,
    "renamed_columns": _export_renamed_columns,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("tfs_tf2")
    models = []
    for name, export in EXPORTS.items():
        export(root / name)
        models.append(cfg.model_config(name, root / name))
    server = start_server(root / "cfg", *models)
    yield server
    server.stop()


def _predict(stubs, model, shape, signature_name="serving_default", output_filter=("y",)):
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    request.model_spec.signature_name = signature_name
    request.inputs["x"].CopyFrom(tf.make_tensor_proto([2.0], dtype=tf.float32, shape=shape))
    request.output_filter.extend(output_filter)
    return stubs.prediction.Predict(request, timeout=20)


@pytest.mark.parametrize(
    "model, shape, signature_name, expected",
    [
        ("tf_saved_model_save", [1], "serving_default", 12.0),  # test_tf_saved_model_save
        ("multiple_signatures", [1], "custom_signature_key", 2.0),  # ..._multiple_signatures
        ("multiple_signatures", [1], "serving_default", 1.0),
        ("keras_sequential", [1, 1], "serving_default", 2.0),  # test_sequential_keras_saved_model_save
    ],
)
def test_tf2_saved_models(stubs, model, shape, signature_name, expected):
    """y is one float in float_val; version 123 from the zero-padded folder."""
    result = _predict(stubs, model, shape, signature_name)
    assert list(result.outputs["y"].float_val) == [expected]
    assert (result.model_spec.signature_name, result.model_spec.version.value) == (signature_name, 123)


def test_tf2_input_shape_is_checked_with_a_clear_message(stubs, server):
    """A TF2 function checks shapes against its input signature ([-1, 1] here); we refuse earlier, naming it.

    TF Serving's C++ session would feed the [3] tensor; see "Differences from TF Serving".
    """
    status, body = http(server.rest_url, "POST", "/v1/models/keras_sequential:predict", {"instances": [1.0, 2.0, 3.0]})
    assert status == 400
    assert "Input 'x' has an incompatible shape" in body["error"]
    assert "Received: shape [3]" in body["error"]


def test_signature_keys_that_are_not_argument_names(server):
    """Keys `mean radius`/`mean texture` on placeholders serving_default_mean_radius/_texture are bound by tensor."""
    status, body = http(
        server.rest_url,
        "POST",
        "/v1/models/renamed_columns:predict",
        {"instances": [{"mean radius": 1.0, "mean texture": 2.0}, {"mean radius": 3.0, "mean texture": 0.5}]},
    )
    assert (status, body) == (200, {"predictions": [12.0, 30.5]})
    status, body = http(server.rest_url, "GET", "/v1/models/renamed_columns/metadata")
    inputs = body["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"]
    assert sorted(inputs) == ["mean radius", "mean texture"]


def _signature_def(**inputs):
    saved_model = saved_model_pb2.SavedModel()
    signature = saved_model.meta_graphs.add().signature_def["serving_default"]
    for alias, tensor in inputs.items():
        signature.inputs[alias].name = tensor
    return signature


@pytest.mark.parametrize(
    "inputs, keywords, expected",
    [
        ({"x": "x:0"}, ["x"], {"x": "x"}),
        ({"mean radius": "serving_default_mean_radius:0"}, ["mean_radius"], {"mean radius": "mean_radius"}),
        (
            {"a b": "serving_default_a_b:0", "c d": "serving_default_c_d:0"},
            ["c_d", "a_b"],
            {"a b": "a_b", "c d": "c_d"},
        ),
        ({"only": "some_tensor:0"}, ["arg"], {"only": "arg"}),
        ({}, [], {}),
    ],
    ids=["same_name", "placeholder_name", "two_by_placeholder", "one_left_over", "no_inputs"],
)
def test_bind_arguments(inputs, keywords, expected):
    assert bind_arguments("serving_default", _signature_def(**inputs), keywords) == expected


@pytest.mark.parametrize(
    "inputs, keywords",
    [
        ({"a": "t1:0", "b": "t2:0"}, ["p", "q"]),
        ({"a": "a:0"}, ["a", "extra"]),
        ({"a": "a:0", "b": "b:0"}, ["a"]),
    ],
    ids=["two_unmatched", "extra_argument", "missing_argument"],
)
def test_bind_arguments_refuses_what_it_cannot_match(inputs, keywords):
    with pytest.raises(BindingError) as caught:
        bind_arguments("serving_default", _signature_def(**inputs), keywords)
    text = str(caught.value)
    assert "match no argument of its function" in text
    assert f"Received: function arguments {keywords}" in text
