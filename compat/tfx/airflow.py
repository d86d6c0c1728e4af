"""TFX's Airflow launch of one component, as TFX's own `AirflowComponent` operator does it.

`resolve_pip_dependencies` (entry `compat.tfx.airflow.pip_dependencies`)
    What: calls the component's private `_resolve_pip_dependencies(pipeline_root)`.
    Why: `AirflowDagRunner.run` calls it before building each task; it has no public form.
    Shape check: `BaseComponent._resolve_pip_dependencies(self, pipeline_root)`;
    otherwise nothing is resolved (one log line; components without pip dependencies,
    as all of this project's are, are unaffected).

`launch_component` (entry `compat.tfx.airflow.launcher`)
    What: calls `airflow_component._airflow_component_launcher`, the function TFX's
    `AirflowComponent` operator binds to each task.
    Why: the airflow target's tasks launch components themselves (TensorFlow and TFX are
    imported when a task runs, never when Airflow parses the DAG folder), so TFX's operator
    cannot be used, and its launch function is private.
    Shape check: the function takes the keyword arguments passed here; otherwise the same
    steps run through TFX's public launcher API (`component_launcher_class.create(...).launch()`,
    the body of TFX 1.16's function; one log line).

Pinned: tfx `compat.tfx.PINNED`.
"""

from __future__ import annotations

import inspect
from typing import Any

import compat

__all__ = ["resolve_pip_dependencies", "launch_component", "pip_shape_problem", "launcher_shape_problem"]

PIP_ENTRY = "compat.tfx.airflow.pip_dependencies"
LAUNCHER_ENTRY = "compat.tfx.airflow.launcher"
_LAUNCHER_ARGUMENTS = (
    "component",
    "component_launcher_class",
    "pipeline_info",
    "driver_args",
    "metadata_connection_config",
    "beam_pipeline_args",
    "additional_pipeline_args",
    "component_config",
    "exec_properties",
)


def pip_shape_problem() -> str | None:
    """None when TFX components resolve pip dependencies as called here, else what differs."""
    from tfx.dsl.components.base import base_component

    own = getattr(base_component.BaseComponent, "_resolve_pip_dependencies", None)
    if not callable(own):
        return "BaseComponent has no `_resolve_pip_dependencies`"
    parameters = list(inspect.signature(own).parameters)
    if parameters != ["self", "pipeline_root"]:
        return f"BaseComponent._resolve_pip_dependencies takes {parameters}, expected ['self', 'pipeline_root']"
    return None


def resolve_pip_dependencies(component, pipeline_root: str) -> bool:
    """Resolves `component`'s pip dependencies as `AirflowDagRunner.run` does; returns whether it could."""
    from tfx.dsl.components.base import base_component

    if not isinstance(component, base_component.BaseComponent):
        return False
    if not compat.check_shape(PIP_ENTRY, pip_shape_problem):
        return False
    component._resolve_pip_dependencies(pipeline_root)
    return True


def launcher_shape_problem() -> str | None:
    """None when TFX's `_airflow_component_launcher` takes the arguments passed here, else what differs."""
    from tfx.orchestration.airflow import airflow_component

    own = getattr(airflow_component, "_airflow_component_launcher", None)
    if not callable(own):
        return "tfx.orchestration.airflow.airflow_component has no `_airflow_component_launcher`"
    parameters = inspect.signature(own).parameters
    missing = [name for name in _LAUNCHER_ARGUMENTS if name not in parameters]
    if missing:
        return f"_airflow_component_launcher takes no {', '.join(missing)}"
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return "_airflow_component_launcher takes no **kwargs (Airflow's `ti`)"
    return None


def launch_component(*, component, pipeline_info, exec_properties: dict[str, Any], ti, **arguments) -> None:
    """Launches `component` for the Airflow task instance `ti`, as TFX's `AirflowComponent` operator does.

    Args:
        component: the TFX component.
        pipeline_info: its pipeline's `data_types.PipelineInfo` (its run id is set from `ti`).
        exec_properties: the component's execution properties.
        ti: Airflow's task instance.
        **arguments: `component_launcher_class`, `driver_args`, `metadata_connection_config`,
            `beam_pipeline_args`, `additional_pipeline_args`, `component_config`.
    """
    if compat.check_shape(LAUNCHER_ENTRY, launcher_shape_problem):
        from tfx.orchestration.airflow import airflow_component

        airflow_component._airflow_component_launcher(
            component=component, pipeline_info=pipeline_info, exec_properties=exec_properties, ti=ti, **arguments
        )
        return
    from tfx.orchestration import metadata
    from tfx.utils import telemetry_utils

    component.exec_properties.update(exec_properties)
    pipeline_info.run_id = ti.get_dagrun().run_id
    launcher = arguments["component_launcher_class"].create(
        component=component,
        pipeline_info=pipeline_info,
        driver_args=arguments["driver_args"],
        metadata_connection=metadata.Metadata(arguments["metadata_connection_config"]),
        beam_pipeline_args=arguments["beam_pipeline_args"],
        additional_pipeline_args=arguments["additional_pipeline_args"],
        component_config=arguments["component_config"],
    )
    with telemetry_utils.scoped_labels({telemetry_utils.LABEL_TFX_RUNNER: "airflow"}):
        launcher.launch()
