"""Orchestrator targets: where a compiled pipeline runs.

- `local`: this process, one component after another (`pipelines.runners.local`).
- `beam`: TFX's BeamDagRunner with the local target's progress and summary
  (`pipelines.targets.beam`, `beam_progress`); components' Beam work on any
  runner, Dask included (`pipelines.beam.dask`).
- `kubeflow`: the KFP PipelineSpec package and the Vertex AI PipelineJob
  (`pipelines.targets.kubeflow`), with TFJob multi-node training (`tfjob`),
  submitted by `submit` (KFP REST) and `vertex_submit` (aiplatform).
- `airflow`: a DAG file of PythonOperators built from the step graph; each
  task launches its TFX component when it runs (`airflow`, `airflow_tasks`).

`compile_target` writes a target's artefacts; every per-component setting a
target cannot honour is returned as a warning, never dropped silently.
"""

from __future__ import annotations

import dataclasses
import os

from pipelines.compiler import DEFAULT_BEAM_ARGS, compile_pipeline
from pipelines.spec import ResolvedSpec
from pipelines.spec.orchestrator import TARGETS
from pipelines.targets.airflow import write_dag_file
from pipelines.targets.beam import beam_args
from pipelines.targets.kubeflow import compile_kubeflow
from pipelines.targets.resources import unhonoured_settings

__all__ = ["TARGETS", "Compiled", "compile_target", "default_output_dir", "CLUSTER_BEAM_ARGS"]

# Inside a component's container: the DirectRunner on all of the container's cores.
CLUSTER_BEAM_ARGS = ("--direct_running_mode=multi_processing", "--direct_num_workers=0")


@dataclasses.dataclass
class Compiled:
    """What `compile_target` wrote, and the settings the target cannot honour."""

    target: str
    files: list[str]
    warnings: list[str]


def default_output_dir(resolved: ResolvedSpec, target: str) -> str:
    return os.path.join(resolved.root, "compiled", target)


def _write_ir(resolved: ResolvedSpec, output_dir: str, beam_args: tuple[str, ...]) -> list[str]:
    """local and beam run the TFX intermediate representation: write it for review."""
    from google.protobuf import json_format
    from tfx.dsl.compiler import compiler

    ir = compiler.Compiler().compile(compile_pipeline(resolved, beam_args))
    os.makedirs(output_dir, exist_ok=True)
    path = os.path.join(output_dir, "pipeline_ir.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json_format.MessageToJson(ir, sort_keys=True))
    return [path]


def compile_target(resolved: ResolvedSpec, target: str | None = None, output_dir: str | None = None) -> Compiled:
    """Writes the artefact(s) of `target` (default: the spec's) into `output_dir`.

    Raises:
        ValueError: `target` is not one of TARGETS.
    """

    target = target or resolved.spec.orchestrator.target
    if target not in TARGETS:
        raise ValueError(f"unknown target. Expected one of: {', '.join(TARGETS)}. Received: {target!r}.")
    output_dir = os.path.abspath(output_dir or default_output_dir(resolved, target))
    declared = resolved.spec.orchestrator.beam_args
    if target == "kubeflow":
        files = compile_kubeflow(resolved, output_dir, tuple(declared) if declared else CLUSTER_BEAM_ARGS)
    elif target == "airflow":
        files = write_dag_file(resolved, output_dir)
    elif target == "beam":
        files = _write_ir(resolved, output_dir, beam_args(resolved))
    else:
        files = _write_ir(resolved, output_dir, tuple(declared) if declared else DEFAULT_BEAM_ARGS)
    return Compiled(target, files, unhonoured_settings(resolved.spec.orchestrator, target))
