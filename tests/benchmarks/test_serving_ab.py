"""The interleaved serving A/B: its medians, its checks of --tree, and one real cycle."""

from __future__ import annotations

import argparse

import pytest

from benchmarks import serving_ab


def test_summary_takes_medians_of_same_cycle_ratios():
    cycles = [
        {"floor": 100.0, "a": 50.0, "b": 60.0},
        {"floor": 200.0, "a": 90.0, "b": 90.0},
        {"floor": 50.0, "a": 30.0, "b": 15.0},
    ]
    lines = serving_ab.summarize(cycles, ["floor", "a", "b"])
    assert lines[0] == "median QPS: floor 100, a 50, b 60"
    # a/floor per cycle: 0.5, 0.45, 0.6; b/floor: 0.6, 0.45, 0.3; b/a: 1.2, 1.0, 0.5
    assert lines[1] == "a / floor: median 0.500 (min 0.450, max 0.600)"
    assert lines[2] == "b / floor: median 0.450 (min 0.300, max 0.600)"
    assert lines[3] == "b / a: median 1.000 (min 0.500, max 1.200)"


@pytest.mark.parametrize("text", ["floor=.", "=.", "x=/nonexistent/checkout"])
def test_a_tree_that_is_not_a_named_checkout_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="NAME=PATH"):
        serving_ab._tree(text)


def test_one_cycle_against_this_checkout(capsys):
    assert serving_ab.main(["--cycles", "1", "--seconds", "0.3", "--concurrency", "4"]) == 0
    out = capsys.readouterr().out
    assert "cycle 1/1: floor " in out
    assert "this / floor: median " in out
