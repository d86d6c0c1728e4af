"""compat.beam: written for the pinned Apache Beam, each entry's shape as expected there (compat/beam/)."""

from __future__ import annotations

import pytest
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.portability import python_urns
from apache_beam.portability.api import beam_runner_api_pb2

import compat
from compat import beam as compat_beam
from compat.beam import runners


def test_the_installed_beam_is_the_pinned_one():
    new = compat.installed_version(compat_beam.DISTRIBUTION)
    assert new == compat_beam.PINNED, (
        f"re-check every entry of compat/beam/ against {compat_beam.DISTRIBUTION} {new}, then update PINNED"
    )


def test_the_worker_command_shape_is_as_expected():
    assert runners.worker_shape_problem() is None


def test_the_default_runner_shape_is_as_expected():
    assert runners.runner_shape_problem() is None


def test_the_dask_translation_shape_is_as_expected():
    pytest.importorskip("distributed")
    from compat.beam import dask_runner

    assert dask_runner.shape_problem() is None


def _pipeline_with(command: bytes):
    proto = beam_runner_api_pb2.Pipeline()
    proto.components.environments["ours"].urn = python_urns.SUBPROCESS_SDK
    proto.components.environments["ours"].payload = command
    proto.components.environments["other"].urn = python_urns.SUBPROCESS_SDK
    proto.components.environments["other"].payload = b"some other command"
    return proto


def test_only_beams_own_worker_command_is_rewritten():
    proto = _pipeline_with(f"/usr/bin/python3 -m {runners.BEAMS_WORKER}".encode())
    assert runners.use_worker_command(proto, "mine", python="/usr/bin/python3") is True
    assert proto.components.environments["ours"].payload == b"mine"
    assert proto.components.environments["other"].payload == b"some other command"


def test_a_differing_fn_api_runner_keeps_beams_worker_command(monkeypatch, caplog):
    monkeypatch.setattr(compat, "_warned", set())
    monkeypatch.delattr(python_urns, "SUBPROCESS_SDK")
    caplog.set_level("WARNING", logger="compat")
    proto = beam_runner_api_pb2.Pipeline()
    proto.components.environments["ours"].payload = f"python -m {runners.BEAMS_WORKER}".encode()
    assert runners.use_worker_command(proto, "mine", python="python") is False
    assert proto.components.environments["ours"].payload == f"python -m {runners.BEAMS_WORKER}".encode()
    assert len(caplog.records) == 1


def test_the_default_runner_is_set_for_the_block_only():
    before = StandardOptions.DEFAULT_RUNNER
    with runners.default_runner("SomeRunner") as set_:
        assert set_ is True
        assert StandardOptions.DEFAULT_RUNNER == "SomeRunner"
    assert StandardOptions.DEFAULT_RUNNER == before


def test_a_differing_standard_options_keeps_beams_default(monkeypatch, caplog):
    monkeypatch.setattr(compat, "_warned", set())
    monkeypatch.setattr(StandardOptions, "DEFAULT_RUNNER", None)
    caplog.set_level("WARNING", logger="compat")
    with runners.default_runner("SomeRunner") as set_:
        assert set_ is False
        assert StandardOptions.DEFAULT_RUNNER is None
    assert len(caplog.records) == 1
