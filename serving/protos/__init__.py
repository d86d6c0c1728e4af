"""TensorFlow Serving configuration protos used to write server config files.

`model_server_config_pb2` comes from the tensorflow-serving-api wheel. The wheel
does not ship `monitoring_config_pb2` or `session_bundle_config_pb2`, so their
`.proto` sources are vendored next to this file and compiled with protoc
(regenerate with the command in serving/README.md).
"""

from tensorflow_serving.config import model_server_config_pb2

from serving.protos.tensorflow_serving.config import monitoring_config_pb2
from serving.protos.tensorflow_serving.servables.tensorflow import (
    session_bundle_config_pb2,
)

__all__ = [
    "model_server_config_pb2",
    "monitoring_config_pb2",
    "session_bundle_config_pb2",
]
