"""The beam target: TFX's BeamDagRunner runs the pipeline, each component's Beam work on the runner you name.

Without `orchestrator.beam_args`, Beam-powered components run on Beam's
FnApiRunner as on the local target: on one thread for small data, on one
thread per core (the Evaluator on one) once the data is larger than
`IN_PROCESS_MAX_BYTES` (`data_size_beam_args`, `per_component_beam_args`).
Other runners take their usual flags, for example:

    beam_args: [--runner=FlinkRunner, --flink_master=localhost:8081, --environment_type=LOOPBACK]
    beam_args: [--runner=SparkRunner, --spark_master_url=spark://host:7077, --environment_type=LOOPBACK]
    beam_args: [--runner=DataflowRunner, --project=P, --region=R, --temp_location=gs://B/tmp]

`--runner=DirectRunner` runs on the FnApiRunner too: Beam 2.74's DirectRunner
first tries its Prism runner, which it downloads (there is no network here,
and each component's pipeline would try again), then falls back to the
FnApiRunner anyway. The BeamDagRunner's own orchestration pipeline runs there
as well. Local runners need no packaging (their workers run this Python);
for a remote runner this project is built once per run as a wheel and passed
as `--extra_package`, unless the arguments already bring their dependencies.

A run prints and writes what a local run does: the `[i/n] component` progress
lines (each node's launch wrapped in the run's hooks, see `beam_progress`), the
summary block, the HTML report and the `last_run.json` and run-history records.
"""

from __future__ import annotations

import contextlib
import datetime
import glob
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import TextIO

from compat.beam import runners
from pipelines.beam import overheads as beam_overheads

# The Beam-argument helpers live with the compiler (`pipelines.beam.args`); named here too, as the beam target's.
from pipelines.beam.args import (
    FN_API_RUNNER,
    IN_PROCESS_MAX_BYTES,
    LOCAL_WORKERS_RUNNER,
    ONE_THREAD_COMPONENTS,
    data_size_beam_args,
    direct_multiprocessing_args,
    direct_threads_args,
    per_component_beam_args,
    setup_file_arg,
    usable_cores,
    worker_threads,
)
from pipelines.beam.dask import check_scheduler_of, component_beam_args
from pipelines.compiler import compile_pipeline
from pipelines.history.records import read_inputs
from pipelines.outcome.fingerprint import max_execution_id, run_fingerprint
from pipelines.report import RunReporter
from pipelines.runners.console import echoing
from pipelines.runners.local import ComponentFailed, _attach_log_file
from pipelines.runners.lock import RunLock
from pipelines.runners.progress import ProgressPrinter
from pipelines.runners.recovery import recover_killed_run
from pipelines.runners.run_end import finish_run
from pipelines.spec import ResolvedSpec
from pipelines.steps.spec_hooks import build_hooks
from pipelines.targets.mlmd_states import states_after
from pipelines.targets.resources import unhonoured_settings

__all__ = [
    "run_beam",
    "beam_args",
    "direct_multiprocessing_args",
    "direct_threads_args",
    "data_size_beam_args",
    "per_component_beam_args",
    "worker_threads",
    "usable_cores",
    "with_project_package",
    "build_project_wheel",
    "FN_API_RUNNER",
    "ONE_THREAD_COMPONENTS",
    "IN_PROCESS_MAX_BYTES",
    "LOCAL_WORKERS_RUNNER",
]

# Runners that execute in worker processes of this machine, with this Python and this project.
_LOCAL_RUNNERS = {
    "directrunner",
    "fnapirunner",
    "bundlebaseddirectrunner",
    "switchingdirectrunner",
    FN_API_RUNNER.lower(),
    LOCAL_WORKERS_RUNNER.lower(),
}
# Flags that already tell a remote runner how to install the code (as TFX's dependency_utils checks).
_DEPENDENCY_FLAGS = (
    "--extra_package",
    "--extra_packages",
    "--setup_file",
    "--requirements_file",
    "--sdk_container_image",
)
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _runner(args: tuple[str, ...]) -> str | None:
    for arg in args:
        if arg.startswith("--runner="):
            return arg.split("=", 1)[1]
    return None


def _is_local(args: tuple[str, ...]) -> bool:
    runner = _runner(args)
    return runner is None or runner.lower() in _LOCAL_RUNNERS


def beam_args(resolved: ResolvedSpec) -> tuple[str, ...]:
    """The components' Beam arguments for the beam target (before packaging, see `with_project_package`).

    Declared `orchestrator.beam_args` are kept, with the DirectRunner swapped for
    the FnApiRunner it falls back to; without them, small data runs on one thread
    and larger data on one thread per core. `orchestrator.beam` (a Dask
    cluster) gives `pipelines.beam.dask.component_beam_args`.
    """
    if resolved.spec.orchestrator.beam is not None:
        return component_beam_args(resolved.spec.orchestrator)
    declared = tuple(resolved.spec.orchestrator.beam_args or ())
    if not declared:
        return data_size_beam_args(resolved)
    if (_runner(declared) or "").lower() == "directrunner":
        return tuple(f"--runner={FN_API_RUNNER}" if a.startswith("--runner=") else a for a in declared)
    return declared


