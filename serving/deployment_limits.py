"""Server limits that admit the largest request a deployment declares.

An image model's requests are far larger than a table model's: 32 photos of
0.5 MiB are 16 MiB of JPEG bytes, 21.3 MiB as base64 JSON, over the embedded
server's default 16 MiB body limit. A deployment declares its largest request
(`deploy.max_request_mb` in the pipeline spec: rows per request x the largest
encoded image or text a client sends), and `for_request_mb` derives the two
limits that admit it and little more:

* the per-request memory budget (`--request-memory-budget-mb`): the declared
  bytes plus 1 MiB for the per-value bookkeeping the budget counts (49 bytes a
  string: ~21,000 values);
* the request size (`--max-request-mb`: REST body and gRPC message): the
  budget x 4/3, base64's expansion, so a REST body at the limit decodes to no
  more than the budget. A gRPC request carries raw bytes, so one between the
  budget and the message limit is refused by the budget (INVALID_ARGUMENT
  naming `--request-memory-budget-mb`), before anything is decoded.

The Deployer starts its embedded server with these limits and writes them to
`<config-dir>/limits.json`, where `python -m serving up --config-dir` reads
them (flags given on the command line win). `tensorflow_model_server` has
no per-request budget and `up --real` does not pass these on.

This module decides the limits of a deployment; `serving.server.guards.request_checks` enforces
them on each request inside the server.

Example:
    >>> limits = ServerLimits.for_request_mb(16)
    >>> limits.request_memory_budget_bytes // 2**20, limits.max_request_bytes // 2**20
    (17, 22)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

from serving.atomic import atomic_write_text
from serving.errors import message

__all__ = ["LIMITS_FILE", "ServerLimits"]

LIMITS_FILE = "limits.json"
MIB = 1024 * 1024
# Room in the budget for what it counts besides the bytes themselves (49 bytes per string value).
_BOOKKEEPING_BYTES = MIB
_BASE64_EXPANSION = 4 / 3


def _bad_size(name: str, value: object, where: str) -> ValueError:
    return ValueError(
        message(
            f"Invalid {name} in {where}",
            expected="a number of MiB above 0",
            received=f"{name}={value!r}",
            fix=f"Set {name} to the size of the largest request clients send (rows x largest encoded input).",
        )
    )


@dataclasses.dataclass(frozen=True)
class ServerLimits:
    """The request size and memory budget an embedded server is started with.

    Attributes:
        max_request_bytes: Largest REST body / gRPC message (`--max-request-mb`).
        request_memory_budget_bytes: Largest decoded size of one request's
            input tensors (`--request-memory-budget-mb`).
    """

    max_request_bytes: int
    request_memory_budget_bytes: int

    @classmethod
    def for_request_mb(cls, max_request_mb: float) -> ServerLimits:
        """The limits admitting requests of up to `max_request_mb` MiB of raw input.

        Args:
            max_request_mb: Rows per request x the largest encoded input (image
                file, text) a client sends, in MiB.

        Returns:
            The derived limits (see the module docstring).

        Raises:
            ValueError: `max_request_mb` is not a number above 0.
        """
        number = isinstance(max_request_mb, (int, float)) and not isinstance(max_request_mb, bool)
        if not number or not 0 < max_request_mb < math.inf:
            raise _bad_size("max_request_mb", max_request_mb, "the deployment")
        budget = math.ceil(max_request_mb * MIB) + _BOOKKEEPING_BYTES
        return cls(max_request_bytes=math.ceil(budget * _BASE64_EXPANSION), request_memory_budget_bytes=budget)

    def server_options(self) -> dict[str, int]:
        """Keyword arguments for `EmbeddedServer`/`ServerOptions`."""
        return dataclasses.asdict(self)

    def write(self, config_dir: str | os.PathLike) -> Path:
        """Writes `<config_dir>/limits.json` (atomically) for `python -m serving up`.

        Returns:
            The path written.
        """
        path = Path(config_dir) / LIMITS_FILE
        atomic_write_text(path, json.dumps(dataclasses.asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def read(cls, config_dir: str | os.PathLike) -> ServerLimits | None:
        """The limits recorded in `<config_dir>/limits.json`, or None without that file.

        Raises:
            ValueError: The file is not JSON with the two positive byte counts.
        """
        path = Path(config_dir) / LIMITS_FILE
        if not path.is_file():
            return None
        fields = [field.name for field in dataclasses.fields(cls)]
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
            values = {name: recorded[name] for name in fields}
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(
                message(
                    f"Cannot read the server limits in {path}",
                    expected=f"a JSON object with {' and '.join(fields)} (bytes)",
                    received=f"{type(err).__name__}: {err}",
                    fix="Delete the file (the defaults apply) or redeploy to rewrite it.",
                )
            ) from None
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(
                    message(
                        f"Invalid {name} in {path}",
                        expected="a whole number of bytes above 0",
                        received=f"{name}={value!r}",
                        fix="Delete the file (the defaults apply) or redeploy to rewrite it.",
                    )
                )
        return cls(**values)
