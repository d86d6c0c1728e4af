"""The kubeflow target: a Kubeflow Pipelines v2 package and a Vertex AI PipelineJob.

TFX's KubeflowV2DagRunner compiles the pipeline; on top of it this target
adds each component's resources (container CPU/memory requests and limits,
GPU count and type, GPU node placement), retry policies, the schedule
files, and for a Trainer with `workers > 1` multi-node training: a TFJob
(default) or Vertex AI worker pools (with `kubeflow.vertex_region`).

Written to the output folder:
    pipeline.yaml              the PipelineSpec as the KFP SDK writes it (`kfp.Client().upload_pipeline`,
                               `create_run_from_pipeline_package`), GPU node placement in its platform document
    vertex_pipeline_job.json   the Vertex AI PipelineJob (`aiplatform.PipelineJob(template_path=...)`)
    recurring_run.json         with `schedule`: the KFP v2beta1 RecurringRun (kfp_server_api's model)
    vertex_schedule.json       with `schedule`: the Vertex AI CreateScheduleRequest (aiplatform's types)
    tfjob.yaml                 with Trainer workers > 1: the TFJob the Trainer launches

`pipeline.root` must be an object-store URI (gs://, s3://, minio://): it is
every run's `defaultPipelineRoot` / `gcsOutputDirectory`.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os

import yaml

from compat.tfx import resolver as tfx_resolver
from pipelines.compiler import compile_pipeline
from pipelines.spec import ResolvedSpec
from pipelines.spec.gpu_nodes import gpu_placement
from pipelines.spec.orchestrator import OBJECT_STORE_SCHEMES, ComponentRunSpec, kubeflow_name
from pipelines.targets import schedule as schedules
from pipelines.targets.resources import GPU_RESOURCE, kubeflow_resource_spec
from pipelines.targets.tfjob import tfjob_manifest

__all__ = ["compile_kubeflow", "PIPELINE_FILE", "VERTEX_JOB_FILE", "vertex_worker_pool_specs", "KubeflowRootError"]

PIPELINE_FILE = "pipeline.yaml"
VERTEX_JOB_FILE = "vertex_pipeline_job.json"


class KubeflowRootError(ValueError):
    """`pipeline.root` is not an object-store URI that the cluster's pods can reach."""


def vertex_worker_pool_specs(image: str, settings: ComponentRunSpec) -> list[dict]:
    """Vertex AI CustomJob worker pools: pool 0 the chief, pool 1 the other workers."""
    machine = {"machine_type": "n1-standard-8" if not settings.cpu else f"n1-standard-{_n1_size(settings.cpu)}"}
    if settings.gpus:
        machine.update(accelerator_type=settings.accelerator or "NVIDIA_TESLA_T4", accelerator_count=settings.gpus)
    pools = [{"machine_spec": machine, "replica_count": 1, "container_spec": {"image_uri": image}}]
    if settings.workers > 1:
        pools.append(
            {"machine_spec": machine, "replica_count": settings.workers - 1, "container_spec": {"image_uri": image}}
        )
    return pools


def _n1_size(cpu: float) -> int:
    return next(size for size in (2, 4, 8, 16, 32, 64, 96) if size >= cpu or size == 96)


def kubeflow_named(resolved: ResolvedSpec) -> ResolvedSpec:
    """The spec with a pipeline name Kubeflow accepts (`[a-z0-9][a-z0-9-]*`): `chicago_taxi` -> `chicago-taxi`."""
    spec = resolved.spec
    name = kubeflow_name(spec.pipeline.name)
    if name == spec.pipeline.name:
        return resolved
    pipeline = dataclasses.replace(spec.pipeline, name=name)
    return dataclasses.replace(resolved, spec=dataclasses.replace(spec, pipeline=pipeline))


def _multi_node_trainer(trainer, resolved: ResolvedSpec, settings: ComponentRunSpec) -> None:
    """Points the Trainer at TFX's Vertex trainer or our TFJob launcher."""
    from tfx.dsl.components.base import executor_spec
    from tfx.utils import json_utils

    orchestrator = resolved.spec.orchestrator
    custom_config = json_utils.loads(trainer.exec_properties["custom_config"])
    if orchestrator.kubeflow.vertex_region:
        from tfx.extensions.google_cloud_ai_platform import constants
        from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex_trainer

        job_spec: dict = {"worker_pool_specs": vertex_worker_pool_specs(orchestrator.image, settings)}
        if settings.timeout_seconds:
            job_spec["scheduling"] = {"timeout": f"{settings.timeout_seconds}s"}
        if orchestrator.kubeflow.service_account:
            job_spec["service_account"] = orchestrator.kubeflow.service_account
        custom_config.update(
            {
                constants.ENABLE_VERTEX_KEY: True,
                constants.VERTEX_REGION_KEY: orchestrator.kubeflow.vertex_region,
                vertex_trainer.TRAINING_ARGS_KEY: {
                    "project": orchestrator.kubeflow.vertex_project,
                    "job_spec": job_spec,
                },
            }
        )
        trainer.executor_spec = executor_spec.ExecutorClassSpec(vertex_trainer.GenericExecutor)
    else:
        from pipelines.targets import tfjob_executor  # TFX's Kubeflow runner: only for a distributed Trainer

        custom_config[tfjob_executor.TFJOB_KEY] = {
            "name": kubeflow_name(f"{resolved.name}-trainer"),
            "namespace": orchestrator.kubeflow.namespace,
            "image": orchestrator.image,
            "service_account": orchestrator.kubeflow.service_account,
            "platform": orchestrator.platform,
            "settings": {f: getattr(settings, f) for f in ComponentRunSpec.__dataclass_fields__},
        }
        trainer.executor_spec = executor_spec.ExecutorClassSpec(tfjob_executor.Executor)
    trainer.exec_properties["custom_config"] = json_utils.dumps(custom_config)


