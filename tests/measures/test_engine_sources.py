"""The live engine's relations: registered once where DuckDB can rescan them, and the
frame's arrays never kept past a query."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

from ccanalytics import analysis
from ccanalytics.frames._build import pods_frame
from ccanalytics.measures import _engine
from ccanalytics.sandbox import make_cluster_pods


@pytest.mark.parametrize(
    ("version", "rescans"),
    [("1.3.0", False), ("1.4.4", False), ("1.5.0", True), ("1.10.2", True), ("2.0.1", True)],
)
def test_streams_are_rescanned_from_duckdb_1_5(version: str, rescans: bool) -> None:
    assert _engine._rescans_streams(version) is rescans


def test_a_query_keeps_no_table_and_the_next_reads_its_own_frame() -> None:
    small = pods_frame(make_cluster_pods("a", 6, seed=1))
    large = pods_frame(make_cluster_pods("b", 9, seed=2, straggler_ranks=(4,)))
    assert analysis.cluster_summary(small)["pods"].tolist() == [6]
    assert analysis.cluster_summary(large)["pods"].tolist() == [9]
    assert analysis.stragglers(large)["rank"].tolist() == [4]
    sources = _engine._LOCAL.sources
    if sources is not None:  # DuckDB 1.5+: the registered relations hold nothing now
        assert sources and all(source.table is None for source in sources.values())


def _stragglers_here(parents_connection: int) -> tuple[bool, list[int]]:
    """In a forked child: whether the engine answers on a connection other than the
    parent's (the object the fork copied sits at the same address), and its answer."""
    frame = pods_frame(make_cluster_pods("b", 9, seed=2, straggler_ranks=(4,)))
    ranks = analysis.stragglers(frame)["rank"].tolist()
    return id(_engine._LOCAL.con) != parents_connection, ranks


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform"
)
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_process_queries_on_a_connection_of_its_own() -> None:
    """The report's drawing workers are forked, and may be after this process queried
    (render_report judges the fleet first). DuckDB's state is not fork-safe (its threads
    are not copied: duckdb/duckdb-python#292), so the child opens its own database."""
    frame = pods_frame(make_cluster_pods("b", 9, seed=2, straggler_ranks=(4,)))
    assert analysis.stragglers(frame)["rank"].tolist() == [4]  # this process's connection
    parents = id(_engine._LOCAL.con)
    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=fork) as pool:
        own, ranks = pool.submit(_stragglers_here, parents).result(timeout=60)
    assert own, "the child queried on the connection it inherited"
    assert ranks == [4]
    assert id(_engine._LOCAL.con) == parents  # the parent's is still its own


def test_the_at_fork_hook_makes_the_next_query_connect_anew_and_keeps_the_old() -> None:
    """What the hook does in the child, run here: the next query opens a connection of
    its own; the inherited one is kept referenced and open (closing or freeing it in a
    child would join DuckDB threads the fork did not copy)."""
    frame = pods_frame(make_cluster_pods("b", 9, seed=2, straggler_ranks=(4,)))
    assert analysis.stragglers(frame)["rank"].tolist() == [4]
    inherited = _engine._LOCAL.con
    _engine._forget_inherited()
    assert analysis.stragglers(frame)["rank"].tolist() == [4]
    assert _engine._LOCAL.con is not inherited
    assert any(state.get("con") is inherited for state in _engine._INHERITED)
    assert inherited.execute("SELECT 42").fetchall() == [(42,)]  # never closed
