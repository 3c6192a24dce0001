"""Redaction: credentials removed from settings, addresses and messages before they are written or shown.

The second line behind the allowlist of shared files, and the only one for messages: every
one-line error and warning runs through :func:`redact_text`, every recorded setting through
:func:`redact`. What counts as a credential is listed in docs/evaluate-a-model.md; the rest of
the text is kept, so a redacted address still says which server was used.

>>> redact({"model_args": "pretrained=m,base_url=http://u:pw@h/v1,api_key=sk-abc"})
{'model_args': 'pretrained=m,base_url=http://***:***@h/v1,api_key=***'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote_plus, urlsplit, urlunsplit

__all__ = ["MASK", "is_secret_name", "redact", "redact_text", "redact_url", "url_secrets"]

MASK = "***"
"""What a credential is replaced by."""

_SECRET_WORDS = frozenset(
    "key apikey token secret password passwd pwd auth authorization credential credentials cookie bearer sig "
    "signature session passphrase pw access".split()
)
"""Words that make a name a credential's name (``api_key``, ``x-api-key``, ``HF_TOKEN``, ``accessToken``)."""

_NOT_SECRET = frozenset({"key_column", "sort_key", "key_field"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_MAX_DEPTH = 200


def is_secret_name(name: str) -> bool:
    """Whether a setting named ``name`` holds a credential: one of its words is a credential word.

    >>> [is_secret_name(n) for n in ("api_key", "X-Api-Key", "hfToken", "Authorization", "max_tokens", "tokenizer")]
    [True, True, True, True, False, False]
    """
    lowered = name.lower()
    if lowered in _NOT_SECRET:
        return False
    words = {w.lower() for w in _WORD.findall(name)}
    return bool(words & _SECRET_WORDS) or lowered.replace("-", "").replace("_", "") in _SECRET_WORDS


_NAME = r"[A-Za-z][A-Za-z0-9_.-]{0,63}"
# ``scheme://userinfo@`` anywhere in a text (also ``scheme:/userinfo@``, after a path operation collapsed the
# ``//``); the user information ends at the last ``@`` before the path.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*:/{1,2})(?P<userinfo>[^\s/?#@]+)@")
# ``name=value`` (query strings, model_args, environment-style settings), ``name = 'value'`` (a Python repr of
# keyword arguments), ``--name value`` (a command line).
_ASSIGNED = re.compile(rf"(?P<name>{_NAME})(?P<sep>\s*=(?!=)\s*)(?P<value>'[^'\n]*'|\"[^\"\n]*\"|[^\s,&;\"'}}\])]+)")
_FLAG = re.compile(rf"(?<![\w-])(?P<sep>--)(?P<name>{_NAME})(?P<space>[ =])(?P<value>[^\s,;\"']+)")
# ``"name": "value"`` / ``'name': 'value'`` (JSON, a printed mapping), the value read to its closing quote.
_QUOTED = re.compile(
    rf"(?P<q>[\"'])(?P<name>{_NAME})(?P=q)(?P<sep>\s*:\s*)"
    rf"(?:(?P<vq>[\"'])(?P<value>(?:\\.|(?!(?P=vq)).)*)(?P=vq)|(?P<bare>[^\"',}}\]\s]+))"
)
# ``name: value`` (an HTTP header, YAML): the value, to the end of the line, is masked by _mask_headers.
_HEADER = re.compile(rf"(?<![\w\"'-])(?P<name>{_NAME})[ \t]*:[ \t]*(?=[^\s\"'])")
_SCHEMES = re.compile(r"\b(?P<scheme>Bearer|Basic|Token|Digest)\s+(?P<value>[A-Za-z0-9._~+/=-]{4,})", re.IGNORECASE)
_KNOWN_KEYS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{12,}|hf_[A-Za-z0-9]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{16,}"
    r"|github_pat_[A-Za-z0-9_]{16,}|xox[abposr]-[A-Za-z0-9-]{10,})"
)


def _mask_assigned(match: re.Match[str]) -> str:
    name, quoted = match.group("name"), match.re is _QUOTED
    value = match.group("bare") if quoted and not match.group("vq") else match.group("value")
    if not is_secret_name(name) or value in ("", MASK, f"'{MASK}'", f'"{MASK}"'):
        return match.group(0)
    if quoted:
        quote_mark, value_quote = match.group("q"), match.group("vq") or ""
        return f"{quote_mark}{name}{quote_mark}{match.group('sep')}{value_quote}{MASK}{value_quote}"
    if match.re is _FLAG:
        return f"--{name}{match.group('space')}{MASK}"
    if match.re is _ASSIGNED and value[:1] in ("'", '"'):
        return f"{name}{match.group('sep')}{value[0]}{MASK}{value[0]}"
    return f"{name}{match.group('sep')}{MASK}"


def _mask_headers(text: str) -> str:
    """``text`` with the value of every ``name: value`` of a credential's name masked to the end of its line
    (a header's value may hold spaces: ``Cookie: a=1; b=2``).

    >>> _mask_headers("GET failed: x-api-key: k1 k2\\nnext: line")
    'GET failed: x-api-key: ***\\nnext: line'
    """
    kept, at = [], 0
    for match in _HEADER.finditer(text):
        if match.start() < at or not is_secret_name(match.group("name")):
            continue
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        if text.startswith(MASK, match.end()) and not text[match.end() + len(MASK) : end].strip():
            continue
        kept.append(text[at : match.end()] + MASK)
        at = end
    kept.append(text[at:])
    return "".join(kept)


def _mask_userinfo(match: re.Match[str]) -> str:
    userinfo = match.group("userinfo")
    return match.group("scheme") + (f"{MASK}:{MASK}@" if ":" in userinfo else f"{MASK}@")


def redact_text(text: str) -> str:
    """``text`` with every credential it holds (module doc) replaced by ``***``.

    >>> redact_text("headers: {'Authorization': 'Bearer sk-abcdefghijklmnop'} at https://me:pw@host/v1?token=t&n=1")
    "headers: {'Authorization': '***'} at https://***:***@host/v1?token=***&n=1"
    """
    if not text:
        return text
    text = _USERINFO.sub(_mask_userinfo, text)
    text = _SCHEMES.sub(lambda m: f"{m.group('scheme')} {MASK}", text)
    text = _QUOTED.sub(_mask_assigned, text)
    text = _ASSIGNED.sub(_mask_assigned, text)
    text = _FLAG.sub(_mask_assigned, text)
    text = _mask_headers(text)
    return _KNOWN_KEYS.sub(MASK, text)


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` (settings: mappings, lists, strings, numbers) with every credential replaced by ``***``.

    A value under a credential-like name is masked whole, every string redacted; nesting past 200 levels is masked.

    >>> redact({"headers": {"Authorization": "Bearer sk-x"}, "sampling": {"api_key": "k", "max_tokens": 8}})
    {'headers': {'Authorization': '***'}, 'sampling': {'api_key': '***', 'max_tokens': 8}}
    """
    if _depth > _MAX_DEPTH:
        return MASK
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            name = redact_text(key) if isinstance(key, str) else key
            masked = isinstance(key, str) and is_secret_name(key) and item not in (None, "", False)
            out[name] = MASK if masked else redact(item, _depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(redact(item, _depth + 1) for item in value)
    return value


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``: user name, password, and the values of credential-like query
    parameters, each as written and URL-decoded (to scrub from texts that quote the address).

    >>> url_secrets("https://me:pw@host/v1?api_key=s3cr3t&x=1")
    ['me', 'pw', 's3cr3t']
    """
    try:
        parts = urlsplit(url)
        found = [parts.username or "", parts.password or ""]
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(k)]
    except ValueError:  # not parseable (a bad port, say): nothing can be told apart, so nothing is kept back
        return []
    secrets: list[str] = []
    for value in found:
        for form in (value, quote(value, safe="")):
            if form and form not in secrets:
                secrets.append(form)
    return secrets


def redact_url(url: str) -> str:
    """``url`` with its user name, password and credential-like query values replaced by ``***``.

    >>> redact_url("https://user:pass@example.com:8443/v1?key=abc&model=x")
    'https://***:***@example.com:8443/v1?key=***&model=x'
    >>> redact_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return MASK  # an address that cannot be taken apart cannot be shown safely either
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    if parts.username or parts.password:
        netloc = (f"{MASK}:{MASK}@" if parts.password else f"{MASK}@") + netloc
    query = "&".join(
        f"{k}={MASK}" if is_secret_name(unquote_plus(k)) else (f"{k}={v}" if v or "=" in pair else k)
        for pair in parts.query.split("&")
        if pair
        for k, _, v in [pair.partition("=")]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
