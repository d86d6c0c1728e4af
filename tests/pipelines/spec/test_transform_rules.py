"""Column names TF Transform's TF1 graph mode cannot read: the spec runs Transform in TF2 mode for them.

The first tests run real tf.Transform on Beam, reading tf.Examples through TFXIO as TFX's
Transform does (columns with gaps are VarLenFeatures), so they fail when a new
tensorflow_transform reads these names in TF1 mode, or stops reading them in TF2 mode.
"""

from __future__ import annotations

import apache_beam as beam
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import schema_utils
from tfx_bsl.tfxio.tf_example_record import TFExampleBeamRecord

from pipelines.load import load_spec
from pipelines.spec.transform_rules import tf1_unreadable_columns

UNREADABLE = ["x/", "c>"]
READABLE = ["a/b", "a>b", ">x", "/x", "a b", "a_b", "ok"]


def _transform(names: list[str], tf1: bool, temp_dir: str) -> None:
    """Analyses and transforms 5 tf.Examples holding `names` (z-score of each) in TF1 or TF2 mode."""
    schema = schema_utils.schema_from_feature_spec({n: tf.io.VarLenFeature(tf.float32) for n in names})
    examples = []
    for i in range(5):
        example = tf.train.Example()
        for name in names:
            example.features.feature[name].float_list.value.append(float(i))
        examples.append(example.SerializeToString())
    tfxio = TFExampleBeamRecord(physical_format="inmem", telemetry_descriptors=["test"], schema=schema)

    def preprocessing_fn(inputs):
        return {f"o{i}": tft.scale_to_z_score(tf.sparse.to_dense(inputs[n])[:, 0]) for i, n in enumerate(names)}

    with beam.Pipeline() as pipeline, tft_beam.Context(temp_dir=temp_dir, force_tf_compat_v1=tf1):
        raw = pipeline | beam.Create(examples) | tfxio.BeamSource()
        _ = (raw, tfxio.TensorAdapterConfig()) | tft_beam.AnalyzeAndTransformDataset(
            preprocessing_fn, output_record_batches=True
        )


@pytest.mark.parametrize("name", UNREADABLE)
def test_tf1_graph_mode_cannot_read_the_names_the_rule_lists(name, tmp_path):
    assert tf1_unreadable_columns([name]) == [name]
    with pytest.raises(Exception):  # noqa: B017 - `Duplicate node name in graph`, or a graph execution error
        _transform([name], tf1=True, temp_dir=str(tmp_path))


def test_tf1_graph_mode_reads_the_other_names(tmp_path):
    assert tf1_unreadable_columns(READABLE) == []
    _transform(READABLE, tf1=True, temp_dir=str(tmp_path))


def test_tf2_mode_reads_every_name(tmp_path):
    _transform(UNREADABLE + READABLE, tf1=False, temp_dir=str(tmp_path))


@pytest.fixture
def spec_with_columns(write_csv, make_spec):
    """A spec over a CSV whose feature columns are `first` and `second`; `transform` as given."""

    def make(first: str, second: str, transform: dict | None = None):
        rows = [
            [f"{5 + i * 0.75:.2f}", f"{(i % 4) * 0.9:.2f}", f"{0.5 + i * 0.3:.1f}", "abc"[i % 3]] for i in range(30)
        ]
        write_csv("taxi.csv", header=[first, "tips", second, "company"], rows=rows)
        overrides = {
            "features": {first: {"transform": "zscore"}, second: {"transform": "zscore"}},
            "label": {"name": "big_tipper", "expression": "tips > 1"},
            "model": {"type": "dnn"},
        }
        if transform is not None:
            overrides["transform"] = transform
        return make_spec(overrides)

    return make


def test_unreadable_names_run_transform_in_tf2_mode(spec_with_columns, tmp_path):
    resolved = load_spec(str(spec_with_columns("fare/", "miles>")), cwd=str(tmp_path))

    assert resolved.spec.transform.tf_compat_v1 is False
    assert resolved.spec.transform.graph_mode_v1() is False


def test_plain_names_keep_the_default_mode(spec_with_columns, tmp_path):
    resolved = load_spec(str(spec_with_columns("fare", "miles")), cwd=str(tmp_path))

    assert resolved.spec.transform.tf_compat_v1 is None
    assert resolved.spec.transform.graph_mode_v1() is True


def test_asking_for_tf1_mode_with_unreadable_names_is_an_error(spec_with_columns, spec_problems):
    (problem,) = spec_problems(spec_with_columns("fare/", "miles", {"tf_compat_v1": True}))

    assert problem.path == "transform.tf_compat_v1"
    assert "Received: `fare/`. Remove `tf_compat_v1: true` (TF2 mode reads any name)" in problem.message
