"""`tuning:`: the search space, the objective and a module file's `tuner_fn`, checked before anything runs."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec

SPACE = {"learning_rate": {"min": 0.0001, "max": 0.01, "sampling": "log"}, "hidden_units": {"choices": [[8], [16, 8]]}}


def _tuning(**extra):
    return {"tuning": {"max_trials": 2, "objective": "auc", "search_space": SPACE, **extra}}


def test_a_valid_tuning_section_is_typed(make_spec, tmp_path):
    resolved = load_spec(str(make_spec(_tuning(algorithm="bayesian"))), cwd=str(tmp_path))
    tuning = resolved.spec.tuning
    assert tuning.algorithm == "bayesian" and tuning.max_trials == 2 and tuning.objective == "auc"
    assert tuning.search_space["learning_rate"].sampling == "log"
    assert [list(units) for units in tuning.search_space["hidden_units"].choices] == [[8], [16, 8]]


def test_no_tuning_section_means_no_tuner(make_spec, tmp_path):
    assert load_spec(str(make_spec()), cwd=str(tmp_path)).spec.tuning is None


@pytest.mark.parametrize(
    ("tuning", "path", "words"),
    [
        (
            {"search_space": {"learning_rat": {"min": 0.001, "max": 0.1}}},
            "tuning.search_space.learning_rat",
            ["unknown knob `learning_rat`", "Did you mean `learning_rate`?", "Expected one of:"],
        ),
        (
            {"search_space": {"num_heads": {"choices": [2, 4]}}},
            "tuning.search_space.num_heads",
            ["`model.type: wide_and_deep` has no option `num_heads`", "Remove `num_heads`"],
        ),
        (
            {"objective": "auk"},
            "tuning.objective",
            ["the objective `auk` is not a declared metric", "Did you mean `auc`?", "binary_accuracy, auc"],
        ),
        ({"max_trials": 0}, "tuning", ["`max_trials` must be at least 1", "Received: max_trials=0"]),
        ({"parallel_trials": 0}, "tuning", ["`parallel_trials` must be at least 1", "Received: parallel_trials=0"]),
        (
            {"search_space": {"learning_rate": {"min": 0.1, "max": 0.01}}},
            "tuning.search_space.learning_rate",
            ["`min` must be below `max`", "Received: min=0.1, max=0.01"],
        ),
        (
            {"search_space": {"dropout": {"min": 0.0, "max": 1.0}}},
            "tuning.search_space.dropout",
            ["out of bounds", "expected below 1", "Received: 1.0"],
        ),
        (
            {"search_space": {"learning_rate": {"min": 0.0, "max": 0.1, "sampling": "log"}}},
            "tuning.search_space.learning_rate",
            ["`sampling: log` needs `min` above 0"],
        ),
        (
            {"search_space": {"hidden_units": {"min": 8, "max": 64}}},
            "tuning.search_space.hidden_units",
            ["takes a list of `choices`, not a range", "[[64, 32], [128, 64]]"],
        ),
        (
            {"search_space": {"hidden_units": {"choices": [[64, 0]]}}},
            "tuning.search_space.hidden_units",
            ["expected a list of layer widths, each at least 1", "[64, 0]"],
        ),
        (
            {"search_space": {"batch_size": {"min": 8.5, "max": 64}}},
            "tuning.search_space.batch_size",
            ["expected a whole number", "8.5"],
        ),
        (
            {"search_space": {"optimizer": {"choices": ["adam", "adamw"]}}},
            "tuning.search_space.optimizer",
            ["expected one of adam, sgd, rmsprop, adagrad", "'adamw'"],
        ),
        (
            {"search_space": {"dropout": {"min": 0.1, "max": 0.3, "choices": [0.1]}}},
            "tuning.search_space.dropout",
            ["a range or a list of choices, not both"],
        ),
        ({"search_space": {}}, "tuning.search_space", ["the search space is empty"]),
        ({"algorithm": "grid"}, "tuning.algorithm", ["grid"]),
    ],
)
def test_bad_tuning_is_one_problem_at_its_yaml_path(make_spec, spec_problems, tuning, path, words):
    (problem,) = spec_problems(make_spec(_tuning(**tuning)))
    assert problem.path == path
    for word in words:
        assert word in problem.message


def test_an_unknown_key_in_tuning_is_refused(make_spec, spec_problems):
    (problem,) = spec_problems(make_spec(_tuning(trials=3)))
    assert problem.path == "tuning.trials"


def test_an_objective_the_training_does_not_report_is_refused(make_spec, spec_problems):
    spec = make_spec(
        {
            **_tuning(objective="binary_crossentropy"),
            "evaluation.metrics": ["binary_accuracy", "auc", "binary_crossentropy"],
        }
    )
    (problem,) = spec_problems(spec)
    assert problem.path == "tuning.objective"
    assert "computed by the Evaluator only" in problem.message and "auc, binary_accuracy, loss" in problem.message


def test_a_module_file_needs_its_own_tuner_fn_and_no_search_space(make_spec, spec_problems, tmp_path):
    (tmp_path / "trainer_module.py").write_text("def run_fn(fn_args):\n    pass\n", encoding="utf-8")
    spec = make_spec({"training.module_file": "trainer_module.py", "tuning": {"search_space": SPACE}})
    problems = {problem.path: problem.message for problem in spec_problems(spec)}
    assert "TFX's Tuner runs the module's own `tuner_fn`" in problems["tuning.search_space"]
    assert "has no top-level function `tuner_fn`" in problems["tuning"]
    (tmp_path / "trainer_module.py").write_text("def run_fn(a):\n    pass\n\n\ndef tuner_fn(a):\n    pass\n")
    resolved = load_spec(str(make_spec({"training.module_file": "trainer_module.py", "tuning": {}})), cwd=str(tmp_path))
    assert resolved.spec.tuning.search_space == {}
