"""What both command lines share: one-line errors, safe output files, finite JSON, quiet broken pipes.

Every failure a user can cause ends the command with status 2 and one line on
stderr naming the file (and line and question where known), never a traceback.
Output files are checked before any computation and written atomically.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import stat
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .environment import env_flag
from .redaction import redact_text

__all__ = [
    "OutputFileError",
    "EXIT_STATUS",
    "EXAMPLES_HEADING",
    "examples_epilog",
    "DefaultsHelpFormatter",
    "OneLineParser",
    "int_at_least",
    "float_between",
    "check_output_file",
    "add_overwrite_option",
    "write_output_file",
    "replace_file",
    "reason_of",
    "open_append",
    "finite_json",
    "run_command",
    "Subcommand",
    "build_command_parser",
    "with_default_command",
    "run_subcommands",
]

TRACEBACK_ENV = "PROTOQA_EVAL_TRACEBACK"
"""Set to 1 to see the traceback of an unexpected error instead of its one-line summary."""


class OutputFileError(ValueError):
    """An output file that cannot or must not be written."""


EXIT_STATUS = (
    "exit status: 0 done; 2 bad input, options, output file or set-up (one line on stderr naming the file, "
    "line or question); 130 interrupted"
)
"""The last paragraph of every ``--help``: what the command's exit status means."""


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that adds ``(default: X)`` where an option's help names none (flags and options without a
    default are left as written).

    >>> p = argparse.ArgumentParser(formatter_class=DefaultsHelpFormatter)
    >>> _ = p.add_argument("--seed", type=int, default=42, help="seed")
    >>> "seed (default: 42)" in p.format_help()
    True
    """

    def _get_help_string(self, action: argparse.Action) -> Optional[str]:
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "default" in text
            or default is None
            or default is argparse.SUPPRESS
            or isinstance(default, bool)
            or action.nargs == 0
        ):
            return text
        shown = ",".join(map(str, default)) if isinstance(default, (list, tuple)) else "%(default)s"
        return f"{text} (default: {shown})" if text else f"default: {shown}"

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # The examples paragraph (:func:`examples_epilog`) keeps its lines: each is a command to copy.
        head, marker, examples = text.partition(EXAMPLES_HEADING)
        filled = super()._fill_text(head, width, indent) if head.strip() else ""
        if not marker:
            return filled
        return (filled + "\n\n" if filled else "") + indent + marker + examples.rstrip()


EXAMPLES_HEADING = "examples:\n"


def examples_epilog(examples: Sequence[str]) -> str:
    """The end of a sub-command's ``--help``: :data:`EXIT_STATUS`, then its examples, one command a line.

    >>> print(examples_epilog(["protoqa-eval prepare"]).split("\\n\\n")[1])
    examples:
      protoqa-eval prepare
    """
    if not examples:
        return EXIT_STATUS
    return EXIT_STATUS + "\n\n" + EXAMPLES_HEADING + "\n".join(f"  {example}" for example in examples)


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (``prog: error: ...``) with status 2, and whose
    help shows defaults (:class:`DefaultsHelpFormatter`) and ends with :data:`EXIT_STATUS`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        kwargs.setdefault("epilog", EXIT_STATUS)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def int_at_least(minimum: int, maximum: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: an integer in ``[minimum, maximum]``.

    >>> int_at_least(1)("3")
    3
    >>> int_at_least(1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 1, got '0'
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {text!r}")
        return value

    return parse


def float_between(
    low: float, high: float, *, low_open: bool = False, high_open: bool = False
) -> Callable[[str], float]:
    """An argparse type: a finite number between ``low`` and ``high`` (ends included unless open).

    >>> float_between(-1, 1)("0.5")
    0.5
    >>> float_between(-1, 1)("-5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number in [-1, 1], got '-5'
    """

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        ok = (
            math.isfinite(value)
            and (value > low if low_open else value >= low)
            and (value < high if high_open else value <= high)
        )
        if not ok:
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise argparse.ArgumentTypeError(f"must be a number in {interval}, got {text!r}")
        return value

    return parse


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a pipe",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def _kind_of(path: Path) -> Optional[str]:
    """None for a new path or a regular file (or a link to one), else what the path is."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None  # a new path, or a dangling link that the atomic replace removes
    return None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def add_overwrite_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--overwrite``, every command's one name for "replace an existing output" (``args.overwrite``);
    the spelling ``--force`` is accepted too, without a line in ``--help``.

    >>> parser = argparse.ArgumentParser()
    >>> add_overwrite_option(parser, "replace OUT")
    >>> parser.parse_args(["--force"]).overwrite, parser.parse_args([]).overwrite
    (True, False)
    """
    parser.add_argument("--overwrite", action="store_true", help=help)
    parser.add_argument("--force", dest="overwrite", action="store_true", help=argparse.SUPPRESS)


def check_output_file(
    name: str, inputs: Iterable[str] = (), force: bool = False, *, force_flag: str = "--overwrite"
) -> Path:
    """Check, before any work, that ``name`` can be written without destroying anything.

    Refused: an input file (even with ``force``), an existing file without ``force``, anything but a
    regular file (also through a link), a missing or unwritable folder (tried for real, so it holds for
    a superuser and read-only file systems), a name the system cannot hold.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> check_output_file(os.path.join(folder, "out.jsonl")).name
    'out.jsonl'
    >>> check_output_file("/dev/null", force=True)
    Traceback (most recent call last):
    ...
    protoqa_core.cli.OutputFileError: /dev/null: cannot write: it is a device, not a regular file
    """
    path = Path(name)
    try:
        exists = os.path.lexists(path)
        kind = _kind_of(path)
    except OSError as exc:
        raise OutputFileError(f"{name}: cannot write: {reason_of(exc)}") from None
    if kind == "a directory":
        raise OutputFileError(f"{name}: cannot write: is a directory")
    if kind is not None:
        raise OutputFileError(f"{name}: cannot write: it is {kind}, not a regular file")
    for other in inputs:
        if _same_file(path, Path(other)) or (not path.exists() and path.resolve() == Path(other).resolve()):
            raise OutputFileError(f"{name}: refusing to write over an input file")
    if exists and not force:
        raise OutputFileError(f"{name}: file exists; pass {force_flag} to replace it")
    folder = path.parent
    if not folder.is_dir():
        raise OutputFileError(f"{name}: cannot write: folder {str(folder)!r} does not exist")
    if len(path.name.encode("utf-8", "surrogateescape")) > 255:
        raise OutputFileError(f"{name}: cannot write: file name too long")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-", delete=True):
            pass
    except OSError as exc:
        raise OutputFileError(f"{name}: cannot write in folder {str(folder)!r}: {reason_of(exc)}") from None
    return path


def reason_of(exc: OSError) -> str:
    """A short reason for an input/output error, for one-line messages.

    >>> reason_of(OSError(28, "No space left on device"))
    'no space left on device'
    """
    reasons: dict[Optional[int], str] = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "read-only file system",
        errno.ENAMETOOLONG: "file name too long",
        errno.ENOSPC: "no space left on device",
        errno.ENOTDIR: "a part of the path is not a directory",
    }
    return reasons.get(exc.errno) or exc.strerror or type(exc).__name__


def write_output_file(path: Path, write: Callable[[Any], None], *, newline: Optional[str] = None) -> None:
    """Write ``path`` atomically: ``write(fh)`` fills a temporary file that then replaces ``path``.

    >>> import tempfile, os
    >>> p = Path(tempfile.mkdtemp()) / "out.txt"
    >>> write_output_file(p, lambda fh: fh.write("ok\\n")); p.read_text()
    'ok\\n'
    """
    try:
        with _replacing(path) as (fd, _):
            with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
                write(fh)
    except UnicodeEncodeError as exc:
        raise OutputFileError(f"{path}: cannot write a string that is not valid Unicode ({exc.reason})") from None


def replace_file(path: Path, fill: Callable[[Path], None]) -> None:
    """``fill(temporary)`` writes a new file in ``path``'s folder, which then atomically replaces ``path``.

    For writers that take a file name (Parquet, say); a link planted at ``path`` is replaced, never written through.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "out.bin"
    >>> replace_file(p, lambda tmp: tmp.write_bytes(b"ok")); p.read_bytes()
    b'ok'
    """
    with _replacing(path) as (fd, tmp):
        os.close(fd)
        fill(tmp)


@contextmanager
def _replacing(path: Path) -> Iterator[tuple[int, Path]]:
    """A new temporary file beside ``path`` (its descriptor and name), with the usual permissions, which
    replaces ``path`` when the block ends; on any failure it is removed and ``path`` left as it was."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:100]}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield fd, Path(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputFileError(f"{path}: cannot write: {reason_of(exc)}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def open_append(path: Path):
    """``path`` opened to append UTF-8 text, refusing to follow a link or to open anything but a regular file.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> with open_append(p) as fh: _ = fh.write("a\\n")
    >>> p.read_text()
    'a\\n'
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        reason = "it is a link" if exc.errno == errno.ELOOP else reason_of(exc)
        raise OutputFileError(f"{path}: cannot write: {reason}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputFileError(f"{path}: cannot write: not a regular file")
    return os.fdopen(fd, "a", encoding="utf-8")


def finite_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (JSON has no such numbers).

    >>> finite_json({"kl": float("nan"), "n": [1.0, float("inf")]})
    {'kl': None, 'n': [1.0, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def _one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text else text


def _say(line: str) -> None:
    """One line on stderr, when stderr can take it (it may be closed too)."""
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError, AttributeError):
        pass


def _unicode_stdout(prog: str) -> None:
    """Standard output in UTF-8 when its encoding cannot write every character (``PYTHONIOENCODING=ascii``):
    a table of non-ASCII names is then written, not lost after the work is done; one warning says so."""
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower().replace("_", "-")
    if encoding.startswith(("utf-8", "utf8", "utf-16", "utf-32")) or not hasattr(sys.stdout, "reconfigure"):
        return
    try:
        sys.stdout.reconfigure(encoding="utf-8")
    except (OSError, ValueError, LookupError):
        sys.stdout.reconfigure(errors="backslashreplace")
        _say(f"{prog}: warning: standard output's encoding {encoding} cannot write every character: they are escaped")
        return
    _say(
        f"{prog}: warning: standard output's encoding {encoding} cannot write every character: writing UTF-8 "
        "(set PYTHONIOENCODING=utf-8 to ask for it)"
    )


def run_command(prog: str, body: Callable[[], int]) -> int:
    """Run a command body: its status, or 2 with one line on stderr for any error.

    A standard output closed while running (``| head -c1``) ends it quietly with status 2; one closed
    before (``>&-``) is refused before any work.

    >>> run_command("demo", lambda: 0)
    0
    >>> run_command("demo", lambda: int("x"))  # doctest: +SKIP
    2
    """
    if sys.stdout is None:  # started with standard output closed (``>&-``): what it prints would be lost
        _say(f"{prog}: error: standard output is closed; run it with its output open, sent to a file or to /dev/null")
        return 2
    _unicode_stdout(prog)
    try:
        status = body()
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # Nothing more can reach the reader; point stdout at /dev/null so that the
        # interpreter's final flush does not fail again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if env_flag(TRACEBACK_ENV):
            raise
        known = isinstance(exc, (ValueError, OSError, ImportError, LookupError))
        message = str(exc) if str(exc) else type(exc).__name__
        if not known or isinstance(exc, (KeyError, IndexError)):
            message = f"unexpected {type(exc).__name__}: {message} (set {TRACEBACK_ENV}=1 for details)"
        try:
            print(f"{prog}: error: {_one_line(redact_text(message))}", file=sys.stderr)
        except (OSError, ValueError):
            pass
        return 2


@dataclass(frozen=True)
class Subcommand:
    """One sub-command of a command line: ``PROG NAME ARGS``.

    ``prog`` is the name its run-time error lines show (default ``PROG NAME``); ``examples`` end its ``--help``.

    >>> Subcommand("hello", "say hello", "Say hello.", lambda p: None, lambda args: 0).name
    'hello'
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    prog: Optional[str] = None
    examples: tuple[str, ...] = ()


def build_command_parser(
    prog: str, description: str, commands: Mapping[str, Subcommand], version: str, *, only: Optional[str] = None
) -> OneLineParser:
    """One parser for every sub-command of ``commands`` (``--help`` lists them all, in order).

    With ``only``, that sub-command alone gets its arguments, so the others' options are neither built nor imported.

    >>> hello = Subcommand("hello", "say hello", "Say hello.", lambda p: p.add_argument("who"), lambda a: 0)
    >>> build_command_parser("demo", "A demo.", {"hello": hello}, "1.0").parse_args(["hello", "you"]).who
    'you'
    """
    parser = OneLineParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} {version}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name, command in commands.items():
        sub = subparsers.add_parser(
            name,
            prog=f"{prog} {name}",
            help=command.help,
            description=command.description,
            epilog=examples_epilog(command.examples),
        )
        if only is None or name == only:
            command.add_arguments(sub)
    return parser


