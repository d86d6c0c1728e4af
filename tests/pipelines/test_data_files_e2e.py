"""What `validate` accepts, the run reads: a gzip-compressed CSV, and a data folder holding a `.DS_Store`.

Both layers list a data path's files with `components.common.data_files` (hidden files and sub-folders
are not data; a `.gz` file is decompressed), so a run on either completes, and the examples hold only
the columns the spec uses (`unused` never reaches ExampleGen's output).
"""

from __future__ import annotations

import gzip
import random

import pytest
from mlmd_queries import executions_after
from taxi_fixtures import run_cli, write_spec

pytestmark = pytest.mark.e2e

# The same binary junk macOS writes into every folder a Finder window opened.
DS_STORE = b"\x00\x00\x00\x01Bud1\x00\x00\x10\x00\x00\x00\x08\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\xff\xfe"


def _rows(count: int, seed: int) -> str:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        x, z = rng.uniform(0, 1), rng.uniform(0, 1)
        lines.append(f"{x:.4f},{z:.4f},{rng.choice('abc')},{int(x + 0.2 * z > 0.6)}")
    return "\n".join(lines) + "\n"


HEADER = "x,z,unused,y\n"


def _spec(data: str, root) -> dict:
    return {
        "pipeline": {"name": "data_files", "root": str(root)},
        "data": {"path": data},
        "features": {"x": {"transform": "zscore"}, "z": {"transform": "zscore"}},
        "label": {"name": "y", "column": "y"},
        "model": {"type": "dnn", "hidden_units": [4]},
        "training": {"train_steps": 20, "eval_steps": 2, "batch_size": 16},
        "evaluation": {"metrics": ["binary_accuracy"]},
    }


def _run(tmp_path, data: str) -> None:
    spec_file = write_spec(tmp_path / "spec.yaml", _spec(data, tmp_path / "root"))
    completed = run_cli(spec_file)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    states = executions_after(str(tmp_path / "root" / "metadata.sqlite"), 0)
    assert states["ExampleGen"] == states["Trainer"] == states["Evaluator"] == "COMPLETE", states
    import tensorflow as tf

    files = [str(p) for p in (tmp_path / "root" / "artifacts" / "ExampleGen").glob("examples/*/Split-train/*.gz")]
    record = next(iter(tf.data.TFRecordDataset(files, compression_type="GZIP")))
    assert sorted(tf.train.Example.FromString(record.numpy()).features.feature) == ["x", "y", "z"]


def test_a_run_reads_a_gzip_compressed_csv(tmp_path):
    (tmp_path / "data.csv.gz").write_bytes(gzip.compress((HEADER + _rows(300, 0)).encode()))
    _run(tmp_path, str(tmp_path / "data.csv.gz"))


def test_a_run_skips_a_ds_store_in_the_data_folder(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "part-1.csv").write_text(HEADER + _rows(150, 1), encoding="utf-8")
    (data / "part-2.csv.gz").write_bytes(gzip.compress((HEADER + _rows(150, 2)).encode()))
    (data / ".DS_Store").write_bytes(DS_STORE)
    _run(tmp_path, str(data))
