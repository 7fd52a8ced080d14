"""The scheduled report: one self-contained HTML file on what a fleet costs and wastes.

Two layers, so the HTML is testable offline:

- :func:`render_report` turns a pods frame and a GPU frame into HTML: a pure
  function of its arguments (the same frames give the same bytes);
- :func:`write_report` checks where the report goes, fetches the clusters, renders,
  writes the file atomically (and optionally the frames as CSV) and returns a
  one-paragraph summary, which ``ccanalytics report`` prints.

The file opens offline and anywhere: figures are embedded as base64 PNG, the CSS is
inline, and there is no external URL at all (no CDN script, stylesheet or font), so
it can be mailed or archived by cron as is. The first screen answers, in plain
sentences, the questions the report exists for: what the fleet costs per hour (and per
day and month at that rate), how much of that is idle or unused, which ranks
straggle, which pods report no metrics or are not running, and which clusters could
not be loaded. Tables and plots follow for whoever wants the detail.

Nothing secret reaches the report: the frames hold no ``env`` values (only variable
names, which the report does not show either) and the API key never leaves the
client. Every piece of text from the API is HTML-escaped: the page is rendered from
Jinja2 templates with autoescaping on (:mod:`ccanalytics.report._templates`), so a
value is escaped unless it is HTML a template made.

Where things are: the findings and their sentences in ``_findings``, one function per
section in ``_sections`` and ``_figures``, the HTML building blocks in ``_html``, the
figures' drawing in ``_draw``, the templates in ``_templates`` (and ``templates/``),
output checks and atomic writes in ``_output``, what a history store adds in ``_stored``
and the returned summary in ``_summary``; this module puts them together.
"""

from __future__ import annotations

import html
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import pandas as pd
from markupsafe import Markup

from ccanalytics._csv import frame_csv
from ccanalytics.analysis import as_cost_per_gpu_hour

# Defined with every other exception; importable from here and from ``report`` as before.
from ccanalytics.errors import (
    ArgumentsError,
    CCAnalyticsError,
    ReportLoadError as ReportLoadError,
)
from ccanalytics.measures import Params
from ccanalytics.report._actions import (
    live_actions,
    ranked,
    render_first_screen,
    window_actions,
    window_headline,
)
from ccanalytics.report._draw import DPI as DPI, Drawers, drawn_together, fill_figures

# The ``X as X`` names moved with their concept; re-exported so they stay importable here.
from ccanalytics.report._figures import MAX_RANK_PLOTS as MAX_RANK_PLOTS, _plots
from ccanalytics.report._findings import (
    MAX_NAMED_STRAGGLERS as MAX_NAMED_STRAGGLERS,
    _Findings,
    _findings,
)
from ccanalytics.report._html import _page
from ccanalytics.report._output import (
    ReportOutputError as ReportOutputError,
    _check_csv_dir,
    _check_output,
    _write_atomic,
)
from ccanalytics.report._sections import (
    TEXT_SECTIONS,
    _headline,
    _headline_cards,
    _Report,
    _Section,
    live_cards,
    live_headline,
)
from ccanalytics.report._stored import stored_parts
from ccanalytics.report._summary import ReportSummary as ReportSummary, _summary_text
from ccanalytics.report._templates import block

if TYPE_CHECKING:
    from ccanalytics.api import AsyncClient, Client
    from ccanalytics.history import Policy
    from ccanalytics.report._window import WindowFindings

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

DEFAULT_TITLE: Final = "GPU fleet report"

#: CSV files ``csv_dir`` receives, and the frame each holds.
CSV_FILES: Final = (
    "pods.csv",
    "gpus.csv",
    "summary.csv",
    "idle.csv",
    "stragglers.csv",
    "cost_by_gpu_type.csv",
)

#: A part of the page that shows nothing (left out of it).
_NOTHING: Final = Markup()

#: Every section of the page, in order (each a function of one ``_Report``).
SECTIONS: Final[tuple[_Section, ...]] = (*TEXT_SECTIONS, _plots)


