"""A cluster id handed to pods_frame or gpus_frame gets the hint a list of ids gets."""

from __future__ import annotations

import pytest

from ccanalytics import gpus_frame, pods_frame


@pytest.mark.parametrize("function", [pods_frame, gpus_frame])
@pytest.mark.parametrize("given", ["cl-infer-prod", b"cl-infer-prod", ["cl-infer-prod", "cl-a"]])
def test_cluster_ids_are_pointed_at_load_cluster_frames(function: object, given: object) -> None:
    with pytest.raises(TypeError, match=r"load_cluster_frames\(cluster_ids\)") as caught:
        function(given)  # type: ignore[operator]
    assert "not valid JSON" not in str(caught.value)


@pytest.mark.parametrize("text", ['{"pods": [', "[1, 2", "  {oops"])
def test_broken_json_text_is_still_named_as_broken_json(text: str) -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        pods_frame(text)
