"""Loading a spec file: the bundled example, path resolution and data profiling."""

from __future__ import annotations

import gzip
import importlib.util
import os

import pytest

from pipelines.load import load_spec
from pipelines.spec import SpecError
from pipelines.spec.models import FeatureSpec, LabelSpec

TFX_DIR = os.path.dirname(importlib.util.find_spec("tfx").origin)
TAXI_CSV = os.path.join(TFX_DIR, "examples", "chicago_taxi_pipeline", "data", "simple", "data.csv")


@pytest.fixture
def example_spec(repo_dir) -> str:
    return os.path.join(repo_dir, "pipelines", "examples", "chicago_taxi.yaml")


def test_bundled_example_loads(example_spec, tmp_path):
    resolved = load_spec(example_spec, cwd=str(tmp_path))

    assert resolved.name == "chicago_taxi"
    assert resolved.spec_file == example_spec
    assert len(resolved.spec.features) == 15
    assert list(resolved.spec.features)[:3] == ["trip_miles", "fare", "trip_seconds"]
    assert resolved.spec.features["pickup_latitude"] == FeatureSpec(transform="bucketize", buckets=10)
    assert resolved.spec.features["company"] == FeatureSpec(transform="vocabulary", top_k=1000, oov_buckets=10)
    assert resolved.spec.label == LabelSpec(name="big_tipper", expression="tips > 0.2 * fare")
    assert resolved.spec.model.hidden_units == (100, 70, 50, 25)
    assert resolved.spec.evaluation.metrics == ("binary_accuracy", "auc")
    assert resolved.spec.evaluation.slices == (("payment_type",), ("trip_start_hour",))
    assert resolved.spec.evaluation.thresholds["binary_accuracy"].per_slice


def test_bundled_example_reads_data_from_the_installed_tfx_package(example_spec, tmp_path):
    resolved = load_spec(example_spec, cwd=str(tmp_path))

    assert resolved.data_path == TAXI_CSV
    assert resolved.data_files == (TAXI_CSV,)
    assert os.path.isfile(resolved.data_files[0])
    assert resolved.data_format == "csv"
    assert {"fare", "tips", "trip_miles", "company", "payment_type"} <= set(resolved.columns)
    assert {"fare", "tips", "trip_miles", "trip_start_hour"} <= resolved.numeric_columns
    assert not {"company", "payment_type"} & resolved.numeric_columns


def test_bundled_example_root_defaults_to_runs_under_cwd(example_spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    resolved = load_spec(example_spec)

    assert resolved.root == os.path.join(str(tmp_path), "runs", "chicago_taxi")
    assert resolved.metadata_path == os.path.join(resolved.root, "metadata.sqlite")
    assert resolved.serving_dir == os.path.join(resolved.root, "serving")
    assert resolved.model_name == "chicago_taxi"
    assert os.listdir(tmp_path) == []


def test_relative_paths_resolve_against_the_spec_folder(make_spec, write_csv, tmp_path, monkeypatch):
    write_csv("data/taxi.csv")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "schema.pbtxt").write_text("", encoding="utf-8")
    spec_file = make_spec(
        {"data.path": "../data/taxi.csv", "schema": "schema.pbtxt", "pipeline.root": "out"}, file_name="conf/spec.yaml"
    )
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")

    resolved = load_spec(os.path.join("..", "conf", "spec.yaml"))

    assert resolved.spec_file == str(spec_file)
    assert resolved.data_path == str(tmp_path / "data" / "taxi.csv")
    assert resolved.data_files == (str(tmp_path / "data" / "taxi.csv"),)
    assert resolved.schema_path == str(tmp_path / "conf" / "schema.pbtxt")
    assert resolved.root == str(tmp_path / "conf" / "out")
    assert resolved.serving_dir == str(tmp_path / "conf" / "out" / "serving")


