"""`python -m serving up|status|predict|rollback|manifests`.

    python -m serving up --model-name penguins --base-path models/ [--batching]
    python -m serving status penguins
    python -m serving predict penguins --json '{"instances": [...]}'
    python -m serving rollback penguins
    python -m serving manifests --model-name penguins --out deploy/

`up` writes the config files into `--config-dir` (default `.serving/`) and
records the server's addresses in `<config-dir>/endpoints.json`, which the
other commands read, so they work without flags from the same directory.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from serving.cli_up import DEFAULT_CONFIG_DIR, ENDPOINTS_FILE, cmd_up, fail
from serving.client import RestClient, ServerError
from serving.config import ConfigError
from serving.rollout import RollbackError, ServingTarget, rollback

__all__ = ["main"]


def _endpoints(args: argparse.Namespace) -> dict:
    path = Path(args.config_dir) / ENDPOINTS_FILE
    recorded = json.loads(path.read_text()) if path.is_file() else {}
    return {
        "rest_url": args.url or recorded.get("rest_url", "http://127.0.0.1:8501"),
        "grpc_address": getattr(args, "grpc", None) or recorded.get("grpc_address", "127.0.0.1:8500"),
        "config_path": recorded.get("config_path", str(Path(args.config_dir) / "models.config")),
    }


def _client(args: argparse.Namespace):

    return RestClient(_endpoints(args)["rest_url"])


def _call(args: argparse.Namespace, fn) -> int:

    try:
        with _client(args) as client:
            print(json.dumps(fn(client), indent=2))
        return 0
    except ServerError as err:
        return fail(f"HTTP {err.status}: {err.text}")
    except OSError as err:
        return fail(
            f"cannot reach {_endpoints(args)['rest_url']} ({err}); start a server with "
            "`python -m serving up` or pass --url."
        )


def _cmd_status(args: argparse.Namespace) -> int:
    return _call(args, lambda c: c.status(args.name, args.version, args.label))


def _cmd_predict(args: argparse.Namespace) -> int:
    try:
        body = json.loads(args.json)
    except json.JSONDecodeError as err:
        return fail(f"--json is not valid JSON ({err}); pass e.g. '{{\"instances\": [[1.0, 2.0]]}}'.", 2)
    return _call(args, lambda c: c.predict(args.name, body, args.version, args.label, verb=args.verb))


def _cmd_rollback(args: argparse.Namespace) -> int:

    endpoints = _endpoints(args)
    target = ServingTarget(endpoints["rest_url"], Path(endpoints["config_path"]), endpoints["grpc_address"])
    try:
        result = rollback(target, args.name, to_version=args.to, timeout=args.timeout)
    except (RollbackError, ConfigError, ServerError, TimeoutError) as err:
        return fail(str(err))
    print(
        f"Rolled back {result.model_name}: stable {result.from_version} -> {result.to_version}; "
        f"version {result.from_version} unloaded"
    )
    return 0


def _cmd_manifests(args: argparse.Namespace) -> int:
    # Here, not at the top: the manifest builders load the kubernetes client (seconds).
    from serving.manifests import write_manifests

    for path in write_manifests(args.out, args.model_name, image=args.image, replicas=args.replicas):
        print(path)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m serving", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--config-dir",
            default=DEFAULT_CONFIG_DIR,
            help="where `up` wrote the configs and endpoints.json (default: .serving)",
        )
        sub.add_argument("--url", help="REST base URL (default: from endpoints.json, else http://127.0.0.1:8501)")

    up = commands.add_parser("up", help="start TensorFlow Serving (real if on PATH, else embedded)")
    up.add_argument("--model-name", required=True)
    up.add_argument(
        "--base-path",
        required=True,
        help="directory holding <model-name>/<version>/, or the <version>/ folders themselves (TF Serving's "
        "--model_base_path)",
    )
    up.add_argument("--rest-port", type=int, default=8501)
    up.add_argument("--grpc-port", type=int, default=8500)
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument("--config-dir", default=DEFAULT_CONFIG_DIR)
    up.add_argument(
        "--policy",
        choices=["pinned", "latest"],
        default="pinned",
        help="pinned: serve the newest version now, later ones only via deploy (default); "
        "latest: follow the newest version on disk",
    )
    up.add_argument("--fresh", action="store_true", help="regenerate models.config even if it exists")
    up.add_argument("--batching", action="store_true", help="enable server-side batching")
    up.add_argument(
        "--max-batch-size", type=int, default=32, help="the most rows one request may have (TF Serving refuses more)"
    )
    up.add_argument(
        "--max-execution-batch-size",
        type=int,
        default=None,
        help="split requests into batches of at most this many rows (TF Serving's enable_large_batch_splitting)",
    )
    up.add_argument("--batch-timeout-micros", type=int, default=1000)
    up.add_argument("--num-batch-threads", type=int, default=None)
    up.add_argument(
        "--config-poll-seconds",
        type=float,
        default=0.0,
        help="re-read models.config this often (0: only on reload requests)",
    )
    limits = up.add_argument_group("limits (embedded server)")
    limits.add_argument(
        "--request-memory-budget-mb",
        type=float,
        default=None,
        help="largest decoded size of one request's input tensors, checked before decoding "
        "(default: <config-dir>/limits.json written by the Deployer, else 256)",
    )
    limits.add_argument(
        "--max-request-mb",
        type=float,
        default=None,
        help="largest REST body / gRPC message (default: <config-dir>/limits.json written by the Deployer, else 16)",
    )
    limits.add_argument("--max-json-depth", type=int, default=64, help="deepest nesting of a REST body (default: 64)")
    limits.add_argument(
        "--header-timeout-s",
        type=float,
        default=30.0,
        help="close connections that send no complete request head in this time; also the keep-alive "
        "timeout (default: 30)",
    )
    limits.add_argument(
        "--body-timeout-s", type=float, default=60.0, help="answer 408 when a body takes longer (default: 60)"
    )
    limits.add_argument(
        "--rest-api-enable-cors-support",
        action="store_true",
        help="add TF Serving's CORS headers (Access-Control-Allow-Origin: *) to REST answers, for browser clients",
    )
    limits.add_argument(
        "--grpc-socket-path",
        default=None,
        help="also serve gRPC on this UNIX socket, as tensorflow_model_server's --grpc_socket_path",
    )
    limits.add_argument(
        "--grpc-channel-arguments",
        default="",
        help="gRPC server arguments, key=value,... (e.g. grpc.max_connection_age_ms=2000), as "
        "tensorflow_model_server's --grpc_channel_arguments",
    )
    limits.add_argument(
        "--enable-grpc-healthcheck-service",
        action="store_true",
        help="serve the standard gRPC health service (grpc.health.v1), as tensorflow_model_server's flag",
    )
    limits.add_argument(
        "--rest-api-timeout-in-ms",
        type=int,
        default=30_000,
        help="answer a REST predict/classify/regress with 504 DEADLINE_EXCEEDED after this long, as "
        "tensorflow_model_server's --rest_api_timeout_in_ms (default: 30000; 0: no limit)",
    )
    limits.add_argument(
        "--allow-config-reload",
        action="store_true",
        help="serve gRPC HandleReloadConfigRequest (off by default: any local process could repoint models)",
    )
    limits.add_argument(
        "--allowed-model-roots",
        nargs="+",
        default=[],
        metavar="DIR",
        help="with --allow-config-reload: reloaded base paths must lie under these (default: the served base paths)",
    )
    which = up.add_mutually_exclusive_group()
    which.add_argument("--real", action="store_true", help="require tensorflow_model_server")
    which.add_argument("--embedded", action="store_true", help="use the embedded server")
    up.set_defaults(run=cmd_up)

    status = commands.add_parser("status", help="GET /v1/models/<name>")
    status.add_argument("name")
    status.add_argument("--version", type=int)
    status.add_argument("--label", help="sent in the URL; the server lists every version (as TF Serving)")
    common(status)
    status.set_defaults(run=_cmd_status)

    predict = commands.add_parser("predict", help="POST /v1/models/<name>:predict")
    predict.add_argument("name")
    predict.add_argument("--json", required=True, help="request body, e.g. '{\"instances\": [[1.0]]}'")
    predict.add_argument("--version", type=int)
    predict.add_argument("--label")
    predict.add_argument("--verb", choices=["predict", "classify", "regress"], default="predict")
    common(predict)
    predict.set_defaults(run=_cmd_predict)

    back = commands.add_parser("rollback", help="move 'stable' to the previous version, unload the current one")
    back.add_argument("name")
    back.add_argument("--to", type=int, help="version to return to (default: the one below stable)")
    back.add_argument("--grpc", help="gRPC address for HandleReloadConfigRequest")
    back.add_argument("--timeout", type=float, default=120.0)
    common(back)
    back.set_defaults(run=_cmd_rollback)

    manifests = commands.add_parser("manifests", help="write docker-compose, Kubernetes and Grafana files")
    manifests.add_argument("--model-name", required=True)
    manifests.add_argument("--out", required=True)
    manifests.add_argument("--image", default="tensorflow/serving:2.16.1")
    manifests.add_argument("--replicas", type=int, default=2)
    manifests.set_defaults(run=_cmd_manifests)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if getattr(args, "version", None) is not None and getattr(args, "label", None):
        return fail("pass --version or --label, not both", 2)
    return args.run(args)
