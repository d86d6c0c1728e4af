"""The local target's lifecycle hooks around each node that TFX's BeamDagRunner launches.

TFX's BeamDagRunner wraps every node in a DoFn (`PipelineNodeAsDoFn`) of an
orchestration pipeline, which the beam target runs on the in-process
FnApiRunner (laid out by `pipelines.targets.beam_dag` so that chains of nodes
fuse into one Beam stage). `HookedBeamDagRunner` swaps in `HookedNodeDoFn`, which calls the
hooks of `pipelines.hooks.phases` (`before_component`, `after_component`,
`on_failure`) around each node's launch and records whether it executed or came
from TFX's cache. Beam pickles its DoFns, so a DoFn carries no hook: it finds
the run's `NodeObserver` by the pipeline run id, registered in this process by
`observing` for the run's duration.

Example:
    >>> ir = compiler.Compiler().compile(tfx_pipeline)
    >>> run_id = substitute_run_id(ir)
    >>> with observing(run_id, ir, [ProgressPrinter()]) as observer:
    ...     HookedBeamDagRunner().run_with_ir(ir)
    >>> observer.results  # [ComponentResult(component_id="ExampleGen", status="executed", ...), ...]
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import time
from collections.abc import Iterator, Sequence

from tfx.orchestration import metadata

from pipelines.hooks.phases import HookList
from pipelines.outcome.results import ComponentResult
from pipelines.targets.beam_dag import FusedBeamDagRunner, SignallingNodeDoFn

__all__ = ["NodeObserver", "HookedNodeDoFn", "HookedBeamDagRunner", "observing", "substitute_run_id"]

# Pipeline run id -> the observer of that run, while it runs in this process.
_OBSERVERS: dict[str, NodeObserver] = {}


class NodeObserver:
    """Calls the hooks around each node of one run and records what each node did.

    Args:
        hooks: objects with any of the phases of `pipelines.hooks.phases`.
        total: how many nodes the run launches (the `n` of `[i/n]`).
    """

    def __init__(self, hooks: Sequence[object], total: int):
        self.hooks = HookList(hooks)
        self.total = total
        self.results: list[ComponentResult] = []
        self.failed: tuple[str, BaseException] | None = None
        self._started = 0
        self._lock = threading.Lock()

    def start(self, component_id: str) -> int:
        """Calls `before_component`; returns the node's index, in the order nodes start."""
        with self._lock:
            self._started += 1
            index = self._started
        self.hooks.call("before_component", component_id=component_id, index=index, total=self.total)
        return index

    def finish(self, component_id: str, index: int, status: str, seconds: float, execution_id: int | None) -> None:
        """Records the node's result and calls `after_component`."""
        with self._lock:
            self.results.append(ComponentResult(component_id, status, seconds, execution_id))
        self.hooks.call(
            "after_component",
            component_id=component_id,
            index=index,
            total=self.total,
            status=status,
            seconds=seconds,
            execution_id=execution_id,
        )

    def fail(self, component_id: str, index: int, seconds: float, error: BaseException) -> None:
        """Remembers the first failed node and calls `on_failure`."""
        with self._lock:
            self.failed = self.failed or (component_id, error)
        self.hooks.call(
            "on_failure", component_id=component_id, index=index, total=self.total, seconds=seconds, error=error
        )


def _run_id(runtime_spec) -> str:
    return runtime_spec.pipeline_run_id.field_value.string_value


def _status(connection_config, execution_id: int | None) -> str:
    """`executed`, `cached`, or `resolved` for a node that records no execution: as the local runner says."""
    from ml_metadata.proto import metadata_store_pb2

    if execution_id is None:
        return "resolved"
    with metadata.Metadata(connection_config) as handle:
        (execution,) = handle.store.get_executions_by_id([execution_id])
    return "cached" if execution.last_known_state == metadata_store_pb2.Execution.CACHED else "executed"


class HookedNodeDoFn(SignallingNodeDoFn):
    """TFX's node DoFn, with the run's hooks called around the launch (when this process runs the node)."""

    def run_node(self) -> None:
        observer = _OBSERVERS.get(_run_id(self.pipeline_runtime_spec))
        if observer is None:  # a worker process of a remote orchestration: no hooks there
            self.launch()
            return
        index = observer.start(self.node_id)
        started = time.perf_counter()
        try:
            info = self.launch()
        except BaseException as error:
            observer.fail(self.node_id, index, time.perf_counter() - started, error)
            raise
        execution_id = getattr(info, "execution_id", None)
        status = _status(self.mlmd_connection_config, execution_id)
        observer.finish(self.node_id, index, status, time.perf_counter() - started, execution_id)


class HookedBeamDagRunner(FusedBeamDagRunner):
    """TFX's IR-based BeamDagRunner (its graph laid out to fuse, see `beam_dag`), each node launched by `HookedNodeDoFn`."""

    node_dofn_class = HookedNodeDoFn


def substitute_run_id(ir) -> str:
    """Gives the IR its pipeline run id (in BeamDagRunner's format) now, so hooks know it; returns it.

    BeamDagRunner's own substitution then finds nothing left to replace.
    """
    from tfx.dsl.compiler import constants
    from tfx.orchestration.portable import runtime_parameter_utils

    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S.%f")
    runtime_parameter_utils.substitute_runtime_parameter(ir, {constants.PIPELINE_RUN_ID_PARAMETER_NAME: run_id})
    return run_id


@contextlib.contextmanager
def observing(run_id: str, ir, hooks: Sequence[object]) -> Iterator[NodeObserver]:
    """Registers the run's observer for its duration, with `before_run` and `after_run` around it.

    Args:
        run_id: the IR's pipeline run id (see `substitute_run_id`).
        ir: the compiled pipeline (`pipeline_pb2.Pipeline`).
        hooks: the run's hooks, called in order.

    Yields:
        The observer; `results` lists each finished node, `failed` names the first failed one.
    """
    nodes = [node.pipeline_node for node in ir.nodes]
    total = sum(1 for node in nodes if not node.execution_options.HasField("skip"))
    observer = NodeObserver(hooks, total)
    name = ir.pipeline_info.id
    _OBSERVERS[run_id] = observer
    observer.hooks.call("before_run", pipeline_name=name, run_id=run_id)
    started = time.perf_counter()
    status = "failed"
    try:
        yield observer
        status = "succeeded"
    finally:
        _OBSERVERS.pop(run_id, None)
        observer.hooks.call(
            "after_run", pipeline_name=name, run_id=run_id, status=status, seconds=time.perf_counter() - started
        )
