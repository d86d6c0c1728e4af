"""`pipeline.name` and `push.model_name` are refused by `validate` where the run could not use them."""

from __future__ import annotations

import os

import pytest

from pipelines.load import load_spec
from pipelines.spec.name_rules import MAX_MODEL_NAME, MAX_PIPELINE_NAME


def test_the_pipeline_name_limit_is_tfx_s(tmp_path):
    from tfx.orchestration import pipeline

    pipeline.Pipeline(pipeline_name="a" * MAX_PIPELINE_NAME, pipeline_root=str(tmp_path), components=[])
    with pytest.raises(ValueError, match="exceeds maximum allowed length"):
        pipeline.Pipeline(pipeline_name="a" * (MAX_PIPELINE_NAME + 1), pipeline_root=str(tmp_path), components=[])


def test_the_model_name_limit_fits_the_deployer_s_config_folder(tmp_path):
    os.mkdir(tmp_path / ("m" * MAX_MODEL_NAME + ".config"))
    with pytest.raises(OSError, match="File name too long"):
        os.mkdir(tmp_path / ("m" * (MAX_MODEL_NAME + 1) + ".config"))


@pytest.mark.parametrize(
    "key,length", [("pipeline.name", MAX_PIPELINE_NAME), ("push.model_name", MAX_MODEL_NAME)], ids=["pipeline", "model"]
)
def test_names_up_to_the_limit_are_valid(make_spec, tmp_path, key, length):
    resolved = load_spec(str(make_spec({key: "n" * length})), cwd=str(tmp_path))

    assert len(resolved.model_name) == length


@pytest.mark.parametrize(
    "key,length,fragment",
    [
        ("pipeline.name", MAX_PIPELINE_NAME + 1, "TFX refuses a longer pipeline name. Expected at most 63 characters."),
        (
            "push.model_name",
            MAX_MODEL_NAME + 1,
            "a file name holds at most 255 bytes. Expected at most 248 characters.",
        ),
        ("push.model_name", 256, "Received: `nnnnnnnnnnnnnnnnnnnnnnnn...` (256 characters). Use a shorter name."),
    ],
)
def test_longer_names_are_refused_with_the_limit(make_spec, spec_problems, key, length, fragment):
    (problem,) = spec_problems(make_spec({key: "n" * length}))

    assert problem.path == key
    assert fragment in problem.message
