"""A messy CSV trains and serves end to end: UTF-8 BOM, spaces/unicode/dots in names, `NA` and empty cells.

One real run (`python -m pipelines run`) shared by the module. The file has a
BOM before the header, a column `mean radius` with `NA` cells (mean-imputed,
with a missing indicator), a quoted `température.2` with empty cells
(median-imputed), a text column and a column named `examples`, the name of the
serialized-example input of `serving_default` and `transform_features` (TFMA
fed that column to `transform_features` in its place; the input is named
`serialized_examples` then). The pushed model's `serving_raw` inputs are
keyed by the original column names, and a NaN (what a JSON `null` becomes)
gives the same prediction as a tf.Example without the feature.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.e2e

COLUMNS = ["mean radius", "température.2", "kind", "examples"]


@pytest.fixture(scope="module")
def messy_run(tmp_path_factory, repo_dir):
    folder = tmp_path_factory.mktemp("messy_csv")
    rng = random.Random(0)
    lines = ['mean radius,"température.2",kind,examples,diagnosis']
    for i in range(300):
        radius, temperature, kind = rng.uniform(5, 25), rng.uniform(0, 40), rng.choice("abc")
        label = int(radius + 0.3 * temperature + rng.gauss(0, 2) > 20)
        lines.append(
            f"{'NA' if i % 7 == 0 else f'{radius:.3f}'},{'' if i % 11 == 0 else f'{temperature:.2f}'},{kind},"
            f"{radius / 25 + rng.gauss(0, 0.05):.3f},{label}"
        )
    (folder / "data.csv").write_text("\n".join(lines) + "\n", encoding="utf-8-sig")  # with a BOM
    spec = {
        "pipeline": {"name": "messy", "root": str(folder / "root")},
        "data": {"path": "data.csv"},
        "features": {
            "mean radius": {"transform": "zscore", "missing_indicator": True},
            "température.2": {"transform": "minmax", "impute": "median"},
            "kind": {"transform": "vocabulary"},
            "examples": {"transform": "identity"},
        },
        "label": {"name": "malignant", "expression": "diagnosis > 0.5"},
        "model": {"type": "wide_and_deep", "hidden_units": [8]},
        "training": {"train_steps": 100, "eval_steps": 2, "batch_size": 16, "learning_rate": 0.02},
        "evaluation": {"metrics": ["binary_accuracy"]},
    }
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=repo_dir)
    result = subprocess.run(
        [sys.executable, "-m", "pipelines", "run", str(folder / "spec.yaml")],
        cwd=str(folder),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    versions = sorted((folder / "root" / "serving" / "messy").glob("[0-9]*"))
    return result, folder / "root", versions


def test_run_succeeds_and_pushes(messy_run):
    result, _, versions = messy_run
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Pushed:" in result.stdout and len(versions) == 1


def test_schema_has_the_header_names_without_bom(messy_run):
    _, root, _ = messy_run
    (schema_file,) = (root / "artifacts" / "SchemaGen" / "schema").glob("*/schema.pbtxt")
    from tfx.utils import io_utils

    schema = io_utils.SchemaReader().read(str(schema_file))
    names = {feature.name: feature.type for feature in schema.feature}
    assert set(names) == {*COLUMNS, "diagnosis"}
    assert names["mean radius"] == names["température.2"] == 3  # FLOAT: `NA` cells did not make it text


def test_serving_raw_inputs_are_the_column_names(messy_run):
    _, _, versions = messy_run
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel()
    model.ParseFromString((versions[0] / "saved_model.pb").read_bytes())
    assert set(model.meta_graphs[0].signature_def["serving_raw"].inputs) == set(COLUMNS)
    for name in ("serving_default", "transform_features"):  # not the column `examples`
        assert list(model.meta_graphs[0].signature_def[name].inputs) == ["serialized_examples"]


def test_nan_in_serving_raw_is_imputed_like_an_absent_feature(messy_run):
    _, _, versions = messy_run
    import tensorflow as tf

    from components.common.names import tensor_name

    loaded = tf.saved_model.load(str(versions[0]))
    raw = loaded.signatures["serving_raw"](
        **{
            tensor_name("mean radius"): tf.constant([np.nan, 15.0]),
            tensor_name("température.2"): tf.constant([np.nan, 20.0]),
            "kind": tf.constant(["a", "a"]),
            "examples": tf.constant([0.5, 0.5]),
        }
    )["probability"].numpy()
    example = tf.train.Example()
    example.features.feature["kind"].bytes_list.value.append(b"a")
    example.features.feature["examples"].float_list.value.append(0.5)
    served = loaded.signatures["serving_default"](serialized_examples=tf.constant([example.SerializeToString()]))
    assert raw[0] == pytest.approx(float(served["probability"].numpy()[0]), abs=1e-6)
    assert raw[0] != pytest.approx(raw[1], abs=1e-6)  # the imputed row is not just any row


def _post(url: str, path: str, body: dict) -> tuple[int, dict]:
    import json
    from http import client as http_client
    from urllib.parse import urlsplit

    parsed = urlsplit(url)
    conn = http_client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request("POST", path, body=json.dumps(body).encode())  # json writes float("nan") as NaN
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_embedded_server_takes_the_column_names_and_nan_in_json(messy_run, tmp_path):
    """A JSON client sends the header's names; NaN (TF Serving's JSON for a missing float) is imputed."""
    from serving import config as cfg
    from serving.server import EmbeddedServer

    _, _, versions = messy_run
    files = cfg.write_server_files(tmp_path / "cfg", cfg.server_config(cfg.model_config("messy", versions[0].parent)))
    server = EmbeddedServer.from_files(
        files, rest_port=0, grpc_port=0, allow_version_labels_for_unavailable_models=True
    ).start()
    try:
        instance = {"mean radius": float("nan"), "température.2": 20.0, "kind": "a", "examples": 0.5}
        status, predicted = _post(
            server.rest_url, "/v1/models/messy:predict", {"signature_name": "serving_raw", "instances": [instance]}
        )
        assert status == 200, predicted
        status, classified = _post(
            server.rest_url,
            "/v1/models/messy:classify",
            # `mean radius` absent from the example
            {"signature_name": "classification", "examples": [{"température.2": 20.0, "kind": "a", "examples": 0.5}]},
        )
        assert status == 200, classified
    finally:
        server.stop()
    probability = predicted["predictions"][0]["probability"]
    assert classified["results"][0][1][1] == pytest.approx(probability, abs=1e-5)
