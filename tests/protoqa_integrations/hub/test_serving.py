"""The Hub-folder page (``python app.py``) under hostile input: the Space's caps, budget and body limit.

The folder is built by ``protoqa_integrations.hub.folders`` and started in its own process with the
folder as working directory, as a Space starts it; requests go to its ``/compute`` endpoint
over HTTP. Each oversized request must come back within seconds as an error naming the cap,
a 47 MB body must be refused before it is read, and the server must stay up and small.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import pytest

from tests.support.apps import gradio_call, hub_folder_env, post_raw, process_memory, started_app
from tests.support.words import random_phrases

STARTUP_TIMEOUT = 180
REQUEST_LIMIT = 40.0

pytestmark = pytest.mark.slow

REFS = [{"answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]


@pytest.fixture(scope="module")
def hub_app(tmp_path_factory):
    pytest.importorskip("gradio", minversion="6.31")
    pytest.importorskip("evaluate")
    from protoqa_integrations.hub.folders import write_hub_folder

    tmp = tmp_path_factory.mktemp("hub-app")
    folder = write_hub_folder(tmp / "protoqa", "protoqa", requirement="protoqa-eval[evaluate]")
    env = hub_folder_env(tmp)
    log = tmp / "app.log"
    command = [sys.executable, "app.py"]
    with started_app(command, cwd=folder, env=env, log=log, timeout=STARTUP_TIMEOUT) as (base, process):
        yield base, process, log


def compute(base: str, predictions, references, config: str = "exact_match") -> tuple[str, object, float]:
    data = [json.dumps(predictions), json.dumps(references), config, "{}"]
    return gradio_call(base, "compute", data, REQUEST_LIMIT)


HOSTILE = {
    "2,000 clusters": (
        [["dog"] * 500],
        [{"answers": [[f"a{i}"] for i in range(2000)], "count": [1] * 2000}],
        "question 0: 2000 clusters; at most 50",
    ),
    "201 questions": ([["dog"]] * 201, REFS * 201, "201 questions; at most 200"),
    "too many comparisons": (
        [[f"b{i}" for i in range(251)]],
        [{"answers": [[f"a{i}" for i in range(200)]], "count": [1]}],
        "50200 comparisons; at most 50000",
    ),
    "a long cluster answer": ([["dog"]], [{"answers": [["dog " * 300]], "count": [1]}], "at most 200 are allowed"),
    "too many answers": ([[f"x{i}" for i in range(501)]], REFS, "501 answers; at most 500"),
    "a float count": ([["dog"]], [{"answers": [["dog"]], "count": [2.9]}], "must be a non-negative integer, got 2.9"),
}


def test_hostile_requests_are_refused_by_the_caps(hub_app):
    base, process, log = hub_app
    figures = []
    for name, (predictions, references, message) in HOSTILE.items():
        event, payload, seconds = compute(base, predictions, references)
        memory = process_memory(process.pid)
        figures.append(f"{name}: {event} after {seconds:.2f} s, RSS {memory['VmRSS'] / 2**20:.0f} MB")
        assert event == "error" and message in (payload or {}).get("error", ""), (name, payload)
        assert seconds < 10, (name, seconds)
        assert process.poll() is None, log.read_text()[-3000:]
    print("\n".join(figures))
    event, payload, _ = compute(base, [["cat", "dog"]], REFS)
    assert event == "complete" and payload[0]["max_answers@1"] == pytest.approx(4 / 6), payload


def test_a_slow_request_within_the_caps_ends_within_the_budget(hub_app):
    base, process, _ = hub_app
    phrase = random_phrases(0)

    refs = [{"answers": [[phrase(25)[:200] for _ in range(6)] for _ in range(50)], "count": [5] * 50}] * 8
    predictions = [[f"{phrase(8)[:45]} {i}" for i in range(166)]] * 8
    event, payload, seconds = compute(base, predictions, refs, "wordnet_wup")
    print(
        f"slow request within the caps: {event} after {seconds:.2f} s, peak RSS "
        f"{process_memory(process.pid)['VmHWM'] / 2**20:.0f} MB"
    )
    assert seconds < REQUEST_LIMIT
    assert event == "complete" or "budget" in payload["error"], payload
    assert process.poll() is None


def test_a_47_mb_body_is_refused_before_it_is_read(hub_app):
    base, process, log = hub_app
    before = process_memory(process.pid)
    references = json.dumps([{"answers": [[f"answer {i}"] for i in range(3_000_000)], "count": [1] * 3_000_000}])
    body = json.dumps({"data": ['[["dog"]]', references, "exact_match", "{}"]}).encode()
    assert len(body) > 47 * 10**6
    status, seconds = post_raw(base, "/gradio_api/call/compute", body)
    after = process_memory(process.pid)
    print(
        f"47 MB body: {status} after {seconds:.2f} s; RSS {before['VmRSS'] / 2**20:.0f} -> "
        f"{after['VmRSS'] / 2**20:.0f} MB, peak {after['VmHWM'] / 2**20:.0f} MB"
    )
    assert status in (413, "ConnectionResetError", "BrokenPipeError", "RemoteDisconnected"), status
    assert process.poll() is None, log.read_text()[-3000:]
    assert after["VmHWM"] - before["VmHWM"] < 30 * 2**20


def test_the_answers_cap_is_the_command_lines_default():
    from protoqa_core.cli_options import DEFAULT_MAX_ANSWERS
    from protoqa_integrations.hub import serving

    # One cap: a file the Space scores is one the command line scores at its defaults, and the other way round.
    assert serving.check_question_limits([["dog"]], [6], ["dog"] * DEFAULT_MAX_ANSWERS) == 1  # one comparison
    with pytest.raises(serving.LimitError, match=f"at most {DEFAULT_MAX_ANSWERS} are scored"):
        serving.check_question_limits([["dog"]], [6], ["dog"] * (DEFAULT_MAX_ANSWERS + 1))


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _exits() -> None:
    os._exit(3)


@pytest.mark.parametrize("function, said", [(_killed, "killed by SIGKILL: out of memory?"), (_exits, "exit status 3")])
def test_a_scoring_process_that_dies_is_named_with_how_it_ended(function, said):
    from protoqa_integrations.hub.serving import LimitError, run_with_budget

    with pytest.raises(LimitError) as caught:
        run_with_budget(function, seconds=30)
    assert str(caught.value) == f"scoring stopped unexpectedly ({said})"


def _fills_memory() -> None:
    held = []
    while True:
        held.append(bytearray(2**20))


def test_a_scoring_process_that_fills_its_memory_budget_says_so():
    from protoqa_integrations.hub.serving import LimitError, run_with_budget

    with pytest.raises(LimitError) as caught:
        run_with_budget(_fills_memory, seconds=60, memory=64 * 2**20)
    assert str(caught.value) == "scoring needed more than its 64 MB memory budget and was stopped"
