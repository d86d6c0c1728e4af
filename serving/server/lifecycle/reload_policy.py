"""Who may change the served models over gRPC (HandleReloadConfigRequest).

The RPC takes a whole ModelServerConfig: any process that reaches the gRPC
port could point a model at `/etc`, or unload everything. So it is refused
unless the server was started with `allow_config_reload` (CLI
`--allow-config-reload`), and then only for models whose `base_path` lies
under an allowed root (`--allowed-model-roots`; by default the base paths the
server started with, so a reload can move versions and labels but not sources).

* reload not enabled: FAILED_PRECONDITION, as TensorFlow Serving answers for
  a feature its start options leave off ("Model version labels are not
  currently allowed by the server.", server_core.cc);
* a config TensorFlow Serving refuses (not a model_config_list, a relative
  base_path, an unknown platform): INVALID_ARGUMENT, as TensorFlow Serving;
* a base_path outside the roots: PERMISSION_DENIED.

Example:
    >>> policy = ReloadPolicy(allowed=True, roots=("/srv/models",))
    >>> policy.check(config)   # raises PermissionDenied for base_path "/etc"
"""

from __future__ import annotations

import dataclasses
import os

from serving.config import validate_server_config
from serving.errors import FailedPrecondition, PermissionDenied, message
from serving.protos import model_server_config_pb2

__all__ = ["ReloadPolicy"]


def _is_url(path: str) -> bool:
    return "://" in path


def _normalized(path: str) -> str:
    """A local path with symlinks and `..` resolved; a URL as given, without a trailing slash."""
    return path.rstrip("/") if _is_url(path) else os.path.realpath(os.path.expanduser(path))


def _under(path: str, root: str) -> bool:
    if _is_url(path) != _is_url(root):
        return False
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclasses.dataclass(frozen=True)
class ReloadPolicy:
    """Whether HandleReloadConfigRequest is served, and for which base paths.

    Attributes:
        allowed: The RPC is served at all.
        roots: Directories (or URL prefixes) a reloaded `base_path` must lie
            under (the root itself counts).
    """

    allowed: bool = False
    roots: tuple[str, ...] = ()

    @classmethod
    def from_options(
        cls, allowed: bool, roots: tuple[str, ...], config: model_server_config_pb2.ModelServerConfig
    ) -> ReloadPolicy:
        """The policy for a server; with no roots given, its initial base paths are the roots."""
        if not roots:
            roots = tuple(m.base_path for m in config.model_config_list.config)
        return cls(allowed, tuple(_normalized(root) for root in roots))

    def check(self, config: model_server_config_pb2.ModelServerConfig) -> None:
        """Raises unless `config` may be applied.

        Raises:
            FailedPrecondition: Reloading is not enabled.
            InvalidArgument: The config is one TensorFlow Serving refuses
                (checked before the roots, so a relative base_path gets
                TensorFlow Serving's INVALID_ARGUMENT).
            PermissionDenied: A model's base_path is outside the allowed roots.
        """
        if not self.allowed:
            raise FailedPrecondition(
                message(
                    "HandleReloadConfigRequest is disabled on this server",
                    expected="a server started with --allow-config-reload (ServerOptions.allow_config_reload)",
                    received="a reload request",
                    fix="Restart the server with --allow-config-reload [--allowed-model-roots DIR ...], "
                    "or change models.config and let the server poll it.",
                )
            )
        validate_server_config(config, reload=True)
        for model in config.model_config_list.config:
            path = _normalized(model.base_path)
            if not any(_under(path, root) for root in self.roots):
                raise PermissionDenied(
                    message(
                        f"base_path of model {model.name!r} is outside the allowed model roots",
                        expected=f"a base_path under one of {list(self.roots)}",
                        received=f"base_path {model.base_path!r} (resolved: {path!r})",
                        fix="Put the model under an allowed root, or restart the server with that directory "
                        "in --allowed-model-roots.",
                    )
                )
