"""ExampleGen's columnar copy holds what tfx_bsl's decoder reads back from the examples, batch for batch.

Each case writes a CSV through the fast path (`fast_csv.write_examples`) and
compares every `.arrow` file of the copy with `ExamplesToRecordBatchDecoder`
run on the TFRecord file of the same name: the same columns, types, rows and
order, so TFDV sees the same data from either.
"""

from __future__ import annotations

import glob
import json
import os
import sys

import pytest
import tensorflow as tf
from taxi_fixtures import TAXI_CSV
from tfx_bsl.coders import example_coder

from components.common import columnar_copy
from components.example_gen import fast_csv
from components.example_gen.csv_executor import read_header

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "example_gen"))
from test_fast_csv import CASES  # noqa: E402 - the fast path's own edge cases


def _write(tmp_path, text: str, na_values, impute: bool, splits=(("train", "eval"), (1, 2))) -> tuple[str, dict]:
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    names = read_header(str(path))
    kinds = fast_csv.infer_kinds([str(path)], names, na_values, impute)
    uri = tmp_path / "examples"
    folders = tuple(str(uri / f"Split-{name}") for name in splits[0])
    counts = fast_csv.write_examples(
        [str(path)], names, kinds, na_values, impute, fast_csv.SplitSpec(splits[0], splits[1], folders)
    )
    return str(uri), counts


def _assert_copy_matches_the_examples(uri: str, split: str) -> int:
    records_files = sorted(glob.glob(os.path.join(uri, f"Split-{split}", "*.gz")))
    copies = sorted(glob.glob(os.path.join(uri, columnar_copy.FOLDER, f"Split-{split}", "*.arrow")))
    assert [os.path.basename(f)[: -len(".gz")] for f in records_files] == [
        os.path.basename(f)[: -len(".arrow")] for f in copies
    ]
    rows = 0
    for records_file, copy in zip(records_files, copies):
        records = [r.numpy() for r in tf.data.TFRecordDataset(records_file, compression_type="GZIP")]
        decoded = example_coder.ExamplesToRecordBatchDecoder().DecodeBatch(records)
        (batch,) = columnar_copy.read_batches(copy)
        assert batch.schema == decoded.schema
        assert batch.equals(decoded), f"{copy} differs from the decoded {records_file}"
        rows += batch.num_rows
    return rows


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_copy_is_what_the_decoder_reads_back(tmp_path, case):
    text, na_values, impute = CASES[case]
    uri, counts = _write(tmp_path, text, na_values, impute, splits=(("all",), ()))
    assert _assert_copy_matches_the_examples(uri, "all") == counts["all"]


def test_taxi_copy_matches_in_every_split_and_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(fast_csv, "BATCH_BYTES", 256 << 10)  # several batches, on two worker processes
    uri, counts = _write(tmp_path, open(TAXI_CSV, encoding="utf-8").read(), [""], False)
    for split, count in counts.items():
        assert count > 0
        assert _assert_copy_matches_the_examples(uri, split) == count
    assert not glob.glob(os.path.join(uri, "**", "*.tmp"), recursive=True)


def test_a_copy_without_its_manifest_is_never_read(tmp_path):
    uri, counts = _write(tmp_path, "a,b\n1,x\n2,y\n3,z\n", [""], False)
    assert columnar_copy.split_files(uri, "train") is None  # ExampleGen writes the manifest last
    columnar_copy.write_manifest(uri, counts)
    for split, count in counts.items():
        files = columnar_copy.split_files(uri, split)
        assert sum(b.num_rows for f in files for b in columnar_copy.read_batches(f)) == count
    assert columnar_copy.split_files(uri, "test") is None  # a split the copy does not have


def test_a_manifest_of_another_format_or_damaged_is_ignored(tmp_path):
    uri, counts = _write(tmp_path, "a,b\n1,x\n2,y\n", [""], False)
    manifest = os.path.join(uri, columnar_copy.FOLDER, "manifest.json")
    for text in (json.dumps({"format": 99, "rows": counts}), "{not json", "[]"):
        with open(manifest, "w", encoding="utf-8") as handle:
            handle.write(text)
        assert columnar_copy.split_files(uri, "train") is None


def test_remove_deletes_the_copy(tmp_path):
    uri, counts = _write(tmp_path, "a,b\n1,x\n2,y\n", [""], False)
    columnar_copy.write_manifest(uri, counts)
    columnar_copy.remove(uri)
    assert not os.path.exists(os.path.join(uri, columnar_copy.FOLDER))
    assert columnar_copy.split_files(uri, "train") is None
