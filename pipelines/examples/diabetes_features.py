"""A `transform.module` for the diabetes example: two outputs the declared features do not make.

Referenced in `diabetes.yaml` as `transform.module: diabetes_features:preprocess`
(`pipelines/run_local.py` puts the spec's folder first on `sys.path`, so a module
beside the spec imports by its name). Documented in `docs/custom_code.md`.
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_transform as tft

from components.transform.preprocessing import fill_missing

__all__ = ["preprocess"]


def preprocess(inputs: dict, outputs: dict, custom_config: dict) -> dict:
    """Adds a body-mass x blood-pressure interaction and an age band to the model inputs.

    Args:
      inputs: raw column name -> tf.Tensor ([batch, 1]) or tf.SparseTensor (a column some rows lack).
      outputs: what the spec's `features` and `label` made: `<column>_xf` -> [batch] tensor, and the
        label name -> [batch] label.
      custom_config: the Transform configuration (`features`, `label_name`, `task`, ...).

    Returns:
      `outputs` plus `bmi_x_bp` (float: fed to the deep part) and `age_band` (int64 ids 0-4 whose range
      `tft.bucketize` records: embedded, and one-hot in the wide part).
    """
    bmi = tf.cast(fill_missing(inputs["bmi"]), tf.float32)  # [batch], missing cells -> 0
    blood_pressure = tf.cast(fill_missing(inputs["bp"]), tf.float32)
    age = tf.cast(fill_missing(inputs["age"]), tf.float32)
    result = dict(outputs)  # keep the declared features and, above all, the label
    result["bmi_x_bp"] = tft.scale_to_z_score(bmi * blood_pressure)
    result["age_band"] = tft.bucketize(age, num_buckets=5)
    return result
