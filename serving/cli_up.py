"""`python -m serving up`: writes the config files, starts the embedded (or the real) server, records its addresses.

The files go into `--config-dir` (default `.serving/`); the addresses go into `<config-dir>/endpoints.json`,
which the other commands of `serving.cli` read, so they work without flags from the same directory.
Request size limits come from the flags, else from `<config-dir>/limits.json` (`serving.deployment_limits`).
"""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
import threading
from pathlib import Path

from serving import config as cfg
from serving import real_server
from serving.atomic import atomic_write_text
from serving.deployment_limits import LIMITS_FILE, MIB, ServerLimits
from serving.errors import message
from serving.rollout import versions_on_disk

__all__ = ["DEFAULT_CONFIG_DIR", "ENDPOINTS_FILE", "cmd_up", "fail", "write_endpoints"]

ENDPOINTS_FILE = "endpoints.json"
DEFAULT_CONFIG_DIR = ".serving"


def fail(text: str, code: int = 1) -> int:
    print(f"error: {text}", file=sys.stderr)
    return code


def write_endpoints(config_dir: Path, **values) -> None:

    atomic_write_text(config_dir / ENDPOINTS_FILE, json.dumps(values, indent=2) + "\n")


def _server_config(args: argparse.Namespace, model_dir: Path, config_dir: Path):

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
    # Here, not at the top: the embedded server loads TensorFlow (seconds), which `up --real` does not need.
    from serving.server.app import DEFAULT_MAX_REQUEST_BYTES
    from serving.server.guards.request_checks import DEFAULT_MEMORY_BUDGET_BYTES

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
    # Here, not at the top: the server's modules load TensorFlow (seconds), which `up --real` does not need.
    from serving.server.lifecycle.versions import versions_on_disk as server_versions

    try:
        return bool(server_versions(str(path)))
    except OSError:  # unreadable
        return False


def cmd_up(args: argparse.Namespace) -> int:

    base = Path(args.base_path).expanduser().resolve()
    model_dir = base / args.model_name
    if not model_dir.is_dir() and _holds_version_folders(base):
        # TF Serving's --model_base_path: the folder of the versions itself.
        print(f"note: {base} holds version folders; serving them as model {args.model_name!r}", flush=True)
        model_dir = base
    if not model_dir.is_dir():
        return fail(
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
        return fail(f"{real_server.BINARY} is not on PATH; install it or drop --real to use the embedded server.", 2)
    config_dir = Path(args.config_dir).resolve()
    batching = (
        cfg.batching_parameters(
            max_batch_size=args.max_batch_size,
            batch_timeout_micros=args.batch_timeout_micros,
            num_batch_threads=args.num_batch_threads,
            max_execution_batch_size=args.max_execution_batch_size,
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
            rest_api_timeout_in_ms=args.rest_api_timeout_in_ms,
            extra=_real_server_flags(args),
        )
        print(f"Starting the real TensorFlow Serving: {' '.join(argv)}", flush=True)
        if args.host == "127.0.0.1":
            print("note: tensorflow_model_server binds all interfaces; --host only applies to the embedded server")
        write_endpoints(
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

    # Here, not at the top: the embedded server loads TensorFlow (seconds), which `up --real` does not need.
    from serving.server import EmbeddedServer
    from serving.server.app import PortInUse

    why = "--embedded" if args.embedded else f"{real_server.BINARY} is not on PATH"
    try:
        sizes = _request_sizes(args, config_dir)
    except ValueError as err:  # an unreadable limits.json, a size flag not above 0
        return fail(str(err), 2)
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
            rest_api_timeout_in_ms=args.rest_api_timeout_in_ms,
            rest_api_enable_cors_support=args.rest_api_enable_cors_support,
            grpc_socket_path=args.grpc_socket_path,
            grpc_channel_arguments=args.grpc_channel_arguments,
            enable_grpc_healthcheck_service=args.enable_grpc_healthcheck_service,
            allow_config_reload=args.allow_config_reload,
            allowed_model_roots=tuple(args.allowed_model_roots),
        )
        server.start()
    except PortInUse as err:
        return fail(str(err), 1)
    except ValueError as err:  # a limit flag out of range
        return fail(str(err), 2)
    write_endpoints(
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


def _real_server_flags(args) -> list[str]:
    """The TF Serving flags `up` passes through to tensorflow_model_server as given."""
    flags = []
    if args.rest_api_enable_cors_support:
        flags.append("--rest_api_enable_cors_support=true")
    if args.grpc_socket_path:
        flags.append(f"--grpc_socket_path={args.grpc_socket_path}")
    if args.grpc_channel_arguments:
        flags.append(f"--grpc_channel_arguments={args.grpc_channel_arguments}")
    if args.enable_grpc_healthcheck_service:
        flags.append("--enable_grpc_healthcheck_service=true")
    return flags
