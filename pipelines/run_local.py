"""Runs a pipeline spec end to end on this machine.

python pipelines/run_local.py                # the bundled Chicago taxi example
python pipelines/run_local.py FILE.yaml      # any spec
"""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    # Started as a script, Python put this file's folder (pipelines/) first on sys.path. Use what
    # `python -m pipelines` uses instead, the current folder, with this repository right after it;
    # the CLI then puts the spec's folder before both.
    sys.path[0] = os.getcwd()
    sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipelines.cli import main  # noqa: E402
from pipelines.resources.gc_tuning import skip_collection_at_exit  # noqa: E402

if __name__ == "__main__":
    sys.exit(skip_collection_at_exit(main(["run", *sys.argv[1:]])))
