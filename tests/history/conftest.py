"""Fixtures shared by the history tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from budget_store import write_budget_store
from s3faults import fault_proxy  # noqa: F401 (fixture: faults between the store and S3)
from s3server import s3_endpoint, s3_store  # noqa: F401 (fixtures: a local S3 server)


@pytest.fixture(scope="module")
def budget_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two clusters in November 2026, hand-computable (see budget_store.py)."""
    return write_budget_store(tmp_path_factory.mktemp("budget"))
