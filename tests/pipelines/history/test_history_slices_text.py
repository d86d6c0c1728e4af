"""`runs show`'s slices table: one column per metric, and a value's interval with `evaluation.confidence`."""

from __future__ import annotations

from pipelines.history.slices import slices_text


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
