"""`python -m pipelines new-component NAME`: the package's own test passes, and once installed it is registered."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scaffold_fixtures import SCAFFOLD_NAME, cli_env, run_pipelines_cli, scaffold_and_install

from pipelines.scaffold import ScaffoldError, class_name_for, new_component


def test_scaffold_test_passes_and_installed_package_is_listed(tmp_path):
    package, site = scaffold_and_install(tmp_path)

    own_test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        capture_output=True,
        text=True,
        cwd=package,
        env=cli_env(),
        timeout=300,
    )
    assert own_test.returncode == 0, own_test.stdout + own_test.stderr
    assert "2 passed" in own_test.stdout

    listed = run_pipelines_cli("components", env=cli_env(PYTHONPATH=site))
    assert listed.returncode == 0, listed.stderr
    assert f"{SCAFFOLD_NAME}          sample_rows.component:SampleRows  [sample-rows 0.1.0]" in listed.stdout
    assert "parameters: max_rows_per_split (int, default 0)" in listed.stdout


@pytest.mark.parametrize("name", ["DropOutliers", "2fast", "drop-outliers", ""])
def test_a_bad_name_is_refused(tmp_path, name):
    with pytest.raises(ScaffoldError, match="Expected a lowercase Python name"):
        new_component(name, str(tmp_path))


def test_an_existing_folder_is_left_alone(tmp_path):
    (tmp_path / "drop_outliers").mkdir()
    with pytest.raises(ScaffoldError, match="already exists"):
        new_component("drop_outliers", str(tmp_path))
    assert class_name_for("drop_outliers") == "DropOutliers"
