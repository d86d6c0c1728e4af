"""compat.tfx: written for the pinned TFX, each entry's shape as expected there (compat/tfx/)."""

from __future__ import annotations

import pytest
from tfx.components.transform import executor as tfx_transform_executor

import compat
from compat import tfx as compat_tfx
from compat.tfx import airflow, beam_dag, example_gen, executor_stack, resolver, spans, transform


def test_the_installed_tfx_is_the_pinned_one():
    new = compat.installed_version(compat_tfx.DISTRIBUTION)
    assert new == compat_tfx.PINNED, (
        f"re-check every entry of compat/tfx/ against {compat_tfx.DISTRIBUTION} {new}, then update PINNED"
    )


@pytest.mark.parametrize(
    "check",
    [
        beam_dag.shape_problem,
        resolver.shape_problem,
        airflow.pip_shape_problem,
        transform.shape_problem,
        executor_stack.output_dict_shape_problem,
        executor_stack.context_shape_problem,
        example_gen.shape_problem,
        spans.shape_problem,
    ],
    ids=lambda check: f"{check.__module__}.{check.__name__}",
)
def test_each_entry_s_shape_is_as_expected(check):
    assert check() is None


def test_the_transform_swap_is_undone_and_a_differing_tfx_keeps_its_processor(monkeypatch, caplog):
    original = tfx_transform_executor.TransformProcessor
    with transform.reading_through(lambda tfxio, dataset: None) as swapped:
        assert swapped is True
        assert tfx_transform_executor.TransformProcessor is not original
    assert tfx_transform_executor.TransformProcessor is original

    monkeypatch.setattr(compat, "_warned", set())
    monkeypatch.delattr(original, "_CreateTFXIO")
    caplog.set_level("WARNING", logger="compat")
    with transform.reading_through(lambda tfxio, dataset: None) as swapped:
        assert swapped is False
        assert tfx_transform_executor.TransformProcessor is original
    assert [r.getMessage() for r in caplog.records] == [
        "compat: compat.tfx.transform falls back to the library's own behaviour: "
        "TransformProcessor has no `_CreateTFXIO`"
    ]


def test_outside_an_executor_the_stack_holds_nothing():
    assert executor_stack.output_artifacts("model") == []
    assert executor_stack.executor_context() is None


def test_the_nearest_output_dict_is_found():
    def inner():
        return executor_stack.output_artifacts("model")

    def do(output_dict):
        return inner()

    assert do({"model": ["artifact"]}) == ["artifact"]


def test_the_airflow_launcher_shape_is_as_expected_and_a_missing_one_is_named(monkeypatch):
    pytest.importorskip("airflow")
    from tfx.orchestration.airflow import airflow_component

    assert airflow.launcher_shape_problem() is None
    monkeypatch.delattr(airflow_component, "_airflow_component_launcher")
    assert "_airflow_component_launcher" in airflow.launcher_shape_problem()
