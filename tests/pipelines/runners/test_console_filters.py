"""TFX's `custom_executor_spec is deprecated` line never reaches the console; other lines do; the Trainer's
memory estimate is echoed there."""

from __future__ import annotations

import io
import logging

import pytest
from absl import logging as absl_logging

from pipelines.runners.console import CUSTOM_EXECUTOR_SPEC_DEPRECATED, dropping, echoing


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def absl_messages():
    handler = _Collect()
    logger = logging.getLogger("absl")
    logger.addHandler(handler)
    yield handler.messages
    logger.removeHandler(handler)


def test_dropping_removes_only_that_message_and_only_inside_the_block(absl_messages):
    from absl import logging as absl_logging

    with dropping(CUSTOM_EXECUTOR_SPEC_DEPRECATED):
        absl_logging.warning("`custom_executor_spec` is deprecated. Please customize component directly.")
        absl_logging.warning("something a person should see")
    absl_logging.warning("`custom_executor_spec` is deprecated. Please customize component directly.")

    assert absl_messages == [
        "something a person should see",
        "`custom_executor_spec` is deprecated. Please customize component directly.",
    ]


def test_no_target_logs_the_deprecation_when_it_compiles_the_pipeline(absl_messages, taxi_sample_csv, tmp_path):
    from taxi_fixtures import taxi_spec, write_spec
    from tfx.components import Pusher
    from tfx.dsl.components.base import executor_spec

    from components.pusher.executor import Executor
    from pipelines import api, compiler
    from pipelines.load import load_spec

    resolved = load_spec(write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "root"))))
    trainer = compiler.compile_pipeline(resolved).components[6]
    Pusher(model=trainer.outputs["model"], custom_executor_spec=executor_spec.ExecutorClassSpec(Executor))
    assert any(m.startswith(CUSTOM_EXECUTOR_SPEC_DEPRECATED) for m in absl_messages)  # TFX does log it
    absl_messages.clear()

    api.compile(resolved)  # the local and beam runners
    compiler.compile_pipeline(resolved, ("--runner=FlinkRunner",))  # what the other targets call

    assert not [m for m in absl_messages if CUSTOM_EXECUTOR_SPEC_DEPRECATED in m]


def test_echoing_prints_the_trainer_memory_estimate_and_only_inside_the_block():
    stream = io.StringIO()
    verbosity = absl_logging.get_verbosity()
    absl_logging.set_verbosity(absl_logging.INFO)  # as a run's log file has it
    try:
        with echoing(stream=stream):
            absl_logging.info("Trainer: about 90.9 MiB of accelerator memory per step at batch 32 (...); fits.")
            absl_logging.warning("Trainer: about 20.0 GiB of accelerator memory per step at batch 512; likely OOM.")
            absl_logging.info("Trainer: starting the first execution")  # not an echoed message
        absl_logging.info("Trainer: about 1 MiB after the block")
    finally:
        absl_logging.set_verbosity(verbosity)
    assert stream.getvalue().splitlines() == [
        "Trainer: about 90.9 MiB of accelerator memory per step at batch 32 (...); fits.",
        "warning: Trainer: about 20.0 GiB of accelerator memory per step at batch 512; likely OOM.",
    ]
