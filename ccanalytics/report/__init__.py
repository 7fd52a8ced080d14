"""The scheduled report: one self-contained HTML file on what a fleet costs and wastes.

- ``_writer``: ``render_report`` (frames to HTML, pure) and ``write_report`` (load,
  render, write atomically, optional CSVs);
- ``_findings``: what the report says, computed once, and its plain sentences;
- ``_html``: escaping, tables, embedded figures, CSS and the page.

It may import the frames, :mod:`ccanalytics.analysis` and :mod:`ccanalytics.plots`
(and history, for windows over time); only the CLI imports it.
"""

from __future__ import annotations

from ccanalytics.report._writer import (
    CSV_FILES,
    DEFAULT_TITLE,
    MAX_RANK_PLOTS,
    render_report,
    write_report,
)

__all__ = ["CSV_FILES", "DEFAULT_TITLE", "MAX_RANK_PLOTS", "render_report", "write_report"]
