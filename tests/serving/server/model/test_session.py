"""TF2 SavedModels served from a session, as TensorFlow Serving serves them
(`serving/server/model/session.py`, `Servable.load`).

The answers must equal the TF2 signature functions' for the same inputs:
several inputs whose feed order matters, strings, float64, and the server's
own linear model, a ragged input (fed as its components). A session that
cannot load falls back to the functions.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import MODEL, export_linear, push
from tensorflow.core.protobuf import meta_graph_pb2

from serving.server.model import servable as servable_module
from serving.server.model.servable import Servable
from serving.server.model.session import SESSION_CONFIG, SessionSignature, dense_signatures


class _Model(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = tf.Variable(3.0)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "bb"]), tf.constant([1, 2], tf.int64)), -1
        )

    # Declared zeta, alpha, mid: not symmetric in zeta and alpha, so a wrong feed order changes the answer.
    @tf.function(
        input_signature=[
            tf.TensorSpec([None, 2], tf.float32, name="zeta"),
            tf.TensorSpec([None, 2], tf.float32, name="alpha"),
            tf.TensorSpec([None], tf.int64, name="mid"),
        ]
    )
    def mixed(self, zeta, alpha, mid):
        return {
            "difference": zeta - self.scale * alpha + tf.cast(mid, tf.float32)[:, None],
            "mid_plus_one": mid + 1,
        }

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def words(self, text):
        return {"length": tf.strings.length(text), "id": self.table.lookup(text)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64, name="x")])
    def doubles(self, x):
        return {"sum": tf.reduce_sum(x, axis=1)}


FEEDS = {
    "mixed": {
        "zeta": np.array([[1.0, 2.0], [3.0, -4.0]], np.float32),
        "alpha": np.array([[0.5, 0.0], [1.0, 2.0]], np.float32),
        "mid": np.array([7, -2], np.int64),
    },
    "words": {"text": np.array([b"a", b"bb", b"ccc", b""], dtype=object)},
    "doubles": {"x": np.array([[0.1, 0.2, 0.3], [1e300, -1e300, 1.0]], np.float64)},
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("session") / "1"
    model = _Model()
    tf.saved_model.save(
        model, str(path), signatures={"mixed": model.mixed, "words": model.words, "doubles": model.doubles}
    )
    return path


def _function_outputs(path: Path, name: str, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    function = tf.saved_model.load(str(path)).signatures[name]
    tensors = {
        key: tf.constant(value, dtype=tf.string if value.dtype == object else None) for key, value in feeds.items()
    }
    return {alias: value.numpy() for alias, value in function(**tensors).items()}


@pytest.mark.parametrize("name", sorted(FEEDS))
def test_tf2_signatures_run_in_a_session_with_the_functions_answers(saved, name):
    servable = Servable.load(MODEL, 1, saved)
    signature = servable.signature(name)
    assert isinstance(signature.function, SessionSignature)
    assert not signature.feeds_any_shape  # TF2 shapes are still checked as the functions check them
    got = signature.run(FEEDS[name])
    want = _function_outputs(saved, name, FEEDS[name])
    assert sorted(got) == sorted(want)
    for alias, value in want.items():
        assert got[alias].dtype == value.dtype, alias
        np.testing.assert_array_equal(got[alias], value, err_msg=alias)


def test_the_servers_linear_model_runs_in_a_session(tmp_path):
    base = tmp_path / "models" / MODEL
    base.mkdir(parents=True)
    version_dir = push(base, 1, export_linear(tmp_path / "export", [1.0, -2.0, 0.5], 0.25))
    signature = Servable.load(MODEL, 1, Path(version_dir)).signature("serving_raw")
    assert isinstance(signature.function, SessionSignature)
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]], np.float32)
    want = _function_outputs(Path(version_dir), "serving_raw", {"x": x})
    got = signature.run({"x": x})
    for alias, value in want.items():
        np.testing.assert_array_equal(got[alias], value, err_msg=alias)


def test_session_runs_ops_in_the_calling_thread():
    """The configuration the module docstring measures: no hand-off to the inter-op pool."""
    assert SESSION_CONFIG.inter_op_parallelism_threads == -1


def test_a_ragged_signature_is_served_by_its_components(tmp_path):
    """TF2 writes a ragged input as its component tensors (`values`, `values_1` the row splits): fed by name."""

    class Ragged(tf.Module):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
        def total(self, values):
            return {"sum": tf.reduce_sum(values, axis=1)}

    model = Ragged()
    path = tmp_path / "1"
    tf.saved_model.save(model, str(path), signatures={"serving_default": model.total})
    signature = Servable.load(MODEL, 1, path).signature("serving_default")
    assert isinstance(signature.function, SessionSignature)
    got = signature.run({"values": np.array([1.0, 2.0, 4.0], np.float32), "values_1": np.array([0, 2, 3], np.int64)})
    np.testing.assert_array_equal(got["sum"], [3.0, 4.0])


def test_only_named_tensors_count_as_dense():
    named = meta_graph_pb2.SignatureDef()
    named.inputs["x"].name = "x:0"
    named.outputs["y"].name = "y:0"
    sparse = meta_graph_pb2.SignatureDef()
    sparse.CopyFrom(named)
    sparse.inputs["ids"].coo_sparse.values_tensor_name = "ids/values:0"
    assert dense_signatures({"a": named})
    assert not dense_signatures({"a": named, "b": sparse})


def test_a_model_the_session_cannot_load_falls_back_to_the_tf2_loader(saved, monkeypatch, caplog):
    def refuse(path):
        raise ValueError("refused for the test")

    monkeypatch.setattr(servable_module, "load_session", refuse)
    caplog.set_level(logging.WARNING, logger=servable_module.__name__)  # whatever level earlier tests left on root
    signature = Servable.load(MODEL, 1, saved).signature("doubles")
    assert not isinstance(signature.function, SessionSignature)
    np.testing.assert_allclose(signature.run(FEEDS["doubles"])["sum"], [0.6, 1.0])
    assert "refused for the test" in caplog.text
