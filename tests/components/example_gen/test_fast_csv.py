"""The in-process fast path writes the examples TFX's Beam path writes, value for value.

Each case runs both on the same file: `_CsvToExample` (TFX's decoder, type
inference and converter, with our header/NA handling) through a real Beam
pipeline, and `fast_csv` (Arrow batches, tfx_bsl's encoder). The examples are
compared as multisets of {feature: (kind, values)}.
"""

from __future__ import annotations

import csv
import glob
import io
import os

import pytest
import tensorflow as tf
from taxi_fixtures import TAXI_CSV
from test_csv_executor import MESSY, _run

from components.common.csv_dialect import CsvDialect
from components.example_gen import fast_csv
from components.example_gen.csv_executor import read_header


def _canonical(example: tf.train.Example) -> tuple:
    row = []
    for name, feature in sorted(example.features.feature.items()):
        kind = feature.WhichOneof("kind")
        row.append((name, kind, tuple(getattr(feature, kind).value) if kind else ()))
    return tuple(row)


def _read_split(folder: str) -> list[tuple]:
    files = sorted(glob.glob(os.path.join(folder, "*.gz")))
    assert files, f"no files in {folder}"
    return [
        _canonical(tf.train.Example.FromString(r.numpy()))
        for r in tf.data.TFRecordDataset(files, compression_type="GZIP")
    ]


def _fast(
    folder, text: str, na_values, impute_non_finite: bool, dialect: CsvDialect = CsvDialect(), columns=None
) -> list[tuple]:
    path = folder / "fast.csv"
    path.write_text(text, encoding="utf-8")
    names = read_header(str(path), dialect)
    kinds = fast_csv.infer_kinds([str(path)], names, na_values, impute_non_finite, dialect, columns)
    splits = fast_csv.SplitSpec(("all",), (), (str(folder / "out"),))
    counts = fast_csv.write_examples(
        [str(path)], names, kinds, na_values, impute_non_finite, splits, dialect=dialect, columns=columns
    )
    rows = _read_split(str(folder / "out"))
    assert counts == {"all": len(rows)}
    return rows


def _tfx(
    folder, text: str, na_values, impute_non_finite: bool, dialect: CsvDialect = CsvDialect(), columns=None
) -> list[tuple]:
    rows = _run(folder, text, na_values, impute_non_finite, dialect, columns)
    return [tuple(sorted((name, kind, tuple(values)) for name, (kind, values) in row.items())) for row in rows]