def with_default_command(argv: Sequence[str], commands: Mapping[str, Subcommand], default: Optional[str]) -> list[str]:
    """``argv`` with the ``default`` sub-command put first when it names none (nor ``-h``, ``--help``, ``--version``).

    >>> with_default_command(["t.jsonl", "p.json"], {"evaluate": None, "compare": None}, "evaluate")
    ['evaluate', 't.jsonl', 'p.json']
    >>> with_default_command(["compare", "t", "a", "b"], {"evaluate": None, "compare": None}, "evaluate")
    ['compare', 't', 'a', 'b']
    """
    args = list(argv)
    if default is not None and (not args or (args[0] not in commands and args[0] not in ("-h", "--help", "--version"))):
        args = [default, *args]
    return args


def run_subcommands(
    prog: str,
    description: str,
    commands: Mapping[str, Subcommand],
    argv: Sequence[str],
    *,
    version: str,
    default: Optional[str] = None,
    always_show: tuple[type[Warning], ...] = (),
) -> int:
    """Parse ``argv`` with :func:`build_command_parser` and run the sub-command it names; returns the exit status.

    Warnings and errors are one line each, ``PROG: warning: ...`` (``always_show``'s every time) and
    ``PROG: error: ...``, PROG the sub-command's program name.

    >>> hello = Subcommand("hello", "say hello", "Say hello.", lambda p: p.add_argument("who"), lambda a: 0)
    >>> run_subcommands("demo", "A demo.", {"hello": hello}, ["you"], version="1.0", default="hello")
    0
    """
    args = with_default_command(argv, commands, default)
    # Only the sub-command named first is built in full; with none (--help, --version), none is.
    parser = build_command_parser(prog, description, commands, version, only=args[0] if args else "")
    shown = prog

    def show_warning(message, category, filename, lineno, file=None, line=None):
        print(f"{shown}: warning: {redact_text(str(message))}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show_warning
        for category in always_show:
            warnings.simplefilter("always", category)
        parsed = parser.parse_args(args)
        if parsed.command is None:
            parser.print_help(sys.stderr)
            return 2
        command = commands[parsed.command]
        shown = command.prog or f"{prog} {command.name}"
        return run_command(shown, lambda: command.run(parsed))
