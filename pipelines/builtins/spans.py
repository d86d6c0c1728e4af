"""What the spans of `data.path` (or of `data.sql`) change in the built-ins' wiring: a window of spans, drift between spans."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.example_gen.spans import window_examples

if TYPE_CHECKING:
    from pipelines.spec.models import PipelineSpec
    from pipelines.spec.resolved import ResolvedSpec

__all__ = ["after_example_gen", "caches_analysis", "span_drift", "training_window", "windowed"]


def span_drift(spec: PipelineSpec) -> bool:
    """With spans, `data.checks.drift` compares the new span with the previous one, not eval with train."""
    return bool(spec.data.has_spans and spec.data.checks.drift)


def caches_analysis(spec: PipelineSpec) -> bool:
    """With a window of spans, Transform keeps tf.Transform's analyzer cache per span and reads the last run's.

    A window's spans but the newest were analyzed by the previous run: with its cache, only the new span is
    read. Without a window (one span per run) there is nothing to reuse, and the Transform keeps the cache
    key it had before the cache existed.
    """
    return bool(spec.data.has_spans and spec.data.window > 1)


def training_window(resolved: ResolvedSpec) -> int:
    """How many of the newest spans Transform's analysis and the Trainer read (1 without spans)."""
    return resolved.spec.data.window if resolved.spans else 1


def windowed(examples, resolved: ResolvedSpec):
    """ExampleGen's `examples` channel, or the rolling window of spans over every run's outputs."""

    return window_examples(examples, training_window(resolved))


def after_example_gen(component, examples, resolved: ResolvedSpec):
    """`component` runs after ExampleGen even when it reads a window (which names no producer of this run)."""
    if training_window(resolved) > 1:
        component.add_upstream_node(examples.producer_component)
    return component
