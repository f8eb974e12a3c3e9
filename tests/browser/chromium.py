"""Open pages in Debian's headless Chromium through Playwright, for the browser tests.

`tests/browser/install.sh` installs /usr/bin/chromium.  When the browser (or
the `playwright` package) is missing, `require_browser()` fails the test
with a clear message if CI is set, and skips it otherwise.
"""

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# The two screens every page must fit (tests/feedback/test_pages_fit.py, the similarity page too).
SCREENS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}

# Elements wider than their container, or reaching past the viewport's right edge, and boxes that scroll
# sideways (a table in a scrolling wrapper is still a table that does not fit). Only code (<pre>) may scroll:
# what is inside it is the box's business, not the page's.
OVERFLOWS = """() => {
  const bad = [];
  const width = document.documentElement.clientWidth;
  const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || getComputedStyle(el).position === "fixed") continue;
    let inScroller = false;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (scrolls(up)) { inScroller = true; break; }
    }
    if (scrolls(el) && el.tagName !== "PRE" && el.scrollWidth > el.clientWidth + 1)
      bad.push(`${el.tagName.toLowerCase()}.${el.className} scrolls sideways: ${el.scrollWidth} px in ${el.clientWidth}`);
    if (inScroller) continue;
    const parent = el.parentElement.getBoundingClientRect();
    const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className : "");
    if (box.right > width + 1) bad.push(`${name} ends at ${Math.round(box.right)} px, past the screen's ${width}`);
    else if (el.parentElement !== document.body && box.right > parent.right + 1 && !scrolls(el.parentElement))
      bad.push(`${name} ends at ${Math.round(box.right)} px, past its container's ${Math.round(parent.right)}`);
  }
  return {bad: bad.slice(0, 10), scrollWidth: document.documentElement.scrollWidth, width};
}"""


def require_browser():
    problem = None
    if not CHROMIUM.is_file():
        problem = f"{CHROMIUM} is missing: run tests/browser/install.sh (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "the Python package playwright is missing: pip install playwright==1.65.2"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run: {problem}", pytrace=False)
        pytest.skip(problem)


@contextlib.contextmanager
def browser_page(viewport=DESKTOP, device_scale_factor=1):
    """A fresh page in a new headless Chromium with an empty profile; no network is used."""
    require_browser()
    from playwright.sync_api import sync_playwright
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS, viewport=viewport,
                device_scale_factor=device_scale_factor, offline=True)
            try:
                yield _watched_page(context)
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@contextlib.contextmanager
def one_browser():
    """`open_page(viewport, device_scale_factor)` -> a context manager of a fresh page, as `browser_page` gives, in
    one Chromium kept for the caller's block: each page has a browser context of its own (no cookies, storage or
    cache shared with the page before it), and the driver and browser start once instead of once a page (about a
    CPU-second each time).  For a module fixture only: Playwright's sync driver leaves this thread's asyncio loop
    marked running while it lives, which a kernel run through nbclient in a later test would meet."""
    require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)

        @contextlib.contextmanager
        def open_page(viewport=DESKTOP, device_scale_factor=1):
            context = browser.new_context(viewport=viewport, device_scale_factor=device_scale_factor,
                                          offline=True)
            try:
                yield _watched_page(context)
            finally:
                context.close()
        try:
            yield open_page
        finally:
            browser.close()


def _watched_page(context):
    """A new page of `context` whose `external_requests` lists every URL it asks for."""
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.external_requests = requests
    return page


def images(page):
    """[(id or alt, natural width, natural height, complete)] of every <img> on the page."""
    return page.evaluate("""() => Array.from(document.images).map(
        i => [i.id || i.alt, i.naturalWidth, i.naturalHeight, i.complete])""")


def remote_requests(page):
    """URLs the page asked for that are not the page itself or inline data."""
    return [u for u in page.external_requests if not u.startswith(("file:", "data:", "about:"))]
