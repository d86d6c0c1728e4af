"""`run --target beam`: TFX's BeamDagRunner runs the taxi sample end to end, the components' Beam
work on the DirectRunner's FnApiRunner with two worker processes; asserted from ML Metadata, the pushed
model and the log (no Prism download attempt, no package built), and from what it prints: the local
target's progress lines and summary. One run for the whole module."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.outcome import fingerprint
from pipelines.targets.mlmd_states import states_after

pytestmark = pytest.mark.e2e

MULTI_PROCESSING = ["--runner=DirectRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
COMPONENTS = [
    "ExampleGen",
    "StatisticsGen",
    "SchemaGen",
    "ExampleValidator",
    "DataGate",
    "Transform",
    "Trainer",
    "BaselineResolver",
    "Evaluator",
    "Pusher",
]
# A spec hook beside the spec file: every phase it sees, one JSON line each.
EVENTS_HOOK = textwrap.dedent(
    """
    import json


    class EventsHook:
        def __init__(self, path):
            self.path = path

        def _write(self, phase, **kwargs):
            kwargs.pop("error", None)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"phase": phase, **kwargs}) + "\\n")

        def before_run(self, **kwargs):
            self._write("before_run", **kwargs)

        def before_component(self, **kwargs):
            self._write("before_component", **kwargs)

        def after_component(self, **kwargs):
            self._write("after_component", **kwargs)

        def after_run(self, **kwargs):
            self._write("after_run", **kwargs)
    """
)


@pytest.fixture(scope="module")
def beam_run(taxi_sample_csv, tmp_path_factory):
    """(completed CLI process, pipeline root, events file) of one beam-target run."""
    folder = tmp_path_factory.mktemp("beam_target")
    (folder / "events_hook.py").write_text(EVENTS_HOOK, encoding="utf-8")
    events = folder / "events.jsonl"
    spec = taxi_spec(
        taxi_sample_csv,
        str(folder / "run"),
        orchestrator={"beam_args": MULTI_PROCESSING, "components": {"Trainer": {"gpus": 1, "retries": 1}}},
        hooks=[{"uses": "events_hook:EventsHook", "parameters": {"path": str(events)}}],
    )
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(folder / "spec.yaml", spec)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    completed = subprocess.run(
        [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file, "--target", "beam"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed, folder / "run", events, spec_file


def test_beam_target_runs_the_pipeline_with_direct_runner_multi_processing(beam_run):
    completed, root, _, _ = beam_run
    fn_api = ["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner", *MULTI_PROCESSING[1:]]
    setup_file = "--setup_file=" + os.path.join(REPO, "setup.py")
    assert "on BeamDagRunner, components' Beam args: " + " ".join([*fn_api, setup_file]) in completed.stdout
    assert (
        "warning: orchestrator.components.Trainer: the beam target cannot honour gpus=1, retries=1" in completed.stderr
    )
    states = states_after(str(root / "metadata.sqlite"), 0)
    assert {c: states.get(c) for c in COMPONENTS} == {c: "COMPLETE" for c in COMPONENTS}
    assert os.listdir(root / "serving" / "chicago_taxi")
    # Beam's worker processes started: the SDK harness runs in subprocesses only in multi_processing mode.
    log = open(next((root / "logs").glob("beam-*.log")), encoding="utf-8").read()
    assert "sdk_worker_main" in log or "SubprocessSdkWorker" in log or "multi_processing" in log
    assert "PrismRunner" not in log and "prism" not in log.lower()
    assert "sdist" not in log and "tfx_ephemeral" not in log


def test_each_component_gets_the_local_targets_progress_line(beam_run):
    stdout = beam_run[0].stdout
    lines = re.findall(r"^\[(\d+)/(\d+)\] (\S+)\s+(\S+)\s+([\d.]+)s$", stdout, re.MULTILINE)

    assert sorted(name for _, _, name, _, _ in lines) == sorted(COMPONENTS), stdout
    assert [int(index) for index, *_ in lines] == list(range(1, len(COMPONENTS) + 1))
    assert {total for _, total, *_ in lines} == {str(len(COMPONENTS))}
    assert {status for *_, status, _ in lines} == {"executed"}
    # Topological order: each line comes after the components it consumes.
    order = [name for _, _, name, _, _ in lines]
    for upstream, downstream in [("ExampleGen", "StatisticsGen"), ("Transform", "Trainer"), ("Evaluator", "Pusher")]:
        assert order.index(upstream) < order.index(downstream)
    # The Trainer's memory estimate reaches the console as on the local target, before the Trainer's line.
    estimate = stdout.index("Trainer: about ")
    assert "of accelerator memory per step at batch" in stdout[estimate:] and estimate < stdout.index("] Trainer ")


def test_the_summary_block_follows_the_progress_lines(beam_run):
    stdout, root = beam_run[0].stdout, beam_run[1]
    summary = stdout[stdout.index("[10/10]") :]
    versions = os.listdir(root / "serving" / "chicago_taxi")

    assert re.search(r"^Model: BLESSED \(all thresholds met\)$", summary, re.MULTILINE), stdout
    assert re.search(r"^Metrics: auc=0\.\d+, binary_accuracy=0\.\d+$", summary, re.MULTILINE)
    assert re.search(r"^Training: 50 steps in [\d.]+s", summary, re.MULTILINE)
    assert f"Pushed: {root / 'serving' / 'chicago_taxi' / versions[0]}\n" in summary
    report = re.search(r"^Report: (\S+\.html)$", summary, re.MULTILINE)
    assert report and os.path.isfile(report.group(1))
    took = re.search(r"^Took ([\d.]+)s\. Full log: (\S+)$", summary, re.MULTILINE)
    assert took and os.path.basename(took.group(2)).startswith("beam-") and os.path.isfile(took.group(2))


def test_spec_hooks_see_every_component_of_the_run(beam_run):
    events = [json.loads(line) for line in beam_run[2].read_text(encoding="utf-8").splitlines()]

    assert events[0]["phase"] == "before_run" and events[0]["pipeline_name"] == "chicago_taxi"
    assert events[-1]["phase"] == "after_run" and events[-1]["status"] == "succeeded"
    assert events[-1]["run_id"] == events[0]["run_id"]
    finished = {e["component_id"]: e for e in events if e["phase"] == "after_component"}
    started = [e["component_id"] for e in events if e["phase"] == "before_component"]
    assert sorted(started) == sorted(finished) == sorted(COMPONENTS)
    assert all(isinstance(e["execution_id"], int) and e["seconds"] >= 0 for e in finished.values())


def test_the_run_leaves_the_local_targets_records(beam_run, monkeypatch):
    _, root, events, spec_file = beam_run
    monkeypatch.syspath_prepend(os.path.dirname(spec_file))  # the spec's hook module, as the CLI finds it
    resolved = load_spec(spec_file)
    record = fingerprint.read_record(resolved)
    run_id = json.loads(events.read_text(encoding="utf-8").splitlines()[0])["run_id"]

    assert record is not None and record.run_id == run_id
    assert re.fullmatch(r"[0-9a-f]{64}", record.fingerprint)
    # What makes an unchanged rerun a no-op: every output still there, no execution since the record.
    assert fingerprint.is_up_to_date(resolved, record, record.fingerprint)
    assert record.summary["blessed"] is True and record.summary["pushed_path"] in record.outputs
    assert os.path.isfile(root / "runs" / f"{run_id}.json")
