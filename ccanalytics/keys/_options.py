"""sshd's options in front of a key: where they end, and whether sshd accepts them.

``advance_past_options`` is ``sshkey_advance_past_options`` (a quoted value may hold
blanks); ``parse_options`` is ``sshauthopt_parse`` (OpenSSH's auth-options.c): known
names, values in double quotes, commas between, and each value judged as sshd judges
it (``tunnel``, ``environment``, ``permitopen``/``permitlisten``, ``expiry-time``, a
second ``command``/``principals``/``from``), plus ``from=`` as ``match_host_and_ip``
reads it at login, where a broken list refuses every login. A refused value makes
sshd ignore the whole line; the reason names the option, never its value (a value
may be a secret: ``environment="TOKEN=..."``). An unknown name is quoted back only
when it is safe to (see ``_reasons.shown_option``).

``options_advice`` is what sshd only says at login (principals on a plain key line,
an expiry-time already past, ...), said up front.

Where OpenSSH calls the C library (``getservbyname`` for a port name,
``getaddrinfo`` for a ``from=`` network), this module calls the same function on
this machine; ``strptime`` is glibc's, as on Debian's and Ubuntu's sshd. An
``expiry-time`` without ``Z`` is the server's local time; it is read here as UTC.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Sequence

from ccanalytics.keys._reasons import shown_option

__all__ = ["advance_past_options", "options_advice", "parse_options"]

_OPTION_NAME = re.compile(r"[A-Za-z0-9-]*")
_FORWARDINGS = ("port-forwarding", "agent-forwarding", "x11-forwarding")
_OPTION_FLAGS = frozenset(
    [
        "restrict",
        "cert-authority",
        *(
            prefix + flag
            for flag in (*_FORWARDINGS, "touch-required", "verify-required", "pty", "user-rc")
            for prefix in ("", "no-")
        ),
    ]
)
_OPTION_VALUES = frozenset(
    (
        "command",
        "principals",
        "environment",
        "from",
        "expiry-time",
        "permitopen",
        "permitlisten",
        "tunnel",
    )
)
_ONCE = frozenset(("command", "principals", "from"))  # "multiple ... clauses"
_ENV_MAX = 1024  # SSH_AUTHOPT_ENV_MAX
_PERMIT_MAX = 4096  # SSH_AUTHOPT_PERMIT_MAX
_TUNID_MAX = 0x7FFFFFFF - 2  # SSH_TUNID_MAX: the two above it mean "any" and "error"
_NI_MAXHOST = 1025
_C_SPACE = " \t\n\v\f\r"  # isspace() in the C locale
_STRTONUM = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")  # strtoll(base 10), all of it
_ENV_NAME = re.compile(r"[A-Za-z0-9_]+")  # valid_env_name: isalnum in the C locale, or _


def advance_past_options(text: str) -> int | None:
    """``sshkey_advance_past_options``: end of the options, or None for an open quote."""
    quoted = False
    i, n = 0, len(text)
    while i < n and (quoted or text[i] not in " \t"):
        if text[i] == "\\" and text[i + 1 : i + 2] == '"':
            i += 1
        elif text[i] == '"':
            quoted = not quoted
        i += 1
    return None if quoted else i


def parse_options(text: str) -> tuple[list[tuple[str, str | None]], str | None]:
    """``sshauthopt_parse``: the options, and why sshd would ignore the line.

    ``text`` is the options as ``advance_past_options`` delimits them: a blank
    follows them on the line, so a trailing comma is accepted, as sshd accepts it.
    """
    options: list[tuple[str, str | None]] = []
    counts: dict[str, int] = {}
    env_names: set[str] = set()
    i, n = 0, len(text)
    while i < n:
        match = _OPTION_NAME.match(text, i)
        assert match is not None
        name = match.group()
        i = match.end()
        value = None
        if i < n and text[i] == "=":
            if i + 1 >= n or text[i + 1] != '"':
                return options, "an option value is not in double quotes"
            j = i + 2
            chars = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and text[j + 1 : j + 2] == '"':
                    j += 1
                chars.append(text[j])
                j += 1
            if j >= n:
                return options, "an option value has no closing quote"
            value, i = "".join(chars), j + 1
        # sshd matches no option at an empty one and goes on to the comma: it is skipped.
        if name or value is not None or (i < n and text[i] != ","):
            known = _OPTION_VALUES if value is not None else _OPTION_FLAGS
            lower = name.lower()
            if lower not in known:
                word = re.match(r"[^,=]*", text[match.start() :])
                assert word is not None  # the whole word, not a quotable fragment of a token
                return options, f"the option{shown_option(word.group())} is not one sshd knows"
            if value is not None:
                error = _value_error(lower, value, counts, env_names)
                if error is not None:
                    return options, error
            options.append((name, value))
        if i < n:
            if text[i] != ",":
                return options, "the options are not separated by commas"
            i += 1
    return options, None


def _value_error(name: str, value: str, counts: dict[str, int], env_names: set[str]) -> str | None:
    """Why sshd refuses ``name="value"`` after the options before it, or None."""
    seen = counts.get(name, 0)
    counts[name] = seen + 1
    if name in _ONCE and seen:
        return f"{name}= is given twice, and sshd allows it once"
    if name == "tunnel":
        if value.lower() != "any" and _strtonum(value, 0, _TUNID_MAX) is None:
            return 'tunnel= must be a tun device number or "any"'
    elif name == "environment":
        if len(env_names) > _ENV_MAX:
            return f"there are more than {_ENV_MAX} environment= options"
        env, equals, _ = value.partition("=")
        if not equals or not _ENV_NAME.fullmatch(env):
            return (
                "environment= must be NAME=value, the name made of ASCII letters, digits"
                " and underscores"
            )
        env_names.add(env)
    elif name in ("permitopen", "permitlisten"):
        if seen > _PERMIT_MAX:
            return f"there are more than {_PERMIT_MAX} {name}= options"
        return _permit_error(name, value)
    elif name == "expiry-time":
        if not _absolute_time(value):
            return (
                "expiry-time= must be a date after 1970 written YYYYMMDD, YYYYMMDDHHMM or"
                " YYYYMMDDHHMMSS, with Z or UTC after it for UTC"
            )
    elif name == "from":
        return _from_error(value)
    return None


# --------------------------------------------------------------------------- values


def _strtonum(text: str, low: int, high: int) -> int | None:
    """OpenBSD's ``strtonum``: all of ``text`` a base-10 number from low to high."""
    if not _STRTONUM.fullmatch(text):
        return None
    number = int(text)
    return number if low <= number <= high else None


