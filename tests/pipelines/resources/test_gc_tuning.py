"""The garbage-collector settings of a pipeline process (pipelines/resources/gc_tuning.py)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import pytest

from pipelines import cli
from pipelines.resources.gc_tuning import FULL_COLLECTION_EVERY, fewer_full_collections

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_full_collections_are_rarer_inside_and_as_before_after():
    before = gc.get_threshold()
    with fewer_full_collections():
        inside = gc.get_threshold()
    assert inside == (before[0], before[1], max(before[2], FULL_COLLECTION_EVERY))
    assert gc.get_threshold() == before


def test_thresholds_come_back_when_the_block_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_full_collections():
        raise RuntimeError("a failed run")
    assert gc.get_threshold() == before


def test_the_run_command_runs_with_fewer_full_collections(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(cli, "_load", lambda spec, target=None: spec)
    monkeypatch.setattr(cli, "_run_on", lambda resolved, args: seen.append(gc.get_threshold()[2]) or 0)
    assert cli.main(["run", str(tmp_path / "spec.yaml")]) == 0
    assert seen == [max(gc.get_threshold()[2], FULL_COLLECTION_EVERY)]


def test_a_process_exiting_through_it_keeps_its_code_and_flushes_its_log(tmp_path):
    log_file = tmp_path / "run.log"
    script = textwrap.dedent(
        f"""
        import gc, logging, sys
        from pipelines.resources.gc_tuning import skip_collection_at_exit

        handler = logging.FileHandler({str(log_file)!r})
        logging.getLogger().addHandler(handler)
        logging.getLogger().warning("last line of the run")

        class Cycle:
            def __init__(self):
                self.me = self

        kept = [Cycle() for _ in range(1000)]
        code = skip_collection_at_exit(3)
        assert gc.get_freeze_count() > 1000, gc.get_freeze_count()
        sys.exit(code)
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 3, completed.stderr
    assert log_file.read_text().strip() == "last line of the run"
