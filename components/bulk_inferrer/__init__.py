"""BulkInferrer (`predict.enabled`): TFX's BulkInferrer on the model's `serving_default`, plus a readable copy."""
