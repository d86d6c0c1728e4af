"""Running requests on a loaded version: Predict/Classify/Regress/MultiInference, batching, the shared request path, warmup replay."""
