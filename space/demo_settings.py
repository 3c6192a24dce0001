"""The Space's settings from its environment: variable names, where it writes, which data and prompt.

* the ``PROTOQA_SPACE_*`` variables (the table in README.md), read by :func:`protoqa_core.environment.env_setting`;
* :func:`space_temp_dir` and :func:`configure_environment`: every folder the Space (and
  Gradio, matplotlib, the WordNet copy) writes to sits under one temporary root;
* :func:`resolve_data_dir`: the local data folder, or None for "download";
* :func:`prompt_style`: the ProtoQA prompt style.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional, Union

from demo_errors import DemoError

from protoqa_core.environment import env_setting
from protoqa_core.io import cache_files
from protoqa_core.io import data as data_location

__all__ = [
    "MODEL_ENV",
    "DATA_DIR_ENV",
    "FALLBACK_DATA_DIR_ENV",
    "PROMPT_STYLE_ENV",
    "CACHE_DIR_ENV",
    "TEMP_DIR_ENV",
    "ROBERTA_ENCODER_ENV",
    "space_temp_dir",
    "configure_environment",
    "resolve_data_dir",
    "prompt_style",
]

MODEL_ENV = "PROTOQA_SPACE_MODEL"
"""Model name on the Hub or local folder; default :data:`demo_model.DEFAULT_MODEL`."""
DATA_DIR_ENV = "PROTOQA_SPACE_DATA_DIR"
"""Local data folder (``protoqa/...``, ``cfc/...``); read before ``PROTOQA_DATA_DIR``."""
FALLBACK_DATA_DIR_ENV = data_location.DATA_DIR_ENV
PROMPT_STYLE_ENV = "PROTOQA_SPACE_PROMPT"
"""``statement`` (default, for a plain GPT-2) or ``finetuned`` (``prompt<TAB>``, for a ProtoQA fine-tuned model)."""
CACHE_DIR_ENV = "PROTOQA_SPACE_CACHE_DIR"
"""Where downloaded models go; default a folder under the temporary directory."""
TEMP_DIR_ENV = "PROTOQA_SPACE_TMP"
"""Root of every folder the Space writes to; default ``<system temp>/protoqa_space``."""
ROBERTA_ENCODER_ENV = "PROTOQA_SPACE_ROBERTA_ENCODER"
"""Set to an encoder (a Hub id such as ``roberta-base``, or a folder) to add the ``roberta`` similarity."""


def space_temp_dir(name: str = "") -> Path:
    """A folder under the Space's temporary root (``$PROTOQA_SPACE_TMP`` or the system temp), created.

    >>> space_temp_dir("models").name
    'models'
    """
    root = Path(env_setting(TEMP_DIR_ENV) or Path(tempfile.gettempdir()) / "protoqa_space")
    folder = root / name if name else root
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def configure_environment() -> None:
    """Point every cache the app touches into the temporary root, unless already set.

    Gradio, matplotlib and the WordNet copy of ``protoqa_metric`` would otherwise write
    under the home folder; Gradio's analytics stay off unless asked for. Call it before
    importing gradio or matplotlib.

    >>> configure_environment()  # doctest: +SKIP
    >>> os.environ["GRADIO_TEMP_DIR"]  # doctest: +SKIP
    '/tmp/protoqa_space/gradio'
    """
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    defaults = {
        "GRADIO_TEMP_DIR": "gradio",
        "MPLCONFIGDIR": "matplotlib",
        cache_files.CACHE_DIR_ENV: "protoqa_metric",
    }
    for variable, folder in defaults.items():
        if env_setting(variable) is None:
            os.environ[variable] = str(space_temp_dir(folder))


def resolve_data_dir(data_dir: Union[None, str, os.PathLike] = None) -> Optional[Path]:
    """The local data folder: the argument, ``$PROTOQA_SPACE_DATA_DIR``, then the project's
    own order (:func:`protoqa_core.io.data.resolve_data_dir`); None means "download".

    >>> resolve_data_dir("/some/where")
    PosixPath('/some/where')
    """
    given = data_dir if data_dir is not None and str(data_dir).strip() else env_setting(DATA_DIR_ENV)
    return data_location.resolve_data_dir(given)


def prompt_style() -> str:
    """The ProtoQA prompt style from ``$PROTOQA_SPACE_PROMPT`` (``statement`` by default).

    >>> prompt_style() in {"statement", "finetuned"}
    True
    """
    style = (env_setting(PROMPT_STYLE_ENV) or "statement").lower()
    if style not in {"statement", "finetuned"}:
        raise DemoError(f"${PROMPT_STYLE_ENV} must be 'statement' or 'finetuned', got {style!r}")
    return style
