"""nanocuda.system.register_events (NVML system events) against tools/mock_libnvml.c."""

import pytest

from nanocuda import system
from nanocuda.system import typing


def test_register_and_wait_times_out(nvml):
    for events in ([typing.SystemEventType.UNBIND], "bind", ["unbind", "BIND"]):
        registered = system.register_events(events)
        with pytest.raises(system.TimeoutError, match="nvmlSystemEventSetWait"):
            registered.wait(timeout_ms=1, buffer_size=1)
    assert isinstance(registered, system.RegisteredSystemEvents)


def test_wait_returns_the_events(nvml, monkeypatch):
    monkeypatch.setenv("NANOCUDA_MOCK_NVML_SYSTEM_EVENT", "2,0x00014100")
    events = system.register_events(typing.SystemEventType.BIND).wait(timeout_ms=10, buffer_size=4)
    assert isinstance(events, system.SystemEvents) and len(events) == 1
    event = events[0]
    assert isinstance(event, system.SystemEvent)
    assert event.event_type is typing.SystemEventType.BIND and event.gpu_id == 0x14100
    assert [e.gpu_id for e in events] == [0x14100]


def test_sets_are_freed(nvml):
    count = nvml.nanocuda_mock_nvml_open_system_event_sets
    before = count()
    registered = system.register_events("unbind")
    assert count() == before + 1
    del registered
    assert count() == before
    with pytest.raises(system.NotSupportedError, match="nvmlSystemRegisterEvents"):
        system.register_events([])  # nothing to register: NVML says NOT_SUPPORTED
    assert count() == before  # the failed registration freed its set


def test_bad_arguments(nvml):
    with pytest.raises(ValueError, match="register_events: 'nope' is not a valid SystemEventType"):
        system.register_events(["nope"])
    with pytest.raises(TypeError, match="register_events: events must be a SystemEventType"):
        system.register_events(1)
    registered = system.register_events("unbind")
    with pytest.raises(ValueError, match="buffer_size must be at least 1"):
        registered.wait(timeout_ms=1, buffer_size=0)
    with pytest.raises(TypeError, match="wait: timeout_ms must be a non-negative int"):
        registered.wait(timeout_ms=-1)
