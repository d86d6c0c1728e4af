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
        "a_gated": False,
        "b_gated": False,
    }
    assert title == "Slice metrics:"
    assert lines[1] == ["x=0", "auc", "0.7000", "[0.6100,", "0.7900]", "0.7500", "+0.0500", "no"]
    assert lines[2] == ["x=1", "auc", "-", "0.5000", "-", "no"]


def test_runs_diff_leaves_out_unchanged_slice_metrics_and_shows_a_change_of_gating():
    """Two runs of one model: only the slice whose gating changed (a larger min_examples) is listed."""
    rows = [("region=west", 481, 0.4927), ("region=north", 3000, 0.81), ("region=south", 2900, 0.83)]

    def summary(gated_west: bool) -> dict:
        return {
            "slices": [
                {
                    "slice": name,
                    "metrics": {"binary_accuracy": value},
                    "gated": ["binary_accuracy"] if gated_west or name != "region=west" else [],
                }
                for name, _, value in rows
            ]
        }

    lines = slice_deltas_text(slice_deltas(summary(True), summary(False)))

    table = [line.split() for line in lines[2].splitlines()]
    assert table[1:] == [["region=west", "binary_accuracy", "0.4927", "0.4927", "+0.0000", "yes", "->", "no"]]
    assert lines[3] == "(2 slice metric(s) unchanged, not shown)"
    assert slice_deltas_text(slice_deltas(summary(True), summary(True))) == [
        "",
        "Slice metrics: no change (3 compared)",
    ]
