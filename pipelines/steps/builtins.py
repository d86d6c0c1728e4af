"""The built-in steps as graph nodes: their ports and how the compiler wires them.

This is a description of `pipelines/compiler.py` for the graph rules and
`python -m pipelines components`; it imports no TFX. A contract test
(`tests/pipelines/steps/test_builtins.py`) compiles real pipelines and
checks that every built-in input reads what this table says.
"""

from __future__ import annotations

import dataclasses

from pipelines.graph.model import Node, Port, Ref
from pipelines.spec.models import PipelineSpec

__all__ = ["BuiltinStep", "BUILTIN_STEPS", "builtin_nodes"]


@dataclasses.dataclass(frozen=True)
class BuiltinStep:
    """One built-in step: ports, and the spec section that configures it."""

    inputs: dict[str, Port]
    outputs: dict[str, str]
    configured_by: str


# The compiler turns Transform's statistics and analyzer cache off; `transformed_examples`
# exists with `transform.materialize: true` only.
_TRANSFORM_OUTPUTS = {"transform_graph": "TransformGraph", "transformed_examples": "Examples"}

BUILTIN_STEPS: dict[str, BuiltinStep] = {
    "ExampleGen": BuiltinStep({}, {"examples": "Examples"}, "data"),
    "StatisticsGen": BuiltinStep(
        {"examples": Port("Examples"), "schema": Port("Schema", optional=True)},
        {"statistics": "ExampleStatistics"},
        "data",
    ),
    "SchemaGen": BuiltinStep({"statistics": Port("ExampleStatistics", optional=True)}, {"schema": "Schema"}, "schema"),
    "ExampleValidator": BuiltinStep(
        {"statistics": Port("ExampleStatistics"), "schema": Port("Schema")}, {"anomalies": "ExampleAnomalies"}, "data"
    ),
    "DataGate": BuiltinStep(
        {
            "anomalies": Port("ExampleAnomalies"),
            "statistics": Port("ExampleStatistics", True),
            "schema": Port("Schema", True),
        },
        {},
        "data, label",
    ),
    "Transform": BuiltinStep(
        {"examples": Port("Examples"), "schema": Port("Schema"), "analyzer_cache": Port("TransformCache", True)},
        _TRANSFORM_OUTPUTS,
        "features, label, transform",
    ),
    "Trainer": BuiltinStep(
        {
            "examples": Port("Examples"),
            "transform_graph": Port("TransformGraph", True),
            "schema": Port("Schema", True),
            "base_model": Port("Model", True),
            "hyperparameters": Port("HyperParameters", True),
        },
        {"model": "Model", "model_run": "ModelRun"},
        "model, training",
    ),
    "BaselineResolver": BuiltinStep(
        {"candidate": Port("Model")},
        {"model": "Model", "model_blessing": "ModelBlessing", "candidate": "Model"},
        "evaluation",
    ),
    "Evaluator": BuiltinStep(
        {
            "examples": Port("Examples"),
            "model": Port("Model", True),
            "baseline_model": Port("Model", True),
            "schema": Port("Schema", True),
        },
        {"evaluation": "ModelEvaluation", "blessing": "ModelBlessing"},
        "evaluation",
    ),
    "Pusher": BuiltinStep(
        {
            "model": Port("Model", True),
            "model_blessing": Port("ModelBlessing", True),
            "infra_blessing": Port("InfraBlessing", True),
        },
        {"pushed_model": "PushedModel"},
        "push",
    ),
    "Deployer": BuiltinStep(
        {"model": Port("Model"), "pushed_model": Port("PushedModel"), "examples": Port("Examples")},
        {"version": "Integer", "p99_ms": "Float"},
        "deploy",
    ),
}


def _wiring(spec: PipelineSpec) -> dict[str, dict[str, str]]:
    """node -> input -> `Step.output`, exactly as `compile_pipeline` wires them."""
    wiring = {
        "ExampleGen": {},
        "StatisticsGen": {"examples": "ExampleGen.examples"},
        "SchemaGen": {} if spec.schema else {"statistics": "StatisticsGen.statistics"},
        "ExampleValidator": {"statistics": "StatisticsGen.statistics", "schema": "SchemaGen.schema"},
        "DataGate": {
            "anomalies": "ExampleValidator.anomalies",
            "statistics": "StatisticsGen.statistics",
            "schema": "SchemaGen.schema",
        },
        "Transform": {"examples": "ExampleGen.examples", "schema": "SchemaGen.schema"},
        "Trainer": {
            "examples": "Transform.transformed_examples" if spec.transform.materialize else "ExampleGen.examples",
            "transform_graph": "Transform.transform_graph",
            "schema": "SchemaGen.schema",
        },
        "BaselineResolver": {"candidate": "Trainer.model"},
        "Evaluator": {
            "examples": "ExampleGen.examples",
            "model": "Trainer.model",
            "baseline_model": "BaselineResolver.model",
        },
        "Pusher": {"model": "Trainer.model", "model_blessing": "Evaluator.blessing"},
    }
    if spec.deploy.enabled:
        wiring["Deployer"] = {
            "model": "Trainer.model",
            "pushed_model": "Pusher.pushed_model",
            "examples": "ExampleGen.examples",
        }
    return wiring


def builtin_nodes(spec: PipelineSpec) -> dict[str, Node]:
    """The built-in steps this spec compiles to, as graph nodes."""
    nodes = {}
    for node_id, wiring in _wiring(spec).items():
        step = BUILTIN_STEPS[node_id]
        refs = {name: Ref(*text.split(".")) for name, text in wiring.items()}
        outputs = dict(step.outputs)
        if node_id == "Transform" and not spec.transform.materialize:
            del outputs["transformed_examples"]
        nodes[node_id] = Node(node_id, dict(step.inputs), outputs, refs)
    return nodes
