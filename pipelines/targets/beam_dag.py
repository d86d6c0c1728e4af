"""TFX's BeamDagRunner with an orchestration graph that Beam fuses: chains of nodes run in one Beam stage.

TFX's `BeamDagRunner.run_with_ir` builds one `ParDo` per node, every node on
the same root element, and makes each node wait for every upstream node
through a side input (`AsIter` of the upstream's empty output). Beam cannot
fuse a `ParDo` with the producer of its side input, so the FnApiRunner runs
each node as a stage of its own: a bundle processor built, a bundle run and
every side input fetched through the state API (and sized, for the worker's
state cache, by a walk over all loaded modules: ~15 ms each once TensorFlow
is loaded). On the taxi pipeline that was ~0.6 s of the run.

`FusedBeamDagRunner` builds the same dependencies differently:

- a node's DoFn outputs its input element once the node has run
  (`SignallingNodeDoFn`), so a node's output is the "done" signal;
- a node waits only for the upstream nodes that no other of its upstream nodes
  already waits for (the transitive reduction of the graph);
- of those, the one latest in the pipeline's (topological) order is the node's
  main input, the others stay side inputs.

Every node still runs once, through TFX's launcher, inside the Beam pipeline,
and only after all of its upstream nodes have finished (a main input element
exists only once the upstream node has run; side inputs are complete before
their consumer's stage starts). Where the graph is a chain, as the bundled
pipelines' graphs are, the FnApiRunner fuses the whole chain into one stage.
Partial runs (`run_options`), skipped nodes and snapshot dependencies are
handled as TFX's `run_with_ir` handles them. The TFX-private pieces it reuses
(BeamDagRunner's config helpers, `SignallingNodeDoFn`) are in `compat.tfx.beam_dag`. Each DoFn carries only what it
reads: its node's platform config (`node_deployment_config`) and, for the node
that takes a partial run's snapshot, the pipeline.

Example:
    >>> FusedBeamDagRunner().run_with_ir(compiler.Compiler().compile(tfx_pipeline))
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import apache_beam as beam
from absl import logging
from tfx.dsl.compiler import constants
from tfx.orchestration.beam.beam_dag_runner import BeamDagRunner
from tfx.orchestration.portable import partial_run_utils, runtime_parameter_utils
from tfx.utils import telemetry_utils

from compat.tfx import beam_dag as tfx_beam_dag
from compat.tfx.beam_dag import SignallingNodeDoFn

__all__ = ["NodeSignals", "signal_plan", "node_deployment_config", "SignallingNodeDoFn", "FusedBeamDagRunner"]


@dataclasses.dataclass(frozen=True)
class NodeSignals:
    """What one node waits for: `main` (an upstream node id, or None for the root element) and `side` ids."""

    node: Any  # pipeline_pb2.PipelineNode
    main: str | None
    side: tuple[str, ...]

    @property
    def node_id(self) -> str:
        return self.node.node_info.id


def signal_plan(pipeline) -> list[NodeSignals]:
    """Each node to run, in the pipeline's order, with the signals it waits for.

    A node waits for what TFX's BeamDagRunner makes it wait for (its upstream
    nodes that run, and the snapshot node when it depends on the snapshot),
    less each signal that another of its signals already implies.

    Args:
        pipeline: the compiled pipeline (`pipeline_pb2.Pipeline`), nodes in topological order.
    """
    position: dict[str, int] = {}
    ancestors: dict[str, frozenset[str]] = {}  # node -> every node it runs after
    snapshot_node_id = None
    plan = []
    for node in pipeline.nodes:
        pipeline_node = node.pipeline_node
        node_id = pipeline_node.node_info.id
        if pipeline_node.execution_options.HasField("skip"):
            logging.info("Node %s is skipped in this partial run.", node_id)
            continue
        run_options = pipeline_node.execution_options.run
        if run_options.perform_snapshot:
            snapshot_node_id = node_id
        waits = []
        if run_options.depends_on_snapshot and node_id != snapshot_node_id:
            if snapshot_node_id not in position:
                raise ValueError(f"node {node_id} depends on the snapshot, but no node before it takes the snapshot")
            waits.append(snapshot_node_id)
        for upstream in pipeline_node.upstream_nodes:
            if upstream in position:
                waits.append(upstream)
            else:
                logging.info(
                    "Node %s is upstream of Node %s, but will be skipped in this partial run. Node %s is "
                    "responsible for ensuring that Node %s's dependencies can be resolved.",
                    upstream,
                    node_id,
                    snapshot_node_id,
                    node_id,
                )
        waits = sorted(set(waits), key=position.__getitem__)
        implied = frozenset().union(*(ancestors[u] for u in waits))
        needed = [u for u in waits if u not in implied]
        plan.append(NodeSignals(pipeline_node, needed[-1] if needed else None, tuple(needed[:-1])))
        ancestors[node_id] = implied.union(waits)
        position[node_id] = len(position)
    return plan


def node_deployment_config(deployment_config, node_id: str):
    """The part of the pipeline's `LocalDeploymentConfig` that a node's DoFn reads: its own platform config.

    The DoFn reads the deployment config only for the node's platform config,
    and the pipeline only to take the snapshot of a partial run; Beam pickles
    and compresses each DoFn several times, so each carries no more than that.
    """
    own = type(deployment_config)()
    if node_id in deployment_config.node_level_platform_configs:
        own.node_level_platform_configs[node_id].CopyFrom(deployment_config.node_level_platform_configs[node_id])
    return own


class FusedBeamDagRunner(BeamDagRunner):
    """TFX's IR-based BeamDagRunner, each node's signals laid out by `signal_plan` so that chains fuse."""

    node_dofn_class = SignallingNodeDoFn  # what runs each node: a subclass overrides `run_node`

    def run_with_ir(self, pipeline, run_options=None) -> None:
        """As `BeamDagRunner.run_with_ir`: runs the pipeline (IR) as a Beam pipeline, one DoFn per node.

        Where this TFX's BeamDagRunner is not the one `compat.tfx.beam_dag` was written against,
        it is TFX's own `run_with_ir` (one log line).

        Raises:
            ValueError: `run_options` names no nodes to run from or to.
        """
        if not tfx_beam_dag.fits():
            return super().run_with_ir(pipeline, run_options)
        run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S.%f")
        runtime_parameter_utils.substitute_runtime_parameter(
            pipeline, {constants.PIPELINE_RUN_ID_PARAMETER_NAME: run_id}
        )
        deployment_config, connection_config = tfx_beam_dag.configs(self, pipeline)
        logging.info("Using deployment config:\n %s", deployment_config)
        logging.info("Using connection config:\n %s", connection_config)
        if run_options:
            logging.info("Using run_options:\n %s", run_options)
            partial = run_options.partial_run
            partial_run_utils.mark_pipeline(
                pipeline,
                from_nodes=partial.from_nodes or None,
                to_nodes=partial.to_nodes or None,
                snapshot_settings=partial.snapshot_settings,
            )
        plan = signal_plan(pipeline)
        with telemetry_utils.scoped_labels({telemetry_utils.LABEL_TFX_RUNNER: "beam"}):
            with beam.Pipeline() as p:
                root = p | "CreateRoot" >> beam.Create([None])
                signal_map: dict[str, Any] = {}
                for step in plan:
                    node_id = step.node_id
                    logging.info("Node %s waits for %s.", node_id, [u for u in (step.main, *step.side) if u])
                    executor_spec, custom_driver_spec = tfx_beam_dag.node_specs(self, deployment_config, node_id)
                    do_fn = self.node_dofn_class(
                        pipeline_node=step.node,
                        mlmd_connection_config=connection_config,
                        pipeline_info=pipeline.pipeline_info,
                        pipeline_runtime_spec=pipeline.runtime_spec,
                        executor_spec=executor_spec,
                        custom_driver_spec=custom_driver_spec,
                        deployment_config=node_deployment_config(deployment_config, node_id),
                        pipeline=pipeline if step.node.execution_options.run.perform_snapshot else None,
                    )
                    main = signal_map[step.main] if step.main else root
                    side = [beam.pvalue.AsIter(signal_map[u]) for u in step.side]
                    signal_map[node_id] = main | f"Run[{node_id}]" >> beam.ParDo(do_fn, *side)
                    logging.info("Node %s is scheduled.", node_id)
