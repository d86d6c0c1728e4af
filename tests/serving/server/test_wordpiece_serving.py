"""A `tokenizer: wordpiece` text model in the embedded server: it loads, and answers a predict on raw strings.

The model is exported the Trainer's way (`model_builder` + `export.export_serving_model`, the tf.Transform graph
inside, untrained weights) from a small tf.Transform run, then served by `python -m serving up --embedded` in
its own process: a process that never imported tensorflow_text, so the server has to register TF Text's
`WordpieceTokenizeWithOffsets` itself (`serving.custom_ops`) before `tf.saved_model.load`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from server_process import ServerProcess
from serving_helpers import MODEL, http, push
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils

from components.trainer.models import model_builder
from components.trainer.saved_model.export import export_serving_model
from components.transform.config import TransformConfig, vocabulary_name
from components.transform.preprocessing import preprocessing_fn
from pipelines.spec.models import model_spec

FEATURES = {"review": {"transform": "text", "sequence_length": 8, "tokenizer": "wordpiece", "vocab_size": 50}}
CONFIG = TransformConfig(
    features=FEATURES, label_name="kind", task="classification", label_column="kind", classes=["a", "b", "c"]
)
RAW_SPEC = {"review": tf.io.FixedLenFeature([], tf.string), "kind": tf.io.FixedLenFeature([], tf.string)}
WORDS = ["play", "playing", "played", "player", "work", "working", "worked", "worker", "talk", "talked"]
ROWS = [{"review": " ".join(WORDS[n % 7 : n % 7 + 3]), "kind": "abc"[n % 3]} for n in range(60)]
TEXTS = ["Players worked", "a xylophone", ""]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    """A serving SavedModel with the wordpiece Transform graph inside."""
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    output_dir = str(tmp_path_factory.mktemp("transform_output"))
    with tft_beam.Context(temp_dir=str(tmp_path_factory.mktemp("tft")), force_tf_compat_v1=True):
        transform_fn = (ROWS, metadata) | tft_beam.AnalyzeDataset(
            lambda inputs: preprocessing_fn(inputs, CONFIG.to_dict())
        )
        _ = transform_fn | tft_beam.WriteTransformFn(output_dir)
    metadata_io.write_metadata(metadata, f"{output_dir}/{tft.TFTransformOutput.RAW_METADATA_DIR}")
    output = tft.TFTransformOutput(output_dir)
    sizes = {"review": output.vocabulary_size_by_name(vocabulary_name("review"))}
    section = dataclasses.asdict(
        model_spec(type="text_classifier", encoder="bag_of_embeddings", embedding_dim=4, hidden_units=[4])
    )
    tf.keras.utils.set_random_seed(0)
    model = model_builder.build_model(CONFIG, section, sizes)
    export = tmp_path_factory.mktemp("export") / "model"
    export_serving_model(model, output, CONFIG, str(export))
    return export


def test_the_embedded_server_loads_a_wordpiece_model_and_predicts_on_raw_strings(export_dir, tmp_path):
    expected = tf.saved_model.load(str(export_dir)).signatures["serving_raw"](review=tf.constant(TEXTS))["scores"]
    base = tmp_path / "models"
    (base / MODEL).mkdir(parents=True)
    push(base / MODEL, 1, export_dir)
    server = ServerProcess(base, tmp_path / "cfg")
    try:
        status, body = http(
            server.rest_url,
            "POST",
            f"/v1/models/{MODEL}:predict",
            {"signature_name": "serving_raw", "instances": [{"review": text} for text in TEXTS]},
            timeout=60,
        )
    finally:
        server.close()
    assert status == 200, body
    rows = body["predictions"]
    assert len(rows) == len(TEXTS) and {row["label"] for row in rows} <= {"a", "b", "c"}
    np.testing.assert_allclose([row["scores"] for row in rows], expected.numpy(), rtol=1e-5, atol=1e-6)
