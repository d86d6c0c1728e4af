"""tensorflow_model_server's --rest_api_timeout_in_ms: a REST call past it is DEADLINE_EXCEEDED (504).

TF Serving sets the flag as the RunOptions timeout of every REST session run (http_rest_api_handler.cc);
TensorFlow's session answers a run past it with DEADLINE_EXCEEDED "Timed out waiting for notification"
(checked here on the installed TensorFlow). A real embedded server on 127.0.0.1 serves a model whose run
takes as long as its input asks.
"""

from __future__ import annotations

import time

import pytest
import tensorflow as tf
from serving_helpers import http
from tfs_contract_helpers import start_server

from serving import config as cfg

MODEL = "spin"
SLOW_STEPS = 1_500_000  # 2-6 s of while_loop steps on these machines (1-4 us a step)
TIMEOUT_MS = 300


class _Spin(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32, name="n")])
    def spin(self, n):
        _, value = tf.while_loop(
            lambda i, v: i < n[0], lambda i, v: (i + 1, v * 1.0000001), [tf.constant(0), tf.constant(1.0)]
        )
        return {"y": tf.fill(tf.shape(n), value)}


@pytest.fixture(scope="module")
def spin_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("spin")
    module = _Spin()
    tf.saved_model.save(module, str(base / "1"), signatures={"serving_default": module.spin})
    return base


def test_tensorflow_says_timed_out_waiting_for_notification(spin_dir):
    """The words the server repeats are TensorFlow's own for a session run past its timeout."""
    with tf.compat.v1.Session(graph=tf.Graph()) as session:
        meta = tf.compat.v1.saved_model.loader.load(session, ["serve"], str(spin_dir / "1"))
        signature = meta.signature_def["serving_default"]
        run = session.make_callable(
            signature.outputs["y"].name, feed_list=[signature.inputs["n"].name], accept_options=True
        )
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out waiting for notification$"):
            run([SLOW_STEPS], options=tf.compat.v1.RunOptions(timeout_in_ms=TIMEOUT_MS))


def test_a_rest_call_past_the_timeout_is_504_and_the_server_keeps_answering(tmp_path, spin_dir):
    server = start_server(tmp_path, cfg.model_config(MODEL, spin_dir), rest_api_timeout_in_ms=TIMEOUT_MS)
    try:
        started = time.monotonic()
        status, body = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [SLOW_STEPS]})
        waited = time.monotonic() - started
        assert status == 504
        assert body["error"].startswith(
            "Timed out waiting for notification. Expected an answer within rest_api_timeout_in_ms=300. "
        )
        assert waited < 1.2  # answered at the timeout, not when the run ends
        assert http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [3]}) == (
            200,
            {"predictions": [pytest.approx(1.0000003)]},
        )
    finally:
        server.stop()


def test_no_timeout_when_it_is_zero(tmp_path, spin_dir):
    server = start_server(tmp_path, cfg.model_config(MODEL, spin_dir), rest_api_timeout_in_ms=0)
    try:
        status, body = http(server.rest_url, "POST", f"/v1/models/{MODEL}:predict", {"instances": [SLOW_STEPS // 20]})
        assert status == 200, body
    finally:
        server.stop()
