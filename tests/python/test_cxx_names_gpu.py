"""On a GPU: the core's errors (thrown with C++ names, Event::elapsed_time_since) reach Python under
Python names (Event.elapsed_time, Stream.record), in the message's middle too."""

import pytest

from nanocuda import Device, EventOptions

pytestmark = pytest.mark.gpu


def _message(fn, kind):
    with pytest.raises(kind) as info:
        fn()
    text = str(info.value)
    assert "::" not in text, text  # no C++ spelling reaches Python
    return text


def test_event_timing_errors_name_python_calls():
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    timed, plain = s.record(options=EventOptions(timing_enabled=True)), s.record(options=EventOptions())
    s.sync()
    m = _message(lambda: plain - timed, RuntimeError)
    assert "(Event.elapsed_time: " in m and "timing disabled" in m, m
    never = dev.create_event(options=EventOptions(timing_enabled=True))
    m = _message(lambda: never - timed, RuntimeError)
    assert "(Event.elapsed_time: the " in m and "Stream.record(event)" in m, m


def test_value_errors_name_python_calls():
    dev = Device(0)
    dev.set_current()
    m = _message(lambda: dev.enable_peer_access(dev), ValueError)
    assert m.startswith("Device.enable_peer_access: device 0 is the same device"), m
    e = dev.create_stream().record()
    e.close()
    m = _message(e.sync, ValueError)
    assert m.startswith("Event.sync: ") and "is closed" in m, m
