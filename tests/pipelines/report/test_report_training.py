"""Training curves read from real TensorBoard event files, as Keras's TensorBoard callback names them."""

from __future__ import annotations

import os

from pipelines.report.training import read_scalars, training_curves


def _write(folder: str, scalars: dict[str, list[tuple[int, float]]]) -> None:
    import tensorflow as tf

    writer = tf.summary.create_file_writer(folder)
    with writer.as_default():
        for tag, points in scalars.items():
            for step, value in points:
                tf.summary.scalar(tag, value, step=step)
    writer.close()


def _rounded(points):
    return [(step, round(value, 5)) for step, value in points]


def test_batch_and_validation_scalars_become_one_curve_per_metric(tmp_path):
    run = str(tmp_path)
    _write(
        os.path.join(run, "train"),
        {"batch_loss": [(100, 0.4), (50, 0.5)], "epoch_loss": [(0, 0.38)], "epoch_auc": [(0, 0.9)]},
    )
    _write(os.path.join(run, "validation"), {"evaluation_loss_vs_iterations": [(100, 0.35)], "epoch_loss": [(0, 0.35)]})
    curves = training_curves(run)
    assert _rounded(curves["loss"]["train"]) == [(50, 0.5), (100, 0.4)]  # float32 in the files
    assert _rounded(curves["loss"]["validation"]) == [(100, 0.35)]
    assert _rounded(curves["auc"]["train"]) == [(0, 0.9)]  # epoch-level only
    assert set(curves) == {"loss", "auc"}


def test_scalars_are_sorted_by_step_across_files(tmp_path):
    folder = str(tmp_path / "train")
    _write(folder, {"batch_loss": [(20, 2.0)]})
    _write(folder, {"batch_loss": [(10, 1.0)]})
    assert read_scalars(folder) == {"batch_loss": [(10, 1.0), (20, 2.0)]}


def test_a_run_without_event_files_has_no_curves(tmp_path):
    assert training_curves(str(tmp_path)) == {}
