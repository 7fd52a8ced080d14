"""How many examples a costly property test draws under the loaded Hypothesis profile.

A test that pins ``max_examples`` ignores the profile (tests/conftest.py), so a costly
one (a store and a History per example) would cost the same on the quick subset and
dig no deeper on ``HYPOTHESIS_PROFILE=thorough``. ``examples(n)`` is ``n`` on the
"fast" profile every run loads and scales with the profile's own number: 8/25 of it on
"quick", 20 times it on "thorough".
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]

#: The "fast" profile's max_examples (tests/conftest.py), the scale's unit.
FAST = 25


def examples(on_fast: int) -> int:
    """``on_fast`` examples scaled by the loaded profile (never fewer than 2)."""
    return max(2, round(on_fast * settings.default.max_examples / FAST))
