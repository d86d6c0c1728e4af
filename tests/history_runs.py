"""Two real runs of a small taxi pipeline with a spec change between them, for the run history and UI tests.

A plain module with a unique name (tests/ is on sys.path). The runs are made once per pytest session and
reused by every module that asks, in every pytest-xdist worker (they live under the folder the workers share).
"""

from __future__ import annotations

import json
import os
import shutil

from taxi_fixtures import made_once_per_session, run_cli, taxi_spec, write_spec

STEPS = (60, 40)  # training.train_steps of the first and the second run


def two_runs(taxi_sample_csv: str, tmp_path_factory) -> dict:
    """Runs the pipeline twice (train_steps 60, then 40) unless this session already has; returns paths and ids.

    Returns:
        {"spec_file", "root", "model_name", "data_path", "run_ids": [first, second], "summaries": [first, second]};
        `data_path` is the runs' own copy of `taxi_sample_csv` (each xdist worker has its own sample).
    """
    return made_once_per_session(tmp_path_factory, "history_two_runs", lambda base: _two_runs(base, taxi_sample_csv))


def _two_runs(base, taxi_sample_csv: str) -> dict:
    root = str(base / "root")
    spec_file = str(base / "spec.yaml")
    data_path = str(base / "data" / "taxi.csv")
    os.makedirs(os.path.dirname(data_path))
    shutil.copyfile(taxi_sample_csv, data_path)
    run_ids, summaries = [], []
    for steps in STEPS:
        spec = taxi_spec(data_path, root, pipeline={"name": "history"}, push={"model_name": "history"})
        spec["training"].update(train_steps=steps, eval_steps=10)
        write_spec(spec_file, spec)
        completed = run_cli(spec_file)
        assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
        with open(os.path.join(root, "last_run.json"), encoding="utf-8") as handle:
            record = json.load(handle)
        run_ids.append(record["run_id"])
        summaries.append(record["summary"])
    return {
        "spec_file": spec_file,
        "root": root,
        "model_name": "history",
        "data_path": data_path,
        "run_ids": run_ids,
        "summaries": summaries,
    }
