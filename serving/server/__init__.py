"""The embedded, TensorFlow-Serving-compatible model server."""

from serving.server.app import DEFAULT_MAX_REQUEST_BYTES, EmbeddedServer, ServerOptions

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "EmbeddedServer", "ServerOptions"]
