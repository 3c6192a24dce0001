"""The main example: the ProtoQA paper's fine-tuned GPT-2 on the crowdsourced dev set.

    python -m studies.paper_example [--data-dir DIR] [--json]

Scores the paper's fine-tuned GPT-2 ranked answers
(``data/dev/dev.predictions.gpt2finetuned.json`` of iesl/protoqa-data) against the
crowdsourced dev questions (``data/dev/dev.crowdsourced.jsonl``) and prints every
metric under exact match and WordNet similarity.

The files are read from a local folder when one is given (``--data-dir`` or
``$PROTOQA_DATA_DIR``, laid out as ``DIR/protoqa/<file>`` or ``DIR/<file>``), else
from ``../shared/data`` beside the checkout when it exists, else downloaded from
their upstream home into the cache folder and checked against pinned checksums.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import urllib.request
from pathlib import Path
from typing import Optional, Sequence

from protoqa_metric.cli import main as cli_main
from protoqa_core.wordnet_access import cache_dir

__all__ = ["UPSTREAM_BASE", "PAPER_FILES", "locate_paper_files"]

UPSTREAM_BASE = "https://raw.githubusercontent.com/iesl/protoqa-data/master/data/dev/"
PAPER_FILES = {
    "dev.crowdsourced.jsonl": "cd3bec04e9ec9294ebf5b75eda6eb0d5abcffec926407eaf852be9c744c67ce5",
    "dev.predictions.gpt2finetuned.json": "2e97b518632dca3ee90eb7da8f161bb33dc1712ddd70a045686948930deb5a56",
}
DATA_DIR_ENV = "PROTOQA_DATA_DIR"
_CHECKOUT_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _find_in(folder: Path, name: str) -> Optional[Path]:
    for candidate in (folder / "protoqa" / name, folder / name, folder / "dev" / name, folder / "data" / "dev" / name):
        if candidate.is_file():
            return candidate
    return None


def _download(name: str, target: Path) -> Path:
    url = UPSTREAM_BASE + name
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as fh:
            fh.write(response.read())
    except OSError as exc:
        raise RuntimeError(
            f"could not download {name} from {url} ({exc}). Download it yourself and pass "
            f"--data-dir DIR (or set ${DATA_DIR_ENV}=DIR) with the file at DIR/protoqa/{name}."
        ) from None
    if _sha256(tmp) != PAPER_FILES[name]:
        tmp.unlink()
        raise RuntimeError(f"{name} downloaded from {url} does not have the expected sha256 {PAPER_FILES[name]}")
    os.replace(tmp, target)
    return target


def locate_paper_files(data_dir: Optional[str] = None) -> tuple[Path, Path]:
    """Paths of the dev targets and the GPT-2 predictions, downloading them if needed.

    >>> targets, predictions = locate_paper_files()  # doctest: +SKIP
    >>> targets.name  # doctest: +SKIP
    'dev.crowdsourced.jsonl'
    """
    folders = [Path(d) for d in (data_dir, os.environ.get(DATA_DIR_ENV)) if d]
    explicit = bool(folders)
    if not explicit and _CHECKOUT_SHARED.is_dir():
        folders.append(_CHECKOUT_SHARED)
    paths = []
    for name in PAPER_FILES:
        found = next((p for p in (_find_in(f, name) for f in folders) if p), None)
        if found is None and explicit:
            raise FileNotFoundError(f"{name} not found in {', '.join(map(str, folders))} (looked in protoqa/ and the folder itself)")
        if found is None:
            cached = cache_dir() / "protoqa-data" / name
            found = cached if cached.is_file() and _sha256(cached) == PAPER_FILES[name] else _download(name, cached)
        paths.append(found)
    return paths[0], paths[1]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print every metric under exact match and WordNet for the paper's GPT-2 answers."""
    parser = argparse.ArgumentParser(prog="python -m studies.paper_example", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", help=f"folder with the two files (or ${DATA_DIR_ENV})")
    parser.add_argument("--json", action="store_true", help="one JSON object per similarity")
    args = parser.parse_args(argv)
    try:
        targets, predictions = locate_paper_files(args.data_dir)
    except (OSError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"targets:     {targets}\npredictions: {predictions}\n", file=sys.stderr)
    return cli_main([str(targets), str(predictions), "--similarity", "exact_match,wordnet", *(["--json"] if args.json else [])])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
