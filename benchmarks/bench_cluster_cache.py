"""What the automatic clusters cost once they are kept: ``probeval`` and ``leaderboard`` beside the human-cluster path.

Each round runs every command once, each a new process, one after the other, and each
automatic path beside its baseline in the same round: the same command with the targets' human
clusters. CPU is user + system of the whole process (``os.wait4``). Cases:

* ``probeval`` on CFC dev, GPT-2 XL one-shot samples, ``--clustering gmeans``: with an empty
  cache (a first run: it clusters and keeps), with a warm one (a second system: the clusters
  were kept by a run on the human answers), and with ``--no-cache`` (what every run cost before);
  the baseline is ``--clustering human``.
* With ``--baseline-ref REF``, the G-means path of git revision REF (before the cache and the exact
  products), beside the same baseline.
* ``protoqa-eval leaderboard`` of the eight CFC test systems, ``--metrics probeval``: on the test
  targets without their clusters (automatic clusters), with an empty cache and a warm one; the
  baseline is the same command on the targets with their human clusters.

Beside them, the encoder's floor of the first run, measured in the same run in a process of its own
(``bench_embedding_runtime.py``'s, :mod:`encoder_floor`): the tokens the G-means path encodes on
CFC dev, and the least CPU their matrix products take in float32 and as the exact products run.

Run from the repository root (writes ``benchmarks/results/cluster_cache.json``, which
``benchmarks/figures.py`` copies into docs/probeval.md)::

    python benchmarks/bench_cluster_cache.py [--data-dir ../shared/data] [--rounds 3] [--baseline-ref REF]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.process_timing import ResultsFile, extract_revision, run_measured  # noqa: E402

SYSTEMS = [
    f"{model}.{shot}"
    for model in ("gpt2-large", "gpt2-xl", "protoqa-ft", "gpt2-large-ft")
    for shot in ("zeroshot", "oneshot")
]


def _strip_clusters(source: Path, target: Path) -> None:
    with open(source, encoding="utf-8") as fh, open(target, "w", encoding="utf-8") as out:
        for line in fh:
            record = json.loads(line)
            record["answers"].pop("clusters", None)
            out.write(json.dumps(record) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--baseline-ref", default=None, help="also run the G-means path of this git revision (no cache there)"
    )
    parser.add_argument("--json-out", default=str(REPO / "benchmarks" / "results" / "cluster_cache.json"))
    args = parser.parse_args()
    cfc = Path(args.data_dir) / "cfc"
    results = ResultsFile(Path(args.json_out), "python " + " ".join(sys.argv))
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        raw_test = work / "test.raw.jsonl"
        _strip_clusters(cfc / "test.targets.jsonl", raw_test)
        # Every command runs in the scratch folder: from the repository root, ``python -m`` would import this
        # checkout's packages before a baseline's PYTHONPATH.
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), "PROTOQA_NO_CACHE": "0"}
        env.pop("PROTOQA_CACHE_DIR", None)
        probeval = [python, "-m", "cfc_probeval", str(cfc / "dev.targets.jsonl")]
        gpt2 = [str(cfc / "dev.predictions.gpt2-xl.oneshot.json"), "--ignore-unknown", "--json", "--quiet"]
        board = [python, "-m", "protoqa_integrations", "leaderboard"]
        systems = [f"{name}={cfc / f'test.samples.{name}.jsonl'}" for name in SYSTEMS]
        # The sample files differ in answers per question (distinct answers): ranked with the mismatch accepted.
        board_tail = [*systems, "--metrics", "probeval", "--accept-mismatch", "samples", "--json", "--quiet"]
        human_probeval = " ".join(["probeval dev.targets.jsonl gpt2-xl.oneshot", "--clustering human"])
        human_board = "protoqa-eval leaderboard test.targets.jsonl (8 systems) --metrics probeval"
        cases = [
            ("probeval dev --clustering human", None, [*probeval, *gpt2, "--clustering", "human"], "none"),
            ("probeval dev --clustering gmeans, empty cache (first run)", human_probeval,
             [*probeval, *gpt2, "--clustering", "gmeans"], "empty"),
            ("probeval dev --clustering gmeans, warm cache (a second system)", human_probeval,
             [*probeval, *gpt2, "--clustering", "gmeans"], "warm"),
            ("probeval dev --clustering gmeans --no-cache", human_probeval,
             [*probeval, *gpt2, "--clustering", "gmeans", "--no-cache"], "none"),
            ("leaderboard test, human clusters", None, [*board, str(cfc / "test.targets.jsonl"), *board_tail], "none"),
            ("leaderboard test without clusters (automatic), empty cache", human_board,
             [*board, str(raw_test), *board_tail], "empty"),
            ("leaderboard test without clusters (automatic), warm cache", human_board,
             [*board, str(raw_test), *board_tail], "warm"),
        ]  # fmt: skip
        if args.baseline_ref:
            old = extract_revision(args.baseline_ref, work)
            cases.append(
                (f"probeval dev --clustering gmeans, baseline {args.baseline_ref}", human_probeval,
                 [*probeval, *gpt2, "--clustering", "gmeans"], f"revision:{old}"),
            )  # fmt: skip
        results.add(
            {"case": "encoder_floor", "path": "probeval dev --clustering gmeans, first run", **_floor(args, work, env)}
        )
        warm = work / "warm-cache"
        # The warm cache holds what a first system left: the human answers scored on dev, the test board run once.
        warm_env = {**env, "PROTOQA_CACHE_DIR": str(warm)}
        run_measured(
            [*probeval, str(cfc / "dev.predictions.human.json"), "--ignore-unknown", "--json", "--quiet",
             "--clustering", "gmeans"], work, warm_env, 600, "warming probeval",
        )  # fmt: skip
        run_measured([*board, str(raw_test), *board_tail], work, warm_env, 1200, "warming leaderboard")
        outputs: dict[str, set[bytes]] = {}
        cpu: dict[str, list[float]] = {name: [] for name, *_ in cases}
        loads: dict[str, list[float]] = {name: [] for name, *_ in cases}
        for round_number in range(args.rounds):
            for name, _, command, cache in cases:
                folder = warm if cache == "warm" else work / f"empty-{round_number}-{len(cpu[name])}-{abs(hash(name))}"
                load = round(os.getloadavg()[0], 1)
                run_env = {**env, "PROTOQA_CACHE_DIR": str(folder)}
                if cache.startswith("revision:"):
                    run_env["PYTHONPATH"] = cache.removeprefix("revision:")
                run = run_measured(command, work, run_env, 1200, name)
                cpu[name].append(run.cpu)
                loads[name].append(load)
                assert run.stdout is not None
                document = json.loads(run.stdout)
                scores = document.get("per_question") or [s["scores"] for s in document.get("systems", [])]
                outputs.setdefault(name, set()).add(json.dumps(scores, sort_keys=True).encode())
        _record(results, cases, cpu, loads, outputs, args.rounds, args.baseline_ref)


def _floor(args: argparse.Namespace, work: Path, env: dict[str, str]) -> dict:
    """The encoder floor of the first G-means run on CFC dev, from ``bench_embedding_runtime.py``'s child."""
    out = work / "floor.json"
    run_measured(
        [sys.executable, str(REPO / "benchmarks" / "bench_embedding_runtime.py"), "--data-dir", str(args.data_dir),
         "--runtimes", "numpy,numpy-seed1", "--floor-child", str(out)], work, env, 600, "encoder floor",
    )  # fmt: skip
    return json.loads(out.read_text(encoding="utf-8"))


