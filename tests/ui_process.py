"""`python -m pipelines ui TARGET --port 0` started as a user starts it, for the UI tests."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator

from taxi_fixtures import REPO


@dataclasses.dataclass
class RunningUi:
    """The UI process, the URL and port it printed, and (once stopped) what it printed after the URL."""

    process: subprocess.Popen
    url: str = ""
    port: int = 0
    output: str = ""


@contextlib.contextmanager
def running_ui(target: str) -> Iterator[RunningUi]:
    """Starts the UI on a free port for `target` (a spec or a pipeline root); stops it when the block ends."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines", "ui", target, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env=env,
    )
    ui = RunningUi(process)
    try:
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline, line = time.monotonic() + 120, ""
        while "http://" not in line and time.monotonic() < deadline and process.poll() is None:
            if selector.select(timeout=1):
                line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, f"the ui printed no URL: {line!r}"
        ui.url, ui.port = match.group(0), int(match.group(1))
        yield ui
    finally:
        process.terminate()
        ui.output = process.communicate(timeout=30)[0]
