"""Beam's FnApiRunner whose local worker processes carry this project's fixes to Beam's overheads.

When the data is large the components' Beam pipelines run on worker
processes of this machine (`pipelines.targets.beam.direct_multiprocessing_args`).
Those are fresh interpreters: the fixes `beam_overheads` installs in the
pipeline's own process (a DoFn check worked out once per class, cached
values weighed without a walk over every module) do not reach them, although
that is where the work runs. Beam gives them no hook: the FnApiRunner starts
each one as `python -m apache_beam.runners.worker.sdk_worker_main` and hands
it no pipeline options (so `--beam_plugins` is never read there).

`LocalWorkersRunner` is the FnApiRunner with one change: it starts its
workers as `python -m pipelines.beam.local_workers`, which installs
the fixes and then runs Beam's own worker `main`. Select it with
`--runner=pipelines.beam.local_workers.LocalWorkersRunner`; in its
other modes it is the FnApiRunner. The rewrite of Beam's worker command is
`compat.beam.runners.use_worker_command` (a Beam internal).

The worker also keeps its exit quiet: TensorFlow's `AtomicFunction.__del__`
runs after the interpreter has torn down the modules it needs and prints a
`TypeError` traceback per loaded model as the worker shuts down. Those (and
only those) are dropped; every other unraisable exception reaches Python's
own hook.
"""

from __future__ import annotations

import shlex
import sys

from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from compat.beam import runners
from pipelines.beam import overheads as beam_overheads

__all__ = ["LocalWorkersRunner", "worker_command"]

_QUIET_AT_EXIT = "AtomicFunction.__del__"


def worker_command(python: str = sys.executable) -> str:
    """The shell command that starts one of our workers (Beam runs it with `shell=True`)."""
    return f"{shlex.quote(python)} -m {__name__}"


class LocalWorkersRunner(FnApiRunner):
    """The FnApiRunner, starting its worker processes through this module (see the module docstring)."""

    def run_via_runner_api(self, pipeline_proto, options):
        runners.use_worker_command(pipeline_proto, worker_command())
        return super().run_via_runner_api(pipeline_proto, options)


def _drop_tensorflow_exit_noise(unraisable, _previous=sys.unraisablehook, _quiet=_QUIET_AT_EXIT) -> None:
    if getattr(unraisable.object, "__qualname__", None) == _quiet:
        return
    _previous(unraisable)


def _run_worker() -> None:
    from apache_beam.runners.worker import sdk_worker_main

    beam_overheads.install()
    sys.unraisablehook = _drop_tensorflow_exit_noise
    sdk_worker_main.main(sys.argv)


if __name__ == "__main__":
    _run_worker()
