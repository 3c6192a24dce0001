"""Every command's ``--help`` answers the usual questions: what each option does and its default,
which command the usage line is for, and what the exit status means.

The parsers are those the installed commands build (``protoqa-eval``, ``probeval``); the
printed help is checked in new processes as users run it.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

import pytest

from cfc_probeval import cli as probeval_cli
from protoqa_core import __version__
from protoqa_core.cli import EXAMPLES_HEADING, EXIT_STATUS, build_command_parser
from protoqa_integrations import cli as protoqa_cli
from tests.support.offline import offline_env


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


PARSERS = {
    "protoqa-eval": build_command_parser("protoqa-eval", protoqa_cli.DESCRIPTION, protoqa_cli.COMMANDS, __version__),
    "probeval": probeval_cli.build_parser(),
}
SUBCOMMANDS = [(prog, name, sub) for prog, parser in PARSERS.items() for name, sub in _subcommands(parser).items()]
IDS = [f"{prog} {name}" for prog, name, _ in SUBCOMMANDS]


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if a.option_strings
        and a.help != argparse.SUPPRESS
        and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))
    ]


@pytest.mark.parametrize("prog, name, parser", SUBCOMMANDS, ids=IDS)
def test_every_option_has_help_that_shows_its_default(prog, name, parser):
    formatter = parser._get_formatter()
    for action in _options(parser):
        text = formatter._get_help_string(action)
        assert action.help, f"{prog} {name} {action.option_strings[0]}: no help"
        if action.nargs != 0 and not action.required:  # a flag says what it turns on; -o is required
            assert "default" in text, f"{prog} {name} {action.option_strings[0]}: no default in {text!r}"


def _examples(text: str) -> list[str]:
    """The commands of a help's examples paragraph (its last), else none."""
    head, _, examples = text.rpartition(EXAMPLES_HEADING)
    return [line.strip() for line in examples.splitlines() if line.strip()] if head else []


@pytest.mark.parametrize("prog, name, parser", SUBCOMMANDS, ids=IDS)
def test_usage_names_the_subcommand_and_help_ends_with_the_exit_status_then_examples(prog, name, parser):
    text = parser.format_help()
    assert text.startswith(f"usage: {prog} {name} ")
    before_examples = text.rpartition(EXAMPLES_HEADING)[0] or text
    assert " ".join(before_examples.split()).endswith(EXIT_STATUS)
    assert 1 <= len(_examples(text)) <= 2, f"{prog} {name}: its help ends with one or two examples"


@pytest.mark.parametrize("prog, name, parser", SUBCOMMANDS, ids=IDS)
def test_every_example_is_a_command_line_its_parser_takes(prog, name, parser):
    for example in _examples(parser.format_help()):
        words = shlex.split(example)
        assert words[0] == prog, example
        args = words[2:] if words[1:2] == [name] else words[1:]
        parser.parse_args(args)  # a wrong option or a missing argument exits with status 2


def test_the_exit_status_names_every_status_the_commands_use():
    assert "0 done" in EXIT_STATUS and "2 bad input" in EXIT_STATUS and "130 interrupted" in EXIT_STATUS


def test_the_default_metric_sets_say_why_they_differ():
    helps = {
        name: next(a.help for a in _options(sub) if a.dest == "metrics")
        for prog, name, sub in SUBCOMMANDS
        if prog == "protoqa-eval" and name in ("evaluate", "score-generated")
    }
    assert "reference evaluator" in helps["evaluate"] and "score-generated" in helps["evaluate"]
    assert "ProtoQA paper" in helps["score-generated"] and "evaluate" in helps["score-generated"]


def test_probevals_only_predicted_speaks_of_cfc_and_probeval():
    sub = _subcommands(PARSERS["probeval"])["evaluate"]
    text = next(a.help for a in _options(sub) if a.dest == "only_predicted")
    assert "ProbEval" in text and "CFC" in text and "ProtoQA" not in text


@pytest.mark.parametrize(
    "argv, usage",
    [
        (["protoqa_integrations", "evaluate", "--help"], "usage: protoqa-eval evaluate "),
        (["protoqa_integrations", "leaderboard", "--help"], "usage: protoqa-eval leaderboard "),
        (["cfc_probeval", "evaluate", "--help"], "usage: probeval evaluate "),
        (["cfc_probeval", "compare", "--help"], "usage: probeval compare "),
        (["cfc_probeval", "cluster", "--help"], "usage: probeval cluster "),
        (["protoqa_integrations", "--help"], "usage: protoqa-eval "),
    ],
)
def test_help_as_printed(argv, usage):
    done = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, env=offline_env(), timeout=120)
    assert done.returncode == 0 and done.stdout.startswith(usage), done.stdout[:300] + done.stderr[-500:]
    assert EXIT_STATUS in " ".join(done.stdout.split())
    if argv[1] != "--help":  # a sub-command's help ends with its examples
        assert done.stdout.rstrip().splitlines()[-1].startswith("  " + usage.split()[1] + " ")
