"""`validate` on TFX module files: each bad module file is one problem naming the file, the key and the function."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec
from pipelines.spec.module_files import defines

RUN_FN = "import tensorflow as tf\n\n\ndef run_fn(fn_args):\n    pass\n"
PREPROCESSING_FN = "def preprocessing_fn(inputs):\n    return dict(inputs)\n"


@pytest.fixture
def module(tmp_path):
    """Writes tmp_path/<name> with `text`; returns the name (relative to the spec, as a spec names it)."""

    def write(name: str, text: str) -> str:
        (tmp_path / name).write_text(text, encoding="utf-8")
        return name

    return write


def _only_problem(spec_problems, spec):
    (problem,) = spec_problems(spec)
    return problem


def test_a_training_module_file_without_run_fn_names_the_file_and_the_function(
    make_spec, module, spec_problems, tmp_path, line_with
):
    name = module("trainer_module.py", PREPROCESSING_FN)
    spec = make_spec({"training.module_file": name})
    problem = _only_problem(spec_problems, spec)
    assert problem.path == "training.module_file"
    assert str(tmp_path / name) in problem.message and "`run_fn`" in problem.message
    assert problem.line == line_with(spec, "module_file")


def test_a_transform_module_file_without_preprocessing_fn_names_the_file_and_the_function(
    make_spec, module, spec_problems, tmp_path
):
    run = module("run.py", RUN_FN)
    spec = make_spec({"transform.module_file": run, "training.module_file": run})
    problem = _only_problem(spec_problems, spec)
    assert problem.path == "transform.module_file"
    assert str(tmp_path / run) in problem.message and "`preprocessing_fn`" in problem.message


def test_a_missing_module_file_is_one_problem(make_spec, spec_problems, tmp_path):
    problem = _only_problem(spec_problems, make_spec({"training.module_file": "nowhere.py"}))
    assert problem.path == "training.module_file"
    assert str(tmp_path / "nowhere.py") in problem.message and "cannot read" in problem.message


def test_a_module_file_that_is_not_python_is_one_problem_with_its_line(make_spec, module, spec_problems):
    name = module("broken.py", "def run_fn(fn_args):\n    pass\n\ndef oops(:\n")
    problem = _only_problem(spec_problems, make_spec({"training.module_file": name}))
    assert "not valid Python (line 4" in problem.message


def test_a_tfx_preprocessing_fn_needs_a_tfx_run_fn(make_spec, module, spec_problems):
    name = module("transform_module.py", PREPROCESSING_FN)
    problem = _only_problem(spec_problems, make_spec({"transform.module_file": name}))
    assert problem.path == "transform.module_file" and "training.module_file" in problem.message


def test_custom_config_needs_a_module_file(make_spec, spec_problems):
    problem = _only_problem(spec_problems, make_spec({"training.custom_config": {"epochs": 3}}))
    assert problem.path == "training.custom_config"


def test_valid_module_files_pass_and_skip_the_built_in_model_rules(make_spec, module, tmp_path):
    name = module("both.py", PREPROCESSING_FN + RUN_FN)
    # A built-in model's knob out of range: no problem when the module file trains its own model.
    spec = make_spec(
        {
            "transform.module_file": name,
            "training.module_file": name,
            "training.custom_config": {"layers": [8, 4]},
            "model.hidden_units": [],
        }
    )
    resolved = load_spec(str(spec), cwd=str(tmp_path))
    assert resolved.training_module_file == resolved.transform_module_file == str(tmp_path / name)
    assert resolved.spec.training.custom_config == {"layers": [8, 4]}


def test_a_function_imported_or_assigned_at_top_level_counts(module, tmp_path):
    path = tmp_path / module("reexport.py", "from shared_utils import run_fn\npreprocessing_fn = make()\n")
    assert defines(str(path), "run_fn") and defines(str(path), "preprocessing_fn")
    assert not defines(str(path), "stats_options_updater_fn")
