"""While the Evaluator runs, arrays print short (components/evaluator/executor.py `_short_array_text`)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from tfx.components.evaluator import executor as tfx_evaluator_executor

from components.evaluator import executor


def _serving_signature(tmp_path):
    """A SavedModel signature as TFMA gets it: keyword arguments only, a batch of serialized examples."""
    module = tf.Module()
    module.serve = tf.function(
        lambda examples: {"rows": tf.size(examples)}, input_signature=[tf.TensorSpec([None], tf.string)]
    )
    tf.saved_model.save(module, str(tmp_path), signatures={"serving_default": module.serve})
    return tf.saved_model.load(str(tmp_path)).signatures["serving_default"]


def _structured_call_error(signature, batch) -> str:
    try:
        signature._call_with_structured_signature((batch,), {})
    except TypeError as error:
        return str(error)
    raise AssertionError("the keyword-only signature accepted a positional batch")


def test_the_positional_call_tfma_makes_formats_a_short_batch(tmp_path):
    signature = _serving_signature(tmp_path)
    batch = tf.constant([b"x" * 200] * 1000)
    assert int(signature(batch)["rows"]) == 1000  # answered by the flat signature, as TFMA's call is
    assert len(_structured_call_error(signature, batch)) > 200_000  # the whole batch, as text
    with executor._short_array_text():
        assert len(_structured_call_error(signature, batch)) < 5_000
    assert np.get_printoptions()["threshold"] == 1000  # NumPy's default again after the block


def test_tfx_evaluator_runs_inside_it(monkeypatch):
    seen = []
    monkeypatch.setattr(
        tfx_evaluator_executor.Executor, "Do", lambda self, *args: seen.append(np.get_printoptions()["threshold"])
    )
    executor.Executor().Do({}, {}, {})
    assert seen == [executor.SHORT_ARRAY_ITEMS]
