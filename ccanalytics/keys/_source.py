"""Key sources: a path, the text of a file, its bytes or its lines, read as entries.

``key_files`` says whether a source is files or keys themselves (the one rule, see
:func:`names_a_file`); ``_entries`` splits a source at line feeds (bytes are decoded as
UTF-8, noting lines that are not) and judges each entry with ``_judge_line``. A block
of several lines (:mod:`._blocks`) becomes one entry.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, TypeAlias

from ccanalytics._visible import visible
from ccanalytics.errors import KeyFileError
from ccanalytics.keys._blocks import (
    _MARKER_WORDS,
    _RFC4716_BEGIN,
    Line,
    _Lines,
    _pem_block,
    _private_key_body,
    _private_key_kind,
    _rfc4716,
    _rfc4716_lines,
    _span,
)
from ccanalytics.keys._line import (
    AuthorizedKey,
    PlainEntry,
    _judge_line,
    _openssh_view,
    _plain_entry,
    _read_line,
    looks_like_path,
)
from ccanalytics.keys._reasons import (
    looks_like_secret,
    newer_key_type,
)

# Underscored names are for ``keys``, not public API.
__all__ = [
    "Entry",
    "KeySource",
    "Line",
    "_entries",
    "file_lines",
    "is_key_text",
    "is_utf16",
    "key_files",
    "names_a_file",
]


#: A path, a list or tuple of paths, the text of a file, its bytes, or the lines themselves
#: (which a ``str`` or a list is: :func:`key_files`).
KeySource: TypeAlias = (
    str
    | os.PathLike[str]
    | bytes
    | bytearray
    | Iterable[str | bytes]
    | Sequence[str | os.PathLike[str]]
)


# --------------------------------------------------------------------------- sources


def _decode(raw: bytes) -> Line:
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), False


def is_utf16(head: bytes) -> bool:
    """Whether bytes start with a UTF-16 byte order mark (what PowerShell's ``>`` writes)."""
    return head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def file_lines(file: BinaryIO) -> Iterator[Line]:
    """The lines of an open binary file, one at a time, split at line feeds only.

    UTF-16 with a byte order mark is decoded as such; anything else as UTF-8, each
    line noting whether it was valid (undecodable bytes become U+FFFD).
    """
    head = file.peek(2)[:2] if isinstance(file, io.BufferedReader) else b""
    if is_utf16(head):
        text = io.TextIOWrapper(file, encoding="utf-16", errors="replace", newline="\n")
        for line in text:
            yield line.removesuffix("\n"), True
        text.detach()
        return
    read = file.read1 if isinstance(file, io.BufferedReader) else file.read
    while block := read(_BLOCK):
        if not block.endswith(b"\n"):
            block += file.readline()  # whole lines only: no character is cut in two
        try:  # a block at a time: most files are UTF-8 throughout
            lines = block.decode("utf-8").removesuffix("\n").split("\n")
        except UnicodeDecodeError:
            for raw in block.removesuffix(b"\n").split(b"\n"):
                yield _decode(raw)
            continue
        for line in lines:
            yield line, True


_BLOCK = 1 << 16  # bytes read at a time (then up to the end of the line)


def open_regular(
    path: str | os.PathLike[str],
    shown: str | None = None,
    *,
    stream_hint: str = "pass it as an open file instead",
) -> BinaryIO:
    """Open ``path`` for reading if it is a regular file; :class:`KeyFileError` otherwise.

    The open is non-blocking (then made blocking), so a named pipe with no writer is
    refused at once instead of waiting forever; directories and devices are refused
    too. ``shown`` is how messages name the file (default: the path itself);
    ``stream_hint`` says how to read a pipe instead (the CLI: standard input).
    """
    name = shown if shown is not None else os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as err:
        raise KeyFileError(f"cannot read {name}: {err.strerror or err}") from None
    except ValueError as err:  # a NUL in the name: no file has it
        raise KeyFileError(f"cannot read {name}: {err}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        why = (
            os.strerror(errno.EISDIR)
            if stat.S_ISDIR(mode)
            else f"not a regular file (a pipe or device: {stream_hint})"
        )
        raise KeyFileError(f"cannot read {name}: {why}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb", buffering=1 << 16)


# --------------------------------------------------------------------------- keys or files

_BLOCK_STARTS = ("-----BEGIN", "---- BEGIN SSH2", "PuTTY-User-Key-File-")
# Base64 this long is key material (a key's blob, a line of a private key's body).
_BASE64_WORD = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")


def is_key_text(text: str) -> bool:
    """Whether ``text`` is authorized_keys content, never a file's name.

    It is when it holds a line feed, or its one line reads as an entry: blank, a ``#``
    comment, a key type first (known, or newer than this audit) or after options, a
    block's first line, a private key's marker, base64 key material, or a word shaped
    like a pasted credential: taken for a file's name, these would be quoted in the
    error saying no such file exists.
    """
    if "\n" in text:
        return True
    stripped = text.strip()
    if not stripped or stripped.startswith(("#", *_BLOCK_STARTS)):
        return True
    if _BASE64_WORD.fullmatch(stripped) or _private_key_kind(text) is not None:
        return True
    if looks_like_secret(stripped) and not looks_like_path(stripped):
        return True
    read = _read_line(_openssh_view(text)[0])
    return read.read.type_token is not None or read.has_options or newer_key_type(read.read.word)


def names_a_file(text: str) -> bool:
    """Whether a ``str`` source is a file's name, read as a ``Path`` would be: the one rule.

    It is when it is not key text (:func:`is_key_text`) and it names something that
    exists, has a path's shape (``/``, ``~``, ``./``, ``.pub``, ``authorized_keys``) or
    is one word: a key line holds at least a type and a key, so a lone word can only be
    a file's name, as ``ssh-keygen -f`` takes it. Other text is audited as a line.
    """
    if is_key_text(text):
        return False
    if " " not in text and "\t" not in text:
        return True
    return looks_like_path(text) or os.path.lexists(os.path.expanduser(text))


def _is_file(item: object) -> bool:
    return isinstance(item, os.PathLike) or (isinstance(item, str) and names_a_file(item))


def key_files(source: object) -> list[str | os.PathLike[str]] | None:
    """The files ``source`` names, or None when it is keys themselves.

    A path object, or a ``str`` that :func:`names_a_file`, is one file. A list or tuple
    whose first item is one is a list of files, and then every item must be one: a
    :class:`KeyFileError` names an item that is not (never quoting it, it may be a key).
    """
    if _is_file(source):
        return [source]  # type: ignore[list-item]
    if not isinstance(source, list | tuple) or not source or not _is_file(source[0]):
        return None
    for number, item in enumerate(source, 1):
        if not _is_file(item):
            raise KeyFileError(
                f"item {number} of the list is key text, not a file: a list holds file"
                " names or key lines, not both"
            )
    return list(source)


def open_key_file(path: str | os.PathLike[str]) -> BinaryIO:
    """``open_regular`` on a key file, ``~`` read as the home folder (as OpenSSH reads it).

    Errors name the file as given, made visible (an undecodable name's lone surrogates
    as escapes, so the message can always be printed).
    """
    return open_regular(os.path.expanduser(path), visible(os.fspath(path)))


def _source_lines(source: KeySource) -> Iterator[Line]:
    """The entries of ``source`` as (text, was valid UTF-8), split at line feeds.

    ``source`` is one file or keys themselves (a list of files is read file by file,
    by the caller).
    """
    if _is_file(source):
        with open_key_file(source) as file:  # type: ignore[arg-type]
            yield from file_lines(file)
        return
    if isinstance(source, str):
        for line in source.split("\n"):
            yield line, True
        return
    if isinstance(source, bytes | bytearray | memoryview):
        yield from file_lines(io.BufferedReader(io.BytesIO(bytes(source))))
        return
    if isinstance(source, io.BufferedReader):  # an open binary file: may be UTF-16
        yield from file_lines(source)
        return
    if not isinstance(source, Iterable):
        raise TypeError(
            "expected a path, text, bytes or an iterable of lines, not " + type(source).__name__
        )
    for item in source:
        if isinstance(item, bytes | bytearray):
            text, ok = _decode(bytes(item))
        elif isinstance(item, str):
            text, ok = item, True
        else:
            raise TypeError(f"lines must be str or bytes, not {type(item).__name__}")
        if text.endswith("\n"):
            text = text[:-1]
        for part in text.split("\n"):
            yield part, ok


Entry: TypeAlias = tuple[int, AuthorizedKey, bool]


def _entries(
    source: KeySource, *, drop_bom: bool = False, plain: bool = False
) -> Iterator[Entry | PlainEntry]:
    """(line number, judgement, was valid UTF-8) for every entry; blocks become one.

    Lines are read one at a time, so a file of any size is judged in constant memory.
    ``drop_bom`` removes a byte order mark that starts the input (normalizing does;
    auditing reports it, since sshd does not skip it either). With ``plain``, a line
    with nothing to say about it is a ``PlainEntry`` (no objects built), alone.
    """
    source_lines = _source_lines(source)
    lines = _Lines(source_lines)
    first = True
    private, putty, openssh = _MARKER_WORDS
    while True:
        if plain and lines.idle():
            # Plain lines straight off the source, most of a large file: no ``take``. A
            # plain line holds no private key's body (its comment is too short for one,
            # its key is a parsed blob), so only a marker could make it one.
            number = lines.line_no
            for text, utf8 in source_lines:
                found = _plain_entry(number + 1, text)
                if found is None or private in text or putty in text or openssh in text:
                    lines.put_back((text, utf8))  # for the full judgement, below
                    break
                number += 1
                first = False
                yield found
            lines.line_no = number
        line = lines.take()
        if line is None:
            return
        text, utf8 = line
        probe = text
        if first:
            first = False
            if drop_bom:
                text = text.removeprefix("\ufeff")
            probe = text.lstrip("\ufeff")
        stripped = probe.strip()
        if not stripped or stripped.startswith("#"):
            continue
        line_no = lines.line_no
        kind = _private_key_kind(text)
        if stripped.startswith(("-----BEGIN", "PuTTY-User-Key-File-")):
            yield line_no, _pem_block(lines, stripped, kind), True
        elif kind is not None:
            yield line_no, _private_key_body(lines, kind), True
        elif stripped == _RFC4716_BEGIN:
            block, block_utf8 = _rfc4716_lines(lines, text, utf8)
            yield line_no, _rfc4716(block, _span(line_no, lines.line_no)), block_utf8
        else:
            yield line_no, _judge_line(text), utf8
