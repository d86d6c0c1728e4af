"""The beam target: TFX's BeamDagRunner runs the pipeline, each component's Beam work on the runner you name.

Without `orchestrator.beam_args`, Beam-powered components run on the
DirectRunner in multi-processing mode with one worker process per core.
Other runners take their usual flags, for example:

    beam_args: [--runner=FlinkRunner, --flink_master=localhost:8081, --environment_type=LOOPBACK]
    beam_args: [--runner=SparkRunner, --spark_master_url=spark://host:7077, --environment_type=LOOPBACK]
    beam_args: [--runner=DataflowRunner, --project=P, --region=R, --temp_location=gs://B/tmp]
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from typing import TextIO

from pipelines.spec import ResolvedSpec

__all__ = ["run_beam", "beam_args", "direct_multiprocessing_args"]


def direct_multiprocessing_args(workers: int | None = None) -> tuple[str, ...]:
    """DirectRunner flags for `workers` processes (default: one per core)."""
    from pipelines.compiler import DEFAULT_BEAM_ARGS

    setup_file = [a for a in DEFAULT_BEAM_ARGS if a.startswith("--setup_file=")]
    return (
        "--runner=DirectRunner",
        "--direct_running_mode=multi_processing",
        f"--direct_num_workers={workers or os.cpu_count() or 1}",
        *setup_file,
    )


def beam_args(resolved: ResolvedSpec) -> tuple[str, ...]:
    """The spec's `orchestrator.beam_args`, or DirectRunner multi-processing."""
    declared = resolved.spec.orchestrator.beam_args
    return tuple(declared) if declared else direct_multiprocessing_args()


def run_beam(resolved: ResolvedSpec, stream: TextIO | None = None) -> dict[str, str]:
    """Runs the pipeline on TFX's BeamDagRunner; returns each component's MLMD state.

    Raises:
        RuntimeError: a component failed (TFX's error is the cause); finished
            components stay published, so a rerun resumes from the failed one.
    """
    from tfx.orchestration.beam.beam_dag_runner import BeamDagRunner

    from pipelines.compiler import compile_pipeline
    from pipelines.runners.fingerprint import max_execution_id
    from pipelines.runners.local import _attach_log_file
    from pipelines.targets.mlmd_states import states_after
    from pipelines.targets.resources import unhonoured_settings

    stream = stream or sys.stdout
    for warning in unhonoured_settings(resolved.spec.orchestrator, "beam"):
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    args = beam_args(resolved)
    print(
        f"Pipeline {resolved.name} on BeamDagRunner, components' Beam args: {' '.join(args)}", file=stream, flush=True
    )
    tfx_pipeline = compile_pipeline(resolved, args)
    before = max_execution_id(resolved.metadata_path) if os.path.exists(resolved.metadata_path) else 0
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    log_file = os.path.join(resolved.log_dir, f"beam-{stamp}.log")
    handler = _attach_log_file(log_file)
    started = time.perf_counter()
    try:
        BeamDagRunner().run(tfx_pipeline)
    except Exception as error:
        raise RuntimeError(f"the Beam run failed: {error}\nFull log: {log_file}") from error
    finally:
        import logging

        logging.getLogger().removeHandler(handler)
        handler.close()
        states = states_after(resolved.metadata_path, before)
        for component_id, state in states.items():
            print(f"  {component_id:<18} {state}", file=stream)
    print(f"Done in {time.perf_counter() - started:.1f}s. Full log: {log_file}", file=stream, flush=True)
    return states
