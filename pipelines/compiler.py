"""Compiles a checked spec into a `tfx` pipeline of real TFX components.

ExampleGen -> StatisticsGen -> SchemaGen (or ImportSchemaGen) -> ExampleValidator
-> DataGate -> Transform -> Trainer -> baseline Resolver -> Evaluator -> Pusher.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from components import ensure_legacy_keras  # noqa: F401 - sets TF_USE_LEGACY_KERAS first
from components.transform.config import TransformConfig
from pipelines.runners.console import CUSTOM_EXECUTOR_SPEC_DEPRECATED, dropping
from pipelines.spec import ResolvedSpec
from pipelines.spec import metrics as metric_table
from pipelines.spec.models import MEDIA_TRANSFORMS
from pipelines.steps.wiring import add_custom_steps

__all__ = ["compile_pipeline", "transform_config", "DEFAULT_BEAM_ARGS", "COMPONENT_ORDER"]

_SETUP_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "setup.py")

# In-process Beam on the FnApiRunner. TFX's examples use multi_processing,
# which starts worker processes (each importing TensorFlow) for every Beam
# step; Beam 2.74's DirectRunner also first tries to download the Prism
# runner (no network here) before falling back. `--setup_file` names this
# project's own package, which is what a remote runner needs; without any such
# flag TFX builds an sdist of TFX itself before every Beam step (~4 s each).
DEFAULT_BEAM_ARGS = (
    "--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner",
    "--direct_running_mode=in_memory",
    "--direct_num_workers=1",
    f"--setup_file={_SETUP_FILE}",
)

COMPONENT_ORDER = (
    "ExampleGen",
    "StatisticsGen",
    "SchemaGen",
    "ExampleValidator",
    "DataGate",
    "Transform",
    "Trainer",
    "BaselineResolver",
    "Evaluator",
    "Pusher",
    "Deployer",
)


def transform_config(resolved: ResolvedSpec) -> TransformConfig:
    """The Transform and Trainer configuration: features, label and, for classification, the classes in order.

    Raises:
      LabelClassError: the label's classes do not make a classification label (see `label_values`).
    """
    from pipelines.spec.label_values import label_classes

    spec = resolved.spec
    classes = label_classes(resolved)
    return TransformConfig(
        features={
            name: {k: v for k, v in vars(f).items() if v is not None} for name, f in sorted(spec.features.items())
        },
        label_name=spec.label.name,
        task=spec.label.task,
        label_column=spec.label.column,
        label_expression=spec.label.expression,
        user_module=spec.transform.module,
        classes=classes,
        positive_class=classes[1] if classes and len(classes) == 2 else None,
    )


def _example_gen(resolved: ResolvedSpec):
    from tfx.components import ImportExampleGen
    from tfx.proto import example_gen_pb2

    if os.path.isdir(resolved.data_path):
        input_base, pattern = resolved.data_path, "*"
    else:
        input_base, pattern = os.path.split(resolved.data_path)
    input_config = example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name="single_split", pattern=pattern)])
    output_config = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[
                example_gen_pb2.SplitConfig.Split(name=name, hash_buckets=weight)
                for name, weight in resolved.spec.data.splits.items()
            ]
        )
    )
    if resolved.data_format == "image_folder":
        from components.example_gen.image_component import ImageFolderExampleGen

        # One tf.Example per image (`image`, `label`, `height`, `width`), split by a hash of the image's bytes.
        return ImageFolderExampleGen(input_base=resolved.data_path, output_config=output_config)
    if resolved.data_format != "csv":
        return ImportExampleGen(input_base=input_base, input_config=input_config, output_config=output_config)
    from components.example_gen import csv_executor
    from components.example_gen.component import CsvExampleGen
    from pipelines.spec.data_rules import columns_used

    # A BOM-safe header, `data.na_values`, `data.checks.non_finite: impute`, the separator, and only the
    # columns the spec uses at ingestion.
    data = resolved.spec.data
    return CsvExampleGen(
        input_base=input_base,
        input_config=input_config,
        output_config=output_config,
        custom_config=csv_executor.make_custom_config(
            data.na_values,
            data.checks.non_finite == "impute",
            resolved.csv_dialect,
            columns_used(resolved.spec, resolved.schema_path),
        ),
    )


def _thresholds(resolved: ResolvedSpec) -> dict:
    result = {}
    for name, gate in resolved.spec.evaluation.thresholds.items():
        higher = gate.higher_is_better
        if higher is None:
            higher = metric_table.higher_is_better(name)
        result[name] = {
            "min": gate.min,
            "max": gate.max,
            "max_regression": gate.max_regression,
            "higher_is_better": higher,
            "classes": [str(c) for c in gate.classes] if gate.classes else None,
        }
    return result


def _stats_options(sample_rate: Optional[float]):
    """TFDV's options for StatisticsGen: `data.checks.sample_rate` of the rows, or None (TFX's defaults: all)."""
    if sample_rate is None:
        return None
    import tensorflow_data_validation as tfdv

    return tfdv.StatsOptions(sample_rate=sample_rate)


def evaluation_request(resolved: ResolvedSpec, config: TransformConfig):
    """The spec's evaluation section as the Evaluator executor reads it (`EvaluationRequest`).

    Args:
      resolved: the checked spec.
      config: its `transform_config`, whose classes (in index order) the label was compiled with.
    """
    from components.evaluator.eval_config import EvaluationRequest

    spec = resolved.spec
    return EvaluationRequest(
        label_key=spec.label.name,
        task=spec.label.task,
        metrics=tuple(spec.evaluation.metrics),
        thresholds=_thresholds(resolved),
        top_k=spec.evaluation.top_k,
        classes=tuple(config.class_names) or None,
        sample_rows=spec.evaluation.sample_rows,
    )


def compile_pipeline(resolved: ResolvedSpec, beam_args: tuple[str, ...] = DEFAULT_BEAM_ARGS):
    """Returns the `tfx.orchestration.pipeline.Pipeline` for a checked spec.

    With `orchestrator.beam` the components' Beam arguments are that runner's, whatever `beam_args` says.

    Raises:
      DaskUnavailable: `orchestrator.beam` names a Dask scheduler that does not answer or has no workers.
    """
    import dataclasses

    from tfx.components import (
        ExampleValidator,
        Pusher,
        SchemaGen,
        Trainer,
    )
    from tfx.components.schema_gen.import_schema_gen.component import ImportSchemaGen
    from tfx.dsl.components.base import executor_spec
    from tfx.dsl.components.common import resolver
    from tfx.orchestration import metadata, pipeline
    from tfx.proto import pusher_pb2, trainer_pb2
    from tfx.types import Channel, standard_artifacts

    from components.data_gate.component import DataGate
    from components.evaluator.component import make_evaluator
    from components.pusher.executor import Executor as AtomicPusherExecutor
    from components.resolver.baseline import LatestBlessedBaselineStrategy
    from components.statistics_gen.component import StatisticsGen
    from components.transform.component import Transform

    spec = resolved.spec
    config = transform_config(resolved)
    example_gen = _example_gen(resolved).with_id("ExampleGen")
    statistics_gen = StatisticsGen(
        examples=example_gen.outputs["examples"], stats_options=_stats_options(spec.data.checks.sample_rate)
    ).with_id("StatisticsGen")
    if resolved.schema_path:
        schema_gen = ImportSchemaGen(schema_file=resolved.schema_path).with_id("SchemaGen")
    else:
        # The schema comes from train only: ExampleValidator then flags eval values train never had.
        schema_gen = SchemaGen(
            statistics=statistics_gen.outputs["statistics"],
            infer_feature_shape=False,
            exclude_splits=[name for name in spec.data.splits if name != "train"],
        ).with_id("SchemaGen")
    example_validator = ExampleValidator(
        statistics=statistics_gen.outputs["statistics"], schema=schema_gen.outputs["schema"]
    ).with_id("ExampleValidator")
    checks = spec.data.checks
    data_gate = DataGate(
        anomalies=example_validator.outputs["anomalies"],
        statistics=statistics_gen.outputs["statistics"],
        schema=schema_gen.outputs["schema"],
        label_column=spec.label.column or "",
        task=spec.label.task,
        skew=checks.skew or 0.0,
        drift=checks.drift or 0.0,
        unseen_categories=checks.unseen_categories,
        free_text_columns=json.dumps(sorted(n for n, f in spec.features.items() if f.transform in MEDIA_TRANSFORMS)),
    ).with_id("DataGate")
    transform = Transform(
        examples=example_gen.outputs["examples"],
        schema=schema_gen.outputs["schema"],
        preprocessing_fn="components.transform.preprocessing.preprocessing_fn",
        custom_config=config.to_dict(),
        materialize=spec.transform.materialize,
        # Pre/post-transform statistics and the analyzer cache (for incremental
        # analysis over new spans) each cost seconds per run; reruns are served
        # by TFX's execution cache instead.
        disable_statistics=True,
        disable_analyzer_cache=True,
        force_tf_compat_v1=spec.transform.graph_mode_v1(),
    ).with_id("Transform")
    transform.add_upstream_node(data_gate)
    materialized = spec.transform.materialize
    trainer = Trainer(
        run_fn="components.trainer.run_fn.run_fn",
        examples=transform.outputs["transformed_examples"] if materialized else example_gen.outputs["examples"],
        transform_graph=transform.outputs["transform_graph"],
        schema=schema_gen.outputs["schema"],
        train_args=trainer_pb2.TrainArgs(num_steps=spec.training.train_steps),
        eval_args=trainer_pb2.EvalArgs(num_steps=spec.training.eval_steps),
        custom_config={
            "transform": config.to_dict(),
            "model": dataclasses.asdict(spec.model),
            "training": dataclasses.asdict(spec.training),
            "materialized": materialized,
            "metrics": list(spec.evaluation.metrics),
            # Only where there is one: other runs keep the Trainer's cache key they had before it existed.
            **({"label_scale": list(resolved.label_scale)} if resolved.label_scale else {}),
        },
    ).with_id("Trainer")
    baseline = resolver.Resolver(
        strategy_class=LatestBlessedBaselineStrategy,
        model=Channel(type=standard_artifacts.Model),
        model_blessing=Channel(type=standard_artifacts.ModelBlessing),
        candidate=trainer.outputs["model"],
    ).with_id("BaselineResolver")
    # Our executor fits the EvalConfig to the model's classes and records the verdict's reasons.
    evaluator = make_evaluator(
        examples=example_gen.outputs["examples"],
        model=trainer.outputs["model"],
        baseline_model=baseline.outputs["model"],
        request=evaluation_request(resolved, config),
    )
    # TFX logs "`custom_executor_spec` is deprecated" for any Pusher given an executor; ours is on purpose
    # (the atomic pusher) and nobody reading a run can act on it, whichever target compiles the pipeline.
    with dropping(CUSTOM_EXECUTOR_SPEC_DEPRECATED):
        pusher = Pusher(
            model=trainer.outputs["model"],
            model_blessing=evaluator.outputs["blessing"],
            push_destination=pusher_pb2.PushDestination(
                filesystem=pusher_pb2.PushDestination.Filesystem(
                    base_directory=os.path.join(resolved.serving_dir, resolved.model_name)
                )
            ),
            custom_executor_spec=executor_spec.ExecutorClassSpec(AtomicPusherExecutor),
        ).with_id("Pusher")
    components = [
        example_gen,
        statistics_gen,
        schema_gen,
        example_validator,
        data_gate,
        transform,
        trainer,
        baseline,
        evaluator,
        pusher,
    ]
    if spec.deploy.enabled:
        from components.deployer.component import Deployer

        deploy = spec.deploy
        config_file = os.path.join(os.path.dirname(resolved.spec_file), deploy.config) if deploy.config else ""
        components.append(
            Deployer(
                model=trainer.outputs["model"],
                pushed_model=pusher.outputs["pushed_model"],
                examples=example_gen.outputs["examples"],
                model_name=resolved.model_name,
                serving_dir=resolved.serving_dir,
                url=deploy.url or "",
                config_file=config_file,
                p99_budget_ms=deploy.p99_budget_ms,
                sample_rows=deploy.sample_rows,
                max_request_mb=deploy.max_request_mb or 0.0,
            ).with_id("Deployer")
        )
    # Custom `steps:` from the spec, spliced in after the built-in components exist.
    components = add_custom_steps(spec, components)
    if spec.orchestrator.beam is not None:
        # `orchestrator.beam: {runner: dask}`: every Beam-powered component on the Dask cluster.
        from pipelines.targets import dask_runner

        dask_runner.check_scheduler(spec.orchestrator.beam.address)
        beam_args = dask_runner.component_beam_args(spec.orchestrator)
    from pipelines.targets.beam import per_component_beam_args

    own_args = per_component_beam_args(beam_args)
    for component in components:
        if component.id in own_args:
            component.with_beam_pipeline_args(list(own_args[component.id]))
    return pipeline.Pipeline(
        pipeline_name=resolved.name,
        pipeline_root=resolved.artifact_root,
        components=components,
        enable_cache=spec.pipeline.caching,
        # An object-store root (kubeflow) keeps metadata in the cluster's ML Metadata service.
        metadata_connection_config=None
        if "://" in resolved.root
        else metadata.sqlite_metadata_connection_config(resolved.metadata_path),
        beam_pipeline_args=list(beam_args) + _op_plugins(spec, beam_args),
    )


def _op_plugins(spec, beam_args: tuple[str, ...]) -> list[str]:
    """`--beam_plugins=tensorflow_text` when a feature tokenizes with WordPiece.

    The Transform graph and the model then run tensorflow-text's ops, which a
    process registers only by importing it; Beam workers in other processes
    (multi-process and remote runners) import the plugins named by this flag
    before they run anything. In process it costs nothing more: the Transform
    step imports tensorflow-text anyway.
    """
    if not any(f.transform == "text" and f.tokenizer == "wordpiece" for f in spec.features.values()):
        return []
    if any(arg.startswith("--beam_plugins=tensorflow_text") for arg in beam_args):
        return []
    return ["--beam_plugins=tensorflow_text"]
