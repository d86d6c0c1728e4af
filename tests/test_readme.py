"""The README's spec reference is a spec that validates."""

from __future__ import annotations

import os
import re

from pipelines.load import parse_spec


def test_readme_spec_reference_validates(repo_dir, tmp_path):
    readme = open(os.path.join(repo_dir, "README.md"), encoding="utf-8").read()
    block = re.search(r"```yaml\n(pipeline:.*?)```", readme, re.S).group(1)
    resolved = parse_spec(block, str(tmp_path / "spec.yaml"), cwd=str(tmp_path))
    assert resolved.spec.features["dropoff_latitude"].fill == 41.88
    assert resolved.spec.evaluation.thresholds["binary_accuracy"].max_regression == 0.0
    assert not os.listdir(tmp_path)


def test_readme_names_the_ci_test_command(repo_dir):
    readme = open(os.path.join(repo_dir, "README.md"), encoding="utf-8").read()
    ci = open(os.path.join(repo_dir, ".ci", "run"), encoding="utf-8").read()
    assert "make test" in readme and "make test" in ci
