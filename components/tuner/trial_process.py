"""One of the parallel search's processes: `python -m components.tuner.trial_process ARGS.json`.

The environment names its role (`KERASTUNER_TUNER_ID`: `chief` serves the
oracle, `tuner<N>` runs trials; see `components.tuner.parallel`). ARGS.json
holds the FnArgs fields `tuner_fn` reads and the `search` keyword arguments.
"""

from __future__ import annotations

import json
import sys

__all__ = ["main"]


def main(args_file: str) -> None:
    from absl import logging
    from tfx.components.trainer.fn_args_utils import FnArgs

    from components.tuner.tuner_fn import tuner_fn

    logging.set_verbosity(logging.INFO)  # each trial's values in the process's log
    with open(args_file, encoding="utf-8") as handle:
        args = json.load(handle)
    result = tuner_fn(FnArgs(**args["fn_args"]))
    result.tuner.search(**args["fit_kwargs"])


if __name__ == "__main__":
    main(sys.argv[1])
