"""A data file deleted during a run, once ExampleGen has read it: the run still writes its record and report."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest
from taxi_fixtures import run_cli, taxi_spec, write_spec

from pipelines.report.paths import report_path

pytestmark = pytest.mark.e2e

HOOK = '''
import os
import subprocess
import sys


class DeleteAfterExampleGen:
    """Deletes `path` once ExampleGen has run: the data is gone before the run ends."""

    def __init__(self, path):
        self.path = path

    def after_component(self, component_id, **kwargs):
        if component_id == "ExampleGen":
            os.remove(self.path)
'''


def test_the_run_record_and_report_are_written_when_the_data_file_is_gone(tmp_path, taxi_sample_csv):
    data = tmp_path / "data" / "taxi.csv"
    data.parent.mkdir()
    with open(taxi_sample_csv, encoding="utf-8", newline="") as source, open(data, "w", newline="") as target:
        rows = csv.DictReader(source)
        writer = csv.DictWriter(target, rows.fieldnames)
        writer.writeheader()  # the sample's one row without pickup values stops DataGate: left out
        writer.writerows(row for row in rows if row["pickup_latitude"])
    size, mtime_ns = data.stat().st_size, data.stat().st_mtime_ns
    (tmp_path / "data_deleter.py").write_text(HOOK, encoding="utf-8")
    root = tmp_path / "root"
    hook = {"uses": "data_deleter:DeleteAfterExampleGen", "parameters": {"path": str(data)}}
    spec = taxi_spec(str(data), str(root), pipeline={"name": "gone"}, hooks=[hook])
    spec["training"].update(train_steps=20, eval_steps=5)
    completed = run_cli(write_spec(tmp_path / "spec.yaml", spec))

    assert not data.exists(), "the hook did not delete the data file"
    assert "Traceback" not in completed.stderr, completed.stderr[-3000:]
    assert "could not write the run record" not in completed.stderr, completed.stderr[-3000:]
    with open(root / "last_run.json", encoding="utf-8") as handle:
        last_run = json.load(handle)
    run_id = last_run["run_id"]
    (record_file,) = (root / "runs").glob("*.json")
    record = json.loads(record_file.read_text(encoding="utf-8"))
    assert record["run_id"] == run_id
    assert record["data_files"] == {str(data): {"size": size, "mtime_ns": mtime_ns}}  # as the run read it
    assert record["spec_text"].count("DeleteAfterExampleGen") == 1
    assert os.path.isfile(report_path(str(root), run_id))
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    assert last_run["summary"]["blessed"] is True and record["summary"] == last_run["summary"]
    listed = subprocess.run(  # the history lists it, though the spec's data file is gone
        [sys.executable, "-m", "pipelines", "runs", str(tmp_path / "spec.yaml"), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert listed.returncode == 0, listed.stderr
    assert [(run["run_id"], run["status"]) for run in json.loads(listed.stdout)] == [(run_id, "succeeded")]
