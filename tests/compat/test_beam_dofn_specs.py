"""Beam's DoFn state-and-timer check, remembered per class (compat/beam/dofn_specs.py)."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.coders import VarIntCoder
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms import userstate
from apache_beam.transforms.core import CallableWrapperDoFn

from compat.beam import dofn_specs as beam_dofn_specs
from pipelines.beam import overheads as beam_overheads

COUNT = userstate.ReadModifyWriteStateSpec("count", VarIntCoder())
TIMER = userstate.TimerSpec("flush", userstate.TimeDomain.WATERMARK)


class Plain(beam.DoFn):
    def process(self, element):
        yield element


class Stateful(beam.DoFn):
    def process(self, element, count=beam.DoFn.StateParam(COUNT), flush=beam.DoFn.TimerParam(TIMER)):
        yield element

    @userstate.on_timer(TIMER)
    def on_flush(self):
        return []


class Duplicated(beam.DoFn):
    def process(self, element, a=beam.DoFn.StateParam(COUNT), b=beam.DoFn.StateParam(COUNT)):
        yield element


@pytest.fixture(scope="module")
def beams_own():
    own = userstate.get_dofn_specs if not beam_dofn_specs._installed else beam_dofn_specs._beams_own
    assert beam_overheads.install()["DoFn specs"] is True
    return own


@pytest.mark.parametrize(
    "make",
    [Plain, Stateful, lambda: CallableWrapperDoFn(lambda x: x)],
    ids=["Plain", "Stateful", "CallableWrapperDoFn"],
)
def test_answers_equal_beams_own_first_and_again(beams_own, make):
    expected = beams_own(make())
    assert beam_dofn_specs.dofn_specs(make()) == expected
    again = beam_dofn_specs.dofn_specs(make())
    assert again == expected
    again[0].add("changed by a caller")  # callers get their own sets, as from Beam
    assert beam_dofn_specs.dofn_specs(make()) == expected


def test_it_is_kept_per_class_and_a_stateful_one_is_found(beams_own):
    assert beam_dofn_specs.dofn_specs(Stateful()) == ({COUNT}, {TIMER})
    assert Stateful in beam_dofn_specs._known
    assert CallableWrapperDoFn not in beam_dofn_specs._known  # it inspects its callable per instance
    assert userstate.is_stateful_dofn(Stateful()) and not userstate.is_stateful_dofn(Plain())


def test_a_method_replaced_on_the_instance_is_seen(beams_own):
    dofn = Plain()
    dofn.process = Stateful.process.__get__(dofn)
    assert beam_dofn_specs.dofn_specs(dofn) == ({COUNT}, {TIMER})


def test_a_dofn_beam_rejects_is_rejected_every_time(beams_own):
    for _ in range(2):
        with pytest.raises(ValueError, match="duplicate"):
            beam_dofn_specs.dofn_specs(Duplicated())
    assert Duplicated not in beam_dofn_specs._known


def test_a_stateful_pipeline_runs_with_it_installed(beams_own):
    class CountPerKey(beam.DoFn):
        def process(self, element, count=beam.DoFn.StateParam(COUNT)):
            seen = (count.read() or 0) + 1
            count.write(seen)
            yield element[0], seen

    with beam.Pipeline("FnApiRunner") as pipeline:
        counted = pipeline | beam.Create([("a", 1), ("a", 2), ("b", 3)]) | beam.ParDo(CountPerKey())
        assert_that(counted | beam.Filter(lambda kv: kv[1] == 2) | beam.Keys(), equal_to(["a"]))


def test_its_shape_check_passes_on_the_pinned_beam():
    assert beam_dofn_specs.shape_problem() is None


def test_a_differing_beam_keeps_its_own_function_with_one_log_line(monkeypatch, caplog):
    import compat

    monkeypatch.setattr(beam_dofn_specs, "_installed", False)
    monkeypatch.setattr(compat, "_warned", set())

    def get_dofn_specs(dofn, extra):  # a Beam whose function changed its parameters
        raise AssertionError("not called")

    monkeypatch.setattr(userstate, "get_dofn_specs", get_dofn_specs)
    caplog.set_level("WARNING", logger="compat")
    assert beam_dofn_specs.install() is False
    assert userstate.get_dofn_specs is get_dofn_specs
    assert [r.getMessage() for r in caplog.records] == [
        "compat: compat.beam.dofn_specs falls back to the library's own behaviour: "
        "userstate.get_dofn_specs takes ['dofn', 'extra'], expected ['dofn']"
    ]
