"""`evaluation.fairness`: its settings, and a binary label and slices to compare, checked before anything runs."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec

FAIRNESS = {"thresholds": [0.3, 0.5, 0.7], "max_gap": {"false_positive_rate": 0.1}}


def _evaluation(**extra):
    return {"metrics": ["binary_accuracy"], "thresholds": {"binary_accuracy": {"min": 0.5}}, **extra}


def test_fairness_on_a_binary_label_with_slices_is_valid_and_reaches_the_evaluator(make_spec, tmp_path):
    from pipelines.builtins.evaluator import evaluation_request
    from pipelines.builtins.transform import transform_config

    spec = make_spec({"evaluation": _evaluation(slices=[["company"]], fairness={**FAIRNESS, "min_examples": 5})})
    resolved = load_spec(str(spec), cwd=str(tmp_path))

    fairness = resolved.spec.evaluation.fairness
    assert list(fairness.thresholds) == [0.3, 0.5, 0.7] and fairness.min_examples == 5
    request = evaluation_request(resolved, transform_config(resolved))
    assert request.fairness == {
        "thresholds": [0.3, 0.5, 0.7],
        "max_gap": {"false_positive_rate": 0.1},
        "min_examples": 5,
    }


def test_fairness_without_slices_is_refused(make_spec, spec_problems):
    (problem,) = spec_problems(make_spec({"evaluation": _evaluation(fairness=FAIRNESS)}))

    assert problem.path == "evaluation.fairness"
    assert "`evaluation.slices` is empty" in problem.message and "remove `fairness`" in problem.message


def test_fairness_on_a_label_of_three_classes_is_refused(make_spec, write_csv, spec_problems):
    kinds = ["Adelie", "Chinstrap", "Gentoo"]
    rows = [[f"{5 + i * 0.75:.2f}", "1.0", f"{0.5 + i * 0.3:.1f}", kinds[i % 3]] for i in range(30)]
    write_csv("taxi.csv", rows=rows)
    spec = make_spec(
        {
            "features": {"fare": {"transform": "zscore"}, "trip_miles": {"transform": "zscore"}},
            "label": {"name": "kind", "column": "company", "task": "classification"},
            "evaluation": {"metrics": ["accuracy"], "slices": [["tips"]], "fairness": FAIRNESS},
        }
    )

    problems = [p for p in spec_problems(spec) if p.path == "evaluation.fairness"]

    assert len(problems) == 1 and "need a binary label; `kind` has 3 classes" in problems[0].message


def test_fairness_on_a_regression_label_is_refused(make_spec, spec_problems):
    spec = make_spec(
        {
            "label": {"name": "target", "column": "tips", "task": "regression"},
            "evaluation": {"metrics": ["mean_squared_error"], "slices": [["company"]], "fairness": FAIRNESS},
        }
    )

    problems = [p for p in spec_problems(spec) if p.path == "evaluation.fairness"]

    assert len(problems) == 1 and "is a regression label" in problems[0].message


@pytest.mark.parametrize(
    ("fairness", "words"),
    [
        ({"thresholds": [0.5, 1.0]}, "score cuts between 0 and 1"),
        ({"thresholds": []}, "score cuts between 0 and 1"),
        ({"max_gap": {"false_positive_rates": 0.1}}, "`max_gap` names `false_positive_rates`, which is no fairness"),
        ({"max_gap": {"positive_rate": 1.5}}, "`max_gap.positive_rate` is a difference of two rates"),
        ({"min_examples": 0}, "`min_examples` must be at least 1"),
    ],
)
def test_bad_fairness_settings_are_named(make_spec, spec_problems, fairness, words):
    problems = spec_problems(make_spec({"evaluation": _evaluation(slices=[["company"]], fairness=fairness)}))

    assert any(p.path == "evaluation.fairness" and words in p.message for p in problems), [
        (p.path, p.message) for p in problems
    ]


def test_an_unknown_fairness_key_is_named(make_spec, spec_problems):
    problems = spec_problems(make_spec({"evaluation": _evaluation(slices=[["company"]], fairness={"max_gaps": {}})}))

    assert any(p.path == "evaluation.fairness.max_gaps" and "unknown key" in p.message for p in problems)


def test_the_readme_fairness_example_is_a_valid_evaluation_section(repo_dir, make_spec, tmp_path):
    import os
    import re

    import yaml

    readme = open(os.path.join(repo_dir, "README.md"), encoding="utf-8").read()
    section = readme[readme.index("### Fairness across slices") :]
    block = yaml.safe_load(re.search(r"```yaml\n(evaluation:.*?)```", section, re.S).group(1))
    block["evaluation"]["slices"] = [["company"]]  # the test data's column

    resolved = load_spec(str(make_spec({"evaluation": block["evaluation"]})), cwd=str(tmp_path))

    assert resolved.spec.evaluation.fairness.max_gap == {"false_positive_rate": 0.1, "positive_rate": 0.25}
