"""Beam's local worker processes run with the overhead fixes (pipelines/beam/local_workers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to

from pipelines.beam import local_workers as beam_local_workers
from pipelines.targets.beam import LOCAL_WORKERS_RUNNER, direct_multiprocessing_args


def test_the_large_data_flags_select_the_runner():
    args = direct_multiprocessing_args(workers=2)
    assert f"--runner={LOCAL_WORKERS_RUNNER}" in args and "--direct_running_mode=multi_processing" in args
    module, name = LOCAL_WORKERS_RUNNER.rsplit(".", 1)
    assert (
        module == beam_local_workers.__name__
        and getattr(beam_local_workers, name) is beam_local_workers.LocalWorkersRunner
    )


def test_its_worker_process_runs_with_beams_dofn_check_replaced():
    def where_am_i(parent_pid):  # local, so pickled by value: the worker cannot import this test module
        import os

        from apache_beam.transforms import userstate

        return os.getpid() != parent_pid, userstate.get_dofn_specs.__module__

    with beam.Pipeline(options=PipelineOptions(list(direct_multiprocessing_args(workers=1)))) as pipeline:
        found = pipeline | beam.Create([os.getpid()]) | beam.Map(where_am_i)
        # Another process, with `get_dofn_specs` from our module rather than Beam's.
        assert_that(found, equal_to([(True, "compat.beam.dofn_specs")]))


def test_a_worker_drops_only_tensorflows_exit_noise():
    script = textwrap.dedent(
        """
        import sys
        from apache_beam.runners.worker import sdk_worker_main
        sdk_worker_main.main = lambda argv: None  # the hook, without a Beam job to serve
        sys.argv = ["worker"]
        import runpy
        runpy.run_module("pipelines.beam.local_workers", run_name="__main__")

        class AtomicFunction:
            def __del__(self):
                raise TypeError("'NoneType' object is not subscriptable")

        class Other:
            def __del__(self):
                raise TypeError("a real error")

        AtomicFunction()
        Other()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "a real error" in done.stderr and "Other.__del__" in done.stderr
    assert "not subscriptable" not in done.stderr


def test_the_worker_command_quotes_the_interpreter():
    assert beam_local_workers.worker_command("/opt/my python/bin/python") == (
        "'/opt/my python/bin/python' -m pipelines.beam.local_workers"
    )
