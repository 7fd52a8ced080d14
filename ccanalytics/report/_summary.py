"""What ``write_report`` returns: the report's opening paragraph, where it went, and its
headline figures (:class:`ReportSummary`, which ``ccanalytics report`` prints)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

from ccanalytics.errors import CCAnalyticsError
from ccanalytics.report._findings import _Findings, _sentences
from ccanalytics.report._sections import live_headline
from ccanalytics.report._templates import block

# Underscored names are for ``report``, not public API.
__all__ = ["ReportSummary", "_summary_text"]


class ReportSummary(str):
    """The report's opening paragraph and where it went (a ``str``), plus ``errors``.

    ``errors`` maps each cluster that could not be loaded (``errors="collect"``) to
    its exception, as a fleet load's ``frame.attrs["errors"]`` does; empty when every
    cluster loaded. ``figures`` holds the headline figures, (label, value) in order,
    which Jupyter shows as a small table (``_repr_html_``).
    """

    errors: dict[str, CCAnalyticsError]
    figures: tuple[tuple[str, str], ...]

    def __new__(
        cls,
        text: str,
        errors: Mapping[str, CCAnalyticsError] | None = None,
        figures: Sequence[tuple[str, str]] = (),
    ) -> ReportSummary:
        summary = super().__new__(cls, text)
        summary.errors = dict(errors or {})
        summary.figures = tuple(figures)
        return summary

    def _repr_html_(self) -> str:
        return str(block("summary_table", self.figures, str(self)))

    @property
    def failed(self) -> dict[str, str]:
        """The old name of :attr:`errors`, as messages (goes in the next release)."""
        warnings.warn(
            "ReportSummary.failed is now ReportSummary.errors, which holds the exceptions "
            "(the old name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return {cid: str(err) for cid, err in self.errors.items()}


def _summary_text(
    findings: _Findings,
    output: str,
    errors: Mapping[str, CCAnalyticsError],
    before: Sequence[str] = (),
) -> ReportSummary:
    """The findings' sentences and where the report went, after ``before`` (the store's)."""
    where = "to standard output" if output == "-" else f"to {output}"
    text = " ".join([*before, *_sentences(findings), f"Report written {where}."])
    return ReportSummary(text, errors, _summary_figures(findings, output, errors))


def _summary_figures(
    f: _Findings, output: str, errors: Mapping[str, CCAnalyticsError]
) -> list[tuple[str, str]]:
    """The summary's table: the headline figures, what could not be loaded, where it went."""
    headline = live_headline(f)
    rows = [
        ("clusters", f"{f.clusters} ({f.pods} pods)"),
        ("cost", f"{f.total_cost:,.2f} USD/h"),
        ("wasted", f"{headline.value} ({headline.share})"),
        ("idle GPU pods", f"{f.idle_pods} ({f.idle_cost:,.2f} USD/h)"),
        ("straggling ranks", str(len(f.stragglers))),
    ]
    if errors:
        rows.append(("could not load", ", ".join(errors)))
    rows.append(("written to", "standard output" if output == "-" else output))
    return rows