def _a2port(text: str) -> int:
    """misc.c ``a2port``: a port number, else a TCP service name, else -1."""
    number = _strtonum(text, 0, 65535)
    if number is not None:
        return number
    if not text or not text.isascii():
        return -1
    import socket  # only here: a service name in a permit is rare, and --help stays fast

    try:
        return socket.getservbyname(text, "tcp")
    except (OSError, ValueError):
        return -1


def _hpdelim2(text: str) -> tuple[str | None, str | None]:
    """misc.c ``hpdelim2``: the host (None if malformed) and what follows ':' or '/'."""
    if text.startswith("["):
        end = text.find("]")
        if end == -1:
            return None, None
        end += 1
    else:
        found = re.search("[:/]", text)
        end = found.start() if found else len(text)
    if end == len(text):
        return text, None
    if text[end] in ":/":
        return text[:end], text[end + 1 :]
    return None, None


def _permit_error(name: str, value: str) -> str | None:
    """auth-options.c ``handle_permit``: host:port, port 1-65535 or *."""
    if name == "permitlisten" and ":" not in value:
        value = "*:" + value  # a bare port listens on every address
    host, port = _hpdelim2(value)
    if host is None or len(host.encode("utf-8", "surrogatepass")) >= _NI_MAXHOST:
        return f"the host in {name}= is malformed (an IPv6 address goes in [brackets])"
    if port is None or (port != "*" and _a2port(port) <= 0):
        return f"{name}= must be host:port, the port a number from 1 to 65535 or *"
    return None


# glibc strptime's fields: (lowest, highest, most digits).
_TIME_FIELDS = {"Y": (0, 9999, 4), "m": (1, 12, 2), "d": (1, 31, 2)}
_TIME_FIELDS.update({"H": (0, 23, 2), "M": (0, 59, 2), "S": (0, 61, 2)})


def _absolute_time(text: str) -> int | None:
    """misc.c ``parse_absolute_time``: seconds since 1970, or None if sshd refuses it."""
    if not text.isascii():
        return None
    if len(text) > 1 and text[-1] in "zZ":
        text = text[:-1]
    elif len(text) > 3 and text[-3:].lower() == "utc":
        text = text[:-3]
    s = text
    if len(s) == 8:
        buf, fmt = f"{s[:4]}-{s[4:6]}-{s[6:8]}", "%Y-%m-%d"
    elif len(s) == 12:
        buf, fmt = f"{s[:4]}-{s[4:6]}-{s[6:8]}T{s[8:10]}:{s[10:12]}", "%Y-%m-%dT%H:%M"
    elif len(s) == 14:
        buf = f"{s[:4]}-{s[4:6]}-{s[6:8]}T{s[8:10]}:{s[10:12]}:{s[12:14]}"
        fmt = "%Y-%m-%dT%H:%M:%S"
    else:
        return None
    fields = _strptime(buf, fmt)
    if fields is None or fields["Y"] < 1970:
        return None  # before 1970: mktime's time is negative
    clock = (fields.get("H", 0), fields.get("M", 0), fields.get("S", 0))
    stamp = calendar.timegm((fields["Y"], fields["m"], fields["d"], *clock))
    return stamp if stamp > 0 else None  # sshd refuses 0 too


