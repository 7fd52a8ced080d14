"""The scheduled report: one self-contained HTML file on what a fleet costs and wastes.

- ``_writer``: ``render_report`` (frames to HTML, pure) and ``write_report`` (check the
  output, load, render, write atomically, optional CSVs);
- ``_findings``: what the report says, computed once, and its plain sentences;
- ``_sections`` and ``_figures``: one function per section of the page, in order;
- ``_html``: tables, cards, notes and the page; ``_templates`` renders them from the
  Jinja2 templates in ``templates/`` (autoescaped: escaping is a type), CSS included;
- ``_draw``: the figures, drawn as embedded PNGs by worker processes started before
  the report loads anything (so the report process itself never imports matplotlib);
- ``_output``: where the report may go, checked before loading; atomic writes.
- ``_stored``: what a history store adds (budget, outlook, window); ``_summary``: the
  summary ``write_report`` returns.

It may import the frames, :mod:`ccanalytics.analysis` and :mod:`ccanalytics.plots`
(and history, for windows over time); only the CLI imports it.
"""

from __future__ import annotations

from ccanalytics.report._writer import (
    CSV_FILES,
    DEFAULT_TITLE,
    MAX_RANK_PLOTS,
    ReportHTML,
    ReportLoadError,
    ReportOutputError,
    ReportSummary,
    check_report_arguments,
    render_report,
    write_report,
)

__all__ = [
    "CSV_FILES",
    "DEFAULT_TITLE",
    "MAX_RANK_PLOTS",
    "ReportHTML",
    "ReportLoadError",
    "ReportOutputError",
    "ReportSummary",
    "check_report_arguments",
    "render_report",
    "write_report",
]
