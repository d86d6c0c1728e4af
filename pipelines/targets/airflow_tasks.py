"""Run time of an airflow-target task: compile the TFX pipeline and launch one of its components.

`build_dag` (pipelines.targets.airflow) binds `run_component(spec_file,
component_id)` to each task, so TensorFlow and TFX are imported when a task
runs, never when Airflow parses the DAG folder. The launch is TFX's own: the
steps `AirflowDagRunner.run` takes for one component (temporary folder, pip
dependencies, launcher lookup), then TFX's `airflow_component` launcher with
the Airflow run id (both TFX-private: `compat.tfx.airflow`).
"""

from __future__ import annotations

import os

from compat.tfx import airflow as tfx_airflow
from pipelines.beam.dask import check_scheduler_of
from pipelines.compiler import DEFAULT_BEAM_ARGS, compile_pipeline
from pipelines.load import load_spec
from pipelines.targets.beam import beam_args

__all__ = ["run_component", "ComponentNotInPipeline"]


class ComponentNotInPipeline(RuntimeError):
    """The task's component is not in the pipeline compiled from the spec now."""


def _compiled_pipeline(spec_file: str):

    resolved = load_spec(spec_file)
    args = beam_args(resolved) if resolved.spec.orchestrator.beam_args else DEFAULT_BEAM_ARGS
    check_scheduler_of(resolved.spec.orchestrator)  # the task is about to run its component
    return compile_pipeline(resolved, args)


def run_component(spec_file: str, component_id: str, **context) -> None:
    """Compiles the spec's TFX pipeline and launches component `component_id` for this Airflow run.

    Args:
        spec_file: The pipeline YAML file.
        component_id: The id of the component (the Airflow task id).
        **context: Airflow's task context; `ti` (the task instance) gives the run id.

    Raises:
        ComponentNotInPipeline: the spec no longer compiles to a component with this id.
        SpecError: the spec has problems.
    """
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    tfx_pipeline = _compiled_pipeline(spec_file)
    by_id = {component.id: component for component in tfx_pipeline.components}
    component = by_id.get(component_id)
    if component is None:
        raise ComponentNotInPipeline(
            f"task `{component_id}` has no component in the pipeline compiled from {spec_file}. Expected one of: "
            f"{', '.join(by_id)}. Received: task id `{component_id}` (the spec changed after Airflow parsed the DAG). "
            "Let Airflow re-parse the DAG folder (`airflow dags reserialize`), then trigger a new run."
        )
    from tfx.orchestration import data_types
    from tfx.orchestration.config import config_utils, pipeline_config

    pipeline_info = tfx_pipeline.pipeline_info
    tfx_pipeline.additional_pipeline_args.setdefault("tmp_dir", os.path.join(pipeline_info.pipeline_root, ".temp", ""))
    tfx_airflow.resolve_pip_dependencies(component, pipeline_info.pipeline_root)  # as AirflowDagRunner.run does
    launcher_class, component_config = config_utils.find_component_launch_info(
        pipeline_config.PipelineConfig(), component
    )
    tfx_airflow.launch_component(
        component=component,
        component_launcher_class=launcher_class,
        pipeline_info=pipeline_info,
        driver_args=data_types.DriverArgs(enable_cache=tfx_pipeline.enable_cache),
        metadata_connection_config=tfx_pipeline.metadata_connection_config,
        beam_pipeline_args=tfx_pipeline.beam_pipeline_args,
        additional_pipeline_args=tfx_pipeline.additional_pipeline_args,
        component_config=component_config,
        exec_properties=dict(component.exec_properties),
        ti=context["ti"],
    )
