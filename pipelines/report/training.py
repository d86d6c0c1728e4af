"""Training curves from the Trainer's TensorBoard event files (`<model_run>/train`, `<model_run>/validation`).

Keras's TensorBoard callback writes `batch_<metric>` scalars every execution and `epoch_<metric>`
at the end of each epoch (train), and `evaluation_<metric>_vs_iterations` (validation).
"""

from __future__ import annotations

import glob
import os
import re

__all__ = ["read_scalars", "training_curves"]


def read_scalars(event_dir: str) -> dict[str, list[tuple[int, float]]]:
    """Tag -> (step, value) points, sorted by step, from every event file in one folder.

    Args:
        event_dir: a TensorBoard log folder (e.g. `<model_run>/train`).

    Returns:
        The scalars (TF2 tensor summaries and TF1 simple values); empty without event files.
    """
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    points: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(glob.glob(os.path.join(event_dir, "events.out.tfevents.*"))):
        for event in EventFileLoader(path).Load():
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "simple_value":
                    number = value.simple_value
                elif kind == "tensor" and value.metadata.plugin_data.plugin_name == "scalars":
                    array = tensor_util.make_ndarray(value.tensor)
                    if array.size != 1:
                        continue
                    number = float(array.reshape(()))
                else:
                    continue
                points.setdefault(value.tag, []).append((int(event.step), float(number)))
    return {tag: sorted(values) for tag, values in points.items()}


def training_curves(model_run_dir: str) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """Metric -> {"train": points, "validation": points}, by optimizer step.

    Per-execution train points (`batch_<metric>`) and the validation points at the end of
    training (`evaluation_<metric>_vs_iterations`); metrics with only epoch-level train values
    fall back to those.

    Args:
        model_run_dir: the Trainer's `model_run` artifact folder.

    Returns:
        One entry per metric, e.g. `{"loss": {"train": [(50, 0.55), ...], "validation": [(200, 0.26)]}}`.
    """
    train = read_scalars(os.path.join(model_run_dir, "train"))
    validation = read_scalars(os.path.join(model_run_dir, "validation"))
    curves: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for tag, values in train.items():
        if tag.startswith("batch_"):
            curves.setdefault(tag[len("batch_") :], {})["train"] = values
    for tag, values in train.items():
        if tag.startswith("epoch_") and tag[len("epoch_") :] not in curves:
            curves[tag[len("epoch_") :]] = {"train": values}
    for tag, values in validation.items():
        match = re.fullmatch(r"evaluation_(.+)_vs_iterations", tag)
        if match:
            curves.setdefault(match.group(1), {})["validation"] = values
    return curves