def _builtin_baseline_strategy(tfx_pipeline) -> None:
    """KFP v2 compiles only TFX's own resolver strategies: the baseline uses LatestBlessedModelStrategy.

    (Locally, the baseline leaves the candidate out so reruns hit the cache;
    Kubeflow's resolver runs as a metadata query instead.)
    """
    from tfx.dsl.components.common import resolver
    from tfx.dsl.input_resolution.strategies.latest_blessed_model_strategy import LatestBlessedModelStrategy

    from components.resolver.baseline import LatestBlessedBaselineStrategy

    for node in tfx_pipeline.components:
        strategy = (
            node.exec_properties.get(resolver.RESOLVER_STRATEGY_CLASS) if isinstance(node, resolver.Resolver) else None
        )
        if strategy is LatestBlessedBaselineStrategy:  # the baseline and the warm start's resolver
            builtin = resolver.Resolver(
                strategy_class=LatestBlessedModelStrategy,
                model=node.raw_inputs["model"],
                model_blessing=node.raw_inputs["model_blessing"],
            )
            # Swapped in place: the Evaluator (the Trainer) already holds this node's output channels.
            tfx_resolver.take_strategy_and_inputs(node, builtin, drop_output="candidate")


def _retry_policies(job: dict, resolved: ResolvedSpec) -> None:
    tasks = job["pipelineSpec"]["root"]["dag"]["tasks"]
    for component_id, settings in resolved.spec.orchestrator.components.items():
        if settings is not None and settings.retries and component_id in tasks:
            tasks[component_id]["retryPolicy"] = {
                "maxRetryCount": settings.retries,
                "backoffDuration": "60s",
                "backoffFactor": 2.0,
                "backoffMaxDuration": "3600s",
            }


def _write_json(path: str, content: dict) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(content, handle, indent=2, sort_keys=True)
    return path