class ReportHTML(str):
    """The report as one HTML document: a ``str``, which Jupyter shows inline.

    Shown in an ``iframe`` of its own (``srcdoc``), so the report's styles and the
    notebook's never mix.
    """

    def _repr_html_(self) -> str:
        # The page is ours and whole (newlines and all): escaped for the attribute only.
        return str(block("inline_report", Markup(html.escape(str(self), quote=True))))


def render_report(
    pods: pd.DataFrame,
    gpus: pd.DataFrame,
    *,
    title: str = DEFAULT_TITLE,
    generated_at: datetime | None = None,
    cluster_ids: Sequence[str] | None = None,
    idle_threshold: float | None = None,
    max_rank_plots: int = MAX_RANK_PLOTS,
    failed: Mapping[str, str] | None = None,
    params: Params | None = None,
) -> ReportHTML:
    """The report as one self-contained HTML document (a ``str``, shown inline in Jupyter).

    Parameters
    ----------
    pods, gpus:
        A pods frame and the matching GPU frame (:func:`ccanalytics.pods_frame`,
        :func:`ccanalytics.gpus_frame`), any number of clusters. With an
        ``observed_at`` column (frames from a load), the headline gives the time of
        the reading.
    title:
        The page title and heading.
    generated_at:
        When the report was made, shown under the title; ``None`` shows no time
        (the output then depends on the frames alone, handy in tests).
    cluster_ids:
        The clusters that were asked for; those without a single pod are named,
        since they would otherwise silently vanish from every table.
    idle_threshold:
        Percent utilization under which every GPU of a running pod must be for it to
        be idle (:func:`ccanalytics.analysis.idle_pods`; default 10).
    max_rank_plots:
        Clusters drawn rank by rank at most: those with idle pods or stragglers
        first, then the most expensive.
    failed:
        Clusters that could not be loaded, id -> why: shown in a "Could not load"
        section and named in the headline.
    params:
        Every threshold at once (:class:`ccanalytics.measures.Params`: the idle line,
        the straggler ``z`` and ``min_gap``); ``idle_threshold`` overrides its idle line.
        Every table, sentence and plot judges with it.
    """
    findings = _findings(pods, Params.of(params, idle_threshold=idle_threshold), failed, gpus)
    report = _Report(pods, gpus, findings, title, generated_at, cluster_ids, max_rank_plots)
    return ReportHTML(_render(report))


def _render(
    report: _Report,
    window: WindowFindings | None = None,
    sections: Sequence[_Section] = SECTIONS,
    *,
    budget: Markup = _NOTHING,
    drawers: Drawers | None = None,
) -> str:
    """The page: the header, the first screen, each section in order, then the footer.

    The first screen is the headline figures and "What to do": of ``window`` (the
    history store's "over the last ..." answers, :mod:`ccanalytics.report._window`,
    whose section follows it) when given, else of the single reading (whose figures
    then are not repeated below). An empty section is left out. Another section is a
    function of one ``_Report``: pass ``sections`` with it inserted where it belongs.
    ``budget``: the budget status of a policy (:mod:`ccanalytics.report._budget`), which
    opens the page when given. ``drawers``: the workers that draw the figures, started
    before the data was loaded (:class:`~ccanalytics.report._draw.Drawers`).
    """
    if window is None:
        # The reading's own figures and paragraph are folded under its first screen.
        first = render_first_screen(
            live_headline(report.findings),
            ranked(live_actions(report.findings, report.pods)),
            live_cards(report),
            _headline(report),
        )
        sections = [s for s in sections if s not in (_headline, _headline_cards)]
        window_html = _NOTHING
    else:
        from ccanalytics.report import _window

        first = render_first_screen(
            window_headline(window),
            ranked(window_actions(window)),
            _window.window_cards(window),
        )
    with drawn_together(drawers) as figures:
        if window is not None:
            window_html = _window.render_window_section(window)
        parts = [section(report) for section in sections]
    parts[1:1] = [budget, first, window_html]  # the sections open with the header
    page = _page(report.title, [p for p in parts if p])  # the footer is the page's
    return fill_figures(page, figures, drawers)


