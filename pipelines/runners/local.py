"""Runs a compiled pipeline in this process, one component after another.

This is TFX's LocalDagRunner loop (tfx/orchestration/local/local_dag_runner.py)
with what a person needs around it: lifecycle hooks (progress lines, metrics),
whether each step ran or came from cache, and a log file with everything
TFX and Beam say.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pipelines.beam import overheads as beam_overheads
from pipelines.hooks.phases import HookList
from pipelines.outcome.results import ComponentResult
from pipelines.runners import retry
from pipelines.runners.interrupt import RunInterrupted, signal_name

__all__ = ["ComponentResult", "RunResult", "run_pipeline", "ComponentFailed"]


class ComponentFailed(RuntimeError):
    """A component failed; `component_id` names it and `__cause__` is the error."""

    def __init__(self, component_id: str, error: BaseException, log_file: str):
        self.component_id = component_id
        self.log_file = log_file
        super().__init__(f"{component_id} failed: {error}\nFull log: {log_file}")


@dataclasses.dataclass
class RunResult:
    pipeline_name: str
    run_id: str
    components: list[ComponentResult]
    seconds: float
    log_file: str


def _attach_log_file(log_file: str) -> logging.Handler:
    """Sends all Python/absl logging, and Python warnings (TFMA's divide-by-zero among them), to `log_file`.

    Keeps the console quiet; `run_pipeline` stops capturing warnings when the run ends.
    """
    from absl import logging as absl_logging

    os.makedirs(os.path.dirname(log_file), exist_ok=True)
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    absl_logging.set_verbosity(absl_logging.INFO)
    absl_handler = absl_logging.get_absl_handler()
    absl_handler.setLevel(logging.CRITICAL)
    console_handlers = list(root.handlers) + list(logging.getLogger("tensorflow").handlers)
    for stream_handler in console_handlers:
        if stream_handler is not handler and not isinstance(stream_handler, logging.FileHandler):
            stream_handler.setLevel(logging.CRITICAL)
    logging.captureWarnings(True)  # `warnings.warn` -> the `py.warnings` logger -> this file
    return handler


def _execution_state(connection_config, execution_id: int) -> int:
    from tfx.orchestration import metadata

    with metadata.Metadata(connection_config) as handle:
        return handle.store.get_executions_by_id([execution_id])[0].last_known_state


def _launch_with_retries(
    new_launcher: Callable[[], Any], node_id: str, policy: retry.RetryPolicy, on_retry: Callable[..., None]
) -> Any:
    """Launches a component until an attempt succeeds or `policy` runs out; returns the launch's info.

    Each attempt gets a fresh launcher from `new_launcher()` and is logged; `on_retry(attempt=, error=)`
    runs before the backoff. A `KeyboardInterrupt` is never retried.

    Raises:
        BaseException: the last attempt's error.
    """
    for attempt in retry.retrying(policy, before_retry=on_retry):
        with attempt:
            number = attempt.retry_state.attempt_number
            component_launcher = new_launcher()
            logging.info("Component %s is running (attempt %d).", node_id, number)
            try:
                with retry.time_limit(node_id, policy.timeout_seconds):
                    return component_launcher.launch()
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: no retry, `run_pipeline` handles it
                raise
            except BaseException:
                logging.exception("Component %s failed (attempt %d).", node_id, number)
                raise
    raise AssertionError("unreachable: tenacity re-raises the last error")  # for type checkers


def run_pipeline(
    tfx_pipeline,
    log_file: str,
    hooks: Sequence[object] = (),
    policies: Mapping[str, retry.RetryPolicy] | None = None,
) -> RunResult:
    """Compiles `tfx_pipeline` to IR and runs every node in topological order.

    `policies` gives components retries and time limits, by component id: a
    failed attempt is retried `retries` times (hook `on_retry`) after an
    exponential backoff (`retry.retrying`), each attempt stopped after `timeout_seconds`.

    Raises:
        ComponentFailed: a component raised; earlier components' artifacts stay
            published, and a rerun starts from the failed one (the rest is cached).
        RunInterrupted: Ctrl-C or SIGTERM (`pipelines.runners.interrupt`); the report is
            written and the running component's execution is left RUNNING in ML Metadata,
            for the next run's recovery to mark failed.
    """
    from ml_metadata.proto import metadata_store_pb2
    from tfx.dsl.compiler import compiler, constants
    from tfx.orchestration import metadata
    from tfx.orchestration.local import runner_utils
    from tfx.orchestration.portable import launcher, runtime_parameter_utils

    beam_overheads.install()
    handler = _attach_log_file(log_file)
    hook_list = HookList(hooks)
    started = time.perf_counter()
    run_id = datetime.datetime.now().isoformat()
    hook_list.call("before_run", pipeline_name=tfx_pipeline.pipeline_info.pipeline_name, run_id=run_id)
    results: list[ComponentResult] = []
    status = "failed"
    current: str | None = None  # the component running, for an interrupt
    step_started = started
    try:
        ir = compiler.Compiler().compile(tfx_pipeline)
        runtime_parameter_utils.substitute_runtime_parameter(ir, {constants.PIPELINE_RUN_ID_PARAMETER_NAME: run_id})
        deployment_config = runner_utils.extract_local_deployment_config(ir)
        connection = deployment_config.metadata_connection_config
        connection_config = getattr(connection, connection.WhichOneof("connection_config"))
        total = len(ir.nodes)
        for index, node in enumerate(ir.nodes, start=1):
            pipeline_node = node.pipeline_node
            node_id = pipeline_node.node_info.id
            current, step_started = node_id, time.perf_counter()
            hook_list.call("before_component", component_id=node_id, index=index, total=total)
            policy = retry.policy_for(policies, node_id)

            def new_launcher(pipeline_node=pipeline_node, node_id=node_id):  # one per attempt
                return launcher.Launcher(
                    pipeline_node=pipeline_node,
                    mlmd_connection=metadata.Metadata(connection_config),
                    pipeline_info=ir.pipeline_info,
                    pipeline_runtime_spec=ir.runtime_spec,
                    executor_spec=runner_utils.extract_executor_spec(deployment_config, node_id),
                    custom_driver_spec=runner_utils.extract_custom_driver_spec(deployment_config, node_id),
                )

            on_retry = functools.partial(hook_list.call, "on_retry", component_id=node_id, index=index, total=total)
            try:
                info = _launch_with_retries(new_launcher, node_id, policy, on_retry)
            except KeyboardInterrupt:
                raise
            except BaseException as error:
                seconds = time.perf_counter() - step_started
                hook_list.call(
                    "on_failure", component_id=node_id, index=index, total=total, seconds=seconds, error=error
                )
                raise ComponentFailed(node_id, error, log_file) from error
            seconds = time.perf_counter() - step_started
            execution_id = getattr(info, "execution_id", None)
            step_status = "executed"
            if execution_id is None:
                step_status = "resolved"
            elif _execution_state(connection_config, execution_id) == metadata_store_pb2.Execution.CACHED:
                step_status = "cached"
            results.append(ComponentResult(node_id, step_status, seconds, execution_id))
            hook_list.call(
                "after_component",
                component_id=node_id,
                index=index,
                total=total,
                status=step_status,
                seconds=seconds,
                execution_id=execution_id,
            )
            current = None
        status = "succeeded"
    except ComponentFailed:
        raise
    except KeyboardInterrupt as error:
        status = "interrupted"
        seconds = time.perf_counter() - step_started
        logging.warning("The run was interrupted (%s) while %s was running.", signal_name(error), current or "nothing")
        hook_list.call("on_interrupt", component_id=current, seconds=seconds, signal=signal_name(error))
        raise RunInterrupted(current, error, log_file) from error
    except Exception:
        logging.exception("The run stopped on an unexpected error.")  # into the run's log, before it is closed
        raise
    finally:
        seconds = time.perf_counter() - started
        hook_list.call(
            "after_run",
            pipeline_name=tfx_pipeline.pipeline_info.pipeline_name,
            run_id=run_id,
            status=status,
            seconds=seconds,
        )
        logging.captureWarnings(False)
        logging.getLogger().removeHandler(handler)
        handler.close()
    return RunResult(tfx_pipeline.pipeline_info.pipeline_name, run_id, results, seconds, log_file)
