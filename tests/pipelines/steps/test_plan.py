"""`steps:` in a spec: resolved, parameters checked against signatures, graph rules, all before anything runs.

Each bad spec fails `python -m pipelines validate` with exit 2, naming the
YAML path and line, and creates nothing.
"""

from __future__ import annotations

import os

import pytest

from pipelines import cli

FILTER = {
    "name": "DropShortTrips",
    "uses": "row_filter",
    "inputs": {"examples": "ExampleGen.examples"},
    "parameters": {"expression": "trip_miles > 1.0"},
    "replaces": "ExampleGen.examples",
}


def _with(**changes):
    step = {**FILTER, **changes}
    return {k: v for k, v in step.items() if v is not None}


@pytest.mark.parametrize(
    "steps, path, line_text, message",
    [
        (
            [_with(parameters={"expresion": "x > 1"})],
            "steps[0].parameters.expresion",
            "expresion:",
            "step `DropShortTrips` (`row_filter`) has no parameter `expresion`. Did you mean `expression`? "
            "Expected one of: `expression`, `keep_missing`. Rename or remove it.",
        ),
        (
            [_with(parameters={"expression": "x > 1", "keep_missing": "yes"})],
            "steps[0].parameters.keep_missing",
            "keep_missing:",
            "parameter `keep_missing` of step `DropShortTrips` has the wrong type. Expected true or false. "
            "Received: `yes` (str). Fix the value.",
        ),
        (
            [_with(parameters={})],
            "steps[0].parameters",
            "parameters:",
            "step `DropShortTrips` needs parameter `expression` (str). Add `expression: <value>` under `parameters`.",
        ),
        (
            [_with(uses="row_filtre")],
            "steps[0].uses",
            "uses:",
            "unknown component `row_filtre`. Did you mean `row_filter`?",
        ),
        (
            [_with(uses="step_components:not_a_component")],
            "steps[0].uses",
            "uses:",
            "`step_components:not_a_component` is a plain function, not a TFX component.",
        ),
        (
            [_with(uses="step_components:Missing")],
            "steps[0].uses",
            "uses:",
            "`step_components` has no `Missing`.",
        ),
        (
            [_with(inputs={"examples": "ExampleGen.exampels"})],
            "steps[0].inputs.examples",
            "examples: ExampleGen.exampels",
            "step `ExampleGen` has no output `exampels`. Did you mean `examples`?",
        ),
        (
            [_with(inputs={"examples": "SchemaGen.schema"})],
            "steps[0].inputs.examples",
            "examples: SchemaGen.schema",
            "input `examples` of `DropShortTrips` takes Examples. Expected an output of type Examples. "
            "Received: `SchemaGen.schema` (Schema). Wire it to one of: `ExampleGen.examples`.",
        ),
        (
            [_with(inputs={"examples": "Transform.transformed_examples"})],
            "steps[0]",
            "name: DropShortTrips",
            "the steps form a cycle: DropShortTrips -> Transform -> DropShortTrips.",
        ),
        (
            [_with(name="Trainer")],
            "steps[0].name",
            "name: Trainer",
            "step name `Trainer` is already taken",
        ),
        (
            [
                {
                    "name": "MyPusher",
                    "uses": "tfx.components:Pusher",
                    "inputs": {"model": "Trainer.model"},
                    "parameters": {"push_destination": {"filesystem": {"base_directory": "/tmp/x"}}},
                }
            ],
            "steps[0].inputs",
            "inputs:",
            "step `MyPusher` pushes models without a blessing. Expected an input of type ModelBlessing read from an "
            "Evaluator. Received: none. Add `model_blessing: Evaluator.blessing` under `inputs`.",
        ),
    ],
)
def test_bad_step_exits_2_naming_path_and_line_and_writes_nothing(
    steps_spec, line_of, tmp_path, capsys, steps, path, line_text, message
):
    spec_file = steps_spec(steps)
    assert cli.main(["validate", spec_file]) == 2
    err = capsys.readouterr().err
    assert f"spec.yaml:{line_of(spec_file, line_text)}: {path}: " in err, err
    assert message in err
    assert not os.path.exists(tmp_path / "root")


def test_a_proto_parameter_is_checked_against_its_message(steps_spec, capsys):
    steps = [
        {
            "name": "MyPusher",
            "uses": "tfx.components:Pusher",
            "inputs": {"model": "Trainer.model", "model_blessing": "Evaluator.blessing"},
            "parameters": {"push_destination": {"filesystem": {"base_dir": "/tmp/x"}}},
        }
    ]
    assert cli.main(["validate", steps_spec(steps)]) == 2
    err = capsys.readouterr().err
    assert (
        "steps[0].parameters.push_destination: parameter `push_destination` of step `MyPusher` has the wrong type."
        in err
    )
    assert "a PushDestination message" in err and "base_dir" in err


def test_a_valid_step_validates_and_an_unread_output_is_a_warning(steps_spec, capsys):
    steps = [
        _with(),
        {
            "name": "Splits",
            "uses": "step_components:CountSplits",
            "inputs": {"examples": "DropShortTrips.filtered_examples"},
        },
    ]
    assert cli.main(["validate", steps_spec(steps)]) == 0
    captured = capsys.readouterr()
    assert ": valid (" in captured.out
    assert "warning: steps[1]: output `Splits.rows` is read by no step." in captured.err
