"""Compiles a checked spec into a `tfx` pipeline of real TFX components.

ExampleGen -> StatisticsGen -> SchemaGen (or ImportSchemaGen) -> ExampleValidator
-> DataGate -> Transform -> Trainer -> baseline Resolver -> Evaluator -> Pusher.
"""

from __future__ import annotations

import os

from components import ensure_legacy_keras  # noqa: F401 - sets TF_USE_LEGACY_KERAS first
from components.transform.config import TransformConfig
from pipelines.spec import ResolvedSpec
from pipelines.spec import metrics as metric_table
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
    spec = resolved.spec
    return TransformConfig(
        features={
            name: {k: v for k, v in vars(f).items() if v is not None} for name, f in sorted(spec.features.items())
        },
        label_name=spec.label.name,
        task=spec.label.task,
        label_column=spec.label.column,
        label_expression=spec.label.expression,
        user_module=spec.transform.module,
    )


def _example_gen(resolved: ResolvedSpec):
    from tfx.components import CsvExampleGen, ImportExampleGen
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
    cls = CsvExampleGen if resolved.data_format == "csv" else ImportExampleGen
    return cls(input_base=input_base, input_config=input_config, output_config=output_config)


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
        }
    return result


def compile_pipeline(resolved: ResolvedSpec, beam_args: tuple[str, ...] = DEFAULT_BEAM_ARGS):
    """Returns the `tfx.orchestration.pipeline.Pipeline` for a checked spec."""
    import dataclasses

    from tfx.components import (
        Evaluator,
        ExampleValidator,
        Pusher,
        SchemaGen,
        StatisticsGen,
        Trainer,
        Transform,
    )
    from tfx.components.schema_gen.import_schema_gen.component import ImportSchemaGen
    from tfx.dsl.components.base import executor_spec
    from tfx.dsl.components.common import resolver
    from tfx.orchestration import metadata, pipeline
    from tfx.proto import pusher_pb2, trainer_pb2
    from tfx.types import Channel, standard_artifacts

    from components.data_gate.component import DataGate
    from components.evaluator.eval_config import build_eval_config
    from components.pusher.executor import Executor as AtomicPusherExecutor
    from components.resolver.baseline import LatestBlessedBaselineStrategy

    spec = resolved.spec
    config = transform_config(resolved)
    example_gen = _example_gen(resolved).with_id("ExampleGen")
    statistics_gen = StatisticsGen(examples=example_gen.outputs["examples"]).with_id("StatisticsGen")
    if resolved.schema_path:
        schema_gen = ImportSchemaGen(schema_file=resolved.schema_path).with_id("SchemaGen")
    else:
        schema_gen = SchemaGen(statistics=statistics_gen.outputs["statistics"], infer_feature_shape=False).with_id(
            "SchemaGen"
        )
    example_validator = ExampleValidator(
        statistics=statistics_gen.outputs["statistics"], schema=schema_gen.outputs["schema"]
    ).with_id("ExampleValidator")
    data_gate = DataGate(anomalies=example_validator.outputs["anomalies"]).with_id("DataGate")
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
        },
    ).with_id("Trainer")
    baseline = resolver.Resolver(
        strategy_class=LatestBlessedBaselineStrategy,
        model=Channel(type=standard_artifacts.Model),
        model_blessing=Channel(type=standard_artifacts.ModelBlessing),
        candidate=trainer.outputs["model"],
    ).with_id("BaselineResolver")
    prediction_key = "probability" if spec.label.task == "classification" else "prediction"
    evaluator = Evaluator(
        examples=example_gen.outputs["examples"],
        model=trainer.outputs["model"],
        baseline_model=baseline.outputs["model"],
        eval_config=build_eval_config(
            label_key=spec.label.name,
            prediction_key=prediction_key,
            metrics={m: metric_table.METRICS[m][0] for m in spec.evaluation.metrics},
            thresholds=_thresholds(resolved),
        ),
        example_splits=["eval"],
    ).with_id("Evaluator")
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
            ).with_id("Deployer")
        )
    # Custom `steps:` from the spec, spliced in after the built-in components exist.
    components = add_custom_steps(spec, components)
    return pipeline.Pipeline(
        pipeline_name=resolved.name,
        pipeline_root=resolved.artifact_root,
        components=components,
        enable_cache=spec.pipeline.caching,
        # An object-store root (kubeflow) keeps metadata in the cluster's ML Metadata service.
        metadata_connection_config=None
        if "://" in resolved.root
        else metadata.sqlite_metadata_connection_config(resolved.metadata_path),
        beam_pipeline_args=list(beam_args),
    )
