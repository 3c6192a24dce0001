"""The pip command that adds an extra to this installation, as the project was installed.

The project is on no package index, where ``pip install`` of its name with an extra finds nothing: a
message about a missing extra names the checkout, the archive or the repository the installed
distribution came from (its ``direct_url.json``, PEP 610), or the checkout this code runs from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlparse

__all__ = ["DISTRIBUTION", "install_command"]

DISTRIBUTION = "protoqa-eval"


def _recorded_source() -> Optional[dict[str, Any]]:
    # Imported here: the modules that name this function import it at start-up, and need it only on an error.
    import json
    from importlib import metadata

    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _checkout() -> Optional[Path]:
    root = Path(__file__).resolve().parents[1]
    return root if (root / "setup.cfg").is_file() else None


def install_command(extra: str, source: Optional[dict[str, Any]] = None) -> str:
    """``pip install ...`` with ``extra`` for this installation (``source``: a ``direct_url.json`` record, else this
    installation's own).

    >>> install_command("plots", {"dir_info": {"editable": True}, "url": "file:///home/me/protoqa-eval"})
    "pip install -e '/home/me/protoqa-eval[plots]'"
    >>> install_command("vllm", {"url": "https://github.com/me/protoqa-eval", "vcs_info": {"vcs": "git"}})
    "pip install 'protoqa-eval[vllm] @ git+https://github.com/me/protoqa-eval'"
    >>> install_command("openai", {"url": "file:///tmp/protoqa_eval-0.1.0-py3-none-any.whl", "archive_info": {}})
    "pip install '/tmp/protoqa_eval-0.1.0-py3-none-any.whl[openai]'"
    """
    source = source if source is not None else _recorded_source()
    url = str((source or {}).get("url", ""))
    if source and "vcs_info" in source and url:
        vcs = str(source["vcs_info"].get("vcs", "git"))
        return f"pip install '{DISTRIBUTION}[{extra}] @ {vcs}+{url}'"
    parsed = urlparse(url)
    path = unquote(parsed.path) if parsed.scheme == "file" else None
    if path is not None:
        editable = bool((source or {}).get("dir_info", {}).get("editable"))
        return f"pip install {'-e ' if editable else ''}'{path}[{extra}]'"
    checkout = _checkout()
    if checkout is not None:
        return f"pip install -e '{checkout}[{extra}]'"
    return f"pip install '{DISTRIBUTION}[{extra}]' from the project's checkout (it is on no package index)"
