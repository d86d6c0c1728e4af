"""The compat package's own helpers: shape checks fall back with one log line."""

from __future__ import annotations

import logging

import compat


def test_a_check_that_passes_allows_the_entry():
    assert compat.check_shape("compat.test.ok", lambda: None)


def test_a_differing_or_failing_check_falls_back_with_one_log_line(caplog):
    caplog.set_level(logging.WARNING, logger="compat")
    assert not compat.check_shape("compat.test.moved", lambda: "no attribute `_x`")
    assert not compat.check_shape("compat.test.moved", lambda: "no attribute `_x`")
    assert not compat.check_shape("compat.test.raises", lambda: 1 / 0)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "compat: compat.test.moved falls back to the library's own behaviour: no attribute `_x`",
        "compat: compat.test.raises falls back to the library's own behaviour: ZeroDivisionError: division by zero",
    ]


def test_installed_version_reads_the_distribution():
    assert compat.installed_version("pytest")
    assert compat.installed_version("no-such-distribution-here") == ""
