"""The pipeline spec as typed, frozen dataclasses: the YAML file's schema.

A spec file has one top-level section per dataclass below; `PipelineSpec`
lists them. Paths in a spec are relative to the spec file's folder;
`package://pkg/sub/path` names a file inside an installed Python package.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from pipelines.spec.data_section import DEFAULT_NA_VALUES, DataChecksSpec, DataSpec
from pipelines.spec.evaluation_section import FAIRNESS_RATES, EvaluationSpec, FairnessSpec, ThresholdSpec
from pipelines.spec.feature_sections import (
    BACKBONES,
    CATEGORICAL_TRANSFORMS,
    MEDIA_TRANSFORMS,
    NUMERIC_TRANSFORMS,
    TRANSFORMS,
    FeatureSpec,
    LabelSpec,
    TransformSpec,
)
from pipelines.spec.limits import check_finite
from pipelines.spec.orchestrator import OrchestratorSpec
from pipelines.spec.training_sections import MODEL_VARIANTS, SPEC_VARIANTS, ModelSpec, TrainingSpec, model_spec
from pipelines.spec.tuning_section import KnobSpace, TuningSpec

__all__ = [
    "PipelineSection",
    "DataSpec",
    "DataChecksSpec",
    "DEFAULT_NA_VALUES",
    "FeatureSpec",
    "LabelSpec",
    "TransformSpec",
    "ModelSpec",
    "MODEL_VARIANTS",
    "SPEC_VARIANTS",
    "model_spec",
    "TrainingSpec",
    "PredictSpec",
    "TuningSpec",
    "KnobSpace",
    "ThresholdSpec",
    "FAIRNESS_RATES",
    "FairnessSpec",
    "EvaluationSpec",
    "PushSpec",
    "DeploySpec",
    "StepSpec",
    "HookSpec",
    "OrchestratorSpec",
    "PipelineSpec",
    "TRANSFORMS",
    "CATEGORICAL_TRANSFORMS",
    "NUMERIC_TRANSFORMS",
    "MEDIA_TRANSFORMS",
    "BACKBONES",
]


@dataclasses.dataclass(frozen=True)
class PipelineSection:
    """Name and storage of the pipeline.

    `root` holds artifacts, ML Metadata (`metadata.sqlite`) and logs; it
    defaults to `runs/<name>` under the current directory.
    """

    name: str
    root: Optional[str] = None
    caching: bool = True


@dataclasses.dataclass(frozen=True)
class PushSpec:
    """Where blessed models go, in TF Serving layout `<serving_dir>/<model_name>/<version>/`.

    `serving_dir` defaults to `<pipeline root>/serving`; `model_name` to the pipeline name.
    """

    serving_dir: Optional[str] = None
    model_name: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class DeploySpec:
    """Deployment to TensorFlow Serving after the Pusher, verified, with rollback.

    `url` is the REST address of a running server (`python -m serving up`) and
    `config` the model config file it was started with; without `url`, an
    embedded server is started for the checks. `p99_budget_ms` bounds the
    single-row latency; `sample_rows` eval rows are compared with the trained
    model's predictions. `max_request_mb` declares the largest request clients
    send, in MiB of raw input: rows per request x the largest encoded image (or
    text), e.g. 32 images of at most 0.5 MiB: 16. The embedded server started
    for the checks, and `python -m serving up` on the model's config folder,
    then admit it (request memory budget and body/message size, see
    `serving.deployment_limits`); null keeps the server's defaults (16 MiB body,
    256 MiB budget).
    """

    enabled: bool = False
    url: Optional[str] = None
    config: Optional[str] = None
    p99_budget_ms: float = 100.0
    sample_rows: int = 20
    max_request_mb: Optional[float] = None

    def __post_init__(self):
        if self.url and not self.config:
            raise ValueError("`url` needs `config`: the model config file that server was started with.")
        check_finite({"p99_budget_ms": self.p99_budget_ms})
        if self.p99_budget_ms <= 0:
            raise ValueError(f"`p99_budget_ms` must be above 0. Received: p99_budget_ms={self.p99_budget_ms}.")
        if self.sample_rows < 1:
            raise ValueError(f"`sample_rows` must be at least 1. Received: sample_rows={self.sample_rows}.")
        if self.max_request_mb is not None:
            check_finite({"max_request_mb": self.max_request_mb})
            if self.max_request_mb <= 0:
                raise ValueError(
                    f"`max_request_mb` must be above 0 (rows per request x the largest encoded input, in MiB). "
                    f"Received: max_request_mb={self.max_request_mb}. Example: `max_request_mb: 16`."
                )


@dataclasses.dataclass(frozen=True)
class PredictSpec:
    """Batch scoring inside the pipeline: `enabled: true` adds TFX's BulkInferrer after the Pusher.

    It scores the examples this run's ExampleGen wrote (the newest span with
    `{SPAN}` in `data.path`, else all the data) with the trained model when the
    Evaluator blessed it, through the model's `serving_default` signature, and
    writes PredictionLogs (an InferenceResult artifact) with a readable
    `predictions.parquet` beside them. To score any file on demand, use
    `python -m pipelines predict SPEC DATA --output FILE` instead.
    """

    enabled: bool = False


@dataclasses.dataclass(frozen=True)
class StepSpec:
    """A custom step: a TFX component added to the pipeline (see docs/adding_a_component.md).

    `uses` is a short name from the component registry (`python -m pipelines
    components`) or `package.module:Name`, a `@component` function or a
    `BaseComponent` subclass. `inputs` maps each of its inputs to another
    step's output, `Step.output` (built-in steps included, e.g.
    `ExampleGen.examples`). `parameters` are checked against the component's
    signature. `replaces: Step.output` makes the built-in steps that read that
    output read this step's output of the same type instead: that is how a
    step goes between two built-in ones.
    """

    name: str
    uses: str
    inputs: dict[str, str] = dataclasses.field(default_factory=dict)
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)
    replaces: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class HookSpec:
    """A lifecycle hook: `uses` names a factory (`package.module:Name`, or a
    registered short name such as `prometheus`), called with `parameters` as
    keyword arguments; the object it returns gets the run's events."""

    uses: str
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class PipelineSpec:
    """A whole pipeline, as one YAML file declares it."""

    pipeline: PipelineSection
    data: DataSpec
    features: dict[str, FeatureSpec]
    label: LabelSpec
    schema: Optional[str] = None
    transform: TransformSpec = dataclasses.field(default_factory=TransformSpec)
    model: ModelSpec = dataclasses.field(default_factory=lambda: model_spec())
    training: TrainingSpec = dataclasses.field(default_factory=TrainingSpec)
    tuning: Optional[TuningSpec] = None
    evaluation: EvaluationSpec = dataclasses.field(default_factory=EvaluationSpec)
    push: PushSpec = dataclasses.field(default_factory=PushSpec)
    deploy: DeploySpec = dataclasses.field(default_factory=DeploySpec)
    predict: PredictSpec = dataclasses.field(default_factory=PredictSpec)
    steps: list[StepSpec] = dataclasses.field(default_factory=list)
    # A bare string is shorthand for `{uses: <string>}`.
    hooks: list[str | HookSpec] = dataclasses.field(default_factory=list)
    orchestrator: OrchestratorSpec = dataclasses.field(default_factory=OrchestratorSpec)
