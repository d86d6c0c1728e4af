"""`tuning:` end to end on the taxi data: docs/tuning.md's worked example, as written, in one run and one rerun.

The Tuner runs its trials, the best values are recorded (`last_run.json`, the
printed summary) and train the Trainer's model, the report shows the trials,
and a forced rerun of the same spec and data is served from TFX's cache.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
import yaml
from example_runs import trained_variables
from mlmd_queries import executions_after, max_execution_id
from taxi_fixtures import REPO, TAXI_CSV, run_cli, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

DOC = os.path.join(REPO, "docs", "tuning.md")


def _doc_tuning() -> dict:
    with open(DOC, encoding="utf-8") as handle:
        found = re.search(r"<!-- tuning-example: yaml -->\n```yaml\n(.*?)```", handle.read(), re.S)
    assert found, "docs/tuning.md has no `tuning-example: yaml` block"
    return yaml.safe_load(found.group(1))["tuning"]


@pytest.fixture(scope="module")
def tuned_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tuning")
    root = str(folder / "root")
    tuning = _doc_tuning()
    spec_file = write_spec(folder / "spec.yaml", taxi_spec(TAXI_CSV, root, tuning=tuning))
    completed = run_cli(spec_file)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    with open(os.path.join(root, "last_run.json"), encoding="utf-8") as handle:
        summary = json.load(handle)["summary"]
    return {"root": root, "spec_file": spec_file, "tuning": tuning, "summary": summary, "stdout": completed.stdout}


def test_the_tuner_runs_max_trials_and_records_the_best_values(tuned_run):
    recorded, tuning = tuned_run["summary"]["tuning"], tuned_run["tuning"]
    trials = recorded["trials"]
    assert len(trials) == tuning["max_trials"]
    scores = [trial["score"] for trial in trials]
    assert scores == sorted(scores, reverse=True)  # auc: best (highest) first
    assert recorded["best"] == trials[0]["values"]
    best = recorded["best"]
    assert best["hidden_units"] in tuning["search_space"]["hidden_units"]["choices"]
    assert 0.0005 <= best["learning_rate"] <= 0.02
    assert any(abs(best["dropout"] - step / 10) < 1e-9 for step in range(4))  # {min: 0.0, max: 0.3, step: 0.1}
    assert f"Tuning: best of {len(trials)} trial(s) (score {scores[0]:.4f})" in tuned_run["stdout"]
    assert f"hidden_units={best['hidden_units']}" in tuned_run["stdout"]
    assert "Results summary" not in tuned_run["stdout"]  # KerasTuner's own printout goes to the log only


def test_the_trainer_trains_the_best_layers(tuned_run):
    best = tuned_run["summary"]["tuning"]["best"]["hidden_units"]
    others = [u for u in tuned_run["tuning"]["search_space"]["hidden_units"]["choices"] if u != best]
    shapes = set(trained_variables(tuned_run["root"]).values())
    assert (best[0], best[1]) in shapes  # the kernel between the first two hidden layers
    assert all((units[0], units[1]) not in shapes for units in others)


def test_the_report_shows_every_trial(tuned_run):
    (report,) = glob.glob(os.path.join(tuned_run["root"], "reports", "*.html"))
    with open(report, encoding="utf-8") as handle:
        html = handle.read()
    assert 'id="tuning-trials"' in html
    for trial in tuned_run["summary"]["tuning"]["trials"]:
        assert f'data-trial="{trial["trial_id"]}"' in html
    assert html.count('data-objective="auc"') == len(tuned_run["summary"]["tuning"]["trials"])


def test_the_run_history_shows_the_tuning_line(tuned_run):
    from pipelines.history.format import format_run
    from pipelines.history.mlmd_runs import list_runs

    first = list_runs(tuned_run["root"])[-1]  # newest first
    assert "Tuning: best of 3 trial(s)" in format_run(first, None)


def test_a_rerun_with_the_same_spec_and_data_does_not_tune_again(tuned_run):
    metadata = os.path.join(tuned_run["root"], "metadata.sqlite")
    before = max_execution_id(metadata)
    completed = run_cli(tuned_run["spec_file"], "--force")
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    states = executions_after(metadata, before)
    assert states.get("Tuner") == "CACHED" and states.get("Trainer") == "CACHED", states
    assert "Tuning: best of 3 trial(s)" in completed.stdout  # a cached Tuner's values are still reported