def _record(
    results: ResultsFile,
    cases: list,
    cpu: dict[str, list[float]],
    loads: dict[str, list[float]],
    outputs: dict[str, set[bytes]],
    rounds: int,
    baseline_ref: str | None,
) -> None:
    """One result per measured case, beside the case without the automatic clustering from the same rounds."""
    for name, baseline_name, _, _ in cases:
        if baseline_name is None:
            continue
        base = next(n for n, b, *_ in cases if b is None and n.split()[0] == name.split()[0])
        ratios = [mine / theirs for mine, theirs in zip(cpu[name], cpu[base], strict=True)]
        results.add(
            {
                "command": name,
                "version": f"baseline {baseline_ref}" if name.endswith(f"baseline {baseline_ref}") else "this version",
                "cpu_s": min(cpu[name]),
                "baseline": base,
                "baseline_cpu_s": min(cpu[base]),
                "ratio": min(cpu[name]) / min(cpu[base]),
                "round_ratios": [round(r, 3) for r in ratios],
                "rounds": rounds,
                "load": statistics.median(loads[name]),
                "same_scores_every_round": len(outputs[name]) == 1,
            }
        )
        print(f"{name}: {min(cpu[name]):.2f} s beside {min(cpu[base]):.2f} s ({ratios})", file=sys.stderr)


if __name__ == "__main__":
    main()
