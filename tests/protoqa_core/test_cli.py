"""What both command lines share: one-line errors and warnings, argument types, safe atomic output files."""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import pytest

from protoqa_core.cli import (
    EXIT_STATUS,
    TRACEBACK_ENV,
    DefaultsHelpFormatter,
    OneLineParser,
    OutputFileError,
    Subcommand,
    build_command_parser,
    check_output_file,
    finite_json,
    float_between,
    int_at_least,
    open_append,
    reason_of,
    replace_file,
    run_command,
    run_subcommands,
    with_default_command,
    write_output_file,
)


def test_a_usage_error_is_one_line_with_status_2(capsys):
    parser = OneLineParser(prog="demo")
    parser.add_argument("--n", type=int_at_least(1, 9))
    with pytest.raises(SystemExit) as stopped:
        parser.parse_args(["--n", "10"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (
        "demo: error: argument --n: must be an integer in [1, 9], got '10' (see demo --help)\n"
    )


def test_help_shows_defaults_where_the_help_names_none_and_ends_with_the_exit_status():
    parser = OneLineParser(prog="demo")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2], help="seeds")
    parser.add_argument("--model", default="m", help="model (default: the small one)")
    parser.add_argument("--flag", action="store_true", help="a flag")
    parser.add_argument("--out", default=None, help="output")
    text = parser.format_help()
    assert "seeds (default: 1,2)" in text
    assert "(default: the small one)" in text and text.count("default:") == 2
    assert "a flag\n" in text and "output\n" in text
    assert " ".join(text.split()).endswith(" ".join(EXIT_STATUS.split()))
    assert issubclass(OneLineParser(prog="x").formatter_class, DefaultsHelpFormatter)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "x", "1.0000001"])
def test_float_between_refuses_non_finite_and_outside_values(text):
    with pytest.raises(argparse.ArgumentTypeError, match=rf"must be a number in \[0, 1\], got '{text}'"):
        float_between(0, 1)(text)


def test_float_between_open_ends_exclude_their_bound():
    half_open = float_between(0, 1, low_open=True)
    assert half_open("1") == 1.0
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be a number in \(0, 1\], got '0'"):
        half_open("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"in \[0, 1\)"):
        float_between(0, 1, high_open=True)("1")


def test_int_at_least_refuses_a_float_spelling():
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be an integer >= 2, got '3.0'"):
        int_at_least(2)("3.0")
    assert int_at_least(2, 5)("5") == 5


def test_an_output_file_is_checked_before_any_work(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("x\n")
    with pytest.raises(OutputFileError, match=r"in\.jsonl: refusing to write over an input file"):
        check_output_file(str(source), [str(source)], force=True)
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    with pytest.raises(OutputFileError, match="refusing to write over an input file"):
        check_output_file(str(link), [str(source)], force=True)
    with pytest.raises(OutputFileError, match=r"in\.jsonl: file exists; pass --replace to replace it"):
        check_output_file(str(source), force_flag="--replace")
    assert check_output_file(str(source), force=True) == source
    with pytest.raises(OutputFileError, match=r": cannot write: is a directory"):
        check_output_file(str(tmp_path))
    with pytest.raises(OutputFileError, match=r"cannot write: folder '.*nope' does not exist"):
        check_output_file(str(tmp_path / "nope" / "out.jsonl"))
    with pytest.raises(OutputFileError, match=r"cannot write: file name too long"):
        check_output_file(str(tmp_path / ("x" * 300)))


def test_an_output_that_is_not_a_regular_file_is_refused_also_through_a_link(tmp_path):
    pipe = tmp_path / "fifo"
    os.mkfifo(pipe)
    with pytest.raises(OutputFileError, match=r"fifo: cannot write: it is a pipe, not a regular file"):
        check_output_file(str(pipe), force=True)
    to_null = tmp_path / "null.jsonl"
    to_null.symlink_to("/dev/null")
    with pytest.raises(OutputFileError, match=r"null\.jsonl: cannot write: it is a device"):
        check_output_file(str(to_null), force=True)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "gone")
    with pytest.raises(OutputFileError, match="file exists"):
        check_output_file(str(dangling))


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old\n")

    def fail(fh):
        fh.write("half")
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        write_output_file(out, fail)
    with pytest.raises(OutputFileError, match=r"out\.txt: cannot write a string that is not valid Unicode"):
        write_output_file(out, lambda fh: fh.write("\udc80"))
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_written_file_has_the_usual_permissions_and_the_newline_asked_for(tmp_path):
    out = tmp_path / "out.csv"
    write_output_file(out, lambda fh: fh.write("a\nb\n"), newline="\r\n")
    assert out.read_bytes() == b"a\r\nb\r\n"
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_replace_file_swaps_a_planted_link_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    out = tmp_path / "out.bin"
    out.symlink_to(victim)
    replace_file(out, lambda tmp: tmp.write_bytes(b"new"))
    assert victim.read_text() == "keep\n" and not out.is_symlink() and out.read_bytes() == b"new"

    def fail(tmp: Path) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputFileError, match=r"out\.bin: cannot write: no space left on device"):
        replace_file(out, fail)
    assert out.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["out.bin", "victim.txt"]


