"""Compiles a checked spec into a `tfx` pipeline of real TFX components.

The built-ins come from the table in `pipelines.builtins` (ExampleGen ->
StatisticsGen -> SchemaGen -> ExampleValidator -> DataGate -> Transform ->
Trainer -> BaselineResolver -> Evaluator -> Pusher [-> Deployer]), each built
by its own factory; the spec's custom steps are spliced in after them.
`transform_config`, `evaluation_request` and `COMPONENT_ORDER` are the
built-ins' own, re-exported here for callers that compile.
"""

from __future__ import annotations

from components import ensure_legacy_keras  # noqa: F401 - sets TF_USE_LEGACY_KERAS first
from pipelines.beam import dask
from pipelines.beam.args import DEFAULT_BEAM_ARGS, per_component_beam_args
from pipelines.builtins import BY_ID, COMPONENT_ORDER, Compilation, enabled_builtins
from pipelines.builtins.evaluator import evaluation_request
from pipelines.builtins.transform import transform_config
from pipelines.spec import ResolvedSpec
from pipelines.steps.wiring import add_custom_steps

__all__ = [
    "compile_pipeline",
    "compile_ingest_pipeline",
    "transform_config",
    "evaluation_request",
    "DEFAULT_BEAM_ARGS",
    "COMPONENT_ORDER",
]


def compile_pipeline(resolved: ResolvedSpec, beam_args: tuple[str, ...] = DEFAULT_BEAM_ARGS):
    """Returns the `tfx.orchestration.pipeline.Pipeline` for a checked spec.

    Builds every built-in of `pipelines.builtins.BUILTINS` the spec has, in
    order, each from the outputs its wiring names; then the spec's custom steps.
    With `orchestrator.beam` the components' Beam arguments are that runner's, whatever `beam_args` says.
    Compiling contacts nothing: the paths that run the pipeline check the Dask scheduler first
    (`pipelines.beam.dask.check_scheduler_of`).
    """
    from tfx.orchestration import metadata, pipeline  # TFX: only when a pipeline is built

    spec = resolved.spec
    compilation = Compilation(resolved, transform_config(resolved))
    built = {}
    for builtin in enabled_builtins(spec):
        inputs = {name: _channel(built, ref) for name, ref in builtin.wiring(spec).items()}
        component = builtin.build(compilation, inputs).with_id(builtin.id)
        for upstream in builtin.waits_for:
            if upstream in built:
                component.add_upstream_node(built[upstream])
        built[builtin.id] = component
    # Custom `steps:` from the spec, spliced in after the built-in components exist.
    components = add_custom_steps(spec, list(built.values()))
    if spec.orchestrator.beam is not None:
        # `orchestrator.beam: {runner: dask}`: every Beam-powered component on the Dask cluster.
        beam_args = dask.component_beam_args(spec.orchestrator)
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


def compile_ingest_pipeline(resolved: ResolvedSpec, beam_args: tuple[str, ...] = DEFAULT_BEAM_ARGS):
    """The pipeline's ExampleGen and StatisticsGen alone, for ingesting one span (`resolved.ingest_span`).

    Same pipeline name, root, node ids and settings as `compile_pipeline`, so its Examples and statistics are
    the ones the full pipeline's later runs find in ML Metadata (a rolling window, the previous span's
    statistics) and its own cache hits.
    """
    from tfx.orchestration import metadata, pipeline  # TFX: only when a pipeline is built

    compilation = Compilation(resolved, None)  # ExampleGen and StatisticsGen read no Transform configuration
    built = {}
    for node_id in ("ExampleGen", "StatisticsGen"):
        builtin = BY_ID[node_id]
        inputs = {name: _channel(built, ref) for name, ref in builtin.wiring(resolved.spec).items()}
        built[node_id] = builtin.build(compilation, inputs).with_id(node_id)
    return pipeline.Pipeline(
        pipeline_name=resolved.name,
        pipeline_root=resolved.artifact_root,
        components=list(built.values()),
        enable_cache=resolved.spec.pipeline.caching,
        metadata_connection_config=metadata.sqlite_metadata_connection_config(resolved.metadata_path),
        beam_pipeline_args=list(beam_args),
    )


def _channel(built: dict, ref: str):
    """The output channel `ref` ("Step.output") names, of a component built before."""
    step, output = ref.split(".")
    return built[step].outputs[output]


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
