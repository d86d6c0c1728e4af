"""`evaluation.confidence`: a confidence level that reaches the Evaluator, or a clear error."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec


def test_a_confidence_level_reaches_the_evaluator(make_spec, tmp_path):
    from pipelines.builtins.evaluator import evaluation_request
    from pipelines.builtins.transform import transform_config

    resolved = load_spec(str(make_spec({"evaluation.confidence": 0.9})), cwd=str(tmp_path))

    assert resolved.spec.evaluation.confidence == 0.9
    assert evaluation_request(resolved, transform_config(resolved)).confidence == 0.9


@pytest.mark.parametrize("level", [0.4, 1.0, 1.5])
def test_a_confidence_level_outside_half_to_one_is_refused(make_spec, spec_problems, level):
    problems = spec_problems(make_spec({"evaluation.confidence": level}))

    assert any(
        p.path == "evaluation.confidence" and "`confidence` is a confidence level" in p.message for p in problems
    ), [(p.path, p.message) for p in problems]


def test_the_readme_confidence_example_is_a_valid_evaluation_section(repo_dir, make_spec, tmp_path):
    import os
    import re

    import yaml

    readme = open(os.path.join(repo_dir, "README.md"), encoding="utf-8").read()
    section = readme[readme.index("### Confidence intervals") :]
    block = yaml.safe_load(re.search(r"```yaml\n(evaluation:.*?)```", section, re.S).group(1))

    resolved = load_spec(str(make_spec({"evaluation": block["evaluation"]})), cwd=str(tmp_path))

    assert resolved.spec.evaluation.confidence == 0.95
