"""The main example: the ProtoQA paper's fine-tuned GPT-2 on the crowdsourced dev set.

    python -m studies.paper_example [--data-dir DIR] [--json]

Scores the paper's fine-tuned GPT-2 ranked answers
(``data/dev/dev.predictions.gpt2finetuned.json`` of iesl/protoqa-data) against the
crowdsourced dev questions (``data/dev/dev.crowdsourced.jsonl``) and prints every
metric under exact match and WordNet similarity.

The files are found by the project's one data locator (:func:`protoqa_core.io.data.locate_source`):
a local folder when one is given (``--data-dir`` or ``$PROTOQA_DATA_DIR``, laid out as
``DIR/protoqa/<file>``, ``DIR/<file>`` or the upstream ``DIR/data/dev/<file>``), else
``../shared/data`` beside the checkout when it exists, else downloaded from their
upstream home into the cache folder; every file is checked against its pinned checksum.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from protoqa_core.io.data import DATA_DIR_ENV, SourceError, locate_source
from protoqa_dataset.sources import PAPER_PREDICTIONS, SOURCES
from protoqa_metric.cli import main as cli_main

__all__ = ["PAPER_SOURCES", "locate_paper_files"]

PAPER_SOURCES = (SOURCES["protoqa"]["validation"], PAPER_PREDICTIONS)
"""The crowdsourced dev questions and the paper's fine-tuned GPT-2 answers to them."""


def locate_paper_files(data_dir: Optional[str] = None) -> tuple[Path, Path]:
    """Paths of the dev targets and the GPT-2 predictions (:func:`protoqa_core.io.data.locate_source`).

    >>> targets, predictions = locate_paper_files()  # doctest: +SKIP
    >>> targets.name  # doctest: +SKIP
    'dev.crowdsourced.jsonl'
    """
    targets, predictions = (locate_source(source, data_dir)[0] for source in PAPER_SOURCES)
    return targets, predictions


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print every metric under exact match and WordNet for the paper's GPT-2 answers."""
    parser = argparse.ArgumentParser(
        prog="python -m studies.paper_example",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data-dir", help=f"folder with the two files (or ${DATA_DIR_ENV})")
    parser.add_argument("--json", action="store_true", help="one JSON object per similarity")
    args = parser.parse_args(argv)
    try:
        targets, predictions = locate_paper_files(args.data_dir)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"targets:     {targets}\npredictions: {predictions}\n", file=sys.stderr)
    return cli_main(
        [str(targets), str(predictions), "--similarity", "exact_match,wordnet", *(["--json"] if args.json else [])]
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