def _strptime(buf: str, fmt: str) -> dict[str, int] | None:
    """glibc ``strptime`` for these formats: blanks may lead a number, all must be read."""
    fields: dict[str, int] = {}
    i, k = 0, 0
    while k < len(fmt):
        if fmt[k] != "%":
            if buf[i : i + 1] != fmt[k]:
                return None
            i, k = i + 1, k + 1
            continue
        low, high, digits = _TIME_FIELDS[fmt[k + 1]]
        k += 2
        while i < len(buf) and buf[i] in _C_SPACE:
            i += 1
        if not buf[i : i + 1].isdigit():
            return None
        value = 0
        while True:  # glibc's get_number
            value, i, digits = value * 10 + int(buf[i]), i + 1, digits - 1
            if not (digits and value * 10 <= high and buf[i : i + 1].isdigit()):
                break
        if not low <= value <= high:
            return None
        fields[fmt[k - 1]] = value
    return fields if i == len(buf) else None


def _from_error(value: str) -> str | None:
    """addrmatch.c ``addr_match_list``: a list that makes every login fail (-2)."""
    for pattern in value.split(","):
        pattern = pattern.removeprefix("!")
        if not pattern:
            return "from= has an empty pattern, so sshd refuses every login with this key"
        if "/" in pattern and _cidr_is_inconsistent(pattern):
            return (
                "from= has a network whose mask does not fit its address (host bits set,"
                " or longer than the address), so sshd refuses every login with this key"
            )
    return None


def _cidr_is_inconsistent(pattern: str) -> bool:
    """``addr_pton_cidr`` returning -2: an address, a mask, and the two do not fit.

    Anything that is not an address and a mask is a wildcard pattern to sshd, not an error.
    """
    if len(pattern.encode("utf-8", "surrogatepass")) >= 64:  # addrbuf[64]
        return False
    address, _, mask = pattern.partition("/")
    if not mask.isascii() or not mask.isdigit() or int(mask) > 128:
        return False
    import ipaddress
    import socket  # only here: getaddrinfo is how sshd reads an address (inet_aton's forms)

    try:
        info = socket.getaddrinfo(address, None, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return False
    if not info:
        return False
    host = str(info[0][4][0]).partition("%")[0]
    parsed = ipaddress.ip_address(host)
    bits = parsed.max_prefixlen
    length = int(mask)
    if length > bits:
        return True
    return int(parsed) & ((1 << (bits - length)) - 1) != 0


# --------------------------------------------------------------------------- advice


def options_advice(
    options: Sequence[tuple[str, str | None]], *, certificate: bool, now: float | None = None
) -> list[str]:
    """What sshd would only say at login about options it accepts, as warnings."""
    names = [name.lower() for name, _ in options]
    warnings = []
    cert_authority = "cert-authority" in names
    if "principals" in names and not cert_authority:
        warnings.append(
            "principals= belongs on a cert-authority line: on a plain key's line sshd"
            " refuses every login with the key."
        )
    principals = next((v for n, v in options if n.lower() == "principals"), None)
    if cert_authority and principals is not None and not any(principals.split(",")):
        warnings.append(
            "principals= names no principal: sshd matches a certificate's principals"
            " against it, so no certificate logs in with this line."
        )
    if cert_authority and certificate:
        warnings.append(
            "cert-authority is given with a certificate, not with the CA's public key:"
            " put the CA key that signs the certificates (ssh-keygen -L names it) on this"
            " line."
        )
    expiries = [_absolute_time(v or "") for n, v in options if n.lower() == "expiry-time"]
    expires = min((t for t in expiries if t), default=None)
    if expires is not None and expires <= (time.time() if now is None else now):
        day = time.strftime("%Y-%m-%d", time.gmtime(expires))
        warnings.append(
            f"The expiry-time option expired this key on {day}: sshd no longer lets it log in."
        )
    reenabled = _reenabled_after_restrict(names)
    if reenabled:
        flags = " and ".join(reenabled)
        words = " and ".join(flag.replace("-", " ").replace("x11", "X11") for flag in reenabled)
        verb = "turns" if len(reenabled) == 1 else "turn"
        warnings.append(f"restrict is followed by {flags}, which {verb} {words} back on.")
    from_value = next((v for n, v in options if n.lower() == "from"), None)
    patterns = (from_value or "").split(",")
    if from_value and all(p.startswith("!") for p in patterns) and not _from_error(from_value):
        warnings.append(
            "from= has only negated (!) patterns: no host matches it, so sshd refuses"
            " every login with this key."
        )
    return warnings


def _reenabled_after_restrict(names: list[str]) -> list[str]:
    """The forwardings on at the end that the last ``restrict`` had turned off."""
    if "restrict" not in names:
        return []
    last = len(names) - 1 - names[::-1].index("restrict")
    state: dict[str, bool] = {}
    for name in names[last + 1 :]:
        flag = name.removeprefix("no-")
        if flag in _FORWARDINGS:
            state[flag] = not name.startswith("no-")
    return [flag for flag in _FORWARDINGS if state.get(flag)]
