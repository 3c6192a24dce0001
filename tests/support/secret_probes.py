"""Credentials in the shapes other tools and users write them: what no shareable output and no message may carry.

Each probe is ``(text, secret)``: ``text`` holds ``secret`` once, in one shape (a Python repr of keyword
arguments, YAML, JSON, an HTTP header, a URL, a command line, a known key format). Every secret is
distinct, so a secret found in an output names the shape that let it through.
"""

from __future__ import annotations

_SHAPES = (
    "api_key={s}",
    "api_key='{s}'",
    'api_key="{s}"',
    "token='{s}'",
    "token={s}",
    '"api_key": "{s}"',
    "'api_key': '{s}'",
    "api_key: {s}",
    "password = {s}",
    "password={s}",
    '"password": "a,{s}"',
    "x-api-key: {s}",
    "X-Api-Key={s}",
    "Authorization: {s}",
    "Authorization: Bearer {s}",
    "Authorization: Basic {s}",
    "https://user:{s}@host.example/v1",
    "https:/user:{s}@host.example/v1",
    "http://{s}@host.example/v1",
    "https://host.example/v1?api_key={s}",
    "https://host.example/v1?token={s}&x=1",
    "https://host.example/v1?sig={s}",
    "passphrase={s}",
    "passphrase: {s}",
    "pw={s}",
    "pw: {s}",
    "access={s}",
    "access_token={s}",
    "accessToken: {s}",
    "secret_key={s}",
    "client_secret: {s}",
    "HF_TOKEN={s}",
    "OPENAI_API_KEY={s}",
    "--api-key {s}",
    "--token={s}",
    "auth={s}",
    "cookie: {s}",
    "session_id={s}",
    "private_key={s}",
    "aws_secret_access_key = {s}",
    'credentials={{"password": "{s}"}}',
    "Proxy-Authorization: {s}",
    "bearer {s}",
    "passwd={s}",
    "pwd: {s}",
    "{{'token': '{s}', 'model': 'gpt2'}}",
    "pretrained=gpt2,api_key='{s}',dtype=float16",
    "api_key = '{s}'",
)

_KNOWN_FORMATS = (
    "AKIA{u}",  # an AWS access key id, in free text
    "sk-{s}",
    "hf_{s}",
    "ghp_{s}",
)


def probes() -> list[tuple[str, str]]:
    """Every probe, ``(text, secret)``: more than 46 shapes.

    >>> len(probes()) > 46 and all(secret in text for text, secret in probes())
    True
    """
    found = []
    for number, shape in enumerate(_SHAPES):
        secret = f"Zq{number:02d}vR7kW3pLx9"
        found.append((shape.format(s=secret), secret))
    for number, shape in enumerate(_KNOWN_FORMATS):
        # the secret looked for is the key without its well-known prefix: a prefix left alone says little
        secret = f"Q{number:02d}ZRWXKP7HT3VM9" if "{u}" in shape else f"Zk{number:02d}mR7vW3pLx9QbN4TcY8"
        found.append((shape.format(u=secret, s=secret), secret))
    return found
