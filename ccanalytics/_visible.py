"""Text from outside made visible as it is: no control, bidirectional or invisible characters.

One rule for every place that shows text someone else chose (an ``authorized_keys``
comment or file name on a terminal, a cluster or pod name in the HTML report): a
character that could move the cursor, reorder the text around it (U+202E, the
isolates) or hide itself is shown as its ``\\uXXXX`` escape, and a lone surrogate (from
an undecodable file name) too, so the text can always be encoded. Standard library only.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

# Control, bidirectional and invisible characters a name could use to spoof what is shown,
# and lone surrogates.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)


def visible(text: str) -> str:
    """``text`` with every unsafe character as its escape (``\\u202e``, ``\\x1b``)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)
