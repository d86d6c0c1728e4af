"""AnalyzerCacheResolver: the analyzer cache an earlier window of spans left, which Transform starts from.

Only a spec with a window of spans has it (`spans.caches_analysis`). It reads every run's Transform
caches (as the window reads every run's ExampleGen outputs) and this run's Examples, whose span tells
an earlier window's cache from this span's own (`components.resolver.analyzer_cache`). On a first run
it resolves nothing and Transform analyzes every span of its window.
"""

from __future__ import annotations

from pipelines.builtins.record import Builtin, Compilation
from pipelines.builtins.spans import caches_analysis
from pipelines.graph.model import Port

__all__ = ["BUILTIN"]

TRANSFORM = "Transform"  # the node whose earlier caches are resolved (`pipelines.builtins.transform`)


def _build(compilation: Compilation, inputs: dict):
    # TFX: only when a pipeline is built.
    from tfx.dsl.components.common import resolver
    from tfx.types import Channel, standard_artifacts, standard_component_specs

    from components.resolver.analyzer_cache import CACHE_KEY, EXAMPLES_KEY, EarlierWindowCacheStrategy

    every_run = Channel(
        type=standard_artifacts.TransformCache,
        producer_component_id=TRANSFORM,
        output_key=standard_component_specs.UPDATED_ANALYZER_CACHE_KEY,
    )
    return resolver.Resolver(
        strategy_class=EarlierWindowCacheStrategy, **{CACHE_KEY: every_run, EXAMPLES_KEY: inputs["examples"]}
    )


BUILTIN = Builtin(
    id="AnalyzerCacheResolver",
    configured_by="data.window",
    inputs={"examples": Port("Examples")},
    outputs={"cache": "TransformCache", "examples": "Examples"},
    wiring=lambda spec: {"examples": "ExampleGen.examples"},
    build=_build,
    enabled=caches_analysis,
)
