"""A team mapping for showback: cluster and pod-name globs to a team, first match wins.

A mapping is TOML, read with the standard library's :mod:`tomllib`::

    # The rules are tried in file order; the FIRST that matches a pod names its team.
    # A pod that no rule matches is charged to "unallocated".
    [[team]]
    name = "inference"            # the team (several rules may name the same team)
    clusters = ["cl-infer-*"]     # cluster ids or shell globs; default "*" (any cluster)
    pods = ["*-vllm-*"]           # pod names or shell globs; default "*" (any pod)

    [[team]]
    name = "research"
    clusters = "cl-research-*"    # one pattern or a list of them

A rule matches a pod when its cluster id matches one of ``clusters`` **and** its name
matches one of ``pods`` (a pod without a name is matched by its id). Globs are
:func:`fnmatch.fnmatchcase`'s: ``*``, ``?`` and ``[seq]``, case-sensitive, as the
``clusters`` of a ``check`` policy. Because the first match wins, put the narrow rules
(one pod-name pattern) before the broad ones (a whole cluster).

A malformed mapping (a TOML error, an unknown key, a missing or empty name, a pattern
that is not a string, no ``[[team]]`` table) raises :class:`~ccanalytics.errors.TeamsError`
naming the file, the line and the key, before anything is read from the store.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Final

from ccanalytics._tomlfile import Locator
from ccanalytics.errors import TeamsError

__all__ = ["UNALLOCATED", "TeamRule", "Teams", "load_teams", "parse_teams"]

#: The team of a pod that no rule matches.
UNALLOCATED: Final = "unallocated"
_KEYS: Final = ("name", "clusters", "pods")


@dataclass(frozen=True)
class TeamRule:
    """One ``[[team]]`` table: the pods it matches are charged to ``team``."""

    team: str
    clusters: tuple[str, ...] = ("*",)
    pods: tuple[str, ...] = ("*",)

    def matches(self, cluster_id: str, pod: str) -> bool:
        """Whether the pod ``pod`` (its name, else its id) of ``cluster_id`` is this team's."""
        return any(fnmatch.fnmatchcase(cluster_id, p) for p in self.clusters) and any(
            fnmatch.fnmatchcase(pod, p) for p in self.pods
        )


@dataclass(frozen=True)
class Teams:
    """A parsed team mapping: its rules in file order (the first match wins)."""

    rules: tuple[TeamRule, ...]
    path: Path | None = None

    def team_of(self, cluster_id: str, pod: str) -> str:
        """The team of a pod: the first rule that matches it, else :data:`UNALLOCATED`."""
        for rule in self.rules:
            if rule.matches(cluster_id, pod):
                return rule.team
        return UNALLOCATED

    def names(self) -> list[str]:
        """The teams the rules name, in file order, each once."""
        return list(dict.fromkeys(rule.team for rule in self.rules))


def load_teams(path: str | PathLike[str]) -> Teams:
    """Read and check the team mapping at ``path``; :class:`TeamsError` on any fault."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
        raise TeamsError(f"{source}: cannot read the team mapping: {reason}", path=source) from None
    return parse_teams(text, path=source)


def parse_teams(text: str, *, path: Path | None = None) -> Teams:
    """Check the TOML ``text`` of a team mapping; :class:`TeamsError` names the line and key."""
    where = Locator(text, path, table="team", error=TeamsError, what="the team mapping")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise where.error(None, f"not valid TOML: {err}") from None
    where.unknown_keys(document, ("team",), None, "the top level")
    tables = document.get("team", [])
    if not isinstance(tables, list) or not tables:
        raise where.error(None, "a team mapping needs at least one [[team]] table", key="team")
    rules = tuple(_rule(table, number, where) for number, table in enumerate(tables, 1))
    return Teams(rules, path)


def _rule(table: Any, number: int, where: Locator[TeamsError]) -> TeamRule:
    if not isinstance(table, dict):
        raise where.error(number, "team must be a table", key="team")
    where.unknown_keys(table, _KEYS, number, f"[[team]] {number}")
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise where.error(number, "name must be a non-empty string (the team)", key="name")
    clusters = _patterns(table.get("clusters", "*"), "clusters", number, where)
    pods = _patterns(table.get("pods", "*"), "pods", number, where)
    return TeamRule(name.strip(), clusters, pods)


def _patterns(value: Any, key: str, number: int, where: Locator[TeamsError]) -> tuple[str, ...]:
    patterns = [value] if isinstance(value, str) else value
    if (
        not isinstance(patterns, list)
        or not patterns
        or not all(isinstance(p, str) and p.strip() for p in patterns)
    ):
        raise where.error(number, f"{key} must be a name or glob, or a list of them", key=key)
    return tuple(p.strip() for p in patterns)
