"""Argument checks the graph package's Python calls share: each error names the call and the rule."""

from __future__ import annotations

import os


def ordinal(device, call: str, what: str) -> int:
    """A device ordinal from a Device (its device_id) or an int."""
    from .._nanocuda import Device  # a Buffer or Stream has a device_id too, but is no device

    value = device.device_id if isinstance(device, Device) else device
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{call}: {what} must be a Device or an int ordinal, got {type(device).__name__}")
    if value < 0:
        raise ValueError(f"{call}: {what} must be a device ordinal >= 0, got {value}")
    return value


def ordinals(values, call: str, what: str) -> list:
    """Device ordinals from an iterable of Devices or ints."""
    return [ordinal(v, call, what) for v in items(values, call, what)]


def items(value, call: str, what: str) -> list:
    """The elements of an iterable argument, as a list."""
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{call}: {what} must be an iterable ({type(value).__name__} is not iterable)") from None


def path_arg(path, call: str) -> str:
    """A file path from a str or an os.PathLike."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{call}: path must be a str or an os.PathLike, got {type(path).__name__}")
    return os.fsdecode(os.fspath(path))
