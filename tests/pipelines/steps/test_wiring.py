"""Compiling custom steps: each kind of component is built, wired, and spliced between built-in steps."""

from __future__ import annotations

from pipelines.api import compile as compile_pipeline
from pipelines.load import load_spec


def _compiled(spec_file):
    return {c.id: c for c in compile_pipeline(load_spec(spec_file)).components}


def _source(channel) -> str:
    return f"{channel.producer_component_id}.{channel.output_key}"


def test_a_replacing_step_sits_between_example_gen_and_every_reader(steps_spec):
    components = _compiled(
        steps_spec(
            [
                {
                    "name": "DropShortTrips",
                    "uses": "row_filter",
                    "inputs": {"examples": "ExampleGen.examples"},
                    "parameters": {"expression": "trip_miles > 1.0"},
                    "replaces": "ExampleGen.examples",
                }
            ]
        )
    )
    step = components["DropShortTrips"]
    assert _source(step.inputs["examples"]) == "ExampleGen.examples"
    assert step.exec_properties["expression"] == "trip_miles > 1.0"
    for reader in ("StatisticsGen", "Transform", "Trainer", "Evaluator"):
        assert _source(components[reader].inputs["examples"]) == "DropShortTrips.filtered_examples", reader


def test_every_kind_of_component_compiles_with_its_parameters_and_chains(steps_spec):
    steps = [
        {
            "name": "Copy",
            "uses": "step_components:CopyExamples",
            "inputs": {"examples": "ExampleGen.examples"},
            "parameters": {"times": 2},
            "replaces": "ExampleGen.examples",
        },
        {
            "name": "CopyAgain",
            "uses": "step_components:CopyExamplesWithInit",
            "inputs": {"examples": "Copy.copied"},
            "parameters": {"times": 1, "suffix": "b"},
            "replaces": "Copy.copied",
        },
        {
            "name": "Splits",
            "uses": "step_components:CountSplits",
            "inputs": {"examples": "CopyAgain.copied"},
            "parameters": {"scale": 2},
        },
    ]
    components = _compiled(steps_spec(steps))
    assert components["Copy"].exec_properties["times"] == 2
    assert components["CopyAgain"].exec_properties["suffix"] == "b"
    assert components["Splits"].exec_properties["scale"] == 2.0
    assert _source(components["CopyAgain"].inputs["examples"]) == "Copy.copied"
    assert _source(components["Splits"].inputs["examples"]) == "CopyAgain.copied"
    assert _source(components["StatisticsGen"].inputs["examples"]) == "CopyAgain.copied"
    assert _source(components["Evaluator"].inputs["examples"]) == "CopyAgain.copied"
    assert components["Splits"].outputs["rows"].type.TYPE_NAME == "Integer"
