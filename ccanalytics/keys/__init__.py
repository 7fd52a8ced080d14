"""The SSH key audit: authorized_keys judged as the API and as OpenSSH will judge them.

Each entry is judged twice, because two programs will read it: the API
(``api_valid``: the spec's pattern as an ECMA-262 engine judges it, ``api_rule``)
and OpenSSH on the pods (``key_valid``: the key material as ``sshd`` reads it).

- ``_audit``: auditing (``audit_keys``, ``audit_lines``, ``parse_authorized_key``),
  entry by entry, with duplicates found across sources;
- ``_replace``: replacing the account's keys (``normalize_key_lines``, ``diff_ssh_keys``);
- ``_line``: one authorized_keys line (key, comment, problems); ``_options``: sshd's
  options in front of it;
- ``_reasons``: why a line is refused, in words that never quote a secret;
- ``_source``: paths, text, bytes and lines read into entries, line by line, and the one
  rule saying whether a source is key text or files (``names_a_file``, ``key_files``);
- ``_seen``: the keys already seen, for duplicates (16 digest bytes a key);
- ``_writers``: an audit written entry by entry as a table, CSV or JSON
  (``AUDIT_WRITERS``; ``audit-keys``' output), in the columns of ``AUDIT_COLUMNS``;
- ``_sshbuf``, ``_sshwire``, ``_sshsig``: the SSH wire format, key blobs and curve checks;
- ``api_rule``: the spec's key pattern, as the server's validator judges it;
The ``audit-keys`` command is in :mod:`ccanalytics.cli` with the other commands; it
parses and prints, streaming entries through :func:`iter_rows` into an
``AUDIT_WRITERS`` writer (no pandas: it must start fast); :func:`iter_rows`
yields a line with nothing to say as a bare ``PlainEntry`` (most lines of a large file).

It imports only the standard library, :mod:`ccanalytics.errors`, ``_visible`` and ``_csv`` (pandas inside
``audit_keys``, ``cryptography`` on the first certificate whose signature is checked); the API client imports ``api_rule`` from here, never the reverse.
"""

from __future__ import annotations

from ccanalytics.keys._audit import (
    AUDIT_COLUMNS,
    RECOMMENDED_RSA_BITS,
    AuditEntry,
    AuthorizedKey,
    Duplicates,
    KeySource,
    PlainEntry,
    audit_keys,
    audit_lines,
    iter_audit,
    iter_rows,
    parse_authorized_key,
)
from ccanalytics.keys._replace import (
    KeptKey,
    KeyChange,
    KeyNormalizationError,
    KeyOptionsDroppedWarning,
    KeyRef,
    diff_ssh_keys,
    normalize_key_lines,
)
from ccanalytics.keys._source import is_utf16, open_regular
from ccanalytics.keys._sshbuf import short_type_name
from ccanalytics.keys._writers import AUDIT_WRITERS, AuditWriter, shown_name

__all__ = [
    "AUDIT_COLUMNS",
    "AUDIT_WRITERS",
    "RECOMMENDED_RSA_BITS",
    "AuditEntry",
    "AuditWriter",
    "AuthorizedKey",
    "Duplicates",
    "KeptKey",
    "KeyChange",
    "KeyNormalizationError",
    "KeyOptionsDroppedWarning",
    "KeyRef",
    "KeySource",
    "PlainEntry",
    "audit_keys",
    "audit_lines",
    "diff_ssh_keys",
    "is_utf16",
    "iter_audit",
    "iter_rows",
    "normalize_key_lines",
    "open_regular",
    "parse_authorized_key",
    "short_type_name",
    "shown_name",
]
