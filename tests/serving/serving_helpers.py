"""Helpers for the serving tests: a tiny real SavedModel, expected values, raw HTTP.

The model is a `tf.Module` computing logit = w.x + b over one feature `x`
(3 floats), exported with the signatures a pipeline pushes:

* `serving_default` (predict): `examples` (serialized tf.Example) -> `probability`;
* `serving_raw` (predict): `x` -> `logit`, `probability`;
* `classification` (classify method): `inputs` -> `classes`, `scores`;
* `regression` (regress method): `inputs` -> `outputs` (the logit).

Each version has its own weights, so a response tells which version served it.
"""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
import urllib.parse
from http import client as http_client
from pathlib import Path

import tensorflow as tf

from serving.savedmodel import CLASSIFY_METHOD, REGRESS_METHOD, set_method_names

MODEL = "lin"
WEIGHTS = {1: ((1.0, -1.0, 0.5), 0.1), 2: ((0.5, 0.5, 0.5), -0.2), 3: ((-1.0, 2.0, 0.0), 0.3)}
LABELS = ("negative", "positive")


class Linear(tf.Module):
    def __init__(self, w, b):
        super().__init__()
        self.w = tf.Variable(w, dtype=tf.float32)
        self.b = tf.Variable(b, dtype=tf.float32)

    def _logit(self, x):
        return tf.linalg.matvec(x, self.w) + self.b

    @staticmethod
    def _parse(examples):
        return tf.io.parse_example(examples, {"x": tf.io.FixedLenFeature([3], tf.float32)})["x"]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve_examples(self, examples):
        return {"probability": tf.sigmoid(self._logit(self._parse(examples)))}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def serve_raw(self, x):
        logit = self._logit(x)
        return {"logit": logit, "probability": tf.sigmoid(logit)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def classify(self, inputs):
        p = tf.sigmoid(self._logit(self._parse(inputs)))
        classes = tf.tile(tf.constant([list(LABELS)]), [tf.shape(p)[0], 1])
        return {"classes": classes, "scores": tf.stack([1 - p, p], axis=1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def regress(self, inputs):
        return {"outputs": self._logit(self._parse(inputs))}


def export_linear(path: Path, w, b) -> Path:
    module = Linear(list(w), b)
    tf.saved_model.save(
        module,
        str(path),
        signatures={
            "serving_default": module.serve_examples.get_concrete_function(),
            "serving_raw": module.serve_raw.get_concrete_function(),
            "classification": module.classify.get_concrete_function(),
            "regression": module.regress.get_concrete_function(),
        },
    )
    set_method_names(path, {"classification": CLASSIFY_METHOD, "regression": REGRESS_METHOD})
    return path


def logit(version: int, x) -> float:
    w, b = WEIGHTS[version]
    return sum(wi * xi for wi, xi in zip(w, x)) + b


def probability(version: int, x) -> float:
    return 1 / (1 + math.exp(-logit(version, x)))


def example(x) -> bytes:
    return tf.train.Example(
        features=tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=list(x)))})
    ).SerializeToString()


def b64(data: bytes) -> dict[str, str]:
    return {"b64": base64.b64encode(data).decode("ascii")}


def http(url: str, method: str, path: str, body=None, timeout: float = 30.0) -> tuple[int, dict]:
    """One raw HTTP request; body is a dict (sent as JSON) or bytes."""
    parsed = urllib.parse.urlsplit(url)
    conn = http_client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    try:
        payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=payload)
        response = conn.getresponse()
        raw = response.read()
        try:
            data = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            data = {"raw": raw.decode("utf-8", "replace")}
        return response.status, data
    finally:
        conn.close()


def push(model_dir: Path, version: int, source: Path) -> Path:
    """Copies an export into `<model_dir>/<version>` the way a pusher should: to
    a temporary name first, then one atomic rename."""
    tmp = model_dir / f".tmp-{version}"
    shutil.copytree(source, tmp)
    target = model_dir / str(version)
    os.rename(tmp, target)
    return target
