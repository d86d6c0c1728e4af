"""The REST (HTTP/JSON) surface of TensorFlow Serving's API."""
