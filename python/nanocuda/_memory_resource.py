"""Python subclasses of MemoryResource: the C++ part is made before the subclass's own __init__."""

from __future__ import annotations

import functools

from ._nanocuda import MemoryResource

_NANOBIND_MODULE = MemoryResource.__module__


def _wrap_init(cls: type) -> None:
    # cuda.core does not require subclasses to call super().__init__(); nanobind needs its C++
    # part made first. Only direct Python resources (the nearest bound class is MemoryResource):
    # a subclass of PinnedMemoryResource etc. is made by that class's __init__.
    bound = next(c for c in cls.__mro__ if c.__module__ == _NANOBIND_MODULE)
    own = cls.__dict__.get("__init__")
    if bound is not MemoryResource or own is None or getattr(own, "_nanocuda_makes_base", False):
        return
    base = MemoryResource.__init__

    @functools.wraps(own)
    def __init__(self, *args, **kwargs):
        base(self)  # once: a later super().__init__() finds it made
        own(self, *args, **kwargs)

    __init__._nanocuda_makes_base = True
    cls.__init__ = __init__


def _init_subclass(cls: type, **kwargs) -> None:
    super(MemoryResource, cls).__init_subclass__(**kwargs)
    _wrap_init(cls)


MemoryResource.__init_subclass__ = classmethod(_init_subclass)
