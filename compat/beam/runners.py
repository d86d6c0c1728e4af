"""What this project changes in how Beam starts its runners: the local workers' command, the default runner.

`use_worker_command` (entry `compat.beam.runners.worker_command`)
    What: rewrites, in a pipeline proto about to run on the FnApiRunner, the
    payload of each subprocess environment that is Beam's own worker command
    (`<python> -m apache_beam.runners.worker.sdk_worker_main`, the command the
    FnApiRunner writes for `--environment_type=SUBPROCESS_SDK` with no command
    given) to another command.
    Why: the FnApiRunner starts each local worker process with that command and
    hands it no pipeline options, so `--beam_plugins` is never read there and
    no public hook can install anything in the worker
    (`pipelines.beam.local_workers` installs the overhead fixes).
    Shape check: `python_urns.SUBPROCESS_SDK` exists, Beam's worker module has
    `main(argv)`, and `FnApiRunner.run_via_runner_api(pipeline_proto, options)`;
    otherwise the environments are left as Beam wrote them (Beam's own worker,
    without the fixes; one log line).

`default_runner` (entry `compat.beam.runners.default_runner`)
    What: sets the class attribute `StandardOptions.DEFAULT_RUNNER` for the
    length of a `with` block.
    Why: TFX's BeamDagRunner builds its orchestration pipeline with
    `beam.Pipeline()`, taking no options, so Beam's default runner is the only
    way to run it on the FnApiRunner.
    Shape check: `StandardOptions.DEFAULT_RUNNER` is a string; otherwise the
    block runs with Beam's default (one log line).

Pinned: apache-beam `compat.beam.PINNED`.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator

import compat

__all__ = ["BEAMS_WORKER", "use_worker_command", "default_runner", "worker_shape_problem", "runner_shape_problem"]

BEAMS_WORKER = "apache_beam.runners.worker.sdk_worker_main"
WORKER_ENTRY = "compat.beam.runners.worker_command"
RUNNER_ENTRY = "compat.beam.runners.default_runner"


def worker_shape_problem() -> str | None:
    """None when the FnApiRunner starts its subprocess workers as this module expects, else what differs."""
    import importlib

    from apache_beam.portability import python_urns
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    if not getattr(python_urns, "SUBPROCESS_SDK", None):
        return "apache_beam.portability.python_urns has no SUBPROCESS_SDK"
    if not callable(getattr(importlib.import_module(BEAMS_WORKER), "main", None)):
        return f"{BEAMS_WORKER} has no `main`"
    parameters = list(inspect.signature(FnApiRunner.run_via_runner_api).parameters)
    if parameters[:3] != ["self", "pipeline_proto", "options"]:
        return f"FnApiRunner.run_via_runner_api takes {parameters}, expected (self, pipeline_proto, options)"
    return None


def use_worker_command(pipeline_proto, command: str, python: str = sys.executable) -> bool:
    """Makes each subprocess environment of `pipeline_proto` that runs Beam's own worker run `command` instead.

    Args:
        pipeline_proto: the `beam_runner_api_pb2.Pipeline` the FnApiRunner is about to run (changed in place).
        command: the shell command to start a worker with (Beam runs it with `shell=True`).
        python: the interpreter Beam's command names (Beam writes `sys.executable`).

    Returns:
        Whether the shape check passed (False: the environments are left as Beam wrote them).
    """
    if not compat.check_shape(WORKER_ENTRY, worker_shape_problem):
        return False
    from apache_beam.portability import python_urns

    beams_command = f"{python} -m {BEAMS_WORKER}".encode()
    for environment in pipeline_proto.components.environments.values():
        if environment.urn == python_urns.SUBPROCESS_SDK and environment.payload == beams_command:
            environment.payload = command.encode()
    return True


def runner_shape_problem() -> str | None:
    """None when `StandardOptions.DEFAULT_RUNNER` is the string attribute this entry sets, else what differs."""
    from apache_beam.options.pipeline_options import StandardOptions

    if not isinstance(getattr(StandardOptions, "DEFAULT_RUNNER", None), str):
        return "StandardOptions.DEFAULT_RUNNER is not a string"
    return None


@contextlib.contextmanager
def default_runner(runner: str) -> Iterator[bool]:
    """Beam's default runner is `runner` inside the block (yields whether it could be set), and back after."""
    if not compat.check_shape(RUNNER_ENTRY, runner_shape_problem):
        yield False
        return
    from apache_beam.options.pipeline_options import StandardOptions

    default = StandardOptions.DEFAULT_RUNNER
    StandardOptions.DEFAULT_RUNNER = runner
    try:
        yield True
    finally:
        StandardOptions.DEFAULT_RUNNER = default