def test_open_append_adds_to_a_file_and_refuses_a_link_or_a_folder(tmp_path):
    log = tmp_path / "log.jsonl"
    for text in ("a\n", "b\n"):
        with open_append(log) as fh:
            fh.write(text)
    assert log.read_text() == "a\nb\n"
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    with pytest.raises(OutputFileError, match=r"link\.jsonl: cannot write: it is a link"):
        open_append(link)
    with pytest.raises(OutputFileError, match=r"cannot write: "):
        open_append(tmp_path)


def test_reason_of_falls_back_to_the_system_words():
    assert reason_of(OSError(30, "Read-only file system")) == "read-only file system"
    assert reason_of(OSError(5, "Input/output error")) == "Input/output error"
    assert reason_of(OSError()) == "OSError"


def test_finite_json_reaches_every_nested_float():
    value = {"a": (1.0, float("-inf")), "b": {"c": [float("nan"), "nan", 2]}, "d": None}
    assert finite_json(value) == {"a": [1.0, None], "b": {"c": [None, "nan", 2]}, "d": None}


def _raise(exc: BaseException):
    def body() -> int:
        raise exc

    return body


@pytest.mark.parametrize(
    "exc, line",
    [
        (ValueError("t.jsonl, line 2: bad\n  count"), "demo: error: t.jsonl, line 2: bad count"),
        (FileNotFoundError("targets file not found: t.jsonl"), "demo: error: targets file not found: t.jsonl"),
        (
            RuntimeError("boom"),
            f"demo: error: unexpected RuntimeError: boom (set {TRACEBACK_ENV}=1 for details)",
        ),
        (KeyError("k"), f"demo: error: unexpected KeyError: 'k' (set {TRACEBACK_ENV}=1 for details)"),
        (ValueError(), "demo: error: ValueError"),
        (ValueError("server http://u:pw@host/v1 refused"), "demo: error: server http://***:***@host/v1 refused"),
    ],
)
def test_every_error_is_one_redacted_line_with_status_2(capsys, monkeypatch, exc, line):
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    assert run_command("demo", _raise(exc)) == 2
    assert capsys.readouterr().err == line + "\n"


def test_an_interrupt_is_130_and_the_traceback_shows_when_asked(capsys, monkeypatch):
    assert run_command("demo", _raise(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err == "demo: interrupted\n"
    monkeypatch.setenv(TRACEBACK_ENV, "1")
    with pytest.raises(RuntimeError, match="boom"):
        run_command("demo", _raise(RuntimeError("boom")))


def _commands(built: list[str]):
    def add(name):
        def add_arguments(parser):
            built.append(name)
            parser.add_argument("path")

        return add_arguments

    def warn_and_run(args):
        warnings.warn(f"looked at {args.path}", UserWarning, stacklevel=2)
        if args.path == "bad":
            raise ValueError(f"{args.path}: no such question")
        return 0

    return {
        "evaluate": Subcommand("evaluate", "score", "Score a file.", add("evaluate"), warn_and_run),
        "compare": Subcommand("compare", "compare", "Compare files.", add("compare"), warn_and_run, prog="cmp"),
    }


def test_no_sub_command_means_the_default_and_only_it_is_built(capsys):
    built: list[str] = []
    assert run_subcommands("demo", "A demo.", _commands(built), ["p.json"], version="1.0", default="evaluate") == 0
    assert built == ["evaluate"]
    assert capsys.readouterr().err == "demo evaluate: warning: looked at p.json\n"


def test_errors_and_warnings_carry_the_sub_command_s_name(capsys):
    status = run_subcommands("demo", "A demo.", _commands([]), ["compare", "bad"], version="1.0", default="evaluate")
    assert status == 2
    assert capsys.readouterr().err == "cmp: warning: looked at bad\ncmp: error: bad: no such question\n"


def test_without_a_default_an_empty_command_line_prints_help_and_fails(capsys):
    built: list[str] = []
    assert run_subcommands("demo", "A demo.", _commands(built), [], version="1.0") == 2
    assert built == [] and "COMMAND" in capsys.readouterr().err


def test_help_and_version_name_no_sub_command(capsys):
    commands = _commands([])
    for flag in ("-h", "--help", "--version"):
        assert with_default_command([flag], commands, "evaluate") == [flag]
    assert with_default_command([], commands, "evaluate") == ["evaluate"]
    assert with_default_command(["x"], commands, None) == ["x"]
    with pytest.raises(SystemExit) as stopped:
        run_subcommands("demo", "A demo.", commands, ["--version"], version="1.0", default="evaluate")
    assert stopped.value.code == 0 and capsys.readouterr().out == "demo 1.0\n"


def test_the_full_parser_lists_every_sub_command_in_order():
    built: list[str] = []
    parser = build_command_parser("demo", "A demo.", _commands(built), "1.0")
    assert built == ["evaluate", "compare"]
    text = parser.format_help()
    assert "    evaluate  score\n    compare   compare\n" in text
    assert parser.parse_args(["compare", "x"]).path == "x"