def _load(
    ids: list[str],
    client: Client | AsyncClient | None,
    errors: Literal["raise", "collect"],
    progress: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, CCAnalyticsError]]:
    """Both frames of the clusters, and the clusters that failed (``collect`` only):
    id -> the exception, as the load keeps it in ``attrs["errors"]``."""
    from ccanalytics.frames import load_cluster_frames, load_fleet

    if errors == "raise":
        pods, gpus = load_cluster_frames(ids, client=client, progress=progress)
        return pods, gpus, {}
    pods, gpus, failed = load_fleet(ids, client=client, progress=progress)
    if len(failed) == len(ids):
        raise ReportLoadError(failed)
    return pods, gpus, failed


def write_report(
    cluster_ids: str | Iterable[str],
    output: str | os.PathLike[str],
    *,
    client: Client | AsyncClient | None = None,
    csv_dir: str | os.PathLike[str] | None = None,
    now: datetime | None = None,
    title: str = DEFAULT_TITLE,
    errors: Literal["raise", "collect"] = "raise",
    idle_threshold: float | None = None,
    max_rank_plots: int = MAX_RANK_PLOTS,
    store: str | os.PathLike[str] | None = None,
    window: timedelta | str | None = None,
    policy: str | os.PathLike[str] | Policy | None = None,
    params: Params | None = None,
    progress: bool = False,
) -> ReportSummary:
    """Fetch ``cluster_ids``, write the HTML report to ``output``, return a summary; in
    every case no file is left half-written.

    Parameters
    ----------
    cluster_ids:
        One cluster id or several.
    output:
        The HTML file, or ``"-"`` for standard output. A regular file is replaced atomically
        (a temporary file in the same directory, then ``os.replace``); a symlink is followed
        and its target replaced; a missing path is created; anything else (a directory, a
        device, a pipe) is refused. Checked, like ``csv_dir``, before any request is sent.
    client:
        A :class:`ccanalytics.Client` or ``AsyncClient`` (clusters load concurrently
        within its rate limit); ``None``: one from ``CCANALYTICS_API_KEY`` and
        ``CCANALYTICS_BASE_URL``, closed afterwards.
    csv_dir:
        Also write the frames there as CSV (created if missing): ``pods.csv``, ``gpus.csv``,
        ``summary.csv``, ``idle.csv``, ``stragglers.csv``, ``cost_by_gpu_type.csv``. It may
        not hold ``output``.
    now:
        The time shown as the generation time (default: the current time, UTC).
        Fixing it (and the frames) makes the whole file reproducible.
    title:
        The report's title.
    errors:
        ``"raise"`` (default): if any cluster fails to load, raise and write
        nothing. ``"collect"``: write the report for the clusters that loaded, with
        a "Could not load" section; the returned summary's ``errors`` names the
        others. If none loaded, :class:`ReportLoadError` and nothing is written.
    idle_threshold:
        Percent under which every GPU of a running pod must be for it to be idle.
    max_rank_plots:
        Clusters drawn rank by rank at most (those with findings first).
    params:
        Every threshold at once (:class:`ccanalytics.measures.Params`), for the live
        part and the store's window alike; ``idle_threshold`` overrides its idle line.
    store:
        A history store (see :func:`ccanalytics.collect`): the report then opens with
        what the store says about the ``window`` that ends at its newest snapshot; a
        store that cannot be read or holds nothing raises :class:`ccanalytics.StoreError`.
    window:
        With ``store``: how far back from the newest snapshot (default 24 h).
    policy:
        With ``store``: a ``check`` policy (a TOML file or a parsed
        :class:`ccanalytics.history.Policy`); the report then opens with the budget
        status: the month's spend so far, its projection and each breached rule.
    progress:
        Show progress bars on standard error (``tqdm``): the clusters as they load, then the
        figures as they are drawn. ``ccanalytics report`` shows them when standard error is
        a terminal and ``--quiet`` is not given.

    Returns
    -------
    ReportSummary
        The report's opening paragraph as plain text and where it went (a ``str``).

    Raises
    ------
    ReportOutputError
        An ``OSError``: the output or the CSV directory cannot be written (before any load).
    ApiError, FleetLoadError
        The client's errors, when a cluster cannot be loaded and ``errors="raise"``.
    ArgumentsError, PolicyError
        No cluster ids, a window or policy without a store, a bad policy
        (:func:`check_report_arguments`); both are ``ValueError``.
    ValueError
        A bad option.
    """
    ids = [cluster_ids] if isinstance(cluster_ids, str) else list(dict.fromkeys(cluster_ids))
    rules = check_report_arguments(ids, store=store, window=window, policy=policy)
    judged_by = _checked_options(errors, max_rank_plots, params, idle_threshold)
    target, csv_target = _targets(output, csv_dir)

    # The figures' workers start first: they import matplotlib while the data loads.
    with Drawers(progress=progress) as drawers:
        stored = stored_parts(store, rules, window, judged_by)
        pods, gpus, failed = _load(ids, client, errors, progress)
        findings = _findings(pods, judged_by, {c: str(e) for c, e in failed.items()}, gpus)
        report = _Report(pods, gpus, findings, title, now or datetime.now(UTC), ids, max_rank_plots)
        document = _render(report, stored.window, budget=stored.opening, drawers=drawers)
        _write_out(document, target, csv_target, report)
        return _summary_text(findings, os.fspath(output), failed, before=stored.sentences)


