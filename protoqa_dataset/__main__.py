"""Command line: ``python -m protoqa_dataset export|upload``; errors are one line and status 2, as everywhere."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Optional

from protoqa_core import __version__
from protoqa_core.cli import Subcommand, add_overwrite_option, run_subcommands
from protoqa_core.io.data import DATA_DIR_ENV, SourceError
from protoqa_core.io.files import DataFormatError

from .sources import CONFIG_NAMES

__all__ = ["COMMANDS", "main"]


def _export_arguments(export: argparse.ArgumentParser) -> None:
    export.add_argument("out_dir", metavar="OUT_DIR")
    export.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"read the source files from DIR (default: ${DATA_DIR_ENV}, else download them)",
    )
    export.add_argument(
        "--config",
        dest="configs",
        action="append",
        choices=CONFIG_NAMES,
        metavar="NAME",
        help=f"export only this config (repeatable; default all: {', '.join(CONFIG_NAMES)})",
    )
    export.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="export the other splits when a source file is missing or cannot be downloaded "
        "(each is reported and named in the card)",
    )
    add_overwrite_option(
        export,
        "replace a previous export in OUT_DIR (deletes only files its manifest lists; "
        "never a README.md that is not an export's card)",
    )
    export.add_argument("--cache-dir", metavar="DIR", help="datasets cache to build in (default: a temporary one)")
    export.add_argument(
        "--clustered",
        action="append",
        type=_split_file,
        metavar="SPLIT=FILE",
        help="add the config cfc_clustered with this split (validation or test) from a clustered targets file "
        "of CFC (`probeval cluster` writes one from raw answers); repeatable",
    )
    export.add_argument(
        "--no-verify",
        dest="verify_sources",
        action="store_false",
        help="accept source files whose checksum (or train row count) differs from upstream",
    )


def _split_file(text: str) -> tuple[str, str]:
    """``SPLIT=FILE`` of ``--clustered``, checked (``argparse.ArgumentTypeError``).

    >>> _split_file("test=clustered.jsonl")
    ('test', 'clustered.jsonl')
    """
    split, sep, path = text.partition("=")
    if not sep or not split or not path:
        raise argparse.ArgumentTypeError(f"expected SPLIT=FILE, got {text!r}")
    return split, path


def _upload_arguments(upload: argparse.ArgumentParser) -> None:
    upload.add_argument("out_dir", metavar="OUT_DIR")
    upload.add_argument("repo_id", metavar="OWNER/NAME")
    upload.add_argument("--dry-run", action="store_true", help="check the folder and list what would be sent")
    upload.add_argument(
        "--private", action="store_true", default=None, help="create the repository as private (if it does not exist)"
    )
    upload.add_argument("--message", default="Upload ProtoQA/CFC export", help="commit message")


def _export(args: argparse.Namespace) -> int:
    from .export import export_dataset

    report = export_dataset(
        args.out_dir,
        data_dir=args.data_dir,
        configs=args.configs,
        skip_unavailable=args.skip_unavailable,
        overwrite=args.overwrite,
        cache_dir=args.cache_dir,
        verify_sources=args.verify_sources,
        clustered=dict(args.clustered or ()),
    )
    print(report.summary())
    if not report.complete:
        warnings.warn(f"{args.out_dir} is an incomplete export; its README.md says what is missing", stacklevel=1)
    return 0


def _upload(args: argparse.Namespace) -> int:
    from .upload import upload_export

    plan = upload_export(
        args.out_dir, args.repo_id, dry_run=args.dry_run, private=args.private, commit_message=args.message
    )
    print(("dry run, nothing sent:\n" if args.dry_run else "uploaded:\n") + plan.describe())
    return 0


def _in_option_words(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` with the library's advice (``pass skip_unavailable=True``) given as the command's options."""

    def command(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except (SourceError, DataFormatError) as exc:
            message = str(exc).replace("pass skip_unavailable=True", "pass --skip-unavailable")
            raise type(exc)(message.replace("pass verify_sources=False", "pass --no-verify")) from None

    return command


COMMANDS = {
    "export": Subcommand(
        "export",
        "write Parquet files and the dataset card to OUT_DIR",
        "Write ProtoQA/CFC as Parquet files and a dataset card to OUT_DIR.",
        _export_arguments,
        _in_option_words(_export),
    ),
    "upload": Subcommand(
        "upload",
        "upload an export folder to a Hub dataset repository",
        "Upload an export folder to a Hub dataset repository.",
        _upload_arguments,
        _in_option_words(_upload),
    ),
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status.

    >>> main(["upload", "/nonexistent", "me/protoqa", "--dry-run"])  # doctest: +SKIP
    2
    """
    return run_subcommands(
        "python -m protoqa_dataset",
        "Export ProtoQA/CFC as a Hub-ready Parquet dataset, and upload it.",
        COMMANDS,
        sys.argv[1:] if argv is None else argv,
        version=__version__,
    )


if __name__ == "__main__":
    sys.exit(main())
