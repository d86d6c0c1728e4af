"""pipelines.scoring's inputs and outputs on real files: the tf.Examples each row becomes, bounded batches, the
columns an input lacks, text in a numeric column, nested columns, kept columns with the file's types, an output
that appears only complete, and TensorFlow's renamed-input warnings kept off the console."""

from __future__ import annotations

import decimal
import json
import logging
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
    assert kept.column(0).to_pylist() == [7, None]  # the leaf's own type
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


def _wine_file(tmp_path, fmt: str, magnesium: list) -> ScoringInput:
    """Four rows of wine, column names with spaces, `Magnesium` as given, as a `fmt` file."""
    table = pa.table({"Wine ID": [11, 12, 13, 14], "Malic Acid": [1.5, 2.0, None, 3.25], "Magnesium": magnesium})
    path = str(tmp_path / f"wine.{fmt}")
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt == "jsonl":
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in table.to_pylist())
    else:
        table.to_pandas().to_csv(path, index=False)
    return ScoringInput(path, fmt)


WINE_KINDS = {"Malic Acid": ColumnKind.FLOAT, "Magnesium": ColumnKind.FLOAT}


@pytest.mark.parametrize(
    ("fmt", "magnesium", "kinds", "where", "received"),
    [
        ("parquet", ["101", "99.5", "abc", "97"], WINE_KINDS, "row 3", "'abc'"),
        ("jsonl", ["101", "99.5", "97", "n/a"], WINE_KINDS, "row 4", "'n/a'"),
        ("csv", ["101", "abc", "99.5", "97"], WINE_KINDS, "line 3", "'abc'"),  # line 1: the header
        ("parquet", [101.0, 99.5, 100.0, 97.0], {**WINE_KINDS, "Magnesium": ColumnKind.INT}, "row 2", "'99.5'"),
    ],
    ids=["parquet-text", "jsonl-text-in-the-second-batch", "csv-text", "parquet-fraction-for-an-integer"],
)
def test_a_cell_that_is_not_the_models_number_is_named_by_file_row_and_column(
    tmp_path, fmt, magnesium, kinds, where, received
):
    source = _wine_file(tmp_path, fmt, magnesium)
    with pytest.raises(ScoringInputError) as raised:
        list(scoring_batches(source, kinds, ["Wine ID"], rows=2))
    number = "an integer" if kinds["Magnesium"] == ColumnKind.INT else "a number"
    kind = "INT" if kinds["Magnesium"] == ColumnKind.INT else "FLOAT"
    assert str(raised.value) == (
        f"{source.path} {where}: column `Magnesium` holds a cell that is not {number}. Expected {number} or a "
        f"missing value in every row of `Magnesium` (the model was trained on it as {kind}). Received: {received}. "
        "Correct the cell, or make it missing (empty, null, or a `data.na_values` marker)."
    )


def test_a_list_column_the_model_reads_or_keep_names_is_refused_in_validates_words(tmp_path):
    path = str(tmp_path / "wine.parquet")
    regions = pa.array([["North"], ["South", "Coast"]])
    pq.write_table(pa.table({"Malic Acid": [1.5, 2.0], "Vineyard Region": regions, "Grapes": regions}), path)
    source = ScoringInput(path, "parquet")
    kinds = {"Malic Acid": ColumnKind.FLOAT, "Vineyard Region": ColumnKind.STRING}
    with pytest.raises(ScoringInputError) as raised:
        list(scoring_batches(source, kinds, [], rows=10))
    assert str(raised.value).startswith(
        f"{path}: column `Vineyard Region` holds list<item: string> values. Expected one number or text per row "
        "in every column the spec uses. Received a list column. `data.flatten` flattens structs only: explode or "
        "aggregate lists and maps upstream"
    )
    with pytest.raises(ScoringInputError) as raised:
        list(scoring_batches(source, {"Malic Acid": ColumnKind.FLOAT}, ["Grapes"], rows=10))
    assert str(raised.value) == (
        f"{path}: --keep column `Grapes` holds list<item: string> values. Expected one number or text per row in "
        "every kept column (an output row holds one value per column). Received a nested column. Leave `Grapes` "
        "out of --keep, or write it as columns of its own."
    )


@pytest.mark.parametrize(("fmt", "ids"), [("parquet", pa.int64()), ("jsonl", pa.int64()), ("csv", pa.string())])
def test_kept_columns_have_the_files_types(tmp_path, fmt, ids):
    source = _wine_file(tmp_path, fmt, [101.0, 99.5, None, 97.0])
    kept = pa.Table.from_batches([kept for kept, _ in scoring_batches(source, WINE_KINDS, ["Wine ID"], rows=3)])
    assert kept.schema.field("Wine ID").type == ids
    assert kept.column("Wine ID").to_pylist() == ([11, 12, 13, 14] if ids == pa.int64() else ["11", "12", "13", "14"])


def test_a_csv_output_writes_numbers_unquoted_and_decimals_as_their_text(tmp_path):
    path = tmp_path / "scores.csv"
    price = pa.array([decimal.Decimal("12.50"), None], pa.decimal128(5, 2))
    batch = pa.RecordBatch.from_pydict({"Wine ID": [11, 12], "price": price, "label": ["good", "plain"]})
    with ScoredFile(str(path)) as scored:
        scored.write(batch)
    assert path.read_text(encoding="utf-8").splitlines() == [
        '"Wine ID","price","label"',
        '11,"12.50","good"',
        '12,,"plain"',
    ]


def test_tensorflows_renamed_input_warnings_are_dropped_while_predict_runs(caplog):
    from pipelines.scoring.command import _without_renamed_input_warnings

    absl = logging.getLogger("absl")
    renamed = "`%s` is not a valid tf.function parameter name. Sanitizing to `%s`."  # TensorFlow's own words
    with caplog.at_level(logging.WARNING, logger="absl"):
        with _without_renamed_input_warnings():
            absl.warning(renamed, "Malic Acid_values", "Malic_Acid_values")
            absl.warning("another warning")
        absl.warning(renamed, "Wine ID", "Wine_ID")
    assert [record.getMessage() for record in caplog.records] == [
        "another warning",
        "`Wine ID` is not a valid tf.function parameter name. Sanitizing to `Wine_ID`.",
    ]


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
