"""Whole processes, as users run them: CPU seconds (user + sys) beside baselines measured in the same run.

Prints figures; asserts nothing about time (machines are noisy: the load average is
printed beside every figure). Each figure is one whole process (``python -c ...`` or
the command line), its CPU time read from ``os.wait4``; rounds alternate the
contenders, and the least of the rounds is reported.

    python benchmarks/bench_process.py [--data-dir ../shared/data]
        [--reference-python VENV/bin/python --reference-src protoqa-evaluator/src]
        [--before-src OLD_CHECKOUT | --before-ref REV] [--rounds 3] [--reference-wordnet-rounds 1]
        [--only startup ...] [--json-out benchmarks/results/startup.json]

* ``--reference-python``/``--reference-src``: the reference evaluator
  (``iesl/protoqa-evaluator``) installed in a virtual environment of its own, with its
  ``src`` folder; it is run on the dev questions under WordNet and exact match.
* ``--reference-nltk-data``: the NLTK data the reference reads (``wordnet``, ``stopwords``,
  ``punkt_tab``); it tries to download them at import, which fails offline.
* ``--before-src``: an earlier checkout of this project, run the same way ("before");
  ``--before-ref REV``: the files of git revision ``REV`` of this repository, unpacked for the run.

Start-up (``--only startup``): ``protoqa-eval --help``, and dev x fine-tuned GPT-2 under exact
match and WordNet, each alternated round by round with ``python -c "import numpy"`` (the
interpreter with the one library every evaluation loads), beside the reference evaluator under
exact match when it is given. Its figures are recorded in ``--json-out`` (default
``benchmarks/results/startup.json``) as each command's rounds end: per command and version the
least CPU of the rounds, the least of ``import numpy`` in the same rounds, their ratio, the
ratio within each round, the machine and the load. The pages quote that file
(``python benchmarks/figures.py --write``).

Measured: ``import protoqa_metric``, ``import cfc_probeval``, ``protoqa-eval --help``
and ``probeval --help``; dev x fine-tuned GPT-2 answers under WordNet and exact match;
the 980 scraped dev questions (10 answers each, drawn with a fixed seed from their own
and other questions' answers) on a quarter, half and all of them; the first
``protoqa-eval ... --similarity wordnet_wup`` run on an empty cache folder, with every
process it starts, against a warm one (with peak memory; with ``--before-src``, the
earlier checkout's alternated with it);
``probeval`` on CFC dev with default settings, on the human answers and on GPT-2 XL's samples.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from process_timing import ResultsFile, extract_revision

REPO = Path(__file__).resolve().parents[1]
STARTUP_BASELINE = 'python -c "import numpy"'


def run(cmd: list[str], env: Optional[dict] = None, cwd: Optional[Path] = None) -> tuple[float, float, int]:
    """CPU seconds (user + sys), peak resident MB and exit status of one whole process (with the
    children it waited for: Linux adds them to what ``wait4`` reports).

    By default the process runs in the temporary folder: ``python -c`` puts its working folder
    first on ``sys.path``, and a checkout there would shadow the ``PYTHONPATH`` of the contender."""
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=cwd or tempfile.gettempdir(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.returncode != 0:
        print(f"    ! exit {proc.returncode}: {err.strip().splitlines()[-1:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def base_env() -> dict:
    """The environment without ``PYTHONDONTWRITEBYTECODE``: an installed package has its bytecode
    files, so every contender writes and then reads its own (the least of the rounds counts)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def ours_env(src: Path, **extra: str) -> dict:
    return {**base_env(), "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", **extra}


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def cli(module: str, *args: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        f"import sys; from {module} import main; sys.argv[0] = 'x'; sys.exit(main({list(args)!r}))",
    ]


def compare(label: str, contenders: dict[str, tuple[list[str], dict]], rounds: int) -> dict[str, float]:
    """Run the contenders alternately ``rounds`` times; print and return the least CPU of each."""
    best: dict[str, float] = {}
    for r in range(rounds):
        for name, (cmd, env) in contenders.items():
            cpu, _, status = run(cmd, env)
            if status == 0:
                best[name] = min(best.get(name, cpu), cpu)
            print(f"  {label} | {name:10s} round {r + 1}: {cpu:7.2f} s CPU ({load()})")
    return best


