"""The Tuner's outputs read back: the best knob values and one row per trial. Imports no TensorFlow.

TFX's Tuner executor writes `best_hyperparameters.txt` (KerasTuner's
`HyperParameters.get_config()` as JSON) into its `best_hyperparameters`
artifact and `tuner_results.json` (completed trials, best first: `trial_id`,
`score` and the values) into its `tuner_results` artifact. The run summary,
`last_run.json` and the report read them here.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from components.trainer.hyperparameters import knob_values

__all__ = ["BEST_FILE", "RESULTS_FILE", "read_best", "read_trials", "tuning_summary"]

BEST_FILE = "best_hyperparameters.txt"
RESULTS_FILE = "tuner_results.json"


def _read_json(path: str) -> Optional[Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _shown(values: dict[str, Any]) -> dict[str, Any]:
    """A trial's values: the built-in knobs decoded (`hidden_units` as a list), a module file's own
    hyperparameters as they are; KerasTuner's own entries (`tuner/epochs`, ...) left out."""
    own = {name: value for name, value in values.items() if not name.startswith("tuner/")}
    return {**own, **knob_values(own)}


def read_best(best_hyperparameters_uri: str) -> dict[str, Any]:
    """The best values (`_shown`); {} when the file is missing or unreadable."""
    config = _read_json(os.path.join(best_hyperparameters_uri, BEST_FILE))
    return _shown(config.get("values", {})) if isinstance(config, dict) else {}


def read_trials(tuner_results_uri: str) -> list[dict[str, Any]]:
    """One row per completed trial, best first: `{"trial_id", "score", "values": {knob: value}}`."""
    rows = _read_json(os.path.join(tuner_results_uri, RESULTS_FILE))
    if not isinstance(rows, list):
        return []
    return [
        {
            "trial_id": str(row.get("trial_id")),
            "score": row.get("score"),
            "values": _shown({k: v for k, v in row.items() if k not in ("trial_id", "score")}),
        }
        for row in rows
        if isinstance(row, dict)
    ]


def tuning_summary(best_hyperparameters_uri: Optional[str], tuner_results_uri: Optional[str]) -> dict[str, Any]:
    """`{"best": {knob: value}, "trials": [...]}` from the Tuner's two artifacts (either may be None)."""
    return {
        "best": read_best(best_hyperparameters_uri) if best_hyperparameters_uri else {},
        "trials": read_trials(tuner_results_uri) if tuner_results_uri else [],
    }
