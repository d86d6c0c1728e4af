"""compat.tfx_bsl.accept_string_predict_outputs: RunInference on a Predict signature with a [batch] string output."""

from __future__ import annotations

import logging

import pytest
import tensorflow as tf

import compat
from compat import tfx_bsl as compat_tfx_bsl


@pytest.fixture(scope="module")
def string_output_model(tmp_path_factory) -> str:
    """A SavedModel whose `serving_default` answers `label` [batch] (string) and `score` [batch] (float)."""
    path = str(tmp_path_factory.mktemp("string_output") / "model")
    spec = {"x": tf.io.FixedLenFeature([], tf.float32)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve(examples):
        x = tf.io.parse_example(examples, spec)["x"]
        return {"label": tf.where(x > 0.5, "big", "small"), "score": x}

    tf.saved_model.save(tf.Module(), path, signatures={"serving_default": serve})
    return path


def _examples(*values: float) -> list[tf.train.Example]:
    return [
        tf.train.Example(
            features=tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=[v]))})
        )
        for v in values
    ]


def _predict_handler(path: str):
    from tfx_bsl.beam import run_inference
    from tfx_bsl.public.proto import model_spec_pb2

    spec = model_spec_pb2.InferenceSpecType(
        saved_model_spec=model_spec_pb2.SavedModelSpec(model_path=path, signature_name=["serving_default"])
    )
    return run_inference.create_model_handler(spec, None, None)


def test_string_outputs_fail_unpatched_and_become_prediction_logs_patched(string_output_model, monkeypatch):
    from tfx_bsl.beam import run_inference

    # Whatever this test installs is undone afterwards.
    monkeypatch.setattr(
        run_inference._PredictModelHandler, "_post_process", run_inference._PredictModelHandler._post_process
    )
    handler = _predict_handler(string_output_model)
    model = handler.load_model()
    with pytest.raises(AttributeError, match="'bytes' object has no attribute 'dtype'"):
        handler.run_inference(_examples(0.9, 0.1), model)

    assert compat_tfx_bsl.accept_string_predict_outputs()
    assert compat_tfx_bsl.accept_string_predict_outputs()  # idempotent: wrapped once
    logs = handler.run_inference(_examples(0.9, 0.1), model)

    outputs = [log.predict_log.response.outputs for log in logs]
    assert [list(o["label"].string_val) for o in outputs] == [[b"big"], [b"small"]]
    assert [o["label"].dtype for o in outputs] == [tf.string.as_datatype_enum] * 2
    assert [o["score"].float_val[0] for o in outputs] == pytest.approx([0.9, 0.1])


def test_the_predict_shape_holds_on_the_pinned_tfx_bsl():
    assert compat_tfx_bsl.predict_shape_problem() is None


def test_a_differing_predict_shape_runs_unpatched_with_one_log_line(monkeypatch, caplog):
    from tfx_bsl.beam import run_inference

    monkeypatch.setattr(compat, "_warned", set())
    monkeypatch.setattr(run_inference._PredictModelHandler, "_post_process", lambda self, outputs: None)
    caplog.set_level(logging.WARNING, logger="compat")

    assert compat_tfx_bsl.accept_string_predict_outputs() is False
    assert [r.getMessage() for r in caplog.records] == [
        "compat: compat.tfx_bsl.string_predict_outputs falls back to the library's own behaviour: "
        "_PredictModelHandler._post_process takes ['self', 'outputs'], expected [self, examples, "
        "serialized_examples, outputs]"
    ]
