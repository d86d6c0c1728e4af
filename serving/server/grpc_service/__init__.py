"""The gRPC surface of TensorFlow Serving's API: servicers, request handlers, concurrent accepts."""
