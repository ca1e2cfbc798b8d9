"""A thread-safe, load-once holder for model runtimes (ONNX sessions and tokenizers)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


class LazyRuntime(Generic[T]):
    """Loads a runtime on first use, once, and remembers a failure for good.

    ``missing()`` names a missing dependency or file without loading anything (``None`` when
    all is present); ``load()`` builds the runtime; ``error(reason)`` makes the exception to
    raise. Concurrent first calls share one load.
    """

    def __init__(
        self,
        load: Callable[[], T],
        missing: Callable[[], str | None],
        error: Callable[[str], Exception],
    ) -> None:
        self._load = load
        self._missing = missing
        self._error = error
        self._lock = threading.Lock()
        self._runtime: T | None = None
        self._failure: str | None = None
        self._warming: threading.Thread | None = None
        self._warming_lock = threading.Lock()

    @property
    def available(self) -> bool:
        """False when a dependency or file is missing or a load failed; never loads."""
        if self._runtime is not None:
            return True
        return self._failure is None and self._missing() is None

    @property
    def loaded(self) -> bool:
        """True once the runtime is loaded."""
        return self._runtime is not None

    @property
    def unavailable_reason(self) -> str | None:
        """Why the runtime cannot load, when known without loading."""
        if self._runtime is not None:
            return None
        return self._failure if self._failure is not None else self._missing()

    def get(self) -> T:
        """The runtime, loading it on the first call."""
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                if self._failure is None:
                    self._failure = self._missing()
                if self._failure is None:
                    try:
                        self._runtime = self._load()
                    except Exception as exc:  # a broken file or runtime: remember, never retry
                        self._failure = f"loading failed ({type(exc).__name__}: {exc})"
                        raise self._error(self._failure) from exc
                if self._runtime is None:
                    raise self._error(self._failure or "unknown failure")
            return self._runtime

    def warm_up(self) -> None:
        """Start loading on a background thread, once; return at once.

        A later :meth:`get` waits for that load (it holds the same lock) or finds the runtime
        ready; a failure is remembered and raised by :meth:`get` as usual. The thread is not a
        daemon, so the interpreter never exits in the middle of a native load.
        """
        with self._warming_lock:
            if self._runtime is not None or self._warming is not None:
                return
            self._warming = threading.Thread(
                target=self._warm, name="swarmmem-model-load", daemon=False
            )
            self._warming.start()

    def _warm(self) -> None:
        try:
            self.get()
        except Exception:  # kept in self._failure; get() raises it for the caller
            return


class _Status(Protocol):
    @property
    def available(self) -> bool: ...
    @property
    def loaded(self) -> bool: ...
    @property
    def unavailable_reason(self) -> str | None: ...


class LazyModel:
    """Base of the adapters whose runtime loads lazily.

    ``self._lazy`` is their :class:`LazyRuntime`, or the model they wrap; this base supplies
    the diagnostics every such adapter shares from it. None of them loads anything.
    """

    _lazy: _Status

    @property
    def available(self) -> bool:
        """False when a dependency or file is missing or a load failed; never loads."""
        return self._lazy.available

    @property
    def loaded(self) -> bool:
        """True once the runtime (session and tokenizer) is loaded."""
        return self._lazy.loaded

    @property
    def unavailable_reason(self) -> str | None:
        """Why the model cannot run, when known without loading (for diagnostics)."""
        return self._lazy.unavailable_reason

    def warm_up(self) -> None:
        """Start loading the runtime in the background (no-op for wrapped models)."""
        if isinstance(self._lazy, LazyRuntime | LazyModel) and self._lazy.available:
            self._lazy.warm_up()