CASES = {
    "messy header, NA and inf": (MESSY, ["", "NA", "null"], True),
    "inf kept": (MESSY, ["", "NA", "null"], False),
    "ints with spaces and signs": ("a,b\n 5,+3\n-2 ,7\n,0\n", [""], False),
    "int beyond int64 is text": ("a,b\n1,99999999999999999999\n2,3\n", [""], False),
    "ints and floats make floats": ("a\n1\n2.5\n1e3\n.5\n+1.5\n 7 \n1.\n2E+2\n", [""], False),
    "a text cell makes text": ("a,b\n1,x\n2,\n", [""], False),
    "empty column": ("a,b\n1,\n2,\n", [""], False),
    "quoted newline and comma": ('a,b\n"line one\nline two",1\n"x, y",2\n', [""], False),
    "nan in an int column with impute": ("a\n1\nnan\n-Inf\n3\n", [""], True),
    "unicode text": ("name,v\nZürich,1\n東京,2\n", [""], False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_path_writes_what_the_beam_path_writes(tmp_path, case):
    text, na_values, impute = CASES[case]
    (tmp_path / "beam").mkdir()
    (tmp_path / "fast").mkdir()
    assert sorted(_fast(tmp_path / "fast", text, na_values, impute)) == sorted(
        _tfx(tmp_path / "beam", text, na_values, impute)
    )


def test_both_paths_write_only_the_columns_asked_for(tmp_path):
    text = 'a,b,c,d\n1,"x, y",2.5,7\n,NA,3,8\n'
    (tmp_path / "beam").mkdir()
    (tmp_path / "fast").mkdir()
    fast = _fast(tmp_path / "fast", text, ["", "NA"], False, columns=["c", "a"])
    assert sorted(fast) == sorted(_tfx(tmp_path / "beam", text, ["", "NA"], False, columns=["c", "a"]))
    assert {tuple(name for name, _, _ in row) for row in fast} == {("a", "c")}


def test_the_splits_do_not_depend_on_the_columns_written(tmp_path):
    """A row's split hashes all its cells, so a spec that uses fewer columns gets the same train/eval rows."""
    text = "id,a,b\n" + "".join(f"{i},{i % 7},{i * 3 % 11}\n" for i in range(200))
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    names = read_header(str(path))
    ids = {}
    for label, columns in (("all", None), ("some", ["id", "b"])):
        kinds = fast_csv.infer_kinds([str(path)], names, [""], False, CsvDialect(), columns)
        folders = (str(tmp_path / label / "train"), str(tmp_path / label / "eval"))
        splits = fast_csv.SplitSpec(("train", "eval"), (2, 3), folders)
        fast_csv.write_examples([str(path)], names, kinds, [""], False, splits, columns=columns)
        ids[label] = [sorted(dict(row)["id"] for row in _split_ids(folder)) for folder in folders]
    assert ids["all"] == ids["some"] and all(ids["all"])


def test_row_hashes_are_pandas_hash_pandas_object_so_splits_stay_where_they_were():
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    batch = pa.RecordBatch.from_arrays(
        [pa.array(["1", None, "x", "1"]), pa.array([None, "é", "東京", "2"]), pa.array([None] * 4, pa.string())],
        names=["a", "b", "c"],
    )
    expected = pd.util.hash_pandas_object(batch.to_pandas(), index=False).to_numpy(dtype=np.uint64)
    assert fast_csv._row_hashes(batch).tolist() == expected.tolist()


def _split_ids(folder: str) -> list[dict]:
    return [{name: values for name, _, values in row} for row in _read_split(folder)]


@pytest.mark.parametrize("delimiter", [";", "\t", "|"], ids=["semicolon", "tab", "pipe"])
def test_another_separator_gives_the_examples_of_the_comma_file_on_both_paths(tmp_path, delimiter):
    # Cells holding every separator, quoted where the file's own separator needs it.
    text = 'name,"price, usd",n\nZürich,1.5,1\n"a;b|c\td",NA,2\nx y,-3e2,\n'
    rows = list(csv.reader(io.StringIO(text)))
    other = io.StringIO()
    csv.writer(other, delimiter=delimiter, lineterminator="\n").writerows(rows)
    for name in ("comma", "fast", "beam"):
        (tmp_path / name).mkdir()

    expected = sorted(_fast(tmp_path / "comma", text, ["", "NA"], False))

    assert len(expected) == 3 and any(("name", "bytes_list", (b"a;b|c\td",)) in row for row in expected)
    dialect = CsvDialect(delimiter)
    assert sorted(_fast(tmp_path / "fast", other.getvalue(), ["", "NA"], False, dialect)) == expected
    assert sorted(_tfx(tmp_path / "beam", other.getvalue(), ["", "NA"], False, dialect)) == expected


def test_spaces_after_the_separators_are_dropped_on_both_paths_when_asked(tmp_path):
    comma = "name,price,n\nZürich,1.5,1\nx y,,2\n,7,\n"
    spaced = "name,  price, n\nZürich, 1.5,  1\nx y, ?, 2\n ,7,  \n"  # ` ?` and `  ` are missing once trimmed
    for name in ("comma", "fast", "beam", "kept"):
        (tmp_path / name).mkdir()
    dialect = CsvDialect(",", skip_initial_space=True)

    expected = sorted(_fast(tmp_path / "comma", comma, ["", "?"], False))

    assert any(("price", "float_list", ()) in row for row in expected)
    assert sorted(_fast(tmp_path / "fast", spaced, ["", "?"], False, dialect)) == expected
    assert sorted(_tfx(tmp_path / "beam", spaced, ["", "?"], False, dialect)) == expected
    kept = _fast(tmp_path / "kept", spaced, ["", "?"], False)  # without the setting: names keep their spaces
    assert {name for name, _, _ in kept[0]} == {"name", "  price", " n"}


def test_taxi_data_is_written_identically(tmp_path):
    with open(TAXI_CSV, encoding="utf-8") as handle:
        text = "".join(handle.readlines()[:3001])
    (tmp_path / "beam").mkdir()
    (tmp_path / "fast").mkdir()
    fast = _fast(tmp_path / "fast", text, [""], False)
    assert len(fast) == 3000
    assert sorted(fast) == sorted(_tfx(tmp_path / "beam", text, [""], False))


def test_hash_splits_follow_the_buckets_and_are_the_same_on_every_run(tmp_path):
    (tmp_path / "data.csv").write_text(open(TAXI_CSV, encoding="utf-8").read(), encoding="utf-8")
    path = str(tmp_path / "data.csv")
    names = read_header(path)
    kinds = fast_csv.infer_kinds([path], names, [""], False)
    results = []
    for attempt in range(2):
        folders = (str(tmp_path / f"{attempt}" / "train"), str(tmp_path / f"{attempt}" / "eval"))
        counts = fast_csv.write_examples(
            [path], names, kinds, [""], False, fast_csv.SplitSpec(("train", "eval"), (2, 3), folders)
        )
        results.append((counts, sorted(_read_split(folders[1]))))
    counts = results[0][0]
    assert results[0] == results[1]
    total = sum(counts.values())
    assert abs(counts["train"] / total - 2 / 3) < 0.02  # 2 of 3 hash buckets


def test_duplicate_rows_land_in_the_same_split(tmp_path):
    text = "a,b\n" + "1,x\n" * 50 + "".join(f"{i},y\n" for i in range(200))
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    folders = (str(tmp_path / "train"), str(tmp_path / "eval"))
    kinds = fast_csv.infer_kinds([str(path)], ["a", "b"], [""], False)
    fast_csv.write_examples(
        [str(path)], ["a", "b"], kinds, [""], False, fast_csv.SplitSpec(("train", "eval"), (1, 2), folders)
    )
    duplicate = (("a", "int64_list", (1,)), ("b", "bytes_list", (b"x",)))
    in_train, in_eval = (_read_split(f).count(duplicate) for f in folders)
    assert sorted([in_train, in_eval]) == [0, 50]


def _write_taxi(tmp_path, folder: str, workers: int, batch_bytes: int, monkeypatch) -> tuple[dict, list, list]:
    monkeypatch.setattr(fast_csv, "BATCH_BYTES", batch_bytes)
    names = read_header(TAXI_CSV)
    kinds = fast_csv.infer_kinds([TAXI_CSV], names, [""], False)
    folders = (str(tmp_path / folder / "train"), str(tmp_path / folder / "eval"))
    counts = fast_csv.write_examples(
        [TAXI_CSV], names, kinds, [""], False, fast_csv.SplitSpec(("train", "eval"), (2, 3), folders), workers=workers
    )
    return counts, sorted(_read_split(folders[0])), sorted(_read_split(folders[1]))


def test_worker_processes_write_the_same_splits_as_one_process(tmp_path, monkeypatch):
    one = _write_taxi(tmp_path, "one", 0, 256 << 10, monkeypatch)
    two = _write_taxi(tmp_path, "two", 2, 256 << 10, monkeypatch)
    assert one == two
    assert sum(one[0].values()) == 15002
    files = os.listdir(tmp_path / "two" / "train")
    assert {f.split("-")[1] for f in files} == {"0", "1"}  # both workers wrote batches
    assert all(not f.endswith(".tmp") for f in files)


def test_a_failing_worker_is_named_with_its_error(tmp_path, monkeypatch):
    monkeypatch.setattr(fast_csv, "BATCH_BYTES", 256 << 10)
    names = read_header(TAXI_CSV)
    kinds = [fast_csv.ColumnKind.INT] * len(names)  # text columns cannot become ints: the workers fail
    splits = fast_csv.SplitSpec(("train",), (), (str(tmp_path / "train"),))
    with pytest.raises(RuntimeError, match=r"ExampleGen worker \d failed \(exit 1\): .*ArrowInvalid"):
        fast_csv.write_examples([TAXI_CSV], names, kinds, [""], False, splits, workers=2)


def test_worker_count_follows_the_data_size_and_the_cores():
    assert fast_csv.worker_count(1 << 20, cpus=16) == 0  # one batch: in this process
    assert fast_csv.worker_count(3 * fast_csv.BATCH_BYTES, cpus=16) == 3
    assert fast_csv.worker_count(100 * fast_csv.BATCH_BYTES, cpus=2) == 2