def compile_kubeflow(resolved: ResolvedSpec, output_dir: str, beam_args: tuple[str, ...]) -> list[str]:
    """Writes the kubeflow artefacts for `resolved` into `output_dir`; returns their paths.

    Raises:
        ImportError: kfp-pipeline-spec is not installed (the message says how to install it).
        KubeflowRootError: `pipeline.root` is a local path.
    """
    try:
        import kfp.pipeline_spec  # noqa: F401 - TFX's KubeflowV2DagRunner writes its protos
    except ImportError as error:
        raise ImportError(
            "the kubeflow target needs kfp-pipeline-spec. Expected it installed. Received: "
            f"{error}. Install it with `pip install -e .[kubeflow]` (or `make extras`)."
        ) from error
    from tfx.dsl.components.base import base_component
    from tfx.orchestration.kubeflow.v2 import kubeflow_v2_dag_runner

    from pipelines.targets.tfjob_executor import worker_command  # TFX's Kubeflow runner: only for a distributed Trainer

    orchestrator = resolved.spec.orchestrator
    if not resolved.root.startswith(OBJECT_STORE_SCHEMES):
        raise KubeflowRootError(
            "pipeline.root: the kubeflow target needs an object-store pipeline root that every pod can reach. "
            f"Expected a URI starting with {', '.join(OBJECT_STORE_SCHEMES)}. Received: {resolved.root!r}. "
            "Example: `root: gs://my-bucket/pipelines/chicago_taxi` (Vertex AI takes gs:// only)."
        )
    resolved = kubeflow_named(resolved)
    tfx_pipeline = compile_pipeline(resolved, beam_args)
    _builtin_baseline_strategy(tfx_pipeline)
    written = []
    for component in tfx_pipeline.components:
        settings = orchestrator.components.get(component.id)
        if settings is None or not isinstance(component, base_component.BaseComponent):
            continue
        if component.id == "Trainer" and settings.workers > 1:
            _multi_node_trainer(component, resolved, settings)
            if not orchestrator.kubeflow.vertex_region:
                # The launcher fills in the inputs and outputs at run time.
                placeholder = worker_command({}, {}, {"custom_config": "<set at run time>"})
                manifest = tfjob_manifest(
                    kubeflow_name(f"{resolved.name}-trainer"),
                    orchestrator.kubeflow.namespace,
                    orchestrator.image,
                    placeholder,
                    settings,
                    orchestrator.kubeflow.service_account,
                    orchestrator.platform,
                )
                path = os.path.join(output_dir, "tfjob.yaml")
                os.makedirs(output_dir, exist_ok=True)
                with open(path, "w", encoding="utf-8") as handle:
                    yaml.safe_dump(manifest, handle, sort_keys=False)
                written.append(path)
            # The replicas hold the resources; the launching step needs little.
            continue
        if settings.cpu is not None or settings.memory is not None or settings.gpus:
            component.with_platform_config(kubeflow_resource_spec(settings))
    runner = kubeflow_v2_dag_runner.KubeflowV2DagRunner(
        config=kubeflow_v2_dag_runner.KubeflowV2DagRunnerConfig(default_image=orchestrator.image),
        output_dir=output_dir,
        output_filename=VERTEX_JOB_FILE,
    )
    job = runner.run(tfx_pipeline, write_out=False)
    _retry_policies(job, resolved)
    job["runtimeConfig"]["gcsOutputDirectory"] = resolved.artifact_root
    pipeline_doc = _kfp_package(job, resolved)
    os.makedirs(output_dir, exist_ok=True)
    written.insert(0, _write_yaml_documents(os.path.join(output_dir, PIPELINE_FILE), pipeline_doc))
    written.insert(1, _write_json(os.path.join(output_dir, VERTEX_JOB_FILE), job))
    if orchestrator.schedule:
        platform_doc = pipeline_doc[1] if len(pipeline_doc) > 1 else None
        written.append(
            _write_json(
                os.path.join(output_dir, "recurring_run.json"),
                schedules.kubeflow_recurring_run(
                    resolved.name,
                    orchestrator.schedule,
                    {"pipeline_spec": pipeline_doc[0], "platform_spec": platform_doc}
                    if platform_doc
                    else pipeline_doc[0],
                    resolved.artifact_root,
                    orchestrator.airflow.start_date,
                    orchestrator.kubeflow.service_account,
                ),
            )
        )
        written.append(
            _write_json(
                os.path.join(output_dir, "vertex_schedule.json"),
                schedules.vertex_schedule_request(
                    resolved.name,
                    orchestrator.schedule,
                    job,
                    orchestrator.kubeflow.vertex_project or "<project>",
                    orchestrator.kubeflow.vertex_region or "<region>",
                ),
            )
        )
    return written


def _kfp_package(job: dict, resolved: ResolvedSpec) -> list[dict]:
    """The KFP package's YAML documents: the PipelineSpec, then (if any) the Kubernetes platform spec.

    On Kubernetes a GPU is the `nvidia.com/gpu` resource, and the GPU model is
    chosen by node labels (`orchestrator.platform`); Vertex AI takes the
    accelerator name itself (`vertex_pipeline_job.json` keeps it).
    """
    pipeline_spec = copy.deepcopy(job["pipelineSpec"])
    pipeline_spec["defaultPipelineRoot"] = resolved.artifact_root
    orchestrator = resolved.spec.orchestrator
    executors_config = {}
    for label, executor in pipeline_spec["deploymentSpec"]["executors"].items():
        accelerator = executor.get("container", {}).get("resources", {}).get("accelerator")
        if not accelerator:
            continue
        component_id = label.removesuffix("_executor")
        settings = orchestrator.component(component_id)
        accelerator["type"] = GPU_RESOURCE
        config = _kubernetes_executor_config(gpu_placement(orchestrator.platform, settings.accelerator))
        if config:
            executors_config[label] = config
    documents = [pipeline_spec]
    if executors_config:
        documents.append({"platforms": {"kubernetes": {"deploymentSpec": {"executors": executors_config}}}})
    return documents


def _kubernetes_executor_config(placement) -> dict:
    """kfp-kubernetes' KubernetesExecutorConfig (as JSON) for a GPU placement.

    Its node affinity terms and tolerations have the Kubernetes API's shape, so they are
    built from the Kubernetes client's models (`V1NodeSelectorTerm`, `V1Toleration`).
    """
    from kubernetes import client

    config: dict = {}
    if placement.node_selector:
        config["nodeSelector"] = {"labels": dict(placement.node_selector)}
    if placement.node_affinity_values:
        requirement = client.V1NodeSelectorRequirement(
            key=placement.node_affinity_label, operator="In", values=list(placement.node_affinity_values)
        )
        config["nodeAffinity"] = [client.V1NodeSelectorTerm(match_expressions=[requirement])]
    if placement.tolerations:
        config["tolerations"] = [client.V1Toleration(**toleration) for toleration in placement.tolerations]
    return client.ApiClient().sanitize_for_serialization(config)


def _write_yaml_documents(path: str, documents: list[dict]) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump_all(documents, handle, sort_keys=False)
    return path
