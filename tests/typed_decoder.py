"""Force every pod of a raw listing onto the per-pod fallback (the standard library's
``json`` and the dict reader), for tests that run each raw-JSON test on both paths."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from ccanalytics.frames import _decode


class RefusingDecoder:
    """Stands in for the typed pod decoder: refuses every pod, and counts them."""

    def __init__(self) -> None:
        self.refused = 0

    def decode(self, raw: Any) -> Any:
        self.refused += 1
        raise msgspec.ValidationError("refused for the test")


@contextmanager
def typed_decoder_refused() -> Iterator[RefusingDecoder]:
    """Within the block, the typed decoder refuses every pod."""
    refusing = RefusingDecoder()
    # The generated loop reads ``_POD`` from its own namespace, not the module's: a
    # patched ``_decode._POD`` would go unseen, and the test run on the typed path.
    namespace = _decode.decoded_rows.__globals__
    saved = namespace["_POD"]
    namespace["_POD"] = refusing
    try:
        yield refusing
    finally:
        namespace["_POD"] = saved
