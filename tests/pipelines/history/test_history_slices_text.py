"""`runs show`'s slices table: one column per metric, and a value's interval with `evaluation.confidence`."""

from __future__ import annotations

from pipelines.history.slices import slice_deltas, slice_deltas_text, slices_text


def test_a_bounded_slice_value_reads_with_its_interval_and_others_alone():
    summary = {
        "slices": [
            {
                "slice": "x=0",
                "example_count": 50,
                "metrics": {"binary_accuracy": 0.8, "auc": 0.7},
                "gated": ["binary_accuracy"],
                "intervals": {"binary_accuracy": [0.8, 0.68123, 0.91877]},
            },
            {"slice": "x=1", "example_count": 9, "metrics": {"binary_accuracy": 1.0}, "gated": []},
        ]
    }

    title, table = slices_text(summary)
    lines = [line.split() for line in table.splitlines()]

    assert title == "Slices:"
    assert lines[0] == ["SLICE", "ROWS", "AUC", "BINARY_ACCURACY", "GATED"]
    assert lines[1] == ["x=0", "50", "0.7000", "0.8000", "[0.6812,", "0.9188]", "binary_accuracy"]
    assert lines[2] == ["x=1", "9", "-", "1.0000", "-"]


def test_runs_diff_shows_each_runs_interval_beside_its_value():
    a = {"slices": [{"slice": "x=0", "metrics": {"auc": 0.7}, "intervals": {"auc": [0.7, 0.61, 0.79]}}]}
    b = {"slices": [{"slice": "x=0", "metrics": {"auc": 0.75}}, {"slice": "x=1", "metrics": {"auc": 0.5}}]}

    deltas = slice_deltas(a, b)
    title, table = slice_deltas_text(deltas)[1:]
    lines = [line.split() for line in table.splitlines()]

    assert deltas[0] == {
        "slice": "x=0",
        "name": "auc",
        "a": 0.7,
        "b": 0.75,
        "delta": 0.05,
        "a_interval": [0.7, 0.61, 0.79],
        "b_interval": None,
    }
    assert title == "Slice metrics:"
    assert lines[1] == ["x=0", "auc", "0.7000", "[0.6100,", "0.7900]", "0.7500", "+0.0500"]
    assert lines[2] == ["x=1", "auc", "-", "0.5000", "-"]
