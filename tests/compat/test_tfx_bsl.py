"""compat.tfx_bsl: the pinned tfx-bsl has what the sourced TFExampleRecord needs; where it differs, TFX's reader."""

from __future__ import annotations

import logging

import compat
from compat import tfx_bsl as compat_tfx_bsl


def test_tfx_bsl_is_the_pinned_version():
    installed = compat.installed_version(compat_tfx_bsl.DISTRIBUTION)
    assert installed == compat_tfx_bsl.PINNED, (
        f"re-check every entry of compat/tfx_bsl.py against tfx-bsl {installed}, then update PINNED"
    )


def test_the_shape_holds_on_the_pinned_tfx_bsl():
    assert compat_tfx_bsl.shape_problem() is None


def test_a_differing_shape_falls_back_to_tfx_s_reader_with_one_log_line(monkeypatch, caplog):
    from tensorflow_metadata.proto.v0 import schema_pb2
    from tfx_bsl.tfxio import tf_example_record

    monkeypatch.setattr(compat, "_warned", set())
    monkeypatch.setattr(tf_example_record.TFExampleRecord, "_ProjectImpl", lambda self, names, extra: None)
    caplog.set_level(logging.WARNING, logger="compat")
    record = tf_example_record.TFExampleRecord("data-*", schema=schema_pb2.Schema())

    assert compat_tfx_bsl.example_record_schema(record) is None
    assert compat_tfx_bsl.example_record_with_source("data-*", schema_pb2.Schema(), [], lambda *_: None) is None
    assert [r.getMessage() for r in caplog.records] == [
        "compat: compat.tfx_bsl.example_record falls back to the library's own behaviour: "
        "TFExampleRecord._ProjectImpl takes ['self', 'names', 'extra'], expected ['self', 'tensor_names']"
    ]
