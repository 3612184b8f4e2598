"""A signal whose exception Python drops still marks the run as interrupted."""

from __future__ import annotations

import os
import signal

import pytest

from rag_system.cli.answer import _Interrupted, _terminate_as_interrupt


class _Swallower:
    """Raises nothing out of `__del__`: Python prints an exception raised there and drops it."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, inside __del__


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_dropped_interrupt_still_sets_the_cancel_flag_with_its_signal() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with _terminate_as_interrupt() as cancel:
        try:
            obj = _Swallower()
            del obj  # the handler's exception is "ignored in __del__", as in a weakref callback
        except _Interrupted:  # pragma: no cover - CPython drops it; either way the flag must be set
            pass
        assert cancel.is_set()
        assert cancel.signal_name == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before  # the previous handler is back


def test_without_a_signal_nothing_is_cancelled() -> None:
    with _terminate_as_interrupt() as cancel:
        assert not cancel.is_set() and cancel.signal_name == ""
