"""The `ui` web app: a runs table, a page per run, its lineage and slices, a compare page and the run reports.

Bound to 127.0.0.1 only, and answers only requests for its loopback names, on
any port (`serving.server.guards.host_check`, the model server's rule: a page on another
site cannot reach it by DNS rebinding). Every value from the data goes through jinja2 with
autoescape; the pages load nothing from the network (no CDN, styles inline),
and a Content-Security-Policy header keeps it that way. An unknown run or path
is a 404 page, any other error a 500 page with one line: never a traceback.
Only regular files under the root are served.
"""

from __future__ import annotations

import asyncio
import logging
import os
import urllib.parse

import jinja2
from aiohttp import web

from pipelines.history.mlmd_runs import RootError
from pipelines.history.select import RunNotFound
from pipelines.outcome.metadata_file import MetadataUnreadable
from pipelines.report.render import TEMPLATE_FILTERS
from pipelines.report.render import TEMPLATES as REPORT_TEMPLATES
from pipelines.ui.pages import RunSource
from serving.server.guards.host_check import host_allowed
from serving.server.observability.http_log import ConnectionErrorLog

__all__ = ["make_app", "serve", "resolve_file"]

_CSP = "default-src 'self' 'unsafe-inline' data:; connect-src 'self'; form-action 'self'"
_SOURCE = web.AppKey("source", RunSource)
_TEMPLATES = web.AppKey("templates", jinja2.Environment)


def _templates() -> jinja2.Environment:
    """The UI's templates, then the report's (the slices page includes the report's own)."""
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader([own, REPORT_TEMPLATES]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters.update(TEMPLATE_FILTERS)
    environment.filters["q"] = lambda value: urllib.parse.quote(str(value), safe="")
    return environment


def resolve_file(root: str, relative: str) -> str | None:
    """The real path of `relative` under `root` when it is a regular file there; None otherwise.

    Args:
        root: the folder served.
        relative: the path from the URL, already percent-decoded.

    Returns:
        The file's real path (links resolved) inside `root`, or None for anything outside it, missing or not a file.
    """
    base = os.path.realpath(root)
    if "\x00" in relative:
        return None
    path = os.path.realpath(os.path.join(base, relative.lstrip("/")))
    if os.path.commonpath([base, path]) != base or not os.path.isfile(path):
        return None
    return path


def _render(request: web.Request, template: str, status: int = 200, **values) -> web.Response:
    values.setdefault("root", request.app[_SOURCE].root)
    html = request.app[_TEMPLATES].get_template(template).render(**values)
    return web.Response(text=html, status=status, content_type="text/html")


async def _page(request: web.Request, template: str, gather, *args) -> web.Response:
    """Renders `template` with `gather(*args)`, read in a worker thread (ML Metadata and TFMA block)."""
    try:
        values = await asyncio.to_thread(gather, *args)
    except RunNotFound as error:
        return _render(request, "error.html", 404, title="Run not found", message=error.args[0])
    return _render(request, template, **values)


async def _runs(request: web.Request) -> web.Response:
    return await _page(request, "runs.html", request.app[_SOURCE].runs_page)


async def _run(request: web.Request) -> web.Response:
    return await _page(request, "run.html", request.app[_SOURCE].run_page, request.match_info["run"])


async def _lineage(request: web.Request) -> web.Response:
    return await _page(request, "lineage.html", request.app[_SOURCE].lineage_page, request.match_info["run"])


async def _slices(request: web.Request) -> web.Response:
    return await _page(request, "slices.html", request.app[_SOURCE].slices_page, request.match_info["run"])


async def _compare(request: web.Request) -> web.Response:
    a, b = request.query.get("a", "-2"), request.query.get("b", "-1")
    return await _page(request, "compare.html", request.app[_SOURCE].compare_page, a, b)


async def _file(request: web.Request) -> web.StreamResponse:
    path = resolve_file(request.app[_SOURCE].root, request.match_info["path"])
    if path is None:
        raise web.HTTPNotFound()
    return web.FileResponse(path)


@web.middleware
async def _errors(request: web.Request, handler) -> web.StreamResponse:
    """404 and 500 as pages with one line; the traceback goes to the server's log, not the browser."""
    try:
        response = await handler(request)
    except web.HTTPNotFound:
        response = _render(
            request, "error.html", 404, title="Not found", message=f"Nothing at {request.path}. Start from the runs."
        )
    except web.HTTPException:
        raise
    except (RootError, MetadataUnreadable, OSError) as error:
        response = _render(request, "error.html", 500, title="Cannot read the runs", message=str(error))
    except Exception as error:  # noqa: BLE001 - one line in the page, the traceback in the log
        logging.exception("ui: %s failed", request.path)
        message = f"{type(error).__name__}: {error}. The traceback is in the server's output."
        response = _render(request, "error.html", 500, title="Error", message=message)
    response.headers["Content-Security-Policy"] = _CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _host_guard(bound: str):
    """A middleware answering 403 with one line to a request whose `Host` is not one of `bound`'s names."""

    @web.middleware
    async def guard(request: web.Request, handler) -> web.StreamResponse:
        header = request.headers.get("Host")
        if host_allowed(header, bound):
            return await handler(request)
        return web.Response(
            status=403,
            text=(
                f"Refused: this server answers its own loopback names only. Expected Host localhost, 127.0.0.1 or "
                f"[::1]. Received: Host {(header or '')[:100]!r}. Open http://127.0.0.1:<port>/ as the ui printed it.\n"
            ),
            headers={"X-Content-Type-Options": "nosniff"},
        )

    return guard


def _server_log() -> ConnectionErrorLog:
    """aiohttp's `logger`: a malformed request is one `ui: ...` line on stderr, never a traceback."""
    log = logging.getLogger("pipelines.ui.server")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("ui: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return ConnectionErrorLog(log)


def make_app(root: str, bound: str = "127.0.0.1") -> web.Application:
    """The web app for the runs of `root`.

    Args:
        root: a pipeline root holding `metadata.sqlite`.
        bound: the address it is served on; on loopback, requests naming another host are refused (403).

    Returns:
        An aiohttp application.
    """
    app = web.Application(middlewares=[_host_guard(bound), _errors])
    app[_SOURCE] = RunSource(root)
    app[_TEMPLATES] = _templates()
    app.router.add_get("/", _runs)
    app.router.add_get("/runs/{run}", _run)
    app.router.add_get("/runs/{run}/lineage", _lineage)
    app.router.add_get("/runs/{run}/slices", _slices)
    app.router.add_get("/compare", _compare)
    app.router.add_get("/files/{path:.*}", _file)
    return app


async def _serve(root: str, port: int) -> None:
    runner = web.AppRunner(make_app(root, "127.0.0.1"), access_log=None, logger=_server_log())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    host, bound = runner.addresses[0][:2]
    print(f"Runs of {root}: http://{host}:{bound}/ (Ctrl-C to stop)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def serve(root: str, port: int) -> None:
    """Serves the UI for `root` on 127.0.0.1:`port` until interrupted (Ctrl-C).

    Args:
        root: the pipeline root.
        port: the port; 0 picks a free one (the printed line names it).

    Raises:
        OSError: the port is taken.
    """
    try:
        asyncio.run(_serve(root, port))
    except KeyboardInterrupt:
        print("Stopped.", flush=True)
