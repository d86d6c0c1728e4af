"""The registry reads real entry points: a distribution (dist-info on sys.path) contributes components and hooks."""

from __future__ import annotations

import pytest

from pipelines.steps import registry

_MODULE = '''
from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts


@component
def Touch(examples: InputArtifact[standard_artifacts.Examples], note: Parameter[str] = "") -> None:
    """Does nothing (a registry test component)."""


class Hook:
    def __init__(self, channel: str):
        self.channel = channel
'''


@pytest.fixture
def installed_dist(tmp_path, monkeypatch):
    """`demo-steps 1.2` installed in a folder on sys.path: a module and its dist-info with entry points."""
    (tmp_path / "demo_steps_mod.py").write_text(_MODULE, encoding="utf-8")
    info = tmp_path / "demo_steps-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-steps\nVersion: 1.2\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[{registry.COMPONENT_GROUP}]\ntouch = demo_steps_mod:Touch\nbroken = demo_steps_gone:Thing\n\n"
        f"[{registry.HOOK_GROUP}]\nnotify = demo_steps_mod:Hook\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_installed_components_and_hooks_are_listed_with_their_distribution(installed_dist):
    components = registry.entries(registry.COMPONENT_GROUP)
    assert components["row_filter"].source == "built-in"
    assert components["touch"] == registry.Entry("touch", "demo_steps_mod:Touch", "demo-steps 1.2")
    assert registry.entries(registry.HOOK_GROUP)["notify"].target == "demo_steps_mod:Hook"


def test_a_short_name_resolves_lazily_to_the_component(installed_dist):
    component, target = registry.resolve("touch")
    assert target == "demo_steps_mod:Touch"
    assert component.SPEC_CLASS.PARAMETERS["note"].optional
    hook, _ = registry.resolve("notify", registry.HOOK_GROUP)
    assert hook(channel="#ml").channel == "#ml"


@pytest.mark.parametrize(
    "uses, message",
    [
        ("tuoch", "unknown component `tuoch`. Did you mean `touch`? Expected a registered name ("),
        ("broken", "module `demo_steps_gone` cannot be imported"),
        ("demo_steps_mod:Tuch", "`demo_steps_mod` has no `Tuch`. Did you mean `Touch`? Fix the name after `:`."),
        ("demo_steps_mod:a:b", "expected `package.module:Name`. Received: `demo_steps_mod:a:b`."),
    ],
)
def test_unresolvable_names_say_how_to_fix_them(installed_dist, uses, message):
    with pytest.raises(registry.UnresolvedReference) as error:
        registry.resolve(uses)
    assert message in str(error.value)


def test_listing_shows_ports_parameters_and_unloadable_entries(installed_dist):
    from pipelines.steps.listing import format_listing

    text = format_listing()
    assert "  ExampleGen" in text and "outputs:    examples (Examples)" in text
    assert "touch                demo_steps_mod:Touch  [demo-steps 1.2]" in text
    assert "parameters: note (str, default '')" in text
    assert "parameters: expression (str, required), keep_missing (bool, default False)" in text
    assert "broken" in text and "cannot be loaded: module `demo_steps_gone` cannot be imported" in text
    assert "notify               demo_steps_mod:Hook  [demo-steps 1.2]" in text and "parameters: channel" in text
