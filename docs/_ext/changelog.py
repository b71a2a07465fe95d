# The changelog page: docs/changelog.md made from the repository's CHANGELOG.md at each build.
#
# The page is generated (and git-ignored) so the text lives once, at the root where users of
# the repository look for it; without a CHANGELOG.md the page says there are no release
# notes yet instead of failing the build.
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _write(app) -> None:
    source = os.path.join(ROOT, "CHANGELOG.md")
    page = os.path.join(app.srcdir, "changelog.md")
    if os.path.exists(source):
        text = "```{include} ../CHANGELOG.md\n```\n"
        with open(source, encoding="utf-8") as f:
            first = f.readline()
        if not first.startswith("# "):  # the page needs a title for the sidebar
            text = "# Changelog\n\n" + text
    else:
        text = "# Changelog\n\nNo release notes yet: this is the first version.\n"
    old = open(page, encoding="utf-8").read() if os.path.exists(page) else None
    if old != text:  # rewritten only when it changes, so incremental builds stay incremental
        with open(page, "w", encoding="utf-8") as f:
            f.write(text)


def setup(app):
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True}
