"""One training worker as its own process: `python -m components.trainer.worker FN_ARGS.json`.

TFX's local Trainer runs `run_fn` inside the pipeline process, where
TensorFlow already ran (Transform), so `MultiWorkerMirroredStrategy`
cannot start there. For several workers, write the Trainer's `FnArgs` once
(`save_fn_args`) and start this module on every machine (or several times
on one), each with its own TF_CONFIG:

    TF_CONFIG='{"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]},
                "task": {"type": "worker", "index": 0}}' \\
        python -m components.trainer.worker fn_args.json

Worker 0 (or the `chief` task) writes the serving model to
`serving_model_dir`; every worker exits 0 when training completed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from components import ensure_legacy_keras  # noqa: F401 - Keras 2 before TensorFlow loads

__all__ = ["save_fn_args", "load_fn_args", "main"]

_FIELDS = (
    "working_dir",
    "train_files",
    "eval_files",
    "train_steps",
    "eval_steps",
    "schema_path",
    "schema_file",
    "transform_graph_path",
    "transform_output",
    "serving_model_dir",
    "eval_model_dir",
    "model_run_dir",
    "base_model",
    "hyperparameters",
    "custom_config",
)


def save_fn_args(fn_args, path: str) -> None:
    """Writes the JSON-able fields of a TFX `FnArgs` (all but `data_accessor`) to `path`."""
    data: dict[str, Any] = {name: getattr(fn_args, name, None) for name in _FIELDS}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)


def load_fn_args(path: str):
    """Reads what `save_fn_args` wrote into a TFX `FnArgs`.

    Raises:
      ValueError: the file is not a JSON object of FnArgs fields.
    """
    from tfx.components.trainer.fn_args_utils import FnArgs

    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    unknown = sorted(set(data) - set(_FIELDS)) if isinstance(data, dict) else ["<not an object>"]
    if unknown:
        raise ValueError(
            f"{path} is not an FnArgs file: unexpected {unknown}. Expected a JSON object with keys from "
            f"{list(_FIELDS)}. Write it with components.trainer.worker.save_fn_args."
        )
    return FnArgs(**data)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.trainer.worker", description=__doc__)
    parser.add_argument("fn_args", help="JSON file written by save_fn_args")
    args = parser.parse_args(argv)
    fn_args = load_fn_args(args.fn_args)
    from components.trainer.run_fn import run_fn  # TensorFlow: after the worker's environment is set

    run_fn(fn_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
