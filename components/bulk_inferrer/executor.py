"""TFX's BulkInferrer executor, able to run our `serving_default` signature, with a Parquet copy of the results.

Our `serving_default` answers the predicted class name `label` as a [batch]
string tensor, which tfx_bsl's Predict post-processing cannot split per
example (`'bytes' object has no attribute 'dtype'`):
`compat.tfx_bsl.accept_string_predict_outputs` fixes that before TFX's
executor runs. After it, `readable.write_readable_predictions` writes
`predictions.parquet` beside the PredictionLogs.
"""

from __future__ import annotations

from absl import logging
from tfx.components.bulk_inferrer import executor as tfx_executor

from compat import tfx_bsl as compat_tfx_bsl
from components.bulk_inferrer.readable import READABLE_FILE, write_readable_predictions

__all__ = ["Executor"]


class Executor(tfx_executor.Executor):
    """TFX's BulkInferrer executor; string Predict outputs accepted, results also as Parquet."""

    def Do(self, input_dict, output_dict, exec_properties) -> None:  # noqa: N802 - TFX's name
        if not compat_tfx_bsl.accept_string_predict_outputs():
            logging.warning(
                "BulkInferrer: tfx_bsl cannot write string outputs of `serving_default` here; expect "
                "\"'bytes' object has no attribute 'dtype'\" unless the model_spec names the `classification` "
                "signature."
            )
        super().Do(input_dict, output_dict, exec_properties)
        for artifact in output_dict.get("inference_result", []):
            rows = write_readable_predictions(artifact.uri)
            artifact.set_int_custom_property("predictions", rows)
            if rows:
                logging.info("BulkInferrer: %d predictions in %s/%s.", rows, artifact.uri, READABLE_FILE)
