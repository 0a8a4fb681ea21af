"""Open a page of ours in headless Chromium with the network cut off, and record what it did.

For every HTML page pitaudit writes (the report, investigations, evidence packs): Playwright drives the
system's Chromium (Debian's ``chromium``, which ``.ci/run`` installs; no browser download), every request
other than ``file://`` is refused and recorded, and console errors, uncaught exceptions and dialogs
(an ``alert`` from injected markup) are collected. Screenshots go to ``test-output/browser/`` (git-ignored),
so a failing run leaves pictures of what the browser drew.

Use it through the ``browser`` fixture (tests/conftest.py)::

    def test_my_page(browser, tmp_path):
        visit = browser.open(path_to_html)           # a Visit: page, errors, requests, dialogs
        visit.assert_clean()                         # no console error, no request off file://, no dialog
        browser.wait_for_plots(visit.page)           # every plotly div drew its SVG
        visit.screenshot("my-page")                  # test-output/browser/<test>/my-page.png

The fixture skips only when no Chromium executable exists (saying how to install it); a missing
``playwright`` package is an error (it is pinned in requirements.lock).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "test-output" / "browser"
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "/usr/bin/chromium", "/usr/lib/chromium/chromium")
# headless in a container with no network: no sandbox (root), no GPU, nothing fetched in the background
CHROMIUM_FLAGS = (
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-default-apps", "--disable-sync",
    "--disable-extensions", "--metrics-recording-only", "--no-default-browser-check",
)


def find_chromium() -> str | None:
    """The Chromium executable, or None."""
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name) or (name if os.path.isabs(name) and os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


@dataclass
class Visit:
    """One page opened: the Playwright page, and what it tried that it should not have."""

    page: object
    name: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    out_dir: Path = OUTPUT

    def assert_clean(self) -> None:
        assert self.console_errors == [], f"console errors: {self.console_errors}"
        assert self.page_errors == [], f"uncaught exceptions: {self.page_errors}"
        assert self.blocked_requests == [], f"requests off file:// (refused): {self.blocked_requests}"
        assert self.dialogs == [], f"dialogs opened (injected script?): {self.dialogs}"

    def screenshot(self, label: str, full_page: bool = True) -> Path:
        path = self.out_dir / f"{_slug(label)}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:120] or "page"


class Browser:
    """One headless Chromium for a test session; :meth:`open` gives each page a fresh context."""

    def __init__(self, executable: str, out_dir: Path = OUTPUT) -> None:
        from playwright.sync_api import sync_playwright

        self.out_dir = out_dir
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(executable_path=executable, args=list(CHROMIUM_FLAGS),
                                                     headless=True)
        except BaseException:
            self._pw.stop()
            raise
        self._contexts: list = []

    def open(self, path: Path, name: str = "", viewport=(1400, 1000), settle_ms: int = 300) -> Visit:
        """Open ``path`` (a local HTML file) with every non-file request refused; wait for it to load."""
        context = self._browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                            service_workers="block", java_script_enabled=True)
        self._contexts.append(context)
        page = context.new_page()
        visit = Visit(page=page, name=name or Path(path).name, out_dir=self.out_dir)

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                visit.blocked_requests.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        # websockets are not routed: record any attempt
        page.on("websocket", lambda ws: visit.blocked_requests.append(ws.url))
        page.on("console", lambda m: visit.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: visit.page_errors.append(str(e)))

        def dialog(d):
            visit.dialogs.append(f"{d.type}: {d.message}")
            d.dismiss()

        page.on("dialog", dialog)
        page.goto(Path(path).resolve().as_uri(), wait_until="load")
        page.wait_for_timeout(settle_ms)
        return visit

    @staticmethod
    def wait_for_plots(page, timeout_ms: int = 30_000) -> int:
        """Wait until every plotly figure of the page has drawn its SVG; returns how many there are."""
        page.wait_for_function(
            """() => Array.from(document.querySelectorAll('.plotly-graph-div'))
                   .every(d => d.querySelector('svg.main-svg') !== null)""",
            timeout=timeout_ms,
        )
        return page.evaluate("document.querySelectorAll('.plotly-graph-div').length")

    def close(self) -> None:
        for c in self._contexts:
            try:
                c.close()
            except Exception:  # noqa: BLE001 - a context of a failed test may already be gone
                pass
        self._browser.close()
        self._pw.stop()