def _targets(
    output: str | os.PathLike[str], csv_dir: str | os.PathLike[str] | None
) -> tuple[Path | None, Path | None]:
    """Where the page goes (None: standard output) and the CSV files, checked before any
    request (:class:`ReportOutputError`)."""
    target = None if os.fspath(output) == "-" else _check_output(output)
    return target, None if csv_dir is None else _check_csv_dir(csv_dir, CSV_FILES, target)


def _write_out(
    document: str, target: Path | None, csv_target: Path | None, report: _Report
) -> None:
    """The page to ``target`` (None: standard output), and the frames as CSV files."""
    if csv_target is not None:
        _write_csvs(csv_target, report.pods, report.gpus, report.findings)
    if target is None:
        sys.stdout.write(document)
    else:
        _write_atomic(target, document)


def _checked_options(
    errors: str, max_rank_plots: int, params: Params | None, idle_threshold: float | None
) -> Params:
    """Refuse a bad option of :func:`write_report` (ValueError); the thresholds it judges by."""
    if errors not in ("raise", "collect"):
        raise ValueError("errors must be 'raise' or 'collect'")
    if max_rank_plots < 0:
        raise ValueError("max_rank_plots must be 0 or more")
    return Params.of(params, idle_threshold=idle_threshold)  # ValueError if not 0-100


def check_report_arguments(
    cluster_ids: Sequence[str],
    *,
    store: str | os.PathLike[str] | None = None,
    window: timedelta | str | None = None,
    policy: str | os.PathLike[str] | Policy | None = None,
) -> Policy | None:
    """Refuse what :func:`write_report` cannot do before anything is loaded, and read the
    policy (a TOML file is parsed here: a bad one is a
    :class:`~ccanalytics.errors.PolicyError` before any request). Returns the policy.

    Raises :class:`~ccanalytics.errors.ArgumentsError` for a ``window`` or a ``policy``
    without a ``store``, and for no cluster id. The one home of these rules:
    ``ccanalytics report`` calls it before it opens a client, and spells its errors
    with its flags.
    """
    if window is not None and store is None:
        raise ArgumentsError("{window} needs {store}", "window", "store")
    if policy is not None and store is None:
        raise ArgumentsError("{policy} needs {store}", "policy", "store")
    rules = None
    if policy is not None:
        from ccanalytics.history import Policy, load_policy

        rules = policy if isinstance(policy, Policy) else load_policy(policy)
    if not cluster_ids:
        raise ArgumentsError(
            "name at least one {cluster_ids}", "cluster_ids", python={"cluster_ids": "cluster id"}
        )
    return rules


def _write_csvs(
    directory: Path, pods: pd.DataFrame, gpus: pd.DataFrame, findings: _Findings
) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ReportOutputError(f"cannot create {directory}: {err.strerror}") from None
    frames = {
        "pods.csv": pods,
        "gpus.csv": gpus,
        "summary.csv": findings.summary,
        "idle.csv": findings.idle,
        "stragglers.csv": findings.stragglers,
        "cost_by_gpu_type.csv": as_cost_per_gpu_hour(findings.by_gpu),
    }
    for name in CSV_FILES:
        _write_atomic(directory / name, frame_csv(frames[name]))
