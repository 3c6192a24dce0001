"""The ProtoQA command at scale: time and peak memory from 10,000 to 100,000 questions and more.

Prints figures; asserts nothing about time (machines are noisy). Run from the
repository root:

    python benchmarks/bench_protoqa_scale.py [--data-dir ../shared/data] [--sizes 10000,100000]
                                             [--similarities exact_match,wordnet]
                                             [--baseline-ref REV] [--baseline-sizes 10000,100000]

The synthetic input repeats the real ProtoQA crowdsourced dev set (52 questions with
their answer clusters) and the fine-tuned GPT-2 ranked lists of the same questions:
question ``i`` is dev question ``i mod 52`` under the id ``<id>-<i>``. So the cluster
sizes, counts, answers and predictions are real strings, and the cost per question should
not move with the size: a growing cost per question is a cost that is not linear. The
predictions file lists the questions in a shuffled order (seed 0), so that the command
has to join two files in different orders.

Every run is the whole command ``protoqa-eval TARGETS PREDICTIONS --similarity SIM
--json --per-question FILE`` in a fresh process (imports, reading, scoring, the
per-question file), once per similarity. Printed per run: the load average before it,
wall time, CPU time (user + system of that process: less sensitive to other work on a
shared machine), peak resident memory (``ru_maxrss``), and microseconds and kilobytes per
question beyond the run on the smallest size. ``--baseline-ref`` also runs the code of a
git revision (``git archive`` of it into a temporary folder) in the same session on
``--baseline-sizes``, and checks that the scores and the per-question files of the two
versions are identical, byte for byte.

``--json-out FILE`` (default ``benchmarks/results/protoqa_scale.json``) records every run as it
ends: the command line, the machine, and per run the size, similarity, version, load average,
wall and CPU seconds, peak memory and whether the outputs matched the baseline. The pages
quote that file (``python benchmarks/figures.py --write`` copies its figures into them).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Optional

from process_timing import REPO, ResultsFile, extract_revision, run_measured


def _tag_words(data_dir: Path) -> list[str]:
    """The one-word answers of the scraped dev set's clusters (real answer words), sorted."""
    words = set()
    for line in (data_dir / "protoqa" / "dev.scraped.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            for cluster in json.loads(line)["answers"]["clusters"].values():
                words.update(a for a in cluster["answers"] if a.isalpha())
    return sorted(words)


def write_inputs(folder: Path, data_dir: Path, num_questions: int, strings: str = "repeated") -> tuple[Path, Path]:
    """Targets JSONL and predictions JSONL of ``num_questions`` copies of the dev questions.

    With ``strings="distinct"``, every cluster answer and prediction of copy ``i`` gets one
    more word, a one-word answer of the scraped dev set picked by ``i``, so that the strings
    differ from copy to copy (about 1,500 strings times the number of such words) and the
    similarities' caches fill as on a large set of distinct questions.
    """
    dev = [
        json.loads(line)
        for line in (data_dir / "protoqa" / "dev.crowdsourced.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    predictions = json.loads((data_dir / "protoqa" / "dev.predictions.gpt2finetuned.json").read_text(encoding="utf-8"))
    tags = _tag_words(data_dir) if strings == "distinct" else []

    def tagged(texts: list[str], i: int) -> list[str]:
        return [f"{text} {tags[(i * 7919) % len(tags)]}" for text in texts] if tags else texts

    targets_path, predictions_path = folder / f"targets.{num_questions}.jsonl", folder / f"preds.{num_questions}.jsonl"
    with open(targets_path, "w", encoding="utf-8") as targets:
        for i in range(num_questions):
            row = dev[i % len(dev)]
            copy = {**row, "metadata": {**row["metadata"], "id": f"{row['metadata']['id']}-{i}"}}
            if tags:
                clusters = row["answers"]["clusters"]
                copy["answers"] = {
                    **row["answers"],
                    "clusters": {cid: {**c, "answers": tagged(c["answers"], i)} for cid, c in clusters.items()},
                }
            targets.write(json.dumps(copy) + "\n")
    order = list(range(num_questions))
    random.Random(0).shuffle(order)
    with open(predictions_path, "w", encoding="utf-8") as preds:
        for i in order:
            qid = dev[i % len(dev)]["metadata"]["id"]
            preds.write(json.dumps({f"{qid}-{i}": tagged(predictions.get(qid, []), i)}) + "\n")
    return targets_path, predictions_path


def run_command(
    code: Path, similarity: str, targets: Path, predictions: Path, per_question: Path, timeout: float
) -> tuple[Optional[str], float, float, float]:
    """(stdout or None on timeout, wall seconds, CPU seconds, peak RSS in MB) of one fresh ``protoqa-eval``."""
    env = {**os.environ, "PYTHONPATH": str(code), "PROTOQA_MAX_INPUT_MB": "4096"}
    command = [
        sys.executable,
        "-m",
        "protoqa_metric",
        str(targets),
        str(predictions),
        "--similarity",
        similarity,
        "--json",
        "--per-question",
        str(per_question),
        "--force",
    ]
    run = run_measured(command, code, env, timeout, f"protoqa-eval ({code})")
    return (None if run.stdout is None else run.stdout.decode()), run.wall, run.cpu, run.rss_mb


def measure(
    label: str,
    code: Path,
    similarity: str,
    inputs: tuple[Path, Path],
    per_question: Path,
    n: int,
    timeout: float,
    smallest: Optional[tuple[int, float, float]],
    results: ResultsFile,
) -> tuple[Optional[str], float, float]:
    load = os.getloadavg()[0]
    out, wall, cpu, rss = run_command(code, similarity, *inputs, per_question, timeout)
    results.add(
        {
            "questions": n,
            "similarity": similarity,
            "version": label,
            "load": round(load, 1),
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "peak_mb": round(rss),
            "killed": out is None,
        }
    )
    line = (
        f"   {similarity:<12} {label:<12} n={n:>9,}  load {load:4.1f}  wall {wall:8.1f} s  CPU {cpu:8.1f} s  "
        f"peak RSS {rss:7.0f} MB  {1e6 * cpu / n:7.1f} us CPU per question"
    )
    if smallest is not None and n > smallest[0]:
        # Beyond the smallest run: what each further question costs, imports and start-up left out.
        extra = n - smallest[0]
        line += (
            f"  ({1e6 * (cpu - smallest[1]) / extra:6.1f} us and {1024 * (rss - smallest[2]) / extra:5.2f} KB "
            "per further question)"
        )
    print(line + ("  KILLED (timeout)" if out is None else ""), flush=True)
    return out, cpu, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated question counts")
    parser.add_argument("--similarities", default="exact_match,wordnet", help="comma-separated similarities")
    parser.add_argument(
        "--strings",
        choices=("repeated", "distinct"),
        default="repeated",
        help="the dev set's strings as they are, or made distinct from copy to copy (see write_inputs)",
    )
    parser.add_argument("--baseline-ref", help="git revision to measure in the same run and compare bit for bit")
    parser.add_argument("--baseline-sizes", default="10000,100000", help="sizes the baseline runs on")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before a run is killed")
    parser.add_argument(
        "--json-out",
        default=str(REPO / "benchmarks" / "results" / "protoqa_scale.json"),
        help="where the figures are recorded (rewritten after every run)",
    )
    args = parser.parse_args()
    results = ResultsFile(Path(args.json_out), "python benchmarks/bench_protoqa_scale.py " + " ".join(sys.argv[1:]))
    sizes = sorted(int(s) for s in args.sizes.split(","))
    similarities = [s.strip() for s in args.similarities.split(",") if s.strip()]
    baseline_sizes = sorted(int(s) for s in args.baseline_sizes.split(",")) if args.baseline_ref else []
    print(
        f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
        f"Python {sys.version.split()[0]}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-protoqa-scale-") as tmp:
        folder = Path(tmp)
        baseline = extract_revision(args.baseline_ref, folder) if args.baseline_ref else None
        smallest: dict[tuple[str, str], tuple[int, float, float]] = {}
        for n in sorted(set(sizes) | set(baseline_sizes)):
            inputs = write_inputs(folder, Path(args.data_dir), n, args.strings)
            sizes_mb = " and ".join(f"{path.stat().st_size / 2**20:.0f} MB" for path in inputs)
            print(f"{n:,} questions ({sizes_mb} of targets and predictions, {args.strings} strings):", flush=True)
            for similarity in similarities:
                outputs = {}
                runs = [(f"baseline {args.baseline_ref}", baseline)] if baseline and n in baseline_sizes else []
                runs += [("this version", REPO)] if n in sizes else []
                for label, code in runs:
                    assert code is not None
                    per_question = folder / f"per_question.{len(outputs)}.jsonl"
                    key = (label, similarity)
                    out, cpu, rss = measure(
                        label, code, similarity, inputs, per_question, n, args.timeout, smallest.get(key), results
                    )
                    smallest.setdefault(key, (n, cpu, rss))
                    outputs[label] = (out, per_question)
                if len(outputs) == 2 and all(out is not None for out, _ in outputs.values()):
                    (old, old_file), (new, new_file) = outputs.values()
                    same = old == new and filecmp.cmp(old_file, new_file, shallow=False)
                    results.add({"questions": n, "similarity": similarity, "identical": same})
                    print(
                        f"   {similarity}: --json output and per-question file byte-identical to the baseline: "
                        f"{'yes' if same else 'NO'}",
                        flush=True,
                    )
                for _, per_question in outputs.values():
                    per_question.unlink(missing_ok=True)
            for path in inputs:
                path.unlink()


if __name__ == "__main__":
    main()
