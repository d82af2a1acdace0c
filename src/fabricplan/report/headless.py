"""Headless Chromium for rendered checks of the HTML report: dump the DOM after scripts ran, or take a PNG.

Used by the report tests (did plotly draw every chart?) and by scripts/screenshot_report.py. Chromium
runs with a throw-away profile, no background networking and every host name unresolvable, so a
page that tried to load anything from the network would visibly fail.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
VIRTUAL_TIME_BUDGET_MS = 10_000
TIMEOUT_S = 60
SCREENSHOT_WINDOW = (1400, 2600)


def chromium_command(page: Path, user_data_dir: Path, *action: str, chromium: Path = CHROMIUM) -> list[str]:
    """The command line: offline, sandbox-free (for containers), fresh profile, then `action` flags."""
    return [
        str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={user_data_dir}",
        f"--virtual-time-budget={VIRTUAL_TIME_BUDGET_MS}", *action, page.resolve().as_uri(),
    ]


def _run(page: Path, *action: str, chromium: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="fabricplan-chromium-") as profile:
        return subprocess.run(chromium_command(page, Path(profile), *action, chromium=chromium),
                              capture_output=True, text=True, timeout=timeout_s, check=True)


@dataclass(frozen=True)
class RenderedPage:
    dom: str = field(repr=False)
    console: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        """Uncaught exceptions and failed loads (a blocked network request shows up as one)."""
        return [line for line in self.console if "Uncaught" in line or "Failed to load" in line or "net::ERR" in line]


def render_page(page: Path, *, chromium: Path = CHROMIUM, timeout_s: float = TIMEOUT_S) -> RenderedPage:
    """The page's DOM as HTML after its scripts ran, and what it wrote to the browser console."""
    result = _run(page, "--dump-dom", "--enable-logging=stderr", "--v=0", chromium=chromium, timeout_s=timeout_s)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return RenderedPage(dom=result.stdout, console=console)


def dump_dom(page: Path, *, chromium: Path = CHROMIUM, timeout_s: float = TIMEOUT_S) -> str:
    """The page's DOM as HTML after its scripts ran."""
    return render_page(page, chromium=chromium, timeout_s=timeout_s).dom


def screenshot(page: Path, output: Path, *, window: tuple[int, int] = SCREENSHOT_WINDOW,
               chromium: Path = CHROMIUM, timeout_s: float = TIMEOUT_S) -> Path:
    """A PNG of the page's first `window` pixels (width, height)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    width, height = window
    _run(page, f"--screenshot={output.resolve()}", f"--window-size={width},{height}", "--hide-scrollbars",
         chromium=chromium, timeout_s=timeout_s)
    return output
