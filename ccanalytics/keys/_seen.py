"""Which keys an audit has seen, and where: duplicate detection in 48 bytes a key.

An audit streams its entries, so the only thing that grows with the file is the
memory of keys already seen. A ``dict`` of fingerprints costs ~150 bytes a key (two
Python objects and a slot); ``_DigestTable`` keeps each key as 16 bytes of its
fingerprint's SHA-256 digest and 8 bytes of position in flat arrays, open-addressed
at most half full, in levels that are never copied: 48 to 96 bytes a key, so a million
keys stay under 100 MB. Sixteen bytes
of SHA-256 tell keys apart as surely as the fingerprint does (a chance collision
among a billion keys is about 1e-21).
"""

from __future__ import annotations

import binascii
import hashlib
from array import array

from ccanalytics.keys._line import AuthorizedKey

__all__ = ["Duplicates"]

_WIDTH = 16  # bytes of digest kept per key
_EMPTY = bytes(_WIDTH)  # never a real digest prefix (2**-128)
_LINE_BITS = 40  # a position is (source index << 40) | line number


class _Level:
    """One open-addressed table of ``capacity`` slots, filled at most half."""

    __slots__ = ("count", "digests", "mask", "positions")

    def __init__(self, capacity: int) -> None:
        self.mask = capacity - 1
        self.digests = bytearray(capacity * _WIDTH)
        self.positions = array("Q", bytes(8 * capacity))
        self.count = 0


class _DigestTable:
    """A set of 16-byte digests, each with the first position it was seen at.

    Kept in levels, each twice the slots of the one before, started when the last is
    half full: nothing is ever copied, so the peak is the levels themselves (about 50
    MB at a million keys), where doubling one table needs the old and the new at once
    (72 MB) and a freed table rarely goes back to the system.
    """

    __slots__ = ("_levels",)

    def __init__(self, capacity: int = 1 << 14) -> None:
        self._levels = [_Level(capacity)]

    @property
    def nbytes(self) -> int:
        """Bytes held by the digests and positions of every level."""
        return sum(len(lv.digests) + 8 * len(lv.positions) for lv in self._levels)

    def setdefault(self, digest: bytes, position: int) -> int:
        """The position ``digest`` was first seen at; ``position`` if it is new."""
        start = hash(digest)
        levels = self._levels
        for level in reversed(levels):  # the newest level holds most keys
            digests, mask = level.digests, level.mask
            slot = start & mask
            while True:
                at = slot * _WIDTH
                held = digests[at : at + _WIDTH]
                if held == digest:
                    return level.positions[slot]
                if held == _EMPTY:
                    break
                slot = (slot + 1) & mask
        level = levels[-1]
        if 2 * (level.count + 1) > level.mask + 1:
            level = _Level(2 * (level.mask + 1))
            levels.append(level)
        digests, mask = level.digests, level.mask
        slot = start & mask
        while digests[slot * _WIDTH : (slot + 1) * _WIDTH] != _EMPTY:
            slot = (slot + 1) & mask
        digests[slot * _WIDTH : (slot + 1) * _WIDTH] = digest
        level.positions[slot] = position
        level.count += 1
        return position


class Duplicates:
    """Where each key was first seen, across every source of one audit.

    A key is its type and fingerprint (certificates share their plain key's
    fingerprint, so their type counts too), kept as 16 digest bytes.
    """

    __slots__ = ("_names", "_table")

    def __init__(self) -> None:
        self._table = _DigestTable()
        self._names: list[str | None] = []

    def begin(self, name: str | None) -> None:
        """The entries noted from now on come from the source called ``name``."""
        self._names.append(name)

    def earlier(self, key: AuthorizedKey, line_no: int) -> str | None:
        """Where ``key`` was seen before (``line 3`` or ``line 3 of NAME``), if it was."""
        if key.public_key is None or key.fingerprint is None:
            return None
        digest = binascii.a2b_base64(key.fingerprint[7:] + "=")
        if key.public_key.certificate is not None:
            digest = hashlib.sha256(digest + key.public_key.key_type.encode()).digest()
        if not self._names:
            self._names.append(None)
        source = len(self._names) - 1
        here = source << _LINE_BITS | line_no
        first = self._table.setdefault(digest[:_WIDTH], here)
        if first == here:
            return None
        first_source, first_line = first >> _LINE_BITS, first & (1 << _LINE_BITS) - 1
        name = self._names[first_source]
        if first_source == source or name is None:
            return f"line {first_line}"
        return f"line {first_line} of {name}"
