"""``protoqa-eval`` as one command: its sub-command table, the default sub-command, the version, and
one-line errors named after the sub-command (each sub-command's own behaviour is tested with its module)."""

from __future__ import annotations

import json

import pytest

from protoqa_core import __version__
from protoqa_integrations.cli import COMMANDS, main
from protoqa_integrations.generation import cli as generate_cli
from protoqa_integrations.leaderboard import cli as leaderboard_cli
from protoqa_metric import cli as metric_cli


def test_every_sub_command_of_the_three_tables_is_listed_once_in_order():
    tables = [metric_cli.COMMANDS, generate_cli.COMMANDS, leaderboard_cli.COMMANDS]
    names = [name for table in tables for name in table]
    assert len(set(names)) == len(names), "a sub-command defined twice would hide the other"
    assert (
        list(COMMANDS)
        == names
        == [
            "evaluate",
            "compare",
            "prepare",
            "generate",
            "score-generated",
            "leaderboard",
            "convert",
        ]
    )
    assert all(COMMANDS[name] is table[name] for table in tables for name in table)


def test_help_lists_every_sub_command(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and out.startswith("usage: protoqa-eval")
    assert all(name in out for name in COMMANDS) and "'generate' samples a language model's answers" in out


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and __version__ in capsys.readouterr().out


def test_files_without_a_sub_command_are_evaluated(shared_data, capsys):
    files = [
        str(shared_data / "protoqa" / name) for name in ("dev.crowdsourced.jsonl", "dev.predictions.gpt2finetuned.json")
    ]
    assert main([*files, "--similarity", "exact_match", "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert main(["evaluate", *files, "--similarity", "exact_match", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == default
    assert default["signature"].startswith("sim:exact_match|") and 0 < default["max_answers@1"] < 1


def test_no_arguments_is_a_one_line_usage_error_of_the_default_sub_command(capsys):
    with pytest.raises(SystemExit) as stop:
        main([])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2
    assert err[-1].startswith("protoqa-eval evaluate: error: the following arguments are required: TARGETS")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score-generated", "{missing}"], "protoqa-eval score-generated: error: "),
        (["convert", "{missing}", "-o", "{out}"], "protoqa-eval convert: error: "),
        (["leaderboard", "{missing}", "a={missing}"], "protoqa-eval leaderboard: error: "),
    ],
)
def test_a_missing_input_is_a_one_line_error_named_after_the_sub_command(tmp_path, capsys, argv, message):
    missing, out = tmp_path / "no-such.json", tmp_path / "out.json"
    status = main([arg.format(missing=missing, out=out) for arg in argv])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(message) and len(err.strip().splitlines()) == 1, err
    assert str(missing) in err and "Traceback" not in err and not out.exists()
