"""host_launch (cuda.core's, from after 1.2): a host function run once on a stream, after its earlier work."""

from __future__ import annotations

from ._nanocuda import GraphBuilder, _internal
from .graph._graph_definition import _host_fn_parts

__all__ = ["host_launch"]


def host_launch(stream, fn, *, user_data=None) -> None:
    """Run `fn` on the host once the work queued on `stream` before this call is done; work
    queued after it waits for it (cuLaunchHostFunc). `fn` is a Python callable taking no
    arguments (run with the GIL; an exception it raises is reported by the next checked call,
    e.g. Stream.sync()) or a ctypes CFUNCTYPE(None, c_void_p) function called with `user_data`
    (bytes, copied; or an int address) without the GIL. It must not call CUDA. A GraphBuilder
    gets a host node instead (GraphBuilder.callback); a stream capturing a graph is refused."""
    if isinstance(stream, GraphBuilder):
        stream.callback(fn, user_data=user_data)
        return
    parts = _host_fn_parts(fn, user_data, "host_launch")
    _internal.host_launch(stream, fn if parts is None else parts, "host_launch")
