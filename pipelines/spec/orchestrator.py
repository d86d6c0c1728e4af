"""The `orchestrator:` section: where and when a pipeline runs, and how each component runs.

Example:
    orchestrator:
      target: kubeflow              # local (default) | beam | kubeflow | airflow
      schedule: "0 3 * * *"         # cron, five fields, or @daily / @hourly / ...
      image: gcr.io/me/yaml-tfx:0.1.0
      components:
        Trainer: {cpu: 8, memory: 32Gi, gpus: 2, accelerator: NVIDIA_TESLA_T4, workers: 3}
        Evaluator: {retries: 2, timeout_seconds: 1800}
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Literal, Optional

from pipelines.spec.cron import cluster_cron_problem, cron_problem

__all__ = [
    "ComponentRunSpec",
    "KubeflowSpec",
    "AirflowSpec",
    "BeamRunnerSpec",
    "OrchestratorSpec",
    "TARGETS",
    "DEFAULT_IMAGE",
    "rule_orchestrator",
    "OBJECT_STORE_SCHEMES",
    "kubeflow_name",
]

Target = Literal["local", "beam", "kubeflow", "airflow"]

# Who labels the GPU nodes of the cluster (pipelines.spec.gpu_nodes).
Platform = Literal["gke", "nvidia-gfd", "none"]
TARGETS: tuple[str, ...] = Target.__args__  # type: ignore[attr-defined]
# TFX's own image for this TFX version; build FROM it with this project installed.
DEFAULT_IMAGE = "tensorflow/tfx:1.16.0"
# The pipeline roots Kubeflow Pipelines accepts (`runtimeConfig.gcsOutputDirectory` / `defaultPipelineRoot`).
OBJECT_STORE_SCHEMES = ("gs://", "s3://", "minio://")


def kubeflow_name(text: str) -> str:
    """`text` as a name Kubeflow accepts (`[a-z0-9][a-z0-9-]*`, at most 63): `chicago_taxi` -> `chicago-taxi`.

    The Kubeflow target compiles the pipeline under this name; KFP's ML Metadata keeps its runs under it.
    """
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63] or "pipeline"


_MEMORY = re.compile(r"^(\d+(\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$")


@dataclasses.dataclass(frozen=True)
class ComponentRunSpec:
    """How one component runs: its resources, retries and time limit.

    `cpu` in cores (0.5, 2); `memory` as a Kubernetes quantity (`512Mi`,
    `16Gi`); `gpus` per replica and `accelerator` its type (Vertex names such
    as `NVIDIA_TESLA_T4`; on Kubernetes, the node label value). `retries`
    re-runs a failed component that many times; `timeout_seconds` stops it.
    `workers` (Trainer only, kubeflow target): replicas of distributed
    training, one chief and `workers - 1` workers.
    """

    cpu: Optional[float] = None
    memory: Optional[str] = None
    gpus: int = 0
    accelerator: Optional[str] = None
    retries: int = 0
    timeout_seconds: Optional[int] = None
    workers: int = 1

    def __post_init__(self):
        if self.cpu is not None and self.cpu <= 0:
            raise ValueError(f"`cpu` must be above 0 cores. Received: cpu={self.cpu}. Example: `cpu: 2`.")
        if self.memory is not None and not _MEMORY.match(self.memory):
            raise ValueError(
                f"`memory` must be a Kubernetes quantity. Expected a number with an optional unit "
                f"(Ki, Mi, Gi, Ti, K, M, G, T). Received: memory={self.memory!r}. Example: `memory: 16Gi`."
            )
        if self.gpus < 0:
            raise ValueError(f"`gpus` must be 0 or more. Received: gpus={self.gpus}.")
        if self.accelerator and not self.gpus:
            raise ValueError(
                f"`accelerator` needs `gpus`. Expected gpus of 1 or more. Received: gpus={self.gpus}, "
                f"accelerator={self.accelerator!r}. Add `gpus: 1` or remove `accelerator`."
            )
        if self.retries < 0:
            raise ValueError(f"`retries` must be 0 or more. Received: retries={self.retries}.")
        if self.timeout_seconds is not None and self.timeout_seconds < 1:
            raise ValueError(
                f"`timeout_seconds` must be at least 1. Received: timeout_seconds={self.timeout_seconds}. "
                "Write `timeout_seconds: null` for no limit."
            )
        if self.workers < 1:
            raise ValueError(f"`workers` must be at least 1. Received: workers={self.workers}.")

    @property
    def memory_bytes(self) -> Optional[int]:
        """`memory` in bytes (None when not set)."""
        if self.memory is None:
            return None
        match = _MEMORY.match(self.memory)
        assert match is not None
        powers = {None: 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
        powers.update({"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40})
        return int(float(match.group(1)) * powers[match.group(3)])

    @property
    def requests_resources(self) -> bool:
        return self.cpu is not None or self.memory is not None or self.gpus > 0 or self.workers > 1


@dataclasses.dataclass(frozen=True)
class KubeflowSpec:
    """Kubeflow Pipelines v2 / Vertex AI Pipelines settings.

    `namespace` is where multi-node training TFJobs go. With `vertex_region`,
    multi-node training runs as a Vertex AI custom job (TFX's Vertex trainer)
    instead of a TFJob; `vertex_project` is the Google Cloud project.
    """

    namespace: str = "kubeflow"
    vertex_region: Optional[str] = None
    vertex_project: Optional[str] = None
    service_account: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class AirflowSpec:
    """Airflow DAG settings: the first date the schedule counts from."""

    start_date: str = "2024-01-01"
    catchup: bool = False

    def __post_init__(self):
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", self.start_date):
            raise ValueError(
                f"`start_date` must be a date. Expected YYYY-MM-DD. Received: start_date={self.start_date!r}."
            )


# `orchestrator.beam.runner`: engines this project starts the Beam runner for. Flink, Spark and Dataflow
# take their usual flags in `beam_args`.
BeamRunner = Literal["dask"]
_ADDRESS = re.compile(r"^(tcp://)?(?P<host>[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")


@dataclasses.dataclass(frozen=True)
class BeamRunnerSpec:
    """The engine the Beam-powered components run on (`pipelines.beam.dask`).

    `runner: dask` sends each component's Beam pipeline to the dask.distributed
    scheduler at `address` (`HOST:PORT`, as `dask scheduler` prints it).
    """

    runner: BeamRunner
    address: str = "127.0.0.1:8786"

    def __post_init__(self):
        match = _ADDRESS.match(self.address)
        if not match or not 0 < int(match.group("port")) < 65536:
            raise ValueError(
                "`address` must be the Dask scheduler's HOST:PORT. Expected a host and a port from 1 to 65535. "
                f'Received: address={self.address!r}. Example: `address: "127.0.0.1:8786"`.'
            )


@dataclasses.dataclass(frozen=True)
class OrchestratorSpec:
    """Where and when the pipeline runs.

    `target`: `local` (this process), `beam` (TFX's BeamDagRunner),
    `kubeflow` (pipeline JSON for Kubeflow Pipelines v2 and Vertex AI
    Pipelines), `airflow` (a DAG file). `schedule` is a cron expression. `platform` says
    who labels the cluster's GPU nodes, so a GPU component lands on the
    `accelerator` it names: `gke` (GKE's `cloud.google.com/gke-accelerator`),
    `nvidia-gfd` (NVIDIA GPU feature discovery's `nvidia.com/gpu.product`) or
    `none` (any node with the `nvidia.com/gpu` resource).
    `beam_args` are Beam pipeline arguments for the Beam-powered components
    (for example `--runner=FlinkRunner`); `beam` runs them on an engine this
    project sets up (`{runner: dask, address: HOST:PORT}`, local and beam
    targets); `image` is the container image of
    every component on kubeflow. `components` maps component ids
    (`Trainer`, `Evaluator`, ...) to their resources, retries and time limits.
    """

    target: Target = "local"
    schedule: Optional[str] = None
    platform: Platform = "none"
    image: str = DEFAULT_IMAGE
    beam_args: Optional[list[str]] = None
    beam: Optional[BeamRunnerSpec] = None
    components: dict[str, ComponentRunSpec] = dataclasses.field(default_factory=dict)
    kubeflow: KubeflowSpec = dataclasses.field(default_factory=KubeflowSpec)
    airflow: AirflowSpec = dataclasses.field(default_factory=AirflowSpec)

    def component(self, component_id: str) -> ComponentRunSpec:
        """The settings of `component_id` (defaults when the spec names none)."""
        return self.components.get(component_id) or ComponentRunSpec()


def rule_orchestrator(ctx) -> Iterator:
    """The schedule is valid cron, `beam` fits the target, the root fits the target.

    The per-component settings are checked by `pipelines.steps.checks.rule_component_settings`,
    which knows the built-in and custom step names.
    """

    orchestrator: OrchestratorSpec = ctx.spec.orchestrator
    if orchestrator.schedule is not None:
        problem = cron_problem(orchestrator.schedule)
        if problem:
            yield ctx.problem(
                "orchestrator.schedule",
                f"invalid cron expression: {problem}. Expected `minute hour day-of-month month day-of-week` "
                f'or a macro such as `@daily`. Received: {orchestrator.schedule!r}. Example: `schedule: "0 3 * * *"`.',
            )
        elif orchestrator.target == "kubeflow" and cluster_cron_problem(orchestrator.schedule):
            yield ctx.problem(
                "orchestrator.schedule",
                f"the schedule {cluster_cron_problem(orchestrator.schedule)}. Expected plain fields: numbers, names, "
                f"ranges, lists and steps. Received: {orchestrator.schedule!r}. Write the days out, for example "
                '`"0 3 28-31 * *"` instead of `"0 3 L * *"`.',
            )
    yield from _beam_runner_problems(ctx, orchestrator)
    root = ctx.spec.pipeline.root or ""
    if orchestrator.target != "kubeflow" and "://" in root:
        yield ctx.problem(
            "pipeline.root",
            f"the {orchestrator.target} target keeps ML Metadata (a SQLite file) and logs under the root, so it "
            f"needs a local folder. Expected a folder path. Received: root={root!r}. Use a local folder, or the "
            "kubeflow target for an object-store root (`orchestrator.target: kubeflow`, or `compile --target kubeflow`).",
        )
    if orchestrator.target == "kubeflow":
        if not root.startswith(OBJECT_STORE_SCHEMES):
            yield ctx.problem(
                "pipeline.root",
                "the kubeflow target needs an object-store pipeline root that every pod can reach. Expected a URI "
                f"starting with {', '.join(OBJECT_STORE_SCHEMES)}. Received: root={root or None!r}. Example: "
                "`root: gs://my-bucket/pipelines/chicago_taxi` (Vertex AI takes gs:// only).",
            )


def _beam_runner_problems(ctx, orchestrator: OrchestratorSpec) -> Iterator:
    """`beam` is for the local and beam targets, and chooses the runner alone."""
    if orchestrator.beam is None:
        return
    if orchestrator.target not in ("local", "beam"):
        yield ctx.problem(
            "orchestrator.beam",
            f"`beam: {{runner: {orchestrator.beam.runner}}}` runs on the local and beam targets only. Expected target "
            f"local or beam. Received: target={orchestrator.target!r}. Remove `beam`, or pass the runner's flags in "
            "`beam_args`.",
        )
    runner_flags = [a for a in orchestrator.beam_args or () if a.split("=", 1)[0] == "--runner"]
    if runner_flags:
        yield ctx.problem(
            "orchestrator.beam_args",
            f"`beam_args` names a runner and `beam` chooses one too. Expected one of them. Received: "
            f"{runner_flags[0]!r} and `beam: {{runner: {orchestrator.beam.runner}}}`. Remove the `--runner` flag, "
            "or remove `beam`.",
        )