def ratio_line(label: str, best: dict[str, float], ours: str = "ours") -> None:
    parts = [f"{name} {cpu:.2f} s" for name, cpu in best.items()]
    line = f"{label}: " + ", ".join(parts)
    for other in best:
        if other != ours and ours in best:
            line += f"; {other}/{ours} = {best[other] / best[ours]:.1f}x"
    print(line + f" ({load()})")


def scraped_inputs(data: Path, folder: Path) -> list[tuple[int, Path, Path]]:
    """Targets and 10 answers a question for a quarter, half and all of the 980 scraped questions."""
    records = [
        json.loads(line) for line in (data / "protoqa" / "dev.scraped.jsonl").open(encoding="utf-8") if line.strip()
    ]
    rng = random.Random(22)
    pool = [a for r in records for c in r["answers"]["clusters"].values() for a in c["answers"]]
    predictions = {}
    for r in records:
        own = [a for c in r["answers"]["clusters"].values() for a in c["answers"]]
        answers = rng.sample(own, min(5, len(own))) + [rng.choice(pool) for _ in range(10)]
        predictions[r["metadata"]["id"]] = answers[:10]
    out = []
    for n in (len(records) // 4, len(records) // 2, len(records)):
        t, p = folder / f"scraped{n}.jsonl", folder / f"scraped{n}.predictions.json"
        t.write_text("".join(json.dumps(r) + "\n" for r in records[:n]), encoding="utf-8")
        p.write_text(
            json.dumps({r["metadata"]["id"]: predictions[r["metadata"]["id"]] for r in records[:n]}), encoding="utf-8"
        )
        out.append((n, t, p))
    return out


def _parser() -> argparse.ArgumentParser:
    """The command line (the module docstring is its description)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--reference-python", type=Path)
    parser.add_argument("--reference-src", type=Path)
    parser.add_argument(
        "--reference-nltk-data",
        type=Path,
        help="an NLTK data folder with wordnet, stopwords and punkt_tab for the reference (default: $NLTK_DATA)",
    )
    before = parser.add_mutually_exclusive_group()
    before.add_argument("--before-src", type=Path, help="an earlier checkout of this project")
    before.add_argument("--before-ref", help="a git revision of this repository, unpacked and run as 'before'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reference-wordnet-rounds", type=int, default=1)
    parser.add_argument("--only", action="append", choices=PARTS)
    parser.add_argument(
        "--json-out",
        type=Path,
        default=REPO / "benchmarks" / "results" / "startup.json",
        help="where the start-up figures are recorded (rewritten after each command)",
    )
    return parser


PARTS = ("imports", "startup", "exact", "wordnet", "scraped", "cold", "probeval")


def main() -> None:
    args = _parser().parse_args()
    parts = set(args.only or PARTS)
    for name in ("data_dir", "reference_python", "reference_src", "reference_nltk_data", "before_src"):
        if getattr(args, name) is not None:  # the processes run elsewhere
            setattr(args, name, getattr(args, name).absolute())
    data = args.data_dir
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, {load()}"
    )
    versions = {"ours": REPO}
    targets = data / "protoqa" / "dev.crowdsourced.jsonl"
    preds = data / "protoqa" / "dev.predictions.gpt2finetuned.json"

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.before_src:
            versions["before"] = args.before_src
        elif args.before_ref:
            versions["before"] = extract_revision(args.before_ref, folder)
        if "imports" in parts:
            _imports(versions, args.rounds)
        reference = _reference(args, folder, preds)
        if "startup" in parts:
            _startup(versions, targets, preds, reference, args)
        for sim, part in (("exact_match", "exact"), ("wordnet", "wordnet")):
            if part in parts:
                _dev(sim, versions, targets, preds, reference, args)
        if "scraped" in parts:
            _scraped(data, folder, versions, args.rounds)
        if "cold" in parts:
            _cold(targets, preds, folder, versions, args.rounds)
        if "probeval" in parts:
            _probeval(data, versions, args.rounds)


def _imports(versions: dict[str, Path], rounds: int) -> None:
    """Imports and --help, whole processes, against `python -c pass`."""
    print("\nimports and --help (CPU of the whole process; `python -c pass` is the floor):")
    for label, code in (
        ("python -c pass", None),
        ("import protoqa_metric", "import protoqa_metric"),
        ("import cfc_probeval", "import cfc_probeval"),
    ):
        contenders = {name: (py(code or "pass"), ours_env(src)) for name, src in versions.items()}
        if code is None:
            contenders = {"python": (py("pass"), ours_env(REPO))}
        ratio_line(label, compare(label, contenders, rounds))
    for label, module in (
        ("protoqa-eval --help", "protoqa_integrations.cli"),
        ("probeval --help", "cfc_probeval.cli"),
    ):
        contenders = {name: (cli(module, "--help"), ours_env(src)) for name, src in versions.items()}
        ratio_line(label, compare(label, contenders, rounds))


def _reference(args: argparse.Namespace, folder: Path, preds: Path) -> Optional[tuple[Path, dict[str, str]]]:
    """The reference implementation's predictions file (JSON lines) and environment, when one is given."""
    reference = None
    if args.reference_python and args.reference_src:
        jsonl = folder / "dev.predictions.jsonl"
        loaded = json.loads(preds.read_text(encoding="utf-8"))
        jsonl.write_text("".join(json.dumps({k: v}) + "\n" for k, v in loaded.items()), encoding="utf-8")
        nltk_data = str(args.reference_nltk_data or os.environ.get("NLTK_DATA", ""))
        reference = (jsonl, {**base_env(), "PYTHONPATH": str(args.reference_src), "NLTK_DATA": nltk_data})
    return reference


def _dev(
    sim: str,
    versions: dict[str, Path],
    targets: Path,
    preds: Path,
    reference: Optional[tuple[Path, dict[str, str]]],
    args: argparse.Namespace,
) -> None:
    """ProtoQA dev under one similarity, whole processes, beside the reference implementation when given."""
    print(f"\ndev ({targets.name} x {preds.name}), --similarity {sim}, whole processes:")
    contenders = {
        name: (
            cli("protoqa_integrations.cli", str(targets), str(preds), "--similarity", sim, "--json"),
            ours_env(src),
        )
        for name, src in versions.items()
    }
    best = compare(sim, contenders, args.rounds)
    if reference:
        ref_cmd = _reference_command(args, targets, reference[0], sim)
        rounds = args.reference_wordnet_rounds if sim == "wordnet" else args.rounds
        best.update(compare(sim, {"reference": (ref_cmd, reference[1])}, rounds))
        best.update({k: min(v, best[k]) for k, v in compare(sim, contenders, 1).items()})
    ratio_line(f"dev {sim}", best)


def _reference_command(args: argparse.Namespace, targets: Path, jsonl: Path, sim: str) -> list[str]:
    """The reference evaluator on ``targets`` and its predictions file, under ``sim``."""
    # its __main__ defines the click group without calling it; the console script does
    return [
        str(args.reference_python),
        "-c",
        "import sys; from protoqa_evaluator.__main__ import main; sys.argv[0] = 'protoqa_evaluator'; main()",
        "evaluate",
        str(targets),
        str(jsonl),
        "--similarity_function",
        sim,
    ]


def paired_rounds(label: str, contenders: dict[str, tuple[list[str], dict]], rounds: int) -> dict[str, list[float]]:
    """Run the contenders alternately ``rounds`` times; the CPU seconds of each round, per contender
    (a run that fails is left out, and said so)."""
    found: dict[str, list[float]] = {name: [] for name in contenders}
    for r in range(rounds):
        for name, (cmd, env) in contenders.items():
            cpu, _, status = run(cmd, env)
            if status == 0:
                found[name].append(cpu)
            print(f"  {label} | {name:12s} round {r + 1}: {cpu:7.2f} s CPU ({load()})")
    return found


#: The options whose values differ from machine to machine, as a results file shows them.
SHOWN_AS = {"--reference-python": "REF/bin/python", "--reference-src": "REF/src", "--reference-nltk-data": "NLTK_DATA"}


def shown_arguments(argv: list[str]) -> list[str]:
    """``argv`` with the reference evaluator's folders named by their role, as the docstring names them.

    >>> shown_arguments(["--rounds", "7", "--reference-src", "/x/src", "--reference-python=/x/bin/python"])
    ['--rounds', '7', '--reference-src', 'REF/src', '--reference-python=REF/bin/python']
    """
    shown: list[str] = []
    for word in argv:
        option = word.split("=", 1)[0]
        if shown and shown[-1] in SHOWN_AS:
            shown.append(SHOWN_AS[shown[-1]])
        elif "=" in word and option in SHOWN_AS:
            shown.append(f"{option}={SHOWN_AS[option]}")
        else:
            shown.append(word)
    return shown


def startup_row(command: str, version: str, cpus: list[float], baseline: str, base: list[float], load_: float) -> dict:
    """One results row: a command's least CPU over the rounds beside its baseline's in the same rounds.

    >>> row = startup_row("cmd", "this version", [0.9, 0.8], "b", [0.2, 0.25], 1.0)
    >>> row["cpu_s"], row["baseline_cpu_s"], row["ratio"], row["round_ratios"]
    (0.8, 0.2, 4.0, [4.5, 3.2])
    """
    return {
        "command": command,
        "version": version,
        "rounds": len(cpus),
        "cpu_s": round(min(cpus), 3),
        "baseline": baseline,
        "baseline_cpu_s": round(min(base), 3),
        "ratio": round(min(cpus) / min(base), 2),
        "round_ratios": [round(c / b, 2) for c, b in zip(cpus, base, strict=True)],
        "load": round(load_, 1),
    }


def _startup(
    versions: dict[str, Path],
    targets: Path,
    preds: Path,
    reference: Optional[tuple[Path, dict[str, str]]],
    args: argparse.Namespace,
) -> None:
    """``--help``, exact match and WordNet on dev, each alternated with ``import numpy``, into the results file."""
    command_line = "python benchmarks/bench_process.py " + " ".join(shown_arguments(sys.argv[1:]))
    results = ResultsFile(args.json_out, command_line)
    names = {"ours": "this version", "before": f"before {args.before_ref or args.before_src}"}
    print(f"\nstart-up, each command alternated with {STARTUP_BASELINE} (least CPU of {args.rounds} rounds):")
    dev = (str(targets), str(preds))
    for label, argv in (
        ("protoqa-eval --help", ("--help",)),
        ("protoqa-eval DEV GPT2 --similarity exact_match --json", (*dev, "--similarity", "exact_match", "--json")),
        ("protoqa-eval DEV GPT2 --similarity wordnet --json", (*dev, "--similarity", "wordnet", "--json")),
    ):
        contenders = {"import numpy": (py("import numpy"), ours_env(REPO))}
        contenders.update(
            {name: (cli("protoqa_integrations.cli", *argv), ours_env(src)) for name, src in versions.items()}
        )
        if reference and "exact_match" in argv:
            contenders["reference"] = (_reference_command(args, targets, reference[0], "exact_match"), reference[1])
        start_load = os.getloadavg()[0]
        cpus = paired_rounds(label, contenders, args.rounds)
        base = cpus["import numpy"]
        for name in versions:
            if not cpus[name] or len(cpus[name]) != len(base):
                print(f"  {label}, {names[name]}: a round failed; no row")
                continue
            row = startup_row(label, names[name], cpus[name], STARTUP_BASELINE, base, start_load)
            results.add(row)
            print(
                f"{label}, {names[name]}: {row['cpu_s']:.2f} s CPU, {row['ratio']:.2f}x {STARTUP_BASELINE} "
                f"({row['baseline_cpu_s']:.2f} s); within each round {row['round_ratios']} ({load()})"
            )
        ref = cpus.get("reference", [])
        for name in versions:
            if not ref or len(ref) != len(cpus[name]):
                continue
            row = startup_row(
                "reference evaluator: evaluate DEV GPT2 --similarity_function exact_match",
                "reference",
                ref,
                f"{names[name]}: {label}",
                cpus[name],
                start_load,
            )
            results.add(row)
            print(f"reference evaluator, exact match: {row['cpu_s']:.2f} s CPU, {row['ratio']:.1f}x {names[name]}'s")


def _scraped(data: Path, folder: Path, versions: dict[str, Path], rounds: int) -> None:
    """The scraped dev questions at growing sizes: the cost of each further question."""
    print("\nthe 980 scraped dev questions, 10 answers each, whole processes (cost per question):")
    for sim in ("wordnet", "exact_match"):
        costs: dict[str, list[tuple[int, float]]] = {name: [] for name in versions}
        for n, t, p in scraped_inputs(data, folder):
            contenders = {
                name: (
                    cli("protoqa_integrations.cli", str(t), str(p), "--similarity", sim, "--json"),
                    ours_env(src),
                )
                for name, src in versions.items()
            }
            best = compare(f"{sim} {n}", contenders, rounds)
            for name in versions:
                floor = best.get(name, float("nan"))
                costs[name].append((n, floor))
                print(
                    f"  {sim}, {n} questions, {name}: {floor:.2f} s CPU, {1000 * floor / n:.2f} ms per "
                    f"question ({load()})"
                )
        for name, found in costs.items():
            (n0, c0), (n1, c1) = found[0], found[-1]
            print(
                f"  {sim}, {name}: each further question costs {1000 * (c1 - c0) / (n1 - n0):.2f} ms "
                f"(from {n0} to {n1} questions; the rest is the process's fixed cost)"
            )


def _cold(targets: Path, preds: Path, folder: Path, versions: dict[str, Path], rounds: int) -> None:
    """Wu-Palmer's first run on an empty cache folder, with everything it starts, against a warm run."""
    print(
        "\nprotoqa-eval dev --similarity wordnet_wup: the first run on an empty cache folder, with "
        "everything it starts, against a warm run (the walk file built):"
    )
    cmd = cli("protoqa_integrations.cli", str(targets), str(preds), "--similarity", "wordnet_wup", "--json")
    prepare = py("from protoqa_core.wordnet.walk_file import prepare_wordnet; prepare_wordnet()")
    for r in range(rounds):
        for name, src in versions.items():  # alternated, each on a fresh cache folder of its own
            cache = folder / f"cache-{name}{r}"
            env = ours_env(src, PROTOQA_CACHE_DIR=str(cache))
            first = run(cmd, env)
            # A checkout whose first run leaves a detached child building the walk file (started
            # as the run exits, so wait4 does not count it, and marked by a ".building" file): let
            # it finish, then cost the same build waited for, on a cache folder of its own.
            waited = time.monotonic()
            while time.monotonic() - waited < 300 and list(cache.glob("wordnet_tables/*.building")):
                time.sleep(0.5)
            detached = bool(list(cache.glob("wordnet_tables/wup-walks-*.bin")))
            if detached:
                build = run(prepare, ours_env(src, PROTOQA_CACHE_DIR=str(folder / f"build-{name}{r}")))
            else:  # nothing started: the walk file comes from the explicit step
                build = run(prepare, env)
            warm = run(cmd, env)
            total = first[0] + (build[0] if detached else 0.0)
            peak = max(first[1], build[1]) if detached else first[1]
            print(
                f"  {name:6s} round {r + 1}: first {first[0]:.2f} s CPU, {first[1]:.0f} MB"
                + (
                    f" + the detached build it starts {build[0]:.2f} s CPU, {build[1]:.0f} MB"
                    if detached
                    else f" (starts nothing; `protoqa-eval prepare`: {build[0]:.2f} s CPU, {build[1]:.0f} MB)"
                )
                + f"; warm {warm[0]:.2f} s CPU, {warm[1]:.0f} MB; first with all it starts / warm "
                f"{total / warm[0]:.2f}x CPU, {peak / warm[1]:.2f}x peak memory ({load()})"
            )


def _probeval(data: Path, versions: dict[str, Path], rounds: int) -> None:
    """probeval on CFC dev with the human answers and with GPT-2 XL's samples as samples."""
    cfc = data / "cfc"
    for label, samples in (
        ("the human answers as samples: dev.predictions.human.json, 23-70 a question, 34 on average", "human"),
        ("GPT-2 XL's samples: dev.predictions.gpt2-xl.oneshot.json, 100 a question", "gpt2-xl.oneshot"),
    ):
        print(f"\nprobeval on CFC dev ({label}), default settings:")
        contenders = {
            name: (
                cli(
                    "cfc_probeval.cli",
                    str(cfc / "dev.targets.jsonl"),
                    str(cfc / f"dev.predictions.{samples}.json"),
                    "--ignore-unknown",
                    "--json",
                ),
                ours_env(src),
            )
            for name, src in versions.items()
        }
        ratio_line(f"probeval CFC dev {samples}", compare(f"probeval {samples}", contenders, rounds))


if __name__ == "__main__":
    main()
