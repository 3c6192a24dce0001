"""How many times a command opens each input file, counted in a new process by an audit hook, and how
much of each system file it parses, counted by wrapping the JSON parsers.

Each file is parsed once and the parsed document is handed to whatever needs it (format
detection, the field discovery and the readers of samples and ranked lists); ``protoqa-eval``
reads each file once into its on-disk index.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
CFC = DATA / "cfc"
PROTOQA = DATA / "protoqa"

pytestmark = pytest.mark.skipif(
    not (CFC / "test.targets.jsonl").is_file(), reason=f"shared data not found under {DATA}"
)

_COUNTING = """
import collections, json, os, runpy, sys
watched = {os.path.realpath(p) for p in json.loads(sys.argv[1])}
counts = collections.Counter()
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        name = os.path.realpath(os.fsdecode(args[0]))
        if name in watched:
            counts[name] += 1
sys.addaudithook(hook)
module, sys.argv = sys.argv[2], sys.argv[2:]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
else:
    status = 0
print(json.dumps({"status": status, "opens": counts}), file=sys.stderr)
"""


def opens(tmp_path: Path, module: str, *args: object, files: list[Path]) -> dict[str, int]:
    """Opens of each of ``files`` by ``python -m module args...``, run from ``tmp_path``."""
    done = run_python(
        ["-c", _COUNTING, json.dumps([str(f) for f in files]), module, *map(str, args)],
        tmp_path,
        {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        timeout=600,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["status"] in (0, None), done.stderr[-2000:]
    return {Path(name).name: count for name, count in report["opens"].items()}


def test_probeval_reads_each_file_once(tmp_path):
    targets, samples = CFC / "test.targets.jsonl", CFC / "test.samples.gpt2-xl.oneshot.jsonl"
    counted = opens(tmp_path, "cfc_probeval", targets, samples, "--json", files=[targets, samples])
    assert counted == {targets.name: 1, samples.name: 1}


def test_protoqa_eval_reads_each_file_once(tmp_path):
    targets, predictions = PROTOQA / "dev.crowdsourced.jsonl", PROTOQA / "dev.predictions.gpt2finetuned.json"
    counted = opens(
        tmp_path,
        "protoqa_metric",
        targets,
        predictions,
        "--similarity",
        "exact_match,lcs",
        "--json",
        "--no-progress",
        files=[targets, predictions],
    )
    assert counted == {targets.name: 1, predictions.name: 1}


def _system_files(folder: Path) -> list[Path]:
    """One CFC test system in each text format the leaderboard reads, and one over the size that is parsed
    whole (read as a stream, gzip-compressed): each is opened once all the same."""
    jsonl = CFC / "test.samples.gpt2-xl.oneshot.jsonl"
    samples = {qid: answers for line in jsonl.read_text().splitlines() for qid, answers in json.loads(line).items()}
    lm_eval = folder / "samples_cfc_2026-01-01T00-00-00.jsonl"
    records = [
        {"doc_id": i, "doc": {"id": qid}, "filter": "answers", "filtered_resps": [answers]}
        for i, (qid, answers) in enumerate(samples.items())
    ]
    lm_eval.write_text("".join(json.dumps(r) + "\n" for r in records))
    answers = folder / "answers.json"
    ranked = {qid: sorted(set(a), key=a.index) for qid, a in samples.items()}
    answers.write_text(
        json.dumps({"model_answers": samples, "model_ranked_answers": ranked, "generation": {"model": "x"}})
    )
    large = folder / "large.json.gz"
    padding = {f"pad{i}": [f"answer {j}" for j in range(400)] for i in range(4000)}  # about 20 MB
    with gzip.open(large, "wt") as fh:
        json.dump({**samples, **padding}, fh, indent=1)
    return [jsonl, CFC / "test.predictions.human.json", lm_eval, answers, large]


def test_the_leaderboard_opens_each_system_file_and_the_targets_once(tmp_path):
    targets = CFC / "test.targets.jsonl"
    systems = _system_files(tmp_path)
    counted = opens(
        tmp_path,
        "protoqa_integrations",
        "leaderboard",
        targets,
        *(f"s{i}={path}" for i, path in enumerate(systems)),
        *("--metrics", "protoqa", "--similarity", "exact_match", "--resamples", "50", "--only-common", "--json"),
        files=[targets, *systems],
    )
    # Format detection, field discovery, the samples and the ranked lists all come from one read of
    # each system file; the targets' checksum (for the provenance check) from the one read of them.
    assert counted == {targets.name: 1, **{path.name: 1 for path in systems}}


def test_convert_opens_the_harness_output_once(tmp_path):
    lm_eval = _system_files(tmp_path)[2]
    counted = opens(tmp_path, "protoqa_integrations", "convert", lm_eval, "-o", tmp_path / "out.json", files=[lm_eval])
    assert counted == {lm_eval.name: 1}


_PARSING = """
import collections, json, runpy, sys
import ijson
from protoqa_integrations.harnesses import outputs
parsed, current = collections.Counter(), [None]
loads, basic_parse = json.loads, ijson.basic_parse
def counted_loads(text, *args, **kwargs):
    value = loads(text, *args, **kwargs)
    parsed[current[0]] += len(text)  # what was parsed to the end: a failed attempt builds nothing
    return value
