"""The `model:` section is typed by its `type`: each model type's own options, defaults and errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from components.trainer.models.dnn import DnnOptions
from components.trainer.models.image_classifier import ImageClassifierOptions
from components.trainer.models.text_classifier import TextClassifierOptions
from components.trainer.models.wide_and_deep import WideAndDeepOptions
from pipelines.spec import SpecError, typed_spec

SPEC = """
pipeline: {{name: types}}
data: {{path: rows.csv}}
features: {{fare: {{transform: zscore}}}}
label: {{name: tip, column: tip}}
{model}
"""


def _problems(model: str) -> list:
    with pytest.raises(SpecError) as raised:
        typed_spec(SPEC.format(model=model))
    return raised.value.problems


@pytest.mark.parametrize(
    ("model", "options"),
    [
        ("", WideAndDeepOptions()),
        ("model: null", WideAndDeepOptions()),
        ("model: {type: dnn, hidden_units: [8]}", DnnOptions(hidden_units=(8,))),
        ("model: {type: image_classifier, backbone: ResNet50}", ImageClassifierOptions(backbone="ResNet50")),
        (
            "model: {type: text_classifier, encoder: bag_of_embeddings}",
            TextClassifierOptions(encoder="bag_of_embeddings"),
        ),
    ],
    ids=["absent", "null", "dnn", "image", "text"],
)
def test_the_section_is_its_types_options_with_that_types_defaults(model, options):
    spec, _ = typed_spec(SPEC.format(model=model))
    assert type(spec.model) is type(options)
    assert spec.model == options


def test_an_option_of_another_type_names_the_type_that_has_it():
    problems = _problems("model:\n  type: dnn\n  backbone: ResNet50")
    assert [(p.path, p.line) for p in problems] == [("model.backbone", 8)]
    assert "`backbone` is an option of `type: image_classifier`, not of this `type`" in problems[0].message
    assert "Remove it, or set `type: image_classifier`." in problems[0].message


def test_a_misspelt_option_gets_a_suggestion_from_its_types_keys():
    problems = _problems("model: {type: text_classifier, num_head: 4}")
    assert [p.path for p in problems] == ["model.num_head"]
    assert "unknown key `num_head`. Did you mean `num_heads`?" in problems[0].message
    assert "`encoder`, `num_layers`, `num_heads`" in problems[0].message


def test_an_unknown_type_lists_the_registered_ones_with_a_suggestion():
    problems = _problems("model: {type: dnnn, backbone: ResNet50}")
    assert [p.path for p in problems] == ["model.type"]
    assert problems[0].message == (
        "expected one of `dnn`, `wide_and_deep`, `image_classifier`, `text_classifier`. Received: `dnnn` (str). "
        "Did you mean `dnn`?"
    )


def test_a_types_own_check_names_the_section():
    problems = _problems("model: {type: text_classifier, num_layers: 0}")
    assert [p.path for p in problems] == ["model"]
    assert "`num_layers` must be at least 1. Received: num_layers=0." in problems[0].message


def test_typing_a_spec_imports_no_tensorflow():
    code = textwrap.dedent(
        f"""
        import sys
        from pipelines.spec import typed_spec
        spec, _ = typed_spec({SPEC.format(model="model: {type: image_classifier}")!r})
        assert type(spec.model).__name__ == "ImageClassifierOptions"
        loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("tensorflow", "keras", "tf_keras"))
        print(loaded)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout
