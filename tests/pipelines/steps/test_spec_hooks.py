"""`hooks:` in a spec: factories resolve and accept their parameters before anything runs, then get built."""

from __future__ import annotations

import os

import pytest
from taxi_fixtures import taxi_spec, write_spec

from pipelines import cli
from pipelines.hooks.prometheus_hook import PrometheusHook
from pipelines.load import load_spec
from pipelines.steps.spec_hooks import build_hooks


class RecordingHook:
    """Referenced from specs as `test_spec_hooks:RecordingHook`."""

    def __init__(self, label: str = "default"):
        self.label = label


class NeedsChannel:
    def __init__(self, channel: str):
        self.channel = channel


def _spec_file(tmp_path, csv, hooks):
    return write_spec(tmp_path / "spec.yaml", taxi_spec(csv, str(tmp_path / "root"), hooks=hooks))


def test_declared_hooks_are_built_with_their_parameters(tmp_path, taxi_sample_csv):
    hooks = ["test_spec_hooks:RecordingHook", {"uses": "prometheus", "parameters": {"port": 0}}]
    built = build_hooks(load_spec(_spec_file(tmp_path, taxi_sample_csv, hooks)).spec)
    try:
        assert isinstance(built[0], RecordingHook) and built[0].label == "default"
        assert isinstance(built[1], PrometheusHook) and built[1].port > 0
    finally:
        built[1].close()


@pytest.mark.parametrize(
    "hooks, path, message",
    [
        (
            ["test_spec_hooks:RecordingHok"],
            "hooks[0]",
            "`test_spec_hooks` has no `RecordingHok`. Did you mean `RecordingHook`?",
        ),
        (
            [{"uses": "test_spec_hooks:NeedsChannel"}],
            "hooks[0].parameters",
            "hook factory needs `channel`. Add `channel: <value>` under `parameters`.",
        ),
        ([{"uses": "prometheu"}], "hooks[0].uses", "unknown hook `prometheu`. Did you mean `prometheus`?"),
        (
            [{"uses": "prometheus", "parameters": {"pushgateway": "http://x"}}],
            "hooks[0].parameters.pushgateway",
            "hook factory takes no parameter `pushgateway`. Did you mean `pushgateway_url`?",
        ),
        ([{"uses": "prometheus", "parameter": {}}], "hooks[0]", "expected a string or HookSpec"),
    ],
)
def test_a_bad_hook_exits_2_and_writes_nothing(tmp_path, taxi_sample_csv, capsys, hooks, path, message):
    spec_file = _spec_file(tmp_path, taxi_sample_csv, hooks)
    assert cli.main(["validate", spec_file]) == 2
    err = capsys.readouterr().err
    assert f": {path}: " in err and message in err, err
    assert not os.path.exists(tmp_path / "root")
