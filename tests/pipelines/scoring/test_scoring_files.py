"""pipelines.scoring's inputs and outputs on real files: the tf.Examples each row becomes, bounded batches, the
columns an input lacks, and an output that appears only complete."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf

from components.common.csv_dialect import CsvDialect
from components.example_gen.fast_csv import ColumnKind
from pipelines.scoring.inputs import ScoringInput, ScoringInputError, input_format, scoring_batches
from pipelines.scoring.outputs import ScoredFile, output_format

KINDS = {"miles": ColumnKind.FLOAT, "hour": ColumnKind.INT, "company": ColumnKind.STRING}
CSV_TEXT = "id;miles;hour;company\na;1.5;7;Acme\nb;;8;NA\nc;2.25;;Taxi Co\n"


def _features(serialized: bytes) -> dict:
    example = tf.train.Example.FromString(serialized)
    result = {}
    for name, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        result[name] = list(getattr(feature, kind).value) if kind else []
    return result


@pytest.fixture
def semicolon_csv(tmp_path) -> ScoringInput:
    path = tmp_path / "rows.csv"
    path.write_text(CSV_TEXT, encoding="utf-8")
    return ScoringInput(str(path), "csv", CsvDialect(delimiter=";"), ("NA",))


def test_csv_rows_become_the_examples_example_gen_writes_in_bounded_batches(semicolon_csv):
    batches = list(scoring_batches(semicolon_csv, KINDS, ["id", "company"], rows=2))
    assert [len(examples) for _, examples in batches] == [2, 1]
    kept = pa.Table.from_batches([kept for kept, _ in batches])
    assert kept.column_names == ["id", "company"]
    assert kept.column("id").to_pylist() == ["a", "b", "c"]
    assert kept.column("company").to_pylist() == ["Acme", None, "Taxi Co"]  # `NA` is a missing cell
    examples = [_features(e) for _, batch in batches for e in batch]
    assert examples[0] == {"miles": [1.5], "hour": [7], "company": [b"Acme"]}
    # A missing cell is an empty value list, as ExampleGen writes it.
    assert examples[1] == {"miles": [], "hour": [8], "company": []}
    assert examples[2] == {"miles": [2.25], "hour": [], "company": [b"Taxi Co"]}


def test_parquet_rows_are_encoded_from_their_text(tmp_path):
    path = str(tmp_path / "rows.parquet")
    pq.write_table(pa.table({"miles": [1.5, None], "hour": [7, 8], "company": ["Acme", "B"]}), path)
    source = ScoringInput(path, input_format(path, "csv"), na_values=("NA",))
    ((kept, examples),) = list(scoring_batches(source, KINDS, [], rows=10))
    assert kept.num_columns == 0 and len(examples) == 2
    assert [_features(e) for e in examples] == [
        {"miles": [1.5], "hour": [7], "company": [b"Acme"]},
        {"miles": [], "hour": [8], "company": [b"B"]},
    ]


def test_with_flatten_a_struct_column_is_scored_by_its_leaf_columns(tmp_path):
    path = str(tmp_path / "rows.parquet")
    trip = pa.array([{"miles": 1.5, "hour": 7}, None], pa.struct([("miles", pa.float64()), ("hour", pa.int64())]))
    pq.write_table(pa.table({"trip": trip, "company": ["Acme", "B"]}), path)
    kinds = {"trip__miles": ColumnKind.FLOAT, "trip__hour": ColumnKind.INT, "company": ColumnKind.STRING}
    source = ScoringInput(path, "parquet", flatten=True)
    ((kept, examples),) = list(scoring_batches(source, kinds, ["trip__hour"], rows=10))
    assert kept.column(0).to_pylist() == ["7", None]
    assert [_features(e) for e in examples] == [
        {"trip__miles": [1.5], "trip__hour": [7], "company": [b"Acme"]},
        {"trip__miles": [], "trip__hour": [], "company": [b"B"]},
    ]
    with pytest.raises(
        ScoringInputError, match=r"lacks the model's feature column\(s\) \['trip__miles', 'trip__hour'\]"
    ):
        list(scoring_batches(ScoringInput(path, "parquet"), kinds, [], rows=10))


def test_a_tfrecord_file_is_scored_as_it_is(tmp_path):
    path = str(tmp_path / "rows.tfrecord.gz")
    example = tf.train.Example(
        features=tf.train.Features(feature={"hour": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))})
    )
    with tf.io.TFRecordWriter(path, options="GZIP") as writer:
        for _ in range(3):
            writer.write(example.SerializeToString())
    source = ScoringInput(path, input_format(path, "csv"))
    assert source.fmt == "tfrecord"
    ((kept, examples),) = list(scoring_batches(source, {}, ["hour"], rows=10))
    assert examples == [example.SerializeToString()] * 3
    assert kept.column("hour").to_pylist() == [3, 3, 3]


@pytest.mark.parametrize(
    ("kinds", "keep", "message"),
    [
        ({**KINDS, "fare": ColumnKind.FLOAT}, [], "lacks the model's feature column(s) ['fare']. Expected"),
        (KINDS, ["tips"], "lacks the --keep column(s) ['tips']. Expected"),
    ],
    ids=["feature", "keep"],
)
def test_a_missing_column_is_named(semicolon_csv, kinds, keep, message):
    with pytest.raises(ScoringInputError) as raised:
        list(scoring_batches(semicolon_csv, kinds, keep, rows=10))
    assert message in str(raised.value)
    assert "Received columns: ['id', 'miles', 'hour', 'company']" in str(raised.value)


@pytest.mark.parametrize(("name", "fmt"), [("a.parquet", "parquet"), ("a.PQ", "parquet"), ("a.csv", "csv")])
def test_output_format_follows_the_ending(name, fmt):
    assert output_format(name) == fmt


@pytest.mark.parametrize("name", ["scores.csv", "scores.parquet"])
def test_the_output_appears_only_complete(tmp_path, name):
    path = tmp_path / name
    batch = pa.RecordBatch.from_pydict({"label": ["a", "b"], "probability": [0.25, 0.75]})
    with pytest.raises(RuntimeError, match="stopped"):
        with ScoredFile(str(path)) as scored:
            scored.write(batch)
            raise RuntimeError("stopped")
    assert os.listdir(tmp_path) == []  # neither the output nor its temporary file
    with ScoredFile(str(path)) as scored:
        scored.write(batch)
        scored.write(batch)
        assert not path.exists()
    assert scored.rows == 4 and os.listdir(tmp_path) == [name]
    if name.endswith(".csv"):
        assert path.read_text(encoding="utf-8").splitlines()[:2] == ['"label","probability"', '"a",0.25']
    else:
        assert pq.read_table(path).column("probability").to_pylist() == [0.25, 0.75, 0.25, 0.75]
