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
import gc
import json
import signal
import sys
import threading
from pathlib import Path

__all__ = ["main"]

ENDPOINTS_FILE = "endpoints.json"
DEFAULT_CONFIG_DIR = ".serving"


def _fail(text: str, code: int = 1) -> int:
    print(f"error: {text}", file=sys.stderr)
    return code


def _endpoints(args: argparse.Namespace) -> dict:
    path = Path(args.config_dir) / ENDPOINTS_FILE
    recorded = json.loads(path.read_text()) if path.is_file() else {}
    return {
        "rest_url": args.url or recorded.get("rest_url", "http://127.0.0.1:8501"),
        "grpc_address": getattr(args, "grpc", None) or recorded.get("grpc_address", "127.0.0.1:8500"),
        "config_path": recorded.get("config_path", str(Path(args.config_dir) / "models.config")),
    }


def _write_endpoints(config_dir: Path, **values) -> None:
    from serving.atomic import atomic_write_text

    atomic_write_text(config_dir / ENDPOINTS_FILE, json.dumps(values, indent=2) + "\n")


def _server_config(args: argparse.Namespace, model_dir: Path, config_dir: Path):
    from serving import config as cfg
    from serving.rollout import versions_on_disk

    existing = config_dir / cfg.MODEL_CONFIG_FILE
    if existing.is_file() and not args.fresh:
        config = cfg.read_text_proto(existing, cfg.ModelServerConfig)
        try:
            cfg.find_model(config, args.model_name)
            print(f"Reusing {existing} (pass --fresh to regenerate it)")
            return config
        except cfg.ConfigError:
            pass
    else:
        config = cfg.ModelServerConfig()
    versions = versions_on_disk(model_dir)
    if args.policy == "latest" or not versions:
        model = cfg.model_config(args.model_name, model_dir, policy=cfg.latest_policy(1))
    else:
        model = cfg.model_config(
            args.model_name,
            model_dir,
            policy=cfg.specific_policy([versions[-1]]),
            labels={cfg.STABLE_LABEL: versions[-1]},
        )
    config.model_config_list.config.append(model)
    return config


def _request_sizes(args: argparse.Namespace, config_dir: Path) -> dict[str, int]:
    """The request size and memory budget: the flags, else `<config-dir>/limits.json`, else the defaults.

    Raises:
        ValueError: limits.json cannot be read, or a flag is not above 0.
    """
    from serving.errors import message
    from serving.request_limits import LIMITS_FILE, MIB, ServerLimits
    from serving.server.app import DEFAULT_MAX_REQUEST_BYTES
    from serving.server.limits import DEFAULT_MEMORY_BUDGET_BYTES

    recorded = ServerLimits.read(config_dir) or ServerLimits(DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MEMORY_BUDGET_BYTES)
    sizes = recorded.server_options()
    if (config_dir / LIMITS_FILE).is_file():
        print(f"Request limits from {config_dir / LIMITS_FILE} (flags override them)")
    for flag, key in (
        ("max_request_mb", "max_request_bytes"),
        ("request_memory_budget_mb", "request_memory_budget_bytes"),
    ):
        value = getattr(args, flag)
        if value is None:
            continue
        if not value > 0:
            raise ValueError(
                message(
                    f"Invalid --{flag.replace('_', '-')}",
                    expected="a number of MiB above 0",
                    received=f"--{flag.replace('_', '-')} {value}",
                    fix="Pass a positive size, or leave the flag out for the default.",
                )
            )
        sizes[key] = int(value * MIB)
    return sizes


def _holds_version_folders(path: Path) -> bool:
    """Whether `path` has a version folder, by the rule the server itself loads versions with."""
    from serving.server.manager import versions_on_disk

    try:
        return bool(versions_on_disk(str(path)))
    except OSError:  # unreadable
        return False


