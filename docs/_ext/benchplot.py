# The benchmarks page shows the bench's own chart (docs/_static/bench.png) once one is committed.
#
# The chart comes from `nanocuda bench --plot` on a GPU machine (scripts/gpu-docs writes it);
# until it is in docs/_static, the page says how to draw one instead of showing a broken image.
import os

MARKER = "<!-- bench-plot -->"


def _source_read(app, docname, source) -> None:
    if docname != "guide/benchmarks" or MARKER not in source[0]:
        return
    png = os.path.join(app.srcdir, "_static", "bench.png")
    if os.path.exists(png):
        block = ("```{figure} ../_static/bench.png\n:alt: every path's ratio to its C++ baseline\n\n"
                 "`nanocuda bench --plot`: each path's time as a multiple of its C++ baseline "
                 "(bars: minimum; dots: median; log scale).\n```\n")
    else:
        block = ("`nanocuda bench --plot FILE.png` draws every path's ratio to its C++ baseline "
                 "(minimum and median, log scale) for your GPU.\n")
    source[0] = source[0].replace(MARKER, block)


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True}
