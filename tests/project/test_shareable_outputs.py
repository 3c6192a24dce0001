"""No credential, in any shape another tool or a user writes it, reaches what the tool shares or says.

Every probe of :mod:`tests.support.secret_probes` is planted where other tools and users put
settings: lm-eval's ``model_args`` and generation arguments, an answers file's ``generation``
block (known fields, unknown fields, nested settings, addresses), and a file name in an error.
Then ``convert``, ``leaderboard`` in each format with ``--model-index``, and the Space's
leaderboard API run, each in a new process, and every byte they write or print is searched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env
from tests.support.secret_probes import probes

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
TARGETS = DATA / "cfc" / "test.targets.jsonl"
needs_data = pytest.mark.skipif(not TARGETS.is_file(), reason=f"shared CFC data not found under {DATA}")
STAMP = "2026-01-01T00-00-00.000001"

# The Space's leaderboard API, answering the uploads given (a JSON list of upload lists); prints the replies.
SPACE_API = """
import json, sys
sys.path.insert(0, sys.argv[1])
import demo_leaderboard
uploads = json.loads(open(sys.argv[2], encoding="utf-8").read())
# The board's systems differ in samples per question: an upload is ranked among them once that is accepted.
print(json.dumps([demo_leaderboard.api_rank("cfc_test", u, accept_mismatch=["samples"]) for u in uploads]))
"""

# Each probe in a file name that does not exist: the error line of `convert` for each, in one process.
ERRORS = """
import contextlib, io, json, sys
from protoqa_integrations.cli import main
lines = []
for text in json.loads(open(sys.argv[1], encoding="utf-8").read()):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        main(["convert", "missing/" + text + ".jsonl", "-o", "never.json"])
    lines.append(err.getvalue())
print(json.dumps(lines))
"""


def _question_ids() -> list[str]:
    return [json.loads(line)["metadata"]["id"] for line in TARGETS.read_text(encoding="utf-8").splitlines() if line]


def _planted(texts: list[str]) -> dict:
    """A generation block with every probe in every kind of field, and under keys no field defines."""
    return {
        "model": "gpt2",
        "dataset": "cfc",
        "split": "test",
        "prompt": "cfc-one-shot",
        "num_samples": 2,
        "sampling": {"temperature": 0.69, "top_p": 0.9, "stop": texts, "extra": texts},
        "model_args": ",".join(["pretrained=gpt2", *texts]),
        "engine_details": {"engine": "openai", "base_url": texts[16], "notes": texts},
        "questions_from": texts[17],
        "notes": texts,
        "metadata": {text: text for text in texts},
    }


def _run(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    env = offline_env(PROTOQA_SPACE_DATA_DIR=str(DATA), PROTOQA_SPACE_TMP=str(cwd / "space-tmp"))
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8", timeout=600, **kwargs
    )


@pytest.mark.slow
@needs_data
def test_no_probe_reaches_any_shared_output_or_message(tmp_path):
    planted = probes()
    texts = [text for text, _ in planted]
    ids = _question_ids()
    seen: list[str] = []
    # convert, from lm-eval output whose run recorded the probes as model_args and generation arguments
    samples = tmp_path / f"samples_cfc_{STAMP}.jsonl"
    with samples.open("w", encoding="utf-8") as fh:
        for qid in ids:
            arguments = {"gen_args_0": {"arg_0": "Q", "arg_1": {"temperature": 0.69, "until": texts, "x": texts}}}
            record = {"doc": {"id": qid}, "filter": "answers", "filtered_resps": [["a car", "a cab"]]}
            fh.write(json.dumps({**record, "arguments": arguments}) + "\n")
    results = {"config": {"model": "hf", "model_args": ",".join(["pretrained=gpt2", *texts]), "notes": texts}}
    (tmp_path / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    converted = tmp_path / "converted.json"
    ran = _run([sys.executable, "-m", "protoqa_integrations", "convert", str(samples), "-o", str(converted)], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    seen += [ran.stdout, ran.stderr, converted.read_text(encoding="utf-8")]
    # answers files whose generation block holds every probe everywhere, ranked in every format
    answers = {}
    for name in ("first", "second"):
        answers[name] = tmp_path / f"{name}.json"
        document = {
            "model_answers": {qid: ["a car", "a cab"] for qid in ids},
            "model_ranked_answers": {qid: ["a car", "a cab"] for qid in ids},
            "generation": _planted(texts),
        }
        answers[name].write_text(json.dumps(document), encoding="utf-8")
    systems = [f"{name}={path}" for name, path in answers.items()] + [f"converted={converted}"]
    board = [sys.executable, "-m", "protoqa_integrations", "leaderboard", str(TARGETS), *systems]
    board += ["--metrics", "protoqa", "--resamples", "20", "--accept-mismatch", "all"]
    for output in ([], ["--json"], ["--markdown"], ["--csv"]):
        extra = ["--model-index", str(tmp_path / "index"), "--dataset-type", "owner/cfc", "--overwrite"]
        ran = _run(board + output + (extra if output == ["--json"] else []), tmp_path)
        assert ran.returncode == 0, ran.stderr[-2000:]
        seen += [ran.stdout, ran.stderr]
    index = sorted((tmp_path / "index").rglob("*"))
    assert index
    seen += [path.read_text(encoding="utf-8") for path in index if path.is_file()]
    # the Space's API, with the same answers file uploaded
    uploads = tmp_path / "uploads.json"
    content = answers["first"].read_text(encoding="utf-8")
    uploads.write_text(json.dumps([[{"name": "mine.json", "content": content}]]), encoding="utf-8")
    ran = _run([sys.executable, "-c", SPACE_API, str(REPO / "space"), str(uploads)], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    [reply] = json.loads(ran.stdout.strip().splitlines()[-1])
    assert reply["error"] is None and any(s["name"] == "mine" for s in reply["leaderboard"]["systems"])
    seen.append(ran.stdout)
    # the error line naming a file whose name holds the probe
    given = tmp_path / "texts.json"
    given.write_text(json.dumps(texts), encoding="utf-8")
    ran = _run([sys.executable, "-c", ERRORS, str(given)], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    lines = json.loads(ran.stdout.strip().splitlines()[-1])
    assert all("file not found" in line for line in lines), lines[:3]
    seen += lines
    everything = "\n".join(seen)
    leaked = [text for text, secret in planted if secret in everything]
    assert not leaked, f"{len(leaked)} of {len(planted)} probe shapes reach an output: {leaked}"