def test_serving_dir_and_model_name_can_be_set(make_spec, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    spec_file = make_spec({"push": {"serving_dir": "~/models", "model_name": "tipper"}})

    resolved = load_spec(str(spec_file), cwd=str(tmp_path))

    assert resolved.serving_dir == str(tmp_path / "home" / "models")
    assert resolved.model_name == "tipper"
    assert resolved.root == str(tmp_path / "runs" / "taxi_small")


def test_loaded_spec_carries_the_data_profile(make_spec, tmp_path):
    resolved = load_spec(str(make_spec()), cwd=str(tmp_path))

    assert resolved.data_files == (str(tmp_path / "taxi.csv"),)
    assert resolved.columns == ("fare", "tips", "trip_miles", "company")
    assert resolved.numeric_columns == frozenset({"fare", "tips", "trip_miles"})


def test_folder_of_csvs_is_read_in_name_order(make_spec, write_csv, tmp_path):
    write_csv("raw/part-2.csv")
    write_csv("raw/part-1.csv")
    with gzip.open(tmp_path / "raw" / "part-3.csv.gz", "wt", encoding="utf-8") as handle:
        handle.write("fare,tips,trip_miles,company\n8.5,2,1.2,Blue Ribbon\n")

    resolved = load_spec(str(make_spec({"data.path": "raw"})), cwd=str(tmp_path))

    assert resolved.data_files == tuple(str(tmp_path / "raw" / f"part-{i}.csv") for i in (1, 2)) + (
        str(tmp_path / "raw" / "part-3.csv.gz"),
    )
    assert resolved.data_format == "csv"


def test_folder_of_csvs_with_differing_headers_is_rejected(make_spec, write_csv, spec_problems, tmp_path):
    first = write_csv("raw/part-1.csv")
    second = write_csv("raw/part-2.csv", header=["fare", "tips", "miles", "company"])

    (problem,) = spec_problems(make_spec({"data.path": "raw"}))

    assert problem.path == "data.path"
    assert problem.message == (
        f"{second}: header differs from {first}'s. Expected: ['fare', 'tips', 'trip_miles', 'company']. "
        "Received: ['fare', 'tips', 'miles', 'company']."
    )


def test_folder_with_mixed_file_types_needs_a_format(make_spec, write_csv, spec_problems, tmp_path):
    write_csv("raw/part-1.csv")
    write_csv("raw/notes.txt")

    (problem,) = spec_problems(make_spec({"data.path": "raw"}))

    assert problem.message.startswith(
        f"cannot tell the format of {tmp_path / 'raw'} from its file names. Expected names ending in `.csv`, "
    )
    assert problem.message.endswith(
        "all of one format. Add `format:` under `data:` (csv, tfrecord, parquet, avro, jsonl), or rename the files."
    )


def test_explicit_format_reads_files_with_any_name(make_spec, write_csv, tmp_path):
    write_csv("raw/taxi.txt")

    resolved = load_spec(str(make_spec({"data": {"path": "raw/taxi.txt", "format": "csv"}})), cwd=str(tmp_path))

    assert resolved.data_files == (str(tmp_path / "raw" / "taxi.txt"),)
    assert resolved.data_format == "csv"


def test_missing_spec_file_is_a_spec_error(tmp_path):
    missing = str(tmp_path / "nope.yaml")

    with pytest.raises(SpecError) as caught:
        load_spec(missing)

    (problem,) = caught.value.problems
    assert problem.file == missing
    assert str(problem) == f"{missing}: <root>: spec file does not exist. Expected a YAML file. Received: {missing}."


def _write_examples(path, rows):
    import tensorflow as tf

    with tf.io.TFRecordWriter(str(path)) as writer:
        for fare, tips, miles, company in rows:
            features = {
                "fare": tf.train.Feature(float_list=tf.train.FloatList(value=[fare])),
                "tips": tf.train.Feature(float_list=tf.train.FloatList(value=[tips])),
                "trip_miles": tf.train.Feature(int64_list=tf.train.Int64List(value=[miles])),
                "company": tf.train.Feature(bytes_list=tf.train.BytesList(value=[company.encode()])),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())


def test_tfrecord_data_is_profiled(make_spec, tmp_path):
    _write_examples(tmp_path / "taxi.tfrecord", [(7.5, 1.0, 2, "Flash Cab"), (12.0, 0.0, 5, "Blue Ribbon")] * 10)
    (tmp_path / "broken.tfrecord").write_bytes(b"not a record at all")

    resolved = load_spec(str(make_spec({"data.path": "taxi.tfrecord"})), cwd=str(tmp_path))
    with pytest.raises(SpecError) as caught:
        load_spec(str(make_spec({"data.path": "broken.tfrecord"}, file_name="broken.yaml")), cwd=str(tmp_path))

    assert resolved.data_format == "tfrecord"
    assert resolved.data_files == (str(tmp_path / "taxi.tfrecord"),)
    assert set(resolved.columns) == {"fare", "tips", "trip_miles", "company"}
    assert resolved.numeric_columns == frozenset({"fare", "tips", "trip_miles"})
    (problem,) = caught.value.problems
    assert problem.path == "data.path"
    assert problem.message.startswith(f"{tmp_path / 'broken.tfrecord'} is not a TFRecord file of tf.Example (")


@pytest.mark.parametrize(
    ("transform", "graph_mode_v1"),
    [
        ({}, True),  # the generated preprocessing_fn: TF1 graph mode, faster
        ({"module": "json:loads"}, False),  # any importable function stands for a user hook: it may need TF2
        ({"module": "json:loads", "tf_compat_v1": True}, True),
        ({"tf_compat_v1": False}, False),
    ],
)
def test_transform_graph_mode_defaults_to_tf1_unless_a_user_module_is_set(
    make_spec, tmp_path, transform, graph_mode_v1
):
    resolved = load_spec(str(make_spec({"transform": transform})), cwd=str(tmp_path))

    assert resolved.spec.transform.graph_mode_v1() is graph_mode_v1


def test_transform_graph_mode_must_be_a_boolean(make_spec, spec_problems):
    problems = spec_problems(make_spec({"transform": {"tf_compat_v1": "maybe"}}))

    assert [p.path for p in problems] == ["transform.tf_compat_v1"]
    assert "expected true or false" in problems[0].message
