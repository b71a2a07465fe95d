"""Green-context options in cuda.core's names (SMResourceOptions, WorkqueueResourceOptions, ContextOptions) and their checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:  # nanocuda.typing is imported on first use only (import nanocuda stays lean)
    from .typing import WorkqueueSharingScopeType

__all__ = ["ContextOptions", "SMResourceOptions", "WorkqueueResource", "WorkqueueResourceOptions"]

# CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING: cuda.core's backfill.
_IGNORE_SM_COSCHEDULING = 0x1


@dataclass
class SMResourceOptions:
    """Options for SMResource.split. Each field is a scalar (one group) or a sequence (one
    entry per group; count's length sets the number of groups). count: SMs per group (None:
    the smallest group the device allows); backfill: let the driver ignore SM co-scheduling.
    coscheduled_sm_count / preferred_coscheduled_sm_count need CUDA 13.1's split call, which
    this build does not use: a value other than None is refused by split()."""

    count: Union[int, Sequence[int], None] = None
    coscheduled_sm_count: Union[int, Sequence[int], None] = None
    preferred_coscheduled_sm_count: Union[int, Sequence[int], None] = None
    backfill: Union[bool, Sequence[bool]] = False


@dataclass
class WorkqueueResourceOptions:
    """Options for WorkqueueResource.configure: sharing_scope ("device_ctx" or
    "green_ctx_balanced", or a WorkqueueSharingScopeType) and concurrency_limit (>= 1)."""

    sharing_scope: Union["WorkqueueSharingScopeType", str, None] = None
    concurrency_limit: Optional[int] = None

    def __post_init__(self) -> None:
        if self.sharing_scope is not None:
            from .typing import WorkqueueSharingScopeType

            try:
                self.sharing_scope = WorkqueueSharingScopeType(self.sharing_scope)
            except ValueError:
                allowed = ", ".join(repr(m.value) for m in WorkqueueSharingScopeType)
                raise ValueError(f"WorkqueueResourceOptions: {self.sharing_scope!r} is not a valid "
                                 f"WorkqueueSharingScopeType. Must be one of {allowed}") from None
        if self.concurrency_limit is not None:
            if isinstance(self.concurrency_limit, bool) or not isinstance(self.concurrency_limit, int):
                raise TypeError("WorkqueueResourceOptions: concurrency_limit must be an int, got "
                                f"{type(self.concurrency_limit).__name__}")
            if self.concurrency_limit < 1:
                raise ValueError(f"WorkqueueResourceOptions: concurrency_limit must be >= 1, got "
                                 f"{self.concurrency_limit}")


@dataclass
class ContextOptions:
    """Options for Device.create_context: resources, the SMResource groups (from
    SMResource.split) the green context runs on."""

    resources: Optional[Sequence[Any]] = None


class WorkqueueResource:
    """A device's work-queue resource (cuda.core's name). Work-queue resources need CUDA
    13.1's driver API; this build is against 13.0, so DeviceResources.workqueue raises
    RuntimeError. Not constructible directly."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("WorkqueueResource cannot be instantiated directly; get one from "
                           "Device.resources.workqueue")


def _from_dict(cls: type, options: Any, call: str) -> Any:
    if isinstance(options, cls):
        return options
    if isinstance(options, dict):
        known = {f.name for f in fields(cls)}
        for key in options:
            if key not in known:
                raise TypeError(f"{call}: unknown option {key!r} (known: {', '.join(sorted(known))})")
        return cls(**options)
    # cuda.core's own options object (or any with the same fields) is read by attribute.
    if all(hasattr(options, f.name) for f in fields(cls)):
        return cls(**{f.name: getattr(options, f.name) for f in fields(cls)})
    raise TypeError(f"{call}: options must be a {cls.__name__} or a dict, got {type(options).__name__}")


def _is_seq(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _check_int(call: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{call}: {name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{call}: {name} must be non-negative, got {value}")
    return value


def split_request(options: Any) -> tuple[int, int, int]:
    """SMResource.split's options as (groups, SMs per group, split flags); checks every rule."""
    call = "SMResource.split"
    opts = _from_dict(SMResourceOptions, options, call)
    count = opts.count
    if _is_seq(count):
        counts = [_check_int(call, "count", c) for c in count]
        if not counts:
            raise ValueError(f"{call}: count must name at least one group")
    elif count is None:
        counts = [0]  # discovery: the smallest group the device allows
    else:
        counts = [_check_int(call, "count", count)]
    groups = len(counts)
    for name in ("coscheduled_sm_count", "preferred_coscheduled_sm_count", "backfill"):
        value = getattr(opts, name)
        if _is_seq(value):
            if not _is_seq(count):
                raise ValueError(f"{call}: {name} is a sequence but count is scalar (one group); "
                                 f"give count as a sequence of the same length")
            if len(value) != groups:
                raise ValueError(f"{call}: {name} has {len(value)} entries, expected {groups} (one per count)")
    for name in ("coscheduled_sm_count", "preferred_coscheduled_sm_count"):
        value = getattr(opts, name)
        if value is not None and not (_is_seq(value) and all(v is None for v in value)):
            raise ValueError(f"{call}: {name} needs CUDA 13.1's cuDevSmResourceSplit; this build splits "
                             "with cuDevSmResourceSplitByCount (leave it None)")
    if len(set(counts)) > 1:
        raise ValueError(f"{call}: groups of different sizes ({counts}) need CUDA 13.1's "
                         "cuDevSmResourceSplit; this build gives every group the same count")
    backfill = opts.backfill if _is_seq(opts.backfill) else [opts.backfill]
    for b in backfill:
        if not isinstance(b, bool):
            raise TypeError(f"{call}: backfill must be a bool, got {type(b).__name__}")
    if len(set(backfill)) > 1:
        raise ValueError(f"{call}: backfill must be the same for every group with cuDevSmResourceSplitByCount")
    return groups, counts[0], _IGNORE_SM_COSCHEDULING if backfill[0] else 0


def context_resources(options: Any) -> Optional[list]:
    """Device.create_context's resources (None when not given); checks the options' type."""
    opts = _from_dict(ContextOptions, options, "Device.create_context")
    if opts.resources is None:
        return None
    if not _is_seq(opts.resources):
        raise TypeError("Device.create_context: resources must be a sequence of SMResource, got "
                        f"{type(opts.resources).__name__}")
    return list(opts.resources)