class Counted:
    def __init__(self, inner):
        self.inner = inner
    def read(self, size=-1):
        data = self.inner.read(size)
        parsed[current[0]] += len(data)
        return data
json.loads = counted_loads
ijson.basic_parse = lambda stream, *args, **kwargs: basic_parse(Counted(stream), *args, **kwargs)
read_system_file = outputs.read_system_file
def reading(path, **kwargs):
    current[0] = str(path)
    try:
        return read_system_file(path, **kwargs)
    finally:
        current[0] = None
outputs.read_system_file = reading  # before the leaderboard imports it
try:
    runpy.run_module("protoqa_integrations", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(json.dumps({name: count for name, count in parsed.items() if name}), file=sys.stderr)
"""


def test_the_leaderboard_parses_each_system_file_once(tmp_path):
    targets = CFC / "test.targets.jsonl"
    systems = _system_files(tmp_path)
    done = run_python(
        ["-c", _PARSING, "leaderboard", targets, *(f"s{i}={path}" for i, path in enumerate(systems))]
        + ["--metrics", "protoqa", "--similarity", "exact_match", "--resamples", "50", "--only-common", "--json"],
        tmp_path,
        {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    parsed = json.loads(done.stderr.strip().splitlines()[-1])
    for path in systems:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            characters = len(fh.read())
        # Format detection and the readers share one parse: no character is parsed twice (a JSONL
        # line is parsed with its newline, the first without), and none is left unparsed.
        assert characters * 0.99 <= parsed[str(path)] <= characters, path.name


def test_probeval_and_compare_read_a_clustered_file_once(tmp_path):
    from cfc_probeval import ProbEval, write_clustered_targets

    raw = tmp_path / "raw.jsonl"
    lines = [json.loads(line) for line in (CFC / "test.targets.jsonl").read_text().splitlines()[:8]]
    for line in lines:
        line["answers"].pop("clusters")
    raw.write_text("".join(json.dumps(line) + "\n" for line in lines))
    clustered = tmp_path / "clustered.jsonl"
    write_clustered_targets(raw, clustered, ProbEval("hac", embedder="char-ngrams"))
    a, b = CFC / "test.samples.gpt2-xl.oneshot.jsonl", CFC / "test.samples.gpt2-large.oneshot.jsonl"
    scored = opens(tmp_path, "cfc_probeval", clustered, a, "--ignore-unknown", "--json", files=[clustered, a])
    assert scored == {clustered.name: 1, a.name: 1}
    compared = opens(
        tmp_path,
        "cfc_probeval",
        "compare",
        clustered,
        a,
        b,
        *("--ignore-unknown", "--accept-mismatch", "samples", "--resamples", "50", "--json"),
        files=[clustered, a, b],
    )
    assert compared == {clustered.name: 1, a.name: 1, b.name: 1}