def build_project_wheel(output_dir: str) -> str:
    """Builds this project as a wheel in `output_dir` (once per run); returns its path.

    Raises:
        RuntimeError: pip could not build it (its output is in the message).
    """
    os.makedirs(output_dir, exist_ok=True)
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", output_dir, _REPO],
        capture_output=True,
        text=True,
    )
    wheels = sorted(glob.glob(os.path.join(output_dir, "yaml_tfx-*.whl")), key=os.path.getmtime)
    if completed.returncode != 0 or not wheels:
        raise RuntimeError(
            f"could not build this project's wheel for the remote Beam runner. Expected a wheel in {output_dir}. "
            f"Received: pip exit {completed.returncode}: {completed.stderr[-1500:]}. Pass your own "
            "`--extra_package` or `--sdk_container_image` in orchestrator.beam_args instead."
        )
    return wheels[-1]


def with_project_package(args: tuple[str, ...], staging_dir: str) -> tuple[str, ...]:
    """`args` ready to run: for a remote runner, this project's wheel as `--extra_package`, built once.

    Arguments that already name their dependencies are kept. Local runners stage
    nothing, but without any such flag TFX builds an sdist of TFX itself for every
    Beam step: they get `--setup_file` of this project, which stops that.
    """
    if any(a.split("=", 1)[0] in _DEPENDENCY_FLAGS for a in args):
        return args
    if _is_local(args):
        return (*args, *setup_file_arg())
    kept = tuple(a for a in args if not a.startswith("--setup_file="))
    return (*kept, f"--extra_package={build_project_wheel(staging_dir)}")


@contextlib.contextmanager
def _orchestration_on_fn_api_runner():
    """BeamDagRunner builds its orchestration pipeline with `beam.Pipeline()`: run it on the FnApiRunner."""

    with runners.default_runner(FN_API_RUNNER):
        yield


def run_beam(resolved: ResolvedSpec, stream: TextIO | None = None) -> dict[str, str]:
    """Runs the pipeline on TFX's BeamDagRunner; returns each component's MLMD state.

    Prints what the local target prints: a `[i/n] component  executed|cached  seconds`
    line as each component finishes, then the summary (verdict, metrics, pushed
    model); the spec's `hooks:` run too. Holds the root's run lock, as a local run does.

    Args:
        resolved: a checked spec.
        stream: where progress and the summary go (default stdout).

    Returns:
        Component id -> ML Metadata state of this run's executions (COMPLETE, CACHED, ...).

    Raises:
        ComponentFailed: a component failed (TFX's error is the cause); finished
            components stay published, so a rerun resumes from the failed one.
        RootBusy: another run holds the pipeline root.
        RuntimeError: the Beam orchestration failed outside any component.
    """
    started = time.perf_counter()  # as the local target's "Took": imports and compiling included
    from tfx.dsl.compiler import compiler

    from pipelines.targets.beam_progress import (
        HookedBeamDagRunner,
        observing,
        substitute_run_id,
    )  # TFX and Beam: only when a Beam run starts

    stream = stream or sys.stdout
    beam_overheads.install()  # as the local target: the components' in-process Beam without two overheads
    for warning in unhonoured_settings(resolved.spec.orchestrator, "beam"):
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    with RunLock(resolved.root):
        recovered = recover_killed_run(resolved)
        if recovered:
            print(recovered.describe(), file=stream, flush=True)
        current = run_fingerprint(resolved)
        inputs = read_inputs(resolved)  # the spec text and data files this run reads, for its record
        staging = tempfile.mkdtemp(prefix="beam-package-")  # the run's one wheel, for a remote runner
        args = with_project_package(beam_args(resolved), staging)
        print(
            f"Pipeline {resolved.name} on BeamDagRunner, components' Beam args: {' '.join(args)}",
            file=stream,
            flush=True,
        )
        check_scheduler_of(resolved.spec.orchestrator)
        tfx_pipeline = compile_pipeline(resolved, args)
        before = max_execution_id(resolved.metadata_path)
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        log_file = os.path.join(resolved.log_dir, f"beam-{stamp}.log")
        handler = _attach_log_file(log_file)
        spec_hooks = build_hooks(resolved.spec)
        reporter = RunReporter(resolved, tfx_pipeline, log_file, stream)  # a failed run's report is written by the hook
        try:
            ir = compiler.Compiler().compile(tfx_pipeline)
            run_id = substitute_run_id(ir)
            with observing(run_id, ir, [ProgressPrinter(stream), *spec_hooks, reporter]) as observer:
                try:
                    with _orchestration_on_fn_api_runner(), echoing(stream=stream):  # as the local target
                        HookedBeamDagRunner().run_with_ir(ir)
                except Exception as error:
                    logging.exception("The Beam run failed.")
                    if observer.failed:
                        component_id, cause = observer.failed
                        raise ComponentFailed(component_id, cause, log_file) from cause
                    raise RuntimeError(f"the Beam run failed: {error}\nFull log: {log_file}") from error
        finally:
            for hook in spec_hooks:
                getattr(hook, "close", lambda: None)()
            logging.getLogger().removeHandler(handler)
            handler.close()
            shutil.rmtree(staging, ignore_errors=True)
        seconds = time.perf_counter() - started
        connection = tfx_pipeline.metadata_connection_config
        finish_run(resolved, run_id, connection, observer.results, reporter, current, seconds, log_file, stream, inputs)
        return states_after(resolved.metadata_path, before)
