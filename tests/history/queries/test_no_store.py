"""A path that holds no store is a StoreError naming it, never an empty answer.

A mistyped ``--store`` (``./ccstor``), a folder that is something else (``/etc``) or an
S3 prefix nothing was collected to would otherwise answer every question with an empty
frame, and a cron job would read "no idle cost" for weeks. Creating a store is
``collect``'s job alone: opening History creates nothing. A store that holds only
listings that answered empty (or failed) is a store: its answers are empty, rightly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from history_helpers import write_empty_listing
from s3server import new_bucket, s3_endpoint  # noqa: F401 (fixture: a local S3 server)

from ccanalytics import History, StoreError


def test_a_missing_path_is_a_store_error_naming_it_and_nothing_is_created(
    tmp_path: Path,
) -> None:
    typo = tmp_path / "ccstor"
    with pytest.raises(StoreError, match="holds no snapshot") as caught:
        History(typo)
    assert str(typo) in str(caught.value) and "does not exist" in str(caught.value)
    assert caught.value.path == typo
    assert not typo.exists()


@pytest.mark.parametrize("content", ["empty", "other files"])
def test_a_folder_that_is_no_store_is_a_store_error_naming_it(tmp_path: Path, content: str) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    if content == "other files":  # what /etc holds: files and folders, none of a store
        (folder / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
        (folder / "ssl" / "certs").mkdir(parents=True)
    with pytest.raises(StoreError, match="holds no snapshot") as caught:
        History(folder)
    assert str(folder) in str(caught.value) and "pods/" in str(caught.value)
    assert caught.value.path == folder
    assert sorted(p.name for p in folder.iterdir()) == (
        [] if content == "empty" else ["passwd", "ssl"]
    )


def test_a_store_of_one_empty_listing_answers_empty(tmp_path: Path) -> None:
    write_empty_listing(tmp_path)
    with History(tmp_path) as h:
        assert h.idle_cost().empty and h.stragglers().empty
        assert h.idle_cost(by=None)["total_cost"].tolist() == [0.0]
        assert len(h.coverage()) == 1


def test_an_s3_prefix_nothing_was_collected_to_is_a_store_error(s3_endpoint: str) -> None:  # noqa: F811
    bucket = new_bucket(s3_endpoint)
    with pytest.raises(StoreError, match="holds no snapshot") as caught:
        History(f"s3://{bucket}/ccstor")
    assert f"s3://{bucket}/ccstor" in str(caught.value)
    with pytest.raises(StoreError) as caught:
        History(f"s3://{bucket}-missing/ccstore")
    assert f"s3://{bucket}-missing" in str(caught.value)
