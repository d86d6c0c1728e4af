"""The flat call of loaded TF2 signatures (`serving/server/flat_call.py`).

These tests fail when a TensorFlow upgrade takes the fast path away (the
call returned for a plain `tf.saved_model.save` signature is no longer a
`FlatSignatureCall`) or changes its answers (they must equal the public
call's for the same inputs), and check that anything the fast path was not
written for gets the public call.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from serving_helpers import MODEL, export_linear, push

from serving.server.flat_call import FlatSignatureCall, flat_signature_call
from serving.server.servable import Servable

# Declared zeta, alpha, mid; TensorFlow's flat order is alpha, mid, zeta.
ZETA = tf.TensorSpec([None, 2], tf.float32, name="zeta")
ALPHA = tf.TensorSpec([None, 2], tf.float32, name="alpha")
MID = tf.TensorSpec([None], tf.int64, name="mid")
SPECS = {"zeta": (tf.float32, (None, 2)), "alpha": (tf.float32, (None, 2)), "mid": (tf.int64, (None,))}


class _Model(tf.Module):
    @tf.function(input_signature=[ZETA, ALPHA, MID])
    def mixed(self, zeta, alpha, mid):
        # Not symmetric in zeta and alpha (same dtype and shape): a wrong feed order changes the answer.
        return {
            "difference": zeta - 3.0 * alpha + tf.cast(mid, tf.float32)[:, None],
            "mid_plus_one": mid + 1,
        }

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def lengths(self, text):
        return {"length": tf.strings.length(text)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64, name="x")])
    def doubles(self, x):
        return {"sum": tf.reduce_sum(x, axis=1)}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    path = tmp_path_factory.mktemp("flat") / "1"
    model = _Model()
    tf.saved_model.save(
        model,
        str(path),
        signatures={"mixed": model.mixed, "lengths": model.lengths, "doubles": model.doubles},
    )
    return tf.saved_model.load(str(path))


def _numpy(outputs) -> dict[str, np.ndarray]:
    return {alias: value.numpy() for alias, value in outputs.items()}


def _assert_same(flat, public) -> None:
    assert sorted(flat) == sorted(public)
    for alias in public:
        assert flat[alias].dtype == public[alias].dtype, alias
        np.testing.assert_array_equal(flat[alias], public[alias], err_msg=alias)


def test_a_saved_signature_gets_the_flat_call(loaded):
    call = flat_signature_call(loaded.signatures["mixed"], SPECS)
    assert isinstance(call, FlatSignatureCall), (
        "TensorFlow's private ConcreteFunction._call_flat path is gone or changed shape; "
        "see serving/server/flat_call.py"
    )
    assert call.function is loaded.signatures["mixed"]


@pytest.mark.parametrize(
    "feeds",
    [
        # the server's own case: numpy arrays of the declared dtypes
        {
            "zeta": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
            "alpha": np.array([[0.5, 0.25], [-1.0, 8.0]], np.float32),
            "mid": np.array([10, -20], np.int64),
        },
        # one row, values that differ per input so a swapped feed shows
        {
            "zeta": np.array([[7.0, -7.0]], np.float32),
            "alpha": np.array([[100.0, 0.0]], np.float32),
            "mid": np.array([3], np.int64),
        },
        # dtype conversion: float64 and int32 numpy arrays, Python lists
        {
            "zeta": np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], np.float64),
            "alpha": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
            "mid": np.array([1, 2, 3], np.int32),
        },
        # tensors go in as they are
        {
            "zeta": tf.constant([[2.0, 4.0]]),
            "alpha": np.array([[1.0, 1.0]], np.float32),
            "mid": tf.constant([5], tf.int64),
        },
        # an empty batch
        {
            "zeta": np.zeros((0, 2), np.float32),
            "alpha": np.zeros((0, 2), np.float32),
            "mid": np.zeros((0,), np.int64),
        },
    ],
)
def test_flat_call_answers_as_the_public_call(loaded, feeds):
    function = loaded.signatures["mixed"]
    flat = _numpy(flat_signature_call(function, SPECS)(**feeds))
    public = _numpy(function(**feeds))
    _assert_same(flat, public)
    if len(public["mid_plus_one"]):  # the answer itself, so the test does not only compare two wrong calls
        zeta, alpha, mid = (np.asarray(feeds[k]) for k in ("zeta", "alpha", "mid"))
        expected = (zeta.astype(np.float32) - 3.0 * alpha.astype(np.float32)) + mid.astype(np.float32)[:, None]
        np.testing.assert_allclose(flat["difference"], expected, rtol=1e-6)
        np.testing.assert_array_equal(flat["mid_plus_one"], mid + 1)


def test_flat_call_of_string_and_float64_signatures(loaded):
    lengths = loaded.signatures["lengths"]
    call = flat_signature_call(lengths, {"text": (tf.string, (None,))})
    assert isinstance(call, FlatSignatureCall)
    for text in (np.array([b"", b"abc", "h\u00e9".encode()], object), [b"xy"], tf.constant([b"four"])):
        _assert_same(_numpy(call(text=text)), _numpy(lengths(text=text)))

    doubles = loaded.signatures["doubles"]
    call = flat_signature_call(doubles, {"x": (tf.float64, (None, 3))})
    assert isinstance(call, FlatSignatureCall)
    x = np.array([[0.1, 0.2, 0.3], [1e300, -1e300, 1.0]], np.float64)
    flat = _numpy(call(x=x))
    _assert_same(flat, _numpy(doubles(x=x)))
    assert flat["sum"].dtype == np.float64


@pytest.mark.parametrize(
    "specs",
    [
        {**SPECS, "mid": (tf.int32, (None,))},  # another dtype
        {**SPECS, "zeta": (tf.float32, (None, 3))},  # another shape
        {**SPECS, "zeta": (tf.float32, None)},  # unknown rank
        {**SPECS, "alpha": (tf.float32, (None,))},  # another rank
        {"zeta": SPECS["zeta"], "alpha": SPECS["alpha"]},  # an argument missing from the spec
        {**SPECS, "extra": (tf.float32, (None,))},  # an argument the function lacks
    ],
    ids=["dtype", "shape", "unknown-rank", "rank", "missing", "extra"],
)
def test_a_spec_that_does_not_match_gets_the_public_call(loaded, specs):
    function = loaded.signatures["mixed"]
    assert flat_signature_call(function, specs) is function


def test_functions_of_another_shape_get_the_public_call():
    def plain(**feeds):
        return feeds

    assert flat_signature_call(plain, {"x": (tf.float32, (None,))}) is plain

    # A concrete function traced from a Python function has positional parameters, not keyword-only ones.
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    def positional(x):
        return {"y": x + 1.0}

    concrete = positional.get_concrete_function()
    assert flat_signature_call(concrete, {"x": (tf.float32, (None,))}) is concrete


def test_servable_runs_tf2_signatures_through_the_flat_call(tmp_path):
    """The server's own load path takes the fast path, and its answers are the public call's."""
    base = tmp_path / "models" / MODEL
    base.mkdir(parents=True)
    version_dir = push(base, 1, export_linear(tmp_path / "export", [1.0, -2.0, 0.5], 0.25))
    servable = Servable.load(MODEL, 1, Path(version_dir))
    signature = servable.signature("serving_raw")
    assert isinstance(signature.function, FlatSignatureCall)
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]], np.float32)
    public = signature.function.function(x=x)
    _assert_same(signature.run({"x": x}), _numpy(public))
