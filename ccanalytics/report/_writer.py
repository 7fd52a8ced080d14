"""The scheduled report: one self-contained HTML file on what a fleet costs and wastes.

Two layers, so the HTML is testable offline:

- :func:`render_report` turns a pods frame and a GPU frame into HTML: a pure
  function of its arguments (the same frames give the same bytes);
- :func:`write_report` fetches the clusters, renders, writes the file atomically
  (and optionally the frames as CSV) and returns a one-paragraph summary, which
  ``ccanalytics report`` prints.

The file opens offline and anywhere: figures are embedded as base64 PNG, the CSS is
inline, and there is no external URL at all (no CDN script, stylesheet or font), so
it can be mailed or archived by cron as is. The first screen answers, in plain
sentences, the questions the report exists for: what the fleet costs per hour, how
much of that is idle, which ranks straggle, and how many pods report no metrics.
Tables and plots follow for whoever wants the detail.

Nothing secret reaches the report: the frames hold no ``env`` values (only variable
names, which the report does not show either) and the API key never leaves the
client. Every piece of text from the API is HTML-escaped.

Where things are: the findings and their sentences are in
:mod:`ccanalytics.report._findings`, the HTML building blocks (escaping, tables,
embedded figures, CSS, the page) in :mod:`ccanalytics.report._html`; this module lays
the page out and writes the files.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pandas as pd

from ccanalytics import plots
from ccanalytics.analysis import (
    DEFAULT_IDLE_THRESHOLD,
    cluster_summary,
    cost_per_gpu_hour,
)

# The ``X as X`` names moved with their concept; re-exported so they stay importable here.
from ccanalytics.report._findings import MAX_NAMED_STRAGGLERS as MAX_NAMED_STRAGGLERS
from ccanalytics.report._findings import (
    _Findings,
    _findings,
    _not_reporting,
    _plural,
    _sentences,
    _usd,
)
from ccanalytics.report._html import DPI as DPI
from ccanalytics.report._html import _columns, _figure, _page, _table, _text

if TYPE_CHECKING:
    from ccanalytics.api import AsyncClient, Client

__all__ = ["DEFAULT_TITLE", "MAX_RANK_PLOTS", "render_report", "write_report"]

DEFAULT_TITLE: Final = "GPU fleet report"
#: Clusters drawn rank by rank at most (the most expensive first), to keep the
#: file small enough to mail; every cluster is still in the tables.
MAX_RANK_PLOTS: Final = 6

#: CSV files ``csv_dir`` receives, and the frame each holds.
CSV_FILES: Final = (
    "pods.csv",
    "gpus.csv",
    "summary.csv",
    "idle.csv",
    "stragglers.csv",
    "cost_by_gpu_type.csv",
)


def _rank_clusters(pods: pd.DataFrame, gpus: pd.DataFrame) -> list[str]:
    """GPU clusters with at least two ranks reporting, most expensive first."""
    reporting = gpus[gpus["util"].notna() & gpus["rank"].notna()]
    ranks = reporting.groupby("cluster_id")["rank"].nunique()
    multi = {str(c) for c, n in ranks.items() if n >= 2}
    cost = pods.groupby("cluster_id")["cost"].sum()
    return sorted(multi, key=lambda c: (-float(cost.get(c, 0.0)), c))


def render_report(
    pods: pd.DataFrame,
    gpus: pd.DataFrame,
    *,
    title: str = DEFAULT_TITLE,
    generated_at: datetime | None = None,
    cluster_ids: Sequence[str] | None = None,
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
    max_rank_plots: int = MAX_RANK_PLOTS,
) -> str:
    """The report as one self-contained HTML document (a ``str``).

    Parameters
    ----------
    pods, gpus:
        A pods frame and the matching GPU frame (:func:`ccanalytics.pods_frame`,
        :func:`ccanalytics.gpus_frame`), any number of clusters.
    title:
        The page title and heading.
    generated_at:
        When the data was fetched, shown under the title; ``None`` shows no time
        (the output then depends on the frames alone, handy in tests).
    cluster_ids:
        The clusters that were asked for; those without a single pod are named,
        since they would otherwise silently vanish from every table.
    idle_threshold:
        Percent utilization under which every GPU of a pod must be for it to be
        idle (:func:`ccanalytics.analysis.idle_pods`).
    max_rank_plots:
        Clusters drawn rank by rank at most, most expensive first.
    """
    return _render(
        pods,
        gpus,
        _findings(pods, idle_threshold),
        title=title,
        generated_at=generated_at,
        cluster_ids=cluster_ids,
        max_rank_plots=max_rank_plots,
    )


def _render(
    pods: pd.DataFrame,
    gpus: pd.DataFrame,
    findings: _Findings,
    *,
    title: str,
    generated_at: datetime | None,
    cluster_ids: Sequence[str] | None,
    max_rank_plots: int,
    window_html: str = "",
) -> str:
    """:func:`render_report` with the findings already computed (write_report reuses them).

    ``window_html``: the "over the last ..." section from stored history, put first.
    """
    idle_threshold = findings.idle_threshold
    summary = cluster_summary(pods, idle_threshold=idle_threshold)
    idle = findings.idle
    by_gpu = cost_per_gpu_hour(pods)
    silent = pods[_not_reporting(pods)].sort_values(["cluster_id", "rank"], kind="stable")

    parts: list[str] = []
    meta = []
    if generated_at is not None:
        meta.append(f"Generated {generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    meta.append(
        f"{_plural(findings.clusters, 'cluster')}: "
        + ", ".join(sorted(str(c) for c in pods["cluster_id"].dropna().unique()))
    )
    parts.append(f"<h1>{_text(title)}</h1><div class=meta>{_text('. '.join(meta))}.</div>")
    parts.append(window_html)  # empty without a store
    parts.append(f'<p class="headline">{_text(" ".join(_sentences(findings)))}</p>')

    slow = findings.stragglers
    slow_note = ", ".join(f"{row.cluster_id} rank {row.rank}" for row in slow.head(3).itertuples())
    if len(slow) > 3:
        slow_note += f", +{len(slow) - 3} more"
    cards = [
        ("cost per hour", _usd(findings.total_cost), f"{_plural(findings.pods, 'pod')}", False),
        (
            "idle spend",
            _usd(findings.idle_cost),
            f"{findings.idle_share:.1%} of the total, {_plural(findings.idle_pods, 'pod')}",
            findings.idle_cost > 0,
        ),
        ("straggling ranks", str(len(slow)), slow_note or "none", len(slow) > 0),
        (
            "pods without metrics",
            str(findings.silent_pods),
            _usd(findings.silent_cost) if findings.silent_pods else "none",
            findings.silent_pods > 0,
        ),
    ]
    parts.append(
        '<div class="cards">'
        + "".join(
            f'<div class="card{" alert" if alert else ""}"><div class="label">{_text(label)}'
            f'</div><div class="value">{_text(value)}</div>'
            f'<div class="sub">{_text(sub)}</div></div>'
            for label, value, sub, alert in cards
        )
        + "</div>"
    )
    empty_clusters = sorted(set(cluster_ids or ()) - set(pods["cluster_id"].dropna()))
    if empty_clusters:
        parts.append(
            f"<p class=note>{_text('Clusters with no pods: ' + ', '.join(empty_clusters))}.</p>"
        )
    parts.append(
        "<p class=note>Costs are the API's price per hour of each pod, assumed to be USD "
        "(the API does not state a currency); utilization is in percent. A pod is idle "
        f"when every one of its GPUs is below {idle_threshold:g}%; a rank straggles when "
        "its mean GPU utilization is far below its cluster's median (robust z-score and "
        "at least 10 points).</p>"
    )
    parts.append(
        '<nav><a href="#clusters">Clusters</a><a href="#idle">Idle pods</a>'
        '<a href="#stragglers">Stragglers</a><a href="#gpu-types">GPU types</a>'
        '<a href="#no-metrics">No metrics</a><a href="#plots">Plots</a></nav>'
    )

    parts.append('<h2 id="clusters">Clusters</h2>')
    parts.append(
        _table(
            summary.sort_values("cost_per_hour", ascending=False, kind="stable"),
            _columns(
                ("cluster_id", "cluster", "text"),
                ("pods", "pods", "int"),
                ("pods_reporting", "reporting", "int"),
                ("gpus", "GPUs", "int"),
                ("cost_per_hour", "USD/h", "usd"),
                ("gpu_util_mean", "GPU util %", "pct"),
                ("gpu_util_cost_weighted", "cost-weighted GPU util %", "pct"),
                ("idle_pods", "idle pods", "int"),
                ("idle_cost_per_hour", "idle USD/h", "usd"),
                ("idle_share", "idle share of GPU spend", "share"),
                ("stragglers", "stragglers", "int"),
            ),
            "No pods.",
        )
    )
    parts.append('<h2 id="idle">Idle pods</h2>')
    parts.append(
        _table(
            idle,
            _columns(
                ("cluster_id", "cluster", "text"),
                ("name", "pod", "text"),
                ("pod_id", "pod id", "text"),
                ("rank", "rank", "int"),
                ("gpu_type", "GPU type", "text"),
                ("gpu_count", "GPUs", "int"),
                ("gpu_util_mean", "GPU util %", "pct"),
                ("gpu_util_max", "busiest GPU %", "pct"),
                ("wasted_cost_per_hour", "idle USD/h", "usd"),
            ),
            "No idle GPU pods.",
        )
    )
    parts.append('<h2 id="stragglers">Straggling ranks</h2>')
    parts.append(
        _table(
            findings.stragglers,
            _columns(
                ("cluster_id", "cluster", "text"),
                ("rank", "rank", "int"),
                ("name", "pod", "text"),
                ("pod_id", "pod id", "text"),
                ("gpu_util_mean", "GPU util %", "pct"),
                ("cluster_median", "cluster median %", "pct"),
                ("deficit", "points below median", "pct"),
                ("robust_z", "robust z", "num"),
            ),
            "No straggling ranks.",
        )
    )
    parts.append('<h2 id="gpu-types">Cost by GPU type</h2>')
    parts.append(
        _table(
            by_gpu,
            _columns(
                ("gpu_type", "GPU type", "text"),
                ("gpus", "GPUs", "int"),
                ("cost_per_hour", "USD/h", "usd"),
                ("list_cost_per_gpu_hour", "USD per GPU-hour", "usd"),
                ("gpu_util_mean", "GPU util %", "pct"),
                ("utilized_gpus", "GPUs' worth of work", "num"),
                ("cost_per_utilized_gpu_hour", "USD per utilized GPU-hour", "usd"),
            ),
            "No GPU pods.",
        )
    )
    parts.append(
        "<p class=note>USD per utilized GPU-hour: what one GPU-hour of actual work costs; "
        "idle GPUs push it above the list price. Pods without metrics are left out.</p>"
    )
    parts.append('<h2 id="no-metrics">Pods without metrics</h2>')
    parts.append(
        _table(
            silent,
            _columns(
                ("cluster_id", "cluster", "text"),
                ("name", "pod", "text"),
                ("pod_id", "pod id", "text"),
                ("rank", "rank", "int"),
                ("status", "status", "text"),
                ("gpu_type", "GPU type", "text"),
                ("gpu_count", "GPUs", "int"),
                ("cost", "USD/h", "usd"),
            ),
            "Every pod reports metrics.",
        )
    )

    parts.append('<h2 id="plots">Plots</h2>')
    n_clusters = max(findings.clusters, 1)
    parts.append(
        _figure(
            lambda ax: plots.cost_breakdown(
                pods, by="cluster_id", idle_threshold=idle_threshold, ax=ax
            ),
            (10.0, 1.4 + 0.45 * n_clusters),
            "Cost per hour by cluster",
            "Each bar is a cluster's cost per hour, split into pods in use, idle GPU pods "
            "(hatched) and pods without metrics (dotted).",
        )
    )
    n_types = max(int(pods["gpu_type"].nunique()) + 1, 1)
    parts.append(
        _figure(
            lambda ax: plots.cost_breakdown(
                pods, by="gpu_type", idle_threshold=idle_threshold, ax=ax
            ),
            (10.0, 1.4 + 0.45 * n_types),
            "Cost per hour by GPU type",
            "The same spend by GPU type.",
        )
    )
    parts.append(
        _figure(
            lambda ax: plots.cost_vs_utilization(pods, idle_threshold=idle_threshold, ax=ax),
            (10.0, 5.0),
            "Cost vs GPU utilization per pod",
            "One point per GPU pod. Points in the shaded band on the left are paid for "
            "and doing nothing.",
        )
    )
    ranked = _rank_clusters(pods, gpus)
    for cid in ranked[:max_rank_plots]:
        parts.append(f"<h3>{_text(cid)}</h3>")
        parts.append(
            _figure(
                lambda ax, cid=cid: plots.utilization_by_rank(  # type: ignore[misc]
                    pods,
                    cluster_id=cid,
                    stragglers=findings.stragglers,
                    ax=ax,
                ),
                (10.0, 4.4),
                f"{cid}: utilization by rank",
                "Bars: mean GPU utilization per rank, with the range over its GPUs; "
                "markers: CPU and memory. Straggling ranks are vermillion and hatched.",
            )
        )
        n_ranks = int(gpus.loc[gpus["cluster_id"] == cid, "rank"].nunique())
        parts.append(
            _figure(
                lambda ax, cid=cid: plots.gpu_heatmap(gpus, cluster_id=cid, ax=ax),  # type: ignore[misc]
                (8.0, min(max(2.2 + 0.11 * n_ranks, 3.0), 12.0)),
                f"{cid}: utilization per GPU",
                "One cell per GPU; a dark row is a rank lagging, a dark cell one GPU.",
            )
        )
    if len(ranked) > max_rank_plots:
        rest = ", ".join(ranked[max_rank_plots:])
        parts.append(
            f"<p class=note>{_text(f'Not drawn rank by rank (see the tables): {rest}.')}</p>"
        )

    parts.append(
        "<footer>ccanalytics report. Self-contained: no external resources; the frames "
        "behind it can be written as CSV with <code>--csv DIR</code>.</footer>"
    )
    return _page(title, parts)


# ---------------------------------------------------------------------------------
# Fetching and writing.


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same directory and ``os.replace``.

    A cron run that dies half-way leaves the previous file intact, never half a report.
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        # The temporary file's random name would only confuse: report the real target.
        raise type(err)(err.errno, f"cannot write {path}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        # mkstemp makes the file private (0600); a report is meant to be read.
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _check_directory(directory: Path, what: str) -> None:
    """Fail before any API call when a file cannot go where it is asked to."""
    if not directory.is_dir():
        raise FileNotFoundError(2, f"{what} directory does not exist: {directory}")


def _summary_text(findings: _Findings, output: str) -> str:
    where = "to standard output" if output == "-" else f"to {output}"
    return " ".join([*_sentences(findings), f"Report written {where}."])


def write_report(
    cluster_ids: str | Iterable[str],
    output: str | os.PathLike[str],
    *,
    client: Client | AsyncClient | None = None,
    csv_dir: str | os.PathLike[str] | None = None,
    now: datetime | None = None,
    title: str = DEFAULT_TITLE,
    store: str | os.PathLike[str] | None = None,
    window: timedelta | str | None = None,
) -> str:
    """Fetch ``cluster_ids``, write the HTML report to ``output``, return a summary.

    Parameters
    ----------
    cluster_ids:
        One cluster id or several.
    output:
        The HTML file, replaced atomically (a temporary file in the same
        directory, then ``os.replace``), or ``"-"`` for standard output.
    client:
        A :class:`ccanalytics.Client` or ``AsyncClient`` (clusters load concurrently
        within its rate limit); ``None``: one from ``CCANALYTICS_API_KEY``
        and ``CCANALYTICS_BASE_URL``, closed afterwards.
    csv_dir:
        Also write the frames there as CSV (created if missing): ``pods.csv``,
        ``gpus.csv``, ``summary.csv``, ``idle.csv``, ``stragglers.csv``,
        ``cost_by_gpu_type.csv``.
    now:
        The time shown as the generation time (default: the current time, UTC).
        Fixing it makes the whole file reproducible for fixed data.
    title:
        The report's title.
    store, window:
        A history store (see :func:`ccanalytics.collect`) and a duration (default
        24 h): the report then opens with what the store says about the window that
        ends at its newest snapshot (:mod:`ccanalytics.report._window`).

    Returns the opening paragraph of the report as plain text, plus where it went.

    Raises the client's errors (:class:`ccanalytics.ApiError`,
    :class:`ccanalytics.ApiConnectionError`, ...) when a cluster cannot be loaded,
    ``ValueError`` for no cluster ids, and ``OSError`` when the output cannot be
    written; in every case no file is left half-written.
    """
    ids = [cluster_ids] if isinstance(cluster_ids, str) else list(dict.fromkeys(cluster_ids))
    if not ids:
        raise ValueError("name at least one cluster id")
    target = None if os.fspath(output) == "-" else Path(output)
    if target is not None:
        _check_directory(target.parent, "output")
    if window is not None and store is None:
        raise ValueError("a window needs a store (store=...)")
    window_html, window_text = "", []
    if store is not None:
        from ccanalytics.report import _window

        over = _window.window_findings(store, pd.Timedelta(window or "24h").to_pytimedelta())
        window_html, window_text = (
            _window.render_window_section(over),
            _window.window_sentences(over),
        )

    from ccanalytics.frames._loader import load_cluster_frames

    pods, gpus = load_cluster_frames(ids, client=client, progress=False)

    generated = now if now is not None else datetime.now(UTC)
    findings = _findings(pods, DEFAULT_IDLE_THRESHOLD)
    document = _render(
        pods,
        gpus,
        findings,
        title=title,
        generated_at=generated,
        cluster_ids=ids,
        max_rank_plots=MAX_RANK_PLOTS,
        window_html=window_html,
    )
    if csv_dir is not None:
        _write_csvs(Path(csv_dir), pods, gpus, findings)
    if target is None:
        sys.stdout.write(document)
    else:
        _write_atomic(target, document)
    return " ".join([*window_text, _summary_text(findings, os.fspath(output))])


def _write_csvs(
    directory: Path, pods: pd.DataFrame, gpus: pd.DataFrame, findings: _Findings
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    frames = {
        "pods.csv": pods,
        "gpus.csv": gpus,
        "summary.csv": cluster_summary(pods, idle_threshold=findings.idle_threshold),
        "idle.csv": findings.idle,
        "stragglers.csv": findings.stragglers,
        "cost_by_gpu_type.csv": cost_per_gpu_hour(pods),
    }
    for name in CSV_FILES:
        _write_atomic(directory / name, frames[name].to_csv(index=False))
