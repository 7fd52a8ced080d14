"""Which keys an audit has seen, and where: duplicate detection in 48 bytes a key.

An audit streams its entries, so the only thing that grows with the file is the
memory of keys already seen. A ``dict`` of fingerprints costs ~150 bytes a key (two
Python objects and a slot); ``_DigestTable`` keeps each key as 16 bytes of its
fingerprint's SHA-256 digest and 8 bytes of position in flat arrays, open-addressed
at most half full: 48 to 96 bytes a key, so a million keys stay under 100 MB. Sixteen
bytes of SHA-256 tell keys apart as surely as the fingerprint does (a chance
collision among a billion keys is about 1e-21). When the sources' sizes say few
keys will come (``_DICT_KEYS``), a ``dict`` of the same digests holds them instead:
~130 bytes a key, but found at C speed, where the table's Python probing was a
third of an Ed25519 line's time; past that many keys, they move to the table.
"""

from __future__ import annotations

import binascii
import hashlib
from array import array

from ccanalytics.keys._line import AuthorizedKey

__all__ = ["Duplicates"]

_WIDTH = 16  # bytes of digest kept per key
_LINE_BITS = 40  # a position is (source index << 40) | line number
_PART_BITS = 8  # the table is 2**8 tables, chosen by the digest's hash
#: Up to this many keys expected, a dict holds them (33 MB at 250,000); a quarter more
#: than that moves them to the table (which the dict and the table together stay
#: under 100 MB through).
_DICT_KEYS = 250_000


class _Part:
    """One open-addressed table of ``mask + 1`` slots, filled at most half.

    A slot's position is stored plus one, so that 0 marks an empty slot: a probe
    reads one number, and compares digests only where a key is.
    """

    __slots__ = ("count", "digests", "mask", "positions")

    def __init__(self, capacity: int) -> None:
        self.mask = capacity - 1
        self.digests = bytearray(capacity * _WIDTH)
        self.positions = array("Q", bytes(8 * capacity))
        self.count = 0


class _DigestTable:
    """A set of 16-byte digests, each with the first position it was seen at.

    Split in 256 parts by the digest's hash, each an open-addressed table that doubles
    on its own when half full: a key costs one probe sequence in one part (a table in
    levels probed every level for each new key: 7 of the 9 us an Ed25519 line took),
    and a doubling copies one part, 1/256 of the table, so the peak stays the table
    itself (about 50 MB at a million keys), not the old and the new table at once.
    ``capacity`` (slots in all, when the number of keys is known) spares the doublings.
    """

    __slots__ = ("_parts",)

    def __init__(self, capacity: int = 1 << 12) -> None:
        size = 16
        while size << _PART_BITS < capacity:
            size *= 2
        self._parts = [_Part(size) for _ in range(1 << _PART_BITS)]

    @property
    def nbytes(self) -> int:
        """Bytes held by the digests and positions of every part."""
        return sum(len(part.digests) + 8 * len(part.positions) for part in self._parts)

    def setdefault(self, digest: bytes, position: int) -> int:
        """The position ``digest`` was first seen at; ``position`` if it is new."""
        start = hash(digest)
        part = self._parts[start & ((1 << _PART_BITS) - 1)]
        start >>= _PART_BITS
        positions, mask = part.positions, part.mask
        slot = start & mask
        while held := positions[slot]:
            at = slot * _WIDTH
            if part.digests[at : at + _WIDTH] == digest:
                return held - 1
            slot = (slot + 1) & mask
        if 2 * (part.count + 1) > mask + 1:
            _grow(part)
            positions, mask = part.positions, part.mask
            slot = start & mask
            while positions[slot]:
                slot = (slot + 1) & mask
        at = slot * _WIDTH
        part.digests[at : at + _WIDTH] = digest
        positions[slot] = position + 1
        part.count += 1
        return position


def _grow(part: _Part) -> None:
    """Double ``part``'s slots, placing each digest again (same hash, one more bit)."""
    old_digests, old_positions = part.digests, part.positions
    capacity = 2 * (part.mask + 1)
    part.mask = mask = capacity - 1
    part.digests = digests = bytearray(capacity * _WIDTH)
    part.positions = positions = array("Q", bytes(8 * capacity))
    for old, held in enumerate(old_positions):
        if not held:
            continue
        digest = bytes(old_digests[old * _WIDTH : (old + 1) * _WIDTH])
        slot = (hash(digest) >> _PART_BITS) & mask
        while positions[slot]:
            slot = (slot + 1) & mask
        digests[slot * _WIDTH : (slot + 1) * _WIDTH] = digest
        positions[slot] = held


class Duplicates:
    """Where each key was first seen, across every source of one audit.

    A key is its type and fingerprint (certificates share their plain key's
    fingerprint, so their type counts too), kept as 16 digest bytes.
    """

    __slots__ = ("_names", "_small", "_table")

    def __init__(self, expected: int = 0) -> None:
        """``expected``: about how many keys will be seen, if known (room is made for them)."""
        small = 0 < expected <= _DICT_KEYS
        self._small: dict[bytes, int] | None = {} if small else None
        self._table = _DigestTable(0 if small else 2 * expected)
        self._names: list[str | None] = []

    def _spill(self, small: dict[bytes, int]) -> None:
        """Move the dict's keys to the table, which takes every key from now on."""
        self._table = _DigestTable(4 * len(small))
        for digest, position in small.items():
            self._table.setdefault(digest, position)
        self._small = None

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
        return self.earlier_digest(digest, line_no)

    def earlier_digest(self, digest: bytes, line_no: int) -> str | None:
        """``earlier`` for a plain key (no certificate) whose fingerprint is ``digest``."""
        names = self._names
        if not names:
            names.append(None)
        source = len(names) - 1
        here = source << _LINE_BITS | line_no
        small = self._small
        if small is None:
            first = self._table.setdefault(digest[:_WIDTH], here)
        else:
            first = small.setdefault(digest[:_WIDTH], here)
            if len(small) > _DICT_KEYS + _DICT_KEYS // 4:  # more keys than the sizes said
                self._spill(small)
        if first == here:
            return None
        first_source, first_line = first >> _LINE_BITS, first & (1 << _LINE_BITS) - 1
        name = self._names[first_source]
        if first_source == source or name is None:
            return f"line {first_line}"
        return f"line {first_line} of {name}"
