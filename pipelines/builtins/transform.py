"""Transform: the spec's features and label as a tf.Transform graph (and, materialized, transformed examples)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.transform.config import TransformConfig
from pipelines.builtins.record import Builtin, Compilation
from pipelines.builtins.spans import after_example_gen, caches_analysis, windowed
from pipelines.graph.model import Port
from pipelines.spec.label_values import label_classes

if TYPE_CHECKING:
    from components.transform.config import TransformConfig
    from pipelines.spec.resolved import ResolvedSpec

__all__ = ["BUILTIN", "transform_config", "writes_transformed_examples"]


def writes_transformed_examples(spec) -> bool:
    """Whether Transform writes `transformed_examples` (and the Trainer reads them).

    A TFX module file's `run_fn` reads transformed examples, as in stock TFX, so a
    `training.module_file` turns it on whatever `transform.materialize` says.
    """
    return spec.transform.materialize or spec.training.module_file is not None


def transform_config(resolved: ResolvedSpec) -> TransformConfig:
    """The Transform and Trainer configuration: features, label and, for classification, the classes in order.

    Raises:
      LabelClassError: the label's classes do not make a classification label (see `label_values`).
    """

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


def _transform_code(compilation: Compilation) -> dict:
    """Transform's code: a TFX module file as TFX calls it, else the generated preprocessing_fn and its config."""
    from pipelines.spec.module_files import defines

    module_file = compilation.resolved.transform_module_file
    if module_file is None:
        return {
            "preprocessing_fn": "components.transform.preprocessing.preprocessing_fn",
            "custom_config": compilation.config.to_dict(),
            "disable_statistics": True,
        }
    # TFX calls `stats_options_updater_fn` only while it computes statistics.
    return {"module_file": module_file, "disable_statistics": not defines(module_file, "stats_options_updater_fn")}


def _absent_outputs(spec) -> tuple[str, ...]:
    """`transformed_examples` without `transform.materialize`; the analyzer cache without a window of spans."""
    absent = () if writes_transformed_examples(spec) else ("transformed_examples",)
    return absent + (() if caches_analysis(spec) else ("updated_analyzer_cache",))


def _build(compilation: Compilation, inputs: dict):
    from components.transform.component import Transform  # TFX: only when a pipeline is built

    resolved = compilation.resolved
    spec = resolved.spec
    examples = inputs["examples"]
    # With spans, the analysis reads the newest `data.window` spans.
    transform = Transform(
        **{**inputs, "examples": windowed(examples, resolved)},
        **_transform_code(compilation),
        materialize=writes_transformed_examples(spec),
        # The analyzer cache costs seconds per run (each dataset analyzed apart,
        # the cache written); it pays only with a window of spans, where the
        # previous run's cache holds every span of the window but the new one.
        # Elsewhere reruns are served by TFX's execution cache.
        disable_analyzer_cache=not caches_analysis(spec),
        force_tf_compat_v1=spec.transform.graph_mode_v1(),
    )
    return after_example_gen(transform, examples, resolved)


BUILTIN = Builtin(
    id="Transform",
    configured_by="features, label, transform",
    inputs={"examples": Port("Examples"), "schema": Port("Schema"), "analyzer_cache": Port("TransformCache", True)},
    outputs={
        "transform_graph": "TransformGraph",
        "transformed_examples": "Examples",
        "updated_analyzer_cache": "TransformCache",
    },
    wiring=lambda spec: {
        "examples": "ExampleGen.examples",
        "schema": "SchemaGen.schema",
        **({"analyzer_cache": "AnalyzerCacheResolver.cache"} if caches_analysis(spec) else {}),
    },
    build=_build,
    absent_outputs=_absent_outputs,
    waits_for=("DataGate",),
)
