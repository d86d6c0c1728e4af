"""Python warnings raised during a run (TFMA's divide-by-zero RuntimeWarnings) go to the run's log, not the console.

The run is a one-component TFX pipeline in its own process (pytest records warnings itself), on real TFX and ML
Metadata (SQLite).
"""

from __future__ import annotations

import os
import subprocess
import sys

from taxi_fixtures import REPO

SCRIPT = """
import os, sys, warnings
import numpy as np
from tfx.dsl.component.experimental.annotations import OutputArtifact
from tfx.dsl.component.experimental.decorators import component
from tfx.orchestration import metadata, pipeline
from tfx.types.standard_artifacts import Examples

from pipelines.runners.local import run_pipeline


@component
def Divide(out: OutputArtifact[Examples]):
    ratio = np.float64(1.0) / np.float64(0.0)  # numpy: RuntimeWarning: divide by zero
    warnings.warn("a metric divided by zero", RuntimeWarning)
    open(os.path.join(out.uri, "ratio.txt"), "w").write(str(ratio))


root = sys.argv[1]
tfx_pipeline = pipeline.Pipeline(
    pipeline_name="warnings",
    pipeline_root=os.path.join(root, "artifacts"),
    components=[Divide().with_id("Divide")],
    metadata_connection_config=metadata.sqlite_metadata_connection_config(os.path.join(root, "metadata.sqlite")),
)
run_pipeline(tfx_pipeline, os.path.join(root, "logs", "run.log"))
warnings.warn("after the run", UserWarning)
"""


def test_warnings_during_a_run_go_to_its_log_not_the_console(tmp_path):
    script = tmp_path / "divide.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    completed = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )

    assert completed.returncode == 0, completed.stderr
    assert "RuntimeWarning" not in completed.stderr and "divided by zero" not in completed.stderr
    log = (tmp_path / "logs" / "run.log").read_text(encoding="utf-8")
    assert "RuntimeWarning: divide by zero" in log and "RuntimeWarning: a metric divided by zero" in log
    assert "UserWarning: after the run" in completed.stderr  # the console gets warnings back after the run
