"""Checks a built documentation site: every internal link and anchor resolves, and pages open
in a real headless browser (Chromium) with no console errors and no cut sidebar names.

    python3 tools/docs_check.py SITE_DIR      (scripts/docs-check installs what it needs)

Writes SITE_DIR/_check/{index,api,cpp}.png (screenshots) and exits 1 with
one line per problem.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
import urllib.parse
from html.parser import HTMLParser

# Pages opened in the browser: the index, one API page (nanobind signatures), one C++ page.
PAGES = {"index": "index.html", "api": "api/compiling.html", "cpp": "cpp-api/core.html"}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name") if tag != "meta" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) and not (tag == "link" and a.get("rel") in ("preconnect", "dns-prefetch")):
                self.links.append(a[key])


def check_links(site: str) -> tuple[list[str], int]:
    """Broken internal links and anchors of every page, and how many links were followed."""
    pages: dict[str, _Page] = {}
    for folder, _, files in os.walk(site):
        if os.path.relpath(folder, site).split(os.sep)[0] in (".doctrees", "_check"):
            continue
        for f in files:
            if f.endswith(".html"):
                path = os.path.normpath(os.path.join(folder, f))
                page = _Page()
                with open(path, encoding="utf-8") as fh:
                    page.feed(fh.read())
                pages[path] = page
    problems, followed = [], 0
    for path, page in pages.items():
        for link in page.links:
            parts = urllib.parse.urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue  # external: not this check's business (no network in CI)
            followed += 1
            target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(parts.path))) \
                if parts.path else path
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            where = os.path.relpath(path, site)
            if not os.path.exists(target):
                problems.append(f"{where}: broken link {link!r} (no {os.path.relpath(target, site)})")
                continue
            if parts.fragment and target.endswith(".html"):
                ids = pages[target].ids if target in pages else set()
                if urllib.parse.unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: broken anchor {link!r} (no id {parts.fragment!r} in "
                                    f"{os.path.relpath(target, site)})")
    return problems, followed


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(site: str):
    # Over http, not file://: the search page fetches its index, which file:// forbids.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# Sidebar and signature text cut by its box: an element narrower than its content, with the
# overflow hidden (a scrollbar or wrapping would show it all).
_CUT_TEXT_JS = """
const cut = [];
for (const el of document.querySelectorAll('.sidebar-tree a, dt.sig, .toc-tree a')) {
  const style = getComputedStyle(el);
  if (el.offsetParent === null) continue;  // not displayed
  if (el.scrollWidth > el.clientWidth + 1 && (style.overflowX === 'hidden' || style.textOverflow === 'ellipsis'))
    cut.push(el.textContent.trim().slice(0, 80));
}
return cut;
"""


def check_browser(site: str, shots: str, pages: list[str]) -> list[str]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    server = _serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_page_load_timeout(60)
        for name, page in PAGES.items():
            if not os.path.exists(os.path.join(site, page)):
                problems.append(f"{page}: missing (the browser check opens it)")
        # Every page, for console errors and cut text; the three of PAGES photographed.
        shot_of = {page: name for name, page in PAGES.items()}
        for page in pages:
            driver.get(base + page)
            if not driver.title:
                problems.append(f"{page}: no title after loading")
            for entry in driver.get_log("browser"):
                if entry.get("level") == "SEVERE":
                    problems.append(f"{page}: console error: {entry.get('message')}")
            for text in driver.execute_script(_CUT_TEXT_JS):
                problems.append(f"{page}: text cut by its box: {text!r}")
            if page in shot_of:
                driver.save_screenshot(os.path.join(shots, f"{shot_of[page]}.png"))
        print(f"docs-check: {len(pages)} pages opened in headless Chromium")
        # The search page runs the most JavaScript (the search index): no errors there either.
        driver.get(base + "search.html?q=TensorMap")
        driver.implicitly_wait(2)
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                problems.append(f"search.html: console error: {entry.get('message')}")
    finally:
        driver.quit()
        server.shutdown()
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    site = os.path.abspath(sys.argv[1])
    if not os.path.exists(os.path.join(site, "index.html")):
        print(f"docs-check: {site}/index.html does not exist: build the site first (bash scripts/docs {sys.argv[1]})")
        return 2
    problems, followed = check_links(site)
    print(f"docs-check: {followed} internal links and anchors followed, {len(problems)} broken")
    shots = os.path.join(site, "_check")
    os.makedirs(shots, exist_ok=True)
    pages = sorted(os.path.relpath(os.path.join(folder, f), site).replace(os.sep, "/")
                   for folder, _, files in os.walk(site) for f in files
                   if f.endswith(".html") and not os.path.relpath(folder, site).startswith((".doctrees", "_check")))
    problems += check_browser(site, shots, pages)
    for p in problems:
        print("docs-check: " + p)
    if problems:
        return 1
    print(f"docs-check: ok; screenshots in {shots}/ (index.png, api.png, cpp.png)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
