"""The beam target's arguments: no Prism detour, no per-step packaging, one wheel per run for remote runners."""

from __future__ import annotations

import dataclasses
import os
import zipfile

import pytest
from taxi_fixtures import taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.targets.beam import (
    FN_API_RUNNER,
    IN_PROCESS_MAX_BYTES,
    beam_args,
    build_project_wheel,
    direct_multiprocessing_args,
    per_component_beam_args,
    with_project_package,
    worker_threads,
)


@pytest.fixture
def resolved_with(taxi_sample_csv, tmp_path):
    def make(beam_args_declared=None):
        orchestrator = {"target": "beam"}
        if beam_args_declared is not None:
            orchestrator["beam_args"] = beam_args_declared
        spec = taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator=orchestrator)
        return load_spec(write_spec(tmp_path / "spec.yaml", spec))

    return make


def test_small_data_runs_in_process_like_the_local_target(resolved_with):
    from pipelines.compiler import DEFAULT_BEAM_ARGS

    assert beam_args(resolved_with()) == tuple(DEFAULT_BEAM_ARGS)


def test_large_data_gets_one_worker_thread_per_core(resolved_with, tmp_path):
    resolved = resolved_with()
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(IN_PROCESS_MAX_BYTES + 1)
    args = beam_args(dataclasses.replace(resolved, data_files=(str(big),)))
    assert f"--runner={FN_API_RUNNER}" in args
    assert "--direct_running_mode=multi_threading" in args
    assert f"--direct_num_workers={len(os.sched_getaffinity(0))}" in args
    assert worker_threads(args) == len(os.sched_getaffinity(0))
    assert "--direct_running_mode=multi_processing" not in args


def _with_big_data(resolved, tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(IN_PROCESS_MAX_BYTES + 1)
    return dataclasses.replace(resolved, data_files=(str(big),))


def test_the_local_target_compiles_with_the_same_rule(resolved_with, tmp_path):
    from pipelines import api
    from pipelines.compiler import DEFAULT_BEAM_ARGS

    small = resolved_with()
    assert api.compile(small).beam_pipeline_args == list(DEFAULT_BEAM_ARGS)
    compiled = api.compile(_with_big_data(small, tmp_path))
    large = compiled.beam_pipeline_args
    assert worker_threads(large) == len(os.sched_getaffinity(0))
    assert worker_threads(list(DEFAULT_BEAM_ARGS)) == 0
    # The Evaluator alone runs on one thread: its own flags come after the pipeline's, so they win.
    for component in compiled.components:
        if not hasattr(component.executor_spec, "beam_pipeline_args"):
            continue
        args = component.executor_spec.beam_pipeline_args
        one_thread = args[-2:] == ["--direct_running_mode=in_memory", "--direct_num_workers=1"]
        assert one_thread is (component.id == "Evaluator"), (component.id, args)


def test_only_worker_threads_keep_the_evaluator_on_one():
    from pipelines.compiler import DEFAULT_BEAM_ARGS

    assert per_component_beam_args(list(DEFAULT_BEAM_ARGS)) == {}
    assert per_component_beam_args(list(direct_multiprocessing_args(workers=2))) == {}


def test_one_usable_core_keeps_large_data_in_process(resolved_with, tmp_path, monkeypatch):
    from pipelines.compiler import DEFAULT_BEAM_ARGS
    from pipelines.targets import beam

    monkeypatch.setattr(beam.os, "sched_getaffinity", lambda pid: {0})
    assert beam.usable_cores() == 1
    assert beam_args(_with_big_data(resolved_with(), tmp_path)) == tuple(DEFAULT_BEAM_ARGS)


def test_declared_direct_runner_runs_on_the_fn_api_runner_it_falls_back_to(resolved_with):
    args = beam_args(resolved_with(["--runner=DirectRunner", "--direct_running_mode=multi_processing"]))
    assert args == (f"--runner={FN_API_RUNNER}", "--direct_running_mode=multi_processing")


def test_local_runners_are_not_packaged_but_keep_tfx_from_building_sdists(tmp_path):
    from pipelines.compiler import DEFAULT_BEAM_ARGS

    args = (f"--runner={FN_API_RUNNER}", "--direct_num_workers=2")
    (setup_file,) = [a for a in DEFAULT_BEAM_ARGS if a.startswith("--setup_file=")]
    assert with_project_package(args, str(tmp_path)) == (*args, setup_file)
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize(
    "dependency",
    ["--sdk_container_image=registry.example/yaml-tfx:1", "--setup_file=/src/setup.py", "--extra_package=x.whl"],
)
def test_args_that_bring_their_own_dependencies_are_kept(tmp_path, dependency):
    args = ("--runner=FlinkRunner", dependency)
    assert with_project_package(args, str(tmp_path)) == args
    assert not os.listdir(tmp_path)


def test_a_remote_runner_gets_this_project_as_one_wheel(tmp_path):
    args = ("--runner=PortableRunner", "--job_endpoint=localhost:8099")

    packaged = with_project_package(args, str(tmp_path))

    assert packaged[:2] == args
    (extra,) = [a for a in packaged if a.startswith("--extra_package=")]
    wheel = extra.split("=", 1)[1]
    assert os.path.dirname(wheel) == str(tmp_path) and os.listdir(tmp_path) == [os.path.basename(wheel)]
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "pipelines/targets/beam.py" in names and "components/trainer/run_fn.py" in names
    assert "serving/server/app.py" in names


def test_a_failed_wheel_build_names_the_fix(tmp_path, monkeypatch):
    import pipelines.targets.beam as beam

    monkeypatch.setattr(beam, "_REPO", str(tmp_path / "no-project-here"))
    with pytest.raises(
        RuntimeError, match="(?s)could not build this project's wheel .* Pass your own `--extra_package`"
    ):
        build_project_wheel(str(tmp_path / "out"))
