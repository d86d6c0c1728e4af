"""Contract: the built-in step table describes exactly what the compiler wires."""

from __future__ import annotations

import pytest

from pipelines.api import compile as compile_pipeline
from pipelines.graph import Ref
from pipelines.spec import load_spec
from pipelines.steps.builtins import BUILTIN_STEPS, builtin_nodes


def _wired(component) -> dict[str, Ref]:
    return {
        name: Ref(channel.producer_component_id, channel.output_key)
        for name, channel in component.inputs.items()
        if getattr(channel, "producer_component_id", None)
    }


@pytest.mark.parametrize(
    "sections",
    [{}, {"transform": {"materialize": True}}, {"deploy": {"enabled": True}}],
    ids=["default", "materialized", "deploy"],
)
def test_builtin_table_matches_the_compiled_pipeline(steps_spec, sections):
    resolved = load_spec(steps_spec([], **sections))
    components = {c.id: c for c in compile_pipeline(resolved).components}
    nodes = builtin_nodes(resolved.spec)
    assert set(nodes) == set(components)
    for node_id, component in components.items():
        if node_id != "BaselineResolver":  # its candidate is wrapped by the resolver
            assert _wired(component) == nodes[node_id].wiring, node_id
        outputs = {name: channel.type.TYPE_NAME for name, channel in component.outputs.items()}
        assert outputs == nodes[node_id].outputs, node_id
        for name, channel in component.inputs.items():
            port = BUILTIN_STEPS[node_id].inputs.get(name)
            if port is not None:
                assert channel.type.TYPE_NAME == port.type_name, (node_id, name)
