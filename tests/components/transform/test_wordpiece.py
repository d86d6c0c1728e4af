"""`tokenizer: wordpiece`: a WordPiece vocabulary learned in tf.Transform's analyze phase, ids from tensorflow-text.

The learner keeps frequent subword pieces (`##er`, `##s`), so a word the train
split never had splits into known pieces; the Transform graph gives `[PAD]` = 0
for padding and `[UNK]` = 1 for a word with unseen characters, in TF1 graph
mode and TF2 mode; a fresh process (the Trainer's) loads that graph once
`serving.custom_ops` has registered tensorflow-text's ops.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf
import tensorflow_text
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from components.transform import wordpiece
from components.transform.config import TransformConfig
from components.transform.preprocessing import preprocessing_fn

REPO = Path(__file__).resolve().parents[3]
WORD_COUNTS = {
    "play": 6,
    "playing": 5,
    "played": 5,
    "player": 4,
    "plays": 4,
    "work": 6,
    "working": 5,
    "worked": 5,
    "worker": 4,
    "works": 4,
    "talk": 3,
    "talking": 2,
}
FEATURES = {"review": {"transform": "text", "sequence_length": 5, "tokenizer": "wordpiece", "vocab_size": 40}}
RAW_SPEC = {"review": tf.io.FixedLenFeature([], tf.string), "kind": tf.io.FixedLenFeature([], tf.string)}
CONFIG = TransformConfig(
    features=FEATURES, label_name="kind", task="classification", label_column="kind", classes=["a", "b"]
)
TRAIN_ROWS = [
    {"review": word.upper(), "kind": "ab"[n % 2]}
    for n, (word, count) in enumerate(WORD_COUNTS.items())
    for _ in range(count)
]
# Unseen words: `players` (known pieces), `xylophone` (an `x`: no piece has it), a long row (cut), an empty row.
TEST_ROWS = [
    {"review": "Players, PLAYED xylophone!", "kind": "a"},
    {"review": "work work work work work work", "kind": "b"},
    {"review": "", "kind": "a"},
]


def _tokenize_words(vocabulary: list[str], words: list[str]) -> list[list[bytes]]:
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(vocabulary, tf.range(len(vocabulary), dtype=tf.int64)), -1
    )
    tokenizer = tensorflow_text.WordpieceTokenizer(table, token_out_type=tf.string)
    return tokenizer.tokenize(tf.constant(words)).to_list()


def test_the_learned_vocabulary_has_subword_pieces_and_splits_an_unseen_word():
    vocabulary = wordpiece.learn_vocabulary(WORD_COUNTS, 40)

    assert vocabulary[:2] == ["[PAD]", "[UNK]"]
    assert len(vocabulary) <= 40
    assert {"##er", "##s"} <= set(vocabulary)  # pieces longer than a character, learned from the counts
    assert "players" not in WORD_COUNTS
    assert _tokenize_words(vocabulary, ["players"]) == [[b"play", b"##er", b"##s"]]


def test_no_words_give_only_pad_and_unk():
    assert wordpiece.learn_vocabulary({"": 3}, 40) == ["[PAD]", "[UNK]"]


@pytest.fixture(scope="module", params=[True, False], ids=["tf1_graph_mode", "tf2_mode"])
def transformed(request, tmp_path_factory):
    """(ids of TEST_ROWS, the transform output folder) after analysing TRAIN_ROWS."""
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    output_dir = str(tmp_path_factory.mktemp("transform_output"))
    with tft_beam.Context(temp_dir=str(tmp_path_factory.mktemp("tft")), force_tf_compat_v1=request.param):
        transform_fn = (TRAIN_ROWS, metadata) | tft_beam.AnalyzeDataset(
            lambda inputs: preprocessing_fn(inputs, CONFIG.to_dict())
        )
        transformed_rows, _ = ((TEST_ROWS, metadata), transform_fn) | tft_beam.TransformDataset()
        _ = transform_fn | tft_beam.WriteTransformFn(output_dir)
    return [list(row["review_xf"]) for row in transformed_rows], output_dir


def test_transform_gives_piece_ids_with_pad_0_and_unk_1(transformed):
    ids, output_dir = transformed
    output = tft.TFTransformOutput(output_dir)
    vocabulary = [piece.decode() for piece in output.vocabulary_by_name("vocab_review")]
    assert vocabulary == wordpiece.learn_vocabulary(WORD_COUNTS, 40)
    assert output.vocabulary_size_by_name("vocab_review") == len(vocabulary)  # the Trainer's embedding size
    piece = vocabulary.index

    assert ids[0] == [piece("play"), piece("##er"), piece("##s"), piece("played"), 1]
    assert ids[1] == [piece("work")] * 5  # cut at sequence_length
    assert ids[2] == [0] * 5


@pytest.mark.parametrize("transformed", [True], indirect=True, ids=["tf1_graph_mode"])
def test_a_fresh_process_loads_the_transform_graph_after_registering_the_ops(transformed):
    """The Trainer's case: tft.TFTransformOutput in a process that has not imported tensorflow_text."""
    _, output_dir = transformed
    script = f"""
import json, tensorflow as tf, tensorflow_transform as tft
from serving.custom_ops import register_ops_for_saved_model, unregistered_ops
from tensorflow.core.protobuf import saved_model_pb2
output = tft.TFTransformOutput({output_dir!r})
with open(output.transform_savedmodel_dir + "/saved_model.pb", "rb") as file:
    (graph,) = saved_model_pb2.SavedModel.FromString(file.read()).meta_graphs
before = sorted(unregistered_ops(graph))
after = sorted(register_ops_for_saved_model(output.transform_savedmodel_dir))
features = output.transform_features_layer()({{"review": tf.constant(["work"]), "kind": tf.constant(["a"])}})
print(json.dumps({{"before": before, "after": after, "ids": features["review_xf"].numpy().tolist()}}))
"""
    env = dict(os.environ, PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "WordpieceTokenizeWithOffsets" in result["before"]
    assert result["after"] == []
    assert result["ids"][0][1:] == [0, 0, 0, 0]
    assert result["ids"][0][0] > 1
