"""TFX's BeamDagRunner pieces that `pipelines.targets.beam_dag.FusedBeamDagRunner` reuses.

What: reads BeamDagRunner's private helpers (`_extract_deployment_config`,
`_connection_config_from_deployment_config`, `_extract_executor_spec`,
`_extract_custom_driver_spec`) and extends its node DoFn (`PipelineNodeAsDoFn`,
through the private attributes its `__init__` sets and its `_extract_platform_config`)
so that the node's input element is its output: `SignallingNodeDoFn`, whose
public `run_node`, `launch`, `node_id`, `pipeline_runtime_spec` and
`mlmd_connection_config` are what `pipelines.targets.beam_progress` overrides and reads.

Why: TFX's `run_with_ir` wires every node to the root element and makes it wait
through side inputs, so Beam cannot fuse the nodes into one stage; it offers no
hook to lay the graph out otherwise, and these helpers have no public form.

Pinned: tfx `compat.tfx.PINNED`. Shape check (`ENTRY`, `fits()`): the four helpers take
the parameters used here, `PipelineNodeAsDoFn.__init__` takes the keyword arguments
used here and sets the attributes read here, and `_extract_platform_config` exists;
otherwise the fused runner runs the pipeline as TFX's BeamDagRunner does, with TFX's
own node DoFn (one log line).
"""

from __future__ import annotations

import inspect
from typing import Any

import apache_beam as beam
from absl import logging
from tfx.orchestration import metadata
from tfx.orchestration.beam.beam_dag_runner import BeamDagRunner, PipelineNodeAsDoFn
from tfx.orchestration.portable import launcher, partial_run_utils

import compat

__all__ = ["ENTRY", "fits", "shape_problem", "configs", "node_specs", "SignallingNodeDoFn"]

ENTRY = "compat.tfx.beam_dag"
_HELPERS = {
    "_extract_deployment_config": ["self", "pipeline"],
    "_connection_config_from_deployment_config": ["self", "deployment_config"],
    "_extract_executor_spec": ["self", "deployment_config", "node_id"],
    "_extract_custom_driver_spec": ["self", "deployment_config", "node_id"],
}
_DOFN_ARGUMENTS = (
    "pipeline_node",
    "mlmd_connection_config",
    "pipeline_info",
    "pipeline_runtime_spec",
    "executor_spec",
    "custom_driver_spec",
    "deployment_config",
    "pipeline",
)
_DOFN_ATTRIBUTES = (
    "_pipeline_node",
    "_mlmd_connection_config",
    "_pipeline_info",
    "_pipeline_runtime_spec",
    "_executor_spec",
    "_custom_driver_spec",
    "_node_id",
    "_deployment_config",
    "_pipeline",
)


def shape_problem() -> str | None:
    """None when BeamDagRunner and its node DoFn have the private pieces used here, else what differs."""
    for name, expected in _HELPERS.items():
        helper = getattr(BeamDagRunner, name, None)
        if not callable(helper):
            return f"BeamDagRunner has no `{name}`"
        parameters = list(inspect.signature(helper).parameters)
        if parameters != expected:
            return f"BeamDagRunner.{name} takes {parameters}, expected {expected}"
    parameters = inspect.signature(PipelineNodeAsDoFn.__init__).parameters
    missing = [name for name in _DOFN_ARGUMENTS if name not in parameters]
    if missing:
        return f"PipelineNodeAsDoFn takes no {', '.join(missing)}"
    unset = [name for name in _DOFN_ATTRIBUTES if name not in PipelineNodeAsDoFn.__init__.__code__.co_names]
    if unset:
        return f"PipelineNodeAsDoFn no longer sets {', '.join(unset)}"
    helper = getattr(PipelineNodeAsDoFn, "_extract_platform_config", None)
    if not callable(helper) or list(inspect.signature(helper).parameters) != ["self", "deployment_config", "node_id"]:
        return "PipelineNodeAsDoFn has no `_extract_platform_config(deployment_config, node_id)`"
    return None


def fits() -> bool:
    """Whether the fused runner may use these pieces (False, after one log line: run TFX's own `run_with_ir`)."""
    return compat.check_shape(ENTRY, shape_problem)


def configs(runner: BeamDagRunner, pipeline) -> tuple[Any, Any]:
    """(the pipeline's `LocalDeploymentConfig`, its MLMD connection config), as TFX's `run_with_ir` reads them."""
    deployment_config = runner._extract_deployment_config(pipeline)
    return deployment_config, runner._connection_config_from_deployment_config(deployment_config)


def node_specs(runner: BeamDagRunner, deployment_config, node_id: str) -> tuple[Any, Any]:
    """(executor spec, custom driver spec) of node `node_id`, as TFX's `run_with_ir` reads them."""
    return (
        runner._extract_executor_spec(deployment_config, node_id),
        runner._extract_custom_driver_spec(deployment_config, node_id),
    )


@beam.typehints.with_input_types(Any)
@beam.typehints.with_output_types(Any)
class SignallingNodeDoFn(PipelineNodeAsDoFn):
    """TFX's node DoFn that outputs its input element once the node has run: the signal for its downstream nodes.

    Subclasses override `run_node` (public here; TFX's is `_run_node`) and may call `launch`.
    """

    @property
    def node_id(self) -> str:
        return self._node_id

    @property
    def pipeline_runtime_spec(self):
        return self._pipeline_runtime_spec

    @property
    def mlmd_connection_config(self):
        return self._mlmd_connection_config

    def launch(self):
        """TFX's `PipelineNodeAsDoFn._run_node`, returning the launcher's execution info."""
        platform_config = self._extract_platform_config(self._deployment_config, self._node_id)
        if self._pipeline_node.execution_options.run.perform_snapshot:
            with metadata.Metadata(self._mlmd_connection_config) as mlmd_handle:
                partial_run_utils.snapshot(mlmd_handle, self._pipeline)
        return launcher.Launcher(
            pipeline_node=self._pipeline_node,
            mlmd_connection=metadata.Metadata(self._mlmd_connection_config),
            pipeline_info=self._pipeline_info,
            pipeline_runtime_spec=self._pipeline_runtime_spec,
            executor_spec=self._executor_spec,
            platform_config=platform_config,
            custom_driver_spec=self._custom_driver_spec,
        ).launch()

    def run_node(self) -> None:
        """Runs the node, as TFX's DoFn does."""
        self.launch()

    def process(self, element: Any, *signals):
        """Runs the node (side input signals are complete before this is called), then outputs `element`."""
        del signals  # upstream nodes' outputs: each holds one element once that node has run
        logging.info("node %s is running.", self._node_id)
        self.run_node()
        logging.info("node %s is finished.", self._node_id)
        yield element
