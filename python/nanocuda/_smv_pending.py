"""StridedMemoryView's unread view: what from_dlpack(obj, -1) returns before anything is read."""

from __future__ import annotations

from typing import Any


def subclass(view: type) -> type:
    """The unread subclass of `view` (StridedMemoryView): it holds the object in _pending, and
    reading any field reads the object and turns the view into a plain `view`. A subclass,
    rather than a __getattr__ hook on `view`, keeps Python's fast slot reads and method calls
    on both classes (the hook made every attribute read and method call pay for it)."""

    class _PendingView(view):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def _read_pending(self) -> None:
            obj = self._pending
            self.__class__ = view
            try:
                self._fill(obj, -1, "StridedMemoryView.from_dlpack", cai=False)
            except BaseException:
                self.__class__ = _PendingView  # still unread: the next use tries again
                raise

        def __reduce_ex__(self, protocol: Any) -> Any:  # copy/pickle see a read view
            self._read_pending()
            return self.__reduce_ex__(protocol)

    def field(name: str) -> property:
        def get(self: Any) -> Any:
            self._read_pending()
            return getattr(self, name)

        def set_(self: Any, value: Any) -> None:
            self._read_pending()
            setattr(self, name, value)

        return property(get, set_, doc=view.__slots__[name] or None)

    for name in view.__slots__:
        if name != "_pending":
            setattr(_PendingView, name, field(name))
    _PendingView.__name__ = _PendingView.__qualname__ = view.__name__  # as errors and help() name it
    _PendingView.__module__ = view.__module__
    return _PendingView
