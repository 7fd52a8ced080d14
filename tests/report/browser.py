"""Headless Chromium for layout checks: load a page at a width, return what it measured.

A script is appended to a copy of the page, shown in an iframe exactly ``width`` CSS
px wide (a headless window has a minimum width, wider than a phone); on load it
measures the layout and writes the result as JSON into the outer page's
``<body data-layout=...>``, which ``--dump-dom`` prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Headless, offline, no scrollbar drawn (a page must show it scrolls without one).
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)

_MEASURE = r"""<script>
window.addEventListener('load', () => {
  const vw = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('main *')) {
    const inBox = el.closest('.scroll');
    if (inBox && inBox !== el) continue;  // a wide table scrolls inside its box
    if (el.getBoundingClientRect().right > vw + 1) wide.push(el.tagName + (el.id ? '#' + el.id : ''));
  }
  const scrolling = [];
  for (const box of document.querySelectorAll('.scroll')) {
    if (box.closest('details')) continue;  // details tables may scroll
    if (box.scrollWidth > box.clientWidth + 1) {
      const h = box.querySelector('th');
      scrolling.push([...box.querySelectorAll('th')].map(t => t.textContent).join(' | '));
    }
  }
  const first = [...document.querySelectorAll('main > *')].slice(0, 4).map(
    el => el.tagName + (el.id ? '#' + el.id : ''));
  // A figure's text on more than one line: distinct tops of its line boxes.
  const wrapped = [];
  for (const el of document.querySelectorAll('.value')) {
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (tops.size > 1) wrapped.push(el.textContent);
  }
  // Each plot's shown width over its own (its labels' size against the drawn one).
  const scales = [...document.querySelectorAll('figure img')].map(
    img => img.getBoundingClientRect().width / img.width);
  // Boxes that scroll sideways, and whether the edge hiding columns shows a shadow:
  // the box paints gradients behind see-through rows.
  const cues = [];
  for (const box of document.querySelectorAll('.scroll')) {
    if (box.scrollWidth <= box.clientWidth + 1 || !box.querySelector('table')) continue;
    const style = getComputedStyle(box);
    const alpha = c => { const m = c.match(/[\d.]+/g) || []; return m.length === 4 ? parseFloat(m[3]) : 1; };
    const painted = [...box.querySelectorAll('tr, th, td')].map(
      el => alpha(getComputedStyle(el).backgroundColor));
    cues.push({
      shadow: style.backgroundImage.includes('gradient') &&
        style.backgroundAttachment.includes('local') && style.backgroundAttachment.includes('scroll'),
      seeThrough: Math.max(...painted) < 0.1,
      right: Math.round(box.getBoundingClientRect().right),
      top: Math.round(box.getBoundingClientRect().top + window.scrollY),
      bottom: Math.round(box.getBoundingClientRect().bottom + window.scrollY),
    });
  }
  parent.document.body.setAttribute('data-layout', JSON.stringify(
    {viewport: vw, page: document.documentElement.scrollWidth, wide, scrolling, first,
     wrapped, scales, cues}));
});
</script>"""


def screenshot(document: str, width: int, path: Path, height: int = 1600) -> Path:
    """A PNG of ``document``'s top ``height`` CSS px at ``width`` (1x), written to ``path``."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(document, encoding="utf-8")
        subprocess.run(
            [
                CHROMIUM,
                *_FLAGS,
                f"--user-data-dir={Path(tmp) / 'profile'}",
                f"--window-size={width},{height}",
                f"--screenshot={path}",
                page.as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
    return path


def measure(document: str, width: int) -> dict[str, Any]:
    """Load ``document`` in headless Chromium at ``width`` CSS px (2x DPI) and measure it."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(document.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
        outer = Path(tmp) / "outer.html"
        outer.write_text(
            '<!DOCTYPE html><html><body style="margin:0">'
            f'<iframe src="page.html" width="{width}" height="1200" style="border:0">'
            "</iframe></body></html>",
            encoding="utf-8",
        )
        profile = Path(tmp) / "profile"
        out = subprocess.run(
            [
                CHROMIUM,
                *_FLAGS,
                "--allow-file-access-from-files",
                f"--user-data-dir={profile}",
                "--force-device-scale-factor=2",
                "--window-size=1400,1200",
                "--virtual-time-budget=5000",
                "--dump-dom",
                outer.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    found = re.search(r'data-layout="([^"]*)"', out)
    assert found, "the measuring script did not run"
    return dict(json.loads(html.unescape(found.group(1))))
