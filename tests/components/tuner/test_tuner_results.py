"""`results.py`: the Tuner's artifacts read back, built-in knobs decoded and a module's own values kept."""

from __future__ import annotations

import json

from components.tuner.results import BEST_FILE, RESULTS_FILE, tuning_summary


def _write(folder, name, content) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(content), encoding="utf-8")
    return str(folder)


def test_built_in_knobs_are_decoded_and_kerastuners_own_entries_left_out(tmp_path):
    best = _write(tmp_path / "best", BEST_FILE, {"values": {"hidden_units": "64,32", "tuner/epochs": 2}})
    trials = _write(
        tmp_path / "results",
        RESULTS_FILE,
        [{"trial_id": "01", "score": 0.9, "hidden_units": "64,32", "learning_rate": 0.01, "tuner/round": 0}],
    )

    summary = tuning_summary(best, trials)

    assert summary["best"] == {"hidden_units": [64, 32]}
    assert summary["trials"] == [
        {"trial_id": "01", "score": 0.9, "values": {"hidden_units": [64, 32], "learning_rate": 0.01}}
    ]


def test_a_module_files_own_hyperparameters_are_shown_as_they_are(tmp_path):
    best = _write(tmp_path / "best", BEST_FILE, {"values": {"num_layers": 2, "learning_rate": 0.001}})
    trials = _write(tmp_path / "results", RESULTS_FILE, [{"trial_id": "3", "score": 0.97, "num_layers": 2}])

    summary = tuning_summary(best, trials)

    assert summary["best"] == {"num_layers": 2, "learning_rate": 0.001}
    assert summary["trials"][0]["values"] == {"num_layers": 2}


def test_missing_or_unreadable_artifacts_give_empty_results(tmp_path):
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / BEST_FILE).write_text("not json", encoding="utf-8")
    assert tuning_summary(str(tmp_path / "best"), str(tmp_path / "none")) == {"best": {}, "trials": []}
    assert tuning_summary(None, None) == {"best": {}, "trials": []}
