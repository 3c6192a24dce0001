"""On/off switches from the environment: one rule, huggingface_hub's, for every switch of the package."""

from __future__ import annotations

import pytest

from protoqa_core.cli import TRACEBACK_ENV, run_command
from protoqa_core.environment import TRUE_VALUES, env_flag, env_setting, is_true
from protoqa_core.io.cache_files import NO_CACHE_ENV, caching_enabled


def test_the_true_values_are_huggingface_hub_s():
    from huggingface_hub import constants

    assert TRUE_VALUES == constants.ENV_VARS_TRUE_VALUES
    for value in ("1", "true", "YES", "On", " 1", "0", "false", "no", "off", "2", "", None):
        assert is_true(value) is constants._is_true(value), value


@pytest.mark.parametrize(
    "value, on",
    [("1", True), ("true", True), ("on", True), ("0", False), ("false", False), ("off", False), ("", False)],
)
def test_every_switch_of_the_package_reads_by_the_one_rule(monkeypatch, capsys, value, on):
    monkeypatch.setenv("PROTOQA_SOME_SWITCH", value)
    assert env_flag("PROTOQA_SOME_SWITCH") is on
    monkeypatch.setenv(NO_CACHE_ENV, value)
    assert caching_enabled() is not on
    monkeypatch.setenv(TRACEBACK_ENV, value)

    def fail() -> int:
        raise RuntimeError("boom")

    if on:
        with pytest.raises(RuntimeError, match="boom"):
            run_command("demo", fail)
    else:
        assert run_command("demo", fail) == 2
        assert "demo: error: unexpected RuntimeError: boom" in capsys.readouterr().err


def test_a_setting_drops_surrounding_blanks_and_a_blank_one_is_unset(monkeypatch):
    monkeypatch.setenv("PROTOQA_SOME_DIR", "  ~/data \n")
    assert env_setting("PROTOQA_SOME_DIR") == "~/data"
    for blank in ("", "   ", "\t"):
        monkeypatch.setenv("PROTOQA_SOME_DIR", blank)
        assert env_setting("PROTOQA_SOME_DIR") is None
    monkeypatch.delenv("PROTOQA_SOME_DIR")
    assert env_setting("PROTOQA_SOME_DIR") is None