def _cmd_up(args: argparse.Namespace) -> int:
    from serving import config as cfg
    from serving import real_server
    from serving.errors import message

    base = Path(args.base_path).expanduser().resolve()
    model_dir = base / args.model_name
    if not model_dir.is_dir() and _holds_version_folders(base):
        # TF Serving's --model_base_path: the folder of the versions itself.
        print(f"note: {base} holds version folders; serving them as model {args.model_name!r}", flush=True)
        model_dir = base
    if not model_dir.is_dir():
        return _fail(
            message(
                f"Model directory {model_dir} does not exist",
                expected="--base-path to hold <model-name>/<version>/saved_model.pb, or <version>/saved_model.pb",
                received=f"--base-path {args.base_path} --model-name {args.model_name}",
                fix="Point --base-path at the directory the Pusher writes to.",
            ),
            2,
        )
    binary = real_server.find_binary()
    if args.real and binary is None:
        return _fail(f"{real_server.BINARY} is not on PATH; install it or drop --real to use the embedded server.", 2)
    config_dir = Path(args.config_dir).resolve()
    batching = (
        cfg.batching_parameters(
            max_batch_size=args.max_batch_size,
            batch_timeout_micros=args.batch_timeout_micros,
            num_batch_threads=args.num_batch_threads,
        )
        if args.batching
        else None
    )
    files = cfg.write_server_files(config_dir, _server_config(args, model_dir, config_dir), batching=batching)
    if batching is None and (config_dir / cfg.BATCHING_FILE).exists():
        (config_dir / cfg.BATCHING_FILE).unlink()
    if binary and not args.embedded:
        argv = real_server.command(
            binary,
            files,
            rest_port=args.rest_port,
            grpc_port=args.grpc_port,
            model_config_file_poll_wait_seconds=int(args.config_poll_seconds),
        )
        print(f"Starting the real TensorFlow Serving: {' '.join(argv)}", flush=True)
        if args.host == "127.0.0.1":
            print("note: tensorflow_model_server binds all interfaces; --host only applies to the embedded server")
        _write_endpoints(
            config_dir,
            server=binary,
            rest_url=f"http://127.0.0.1:{args.rest_port}",
            grpc_address=f"127.0.0.1:{args.grpc_port}",
            config_path=str(files.model_config),
        )
        process = real_server.start(argv)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: process.terminate())
        return process.wait()

    from serving.server import EmbeddedServer
    from serving.server.app import PortInUse

    why = "--embedded" if args.embedded else f"{real_server.BINARY} is not on PATH"
    try:
        sizes = _request_sizes(args, config_dir)
    except ValueError as err:  # an unreadable limits.json, a size flag not above 0
        return _fail(str(err), 2)
    print(f"Starting the embedded server ({why})", flush=True)
    # What is imported by now (TensorFlow: ~420k objects the collector tracks) lives as long as the
    # process: moved out of the collector's generations, so no full collection walks it again.
    gc.freeze()

    try:
        server = EmbeddedServer.from_files(
            files,
            host=args.host,
            rest_port=args.rest_port,
            grpc_port=args.grpc_port,
            model_config_file_poll_wait_seconds=args.config_poll_seconds,
            allow_version_labels_for_unavailable_models=True,
            **sizes,
            max_json_depth=args.max_json_depth,
            header_timeout_s=args.header_timeout_s,
            body_timeout_s=args.body_timeout_s,
            allow_config_reload=args.allow_config_reload,
            allowed_model_roots=tuple(args.allowed_model_roots),
        )
        server.start()
    except PortInUse as err:
        return _fail(str(err), 1)
    except ValueError as err:  # a limit flag out of range
        return _fail(str(err), 2)
    _write_endpoints(
        config_dir,
        server="embedded",
        rest_url=server.rest_url,
        grpc_address=server.grpc_address,
        config_path=str(files.model_config),
    )
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: threading.Thread(target=server.stop).start())
    print(
        f"Serving {args.model_name}: REST {server.rest_url} gRPC {server.grpc_address} "
        f"metrics {server.rest_url}/monitoring/prometheus/metrics",
        flush=True,
    )
    server.wait()
    return 0


def _client(args: argparse.Namespace):
    from serving.client import RestClient

    return RestClient(_endpoints(args)["rest_url"])


def _call(args: argparse.Namespace, fn) -> int:
    from serving.client import ServerError

    try:
        with _client(args) as client:
            print(json.dumps(fn(client), indent=2))
        return 0
    except ServerError as err:
        return _fail(f"HTTP {err.status}: {err.text}")
    except OSError as err:
        return _fail(
            f"cannot reach {_endpoints(args)['rest_url']} ({err}); start a server with "
            "`python -m serving up` or pass --url."
        )


def _cmd_status(args: argparse.Namespace) -> int:
    return _call(args, lambda c: c.status(args.name, args.version, args.label))


def _cmd_predict(args: argparse.Namespace) -> int:
    try:
        body = json.loads(args.json)
    except json.JSONDecodeError as err:
        return _fail(f"--json is not valid JSON ({err}); pass e.g. '{{\"instances\": [[1.0, 2.0]]}}'.", 2)
    return _call(args, lambda c: c.predict(args.name, body, args.version, args.label, verb=args.verb))


def _cmd_rollback(args: argparse.Namespace) -> int:
    from serving.client import ServerError
    from serving.config import ConfigError
    from serving.rollout import RollbackError, ServingTarget, rollback

    endpoints = _endpoints(args)
    target = ServingTarget(endpoints["rest_url"], Path(endpoints["config_path"]), endpoints["grpc_address"])
    try:
        result = rollback(target, args.name, to_version=args.to, timeout=args.timeout)
    except (RollbackError, ConfigError, ServerError, TimeoutError) as err:
        return _fail(str(err))
    print(
        f"Rolled back {result.model_name}: stable {result.from_version} -> {result.to_version}; "
        f"version {result.from_version} unloaded"
    )
    return 0


def _cmd_manifests(args: argparse.Namespace) -> int:
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
    up.add_argument("--max-batch-size", type=int, default=32)
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
    up.set_defaults(run=_cmd_up)

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
        return _fail("pass --version or --label, not both", 2)
    return args.run(args)
