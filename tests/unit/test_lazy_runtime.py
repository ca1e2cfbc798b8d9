"""LazyRuntime: one load shared by concurrent callers, a background warm-up, failures kept."""

from __future__ import annotations

import threading

import pytest

from swarmmem.adapters.models._lazy import LazyRuntime


class Loader:
    """A load that blocks until released and counts its calls."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail = fail

    def __call__(self) -> object:
        self.calls += 1
        self.started.set()
        assert self.release.wait(10)
        if self.fail:
            raise OSError("broken file")
        return object()


def _lazy(loader: Loader) -> LazyRuntime[object]:
    return LazyRuntime(loader, lambda: None, lambda why: RuntimeError(why))


def test_warm_up_loads_once_in_the_background_and_get_waits_for_it() -> None:
    """warm_up returns at once; get() during the load waits and gets the same runtime."""
    loader = Loader()
    lazy = _lazy(loader)
    lazy.warm_up()
    assert loader.started.wait(10)
    assert lazy.loaded is False
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(lazy.get()))
    waiter.start()
    lazy.warm_up()  # a second warm-up starts nothing new
    loader.release.set()
    waiter.join(10)
    assert lazy.loaded is True
    assert got == [lazy.get()]
    assert loader.calls == 1


def test_a_failed_warm_up_is_raised_by_get_and_never_retried() -> None:
    """The background failure is kept: get() raises it, the load is not tried again."""
    loader = Loader(fail=True)
    loader.release.set()
    lazy = _lazy(loader)
    lazy.warm_up()
    assert lazy._warming is not None
    lazy._warming.join(10)
    with pytest.raises(RuntimeError, match="broken file"):
        lazy.get()
    assert lazy.available is False
    assert loader.calls == 1


def test_warm_up_of_a_missing_runtime_loads_nothing() -> None:
    """A runtime whose dependency is missing never calls load, warm-up or not."""
    loader = Loader()
    lazy: LazyRuntime[object] = LazyRuntime(loader, lambda: "no model", RuntimeError)
    lazy.warm_up()
    assert lazy._warming is not None
    lazy._warming.join(10)
    with pytest.raises(RuntimeError, match="no model"):
        lazy.get()
    assert loader.calls == 0
