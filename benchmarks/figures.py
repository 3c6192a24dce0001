"""Copy measured figures from benchmark results files into the pages that quote them.

A page quotes a results file in a block that this script writes and a test checks:

    <!-- figures: benchmarks/results/protoqa_scale.json scale_table -->
    ...the table, written from the file...
    <!-- /figures -->

The block names the file and a table kind from :data:`TABLES`; what lies between the two
comment lines is exactly what the table function returns for the file's contents: the
command that wrote the file, the machine, the date and load, and every row beside its
baseline from the same run. So a figure on a page cannot drift from its measurement: to
change the page, rerun the command, then

    python benchmarks/figures.py --write     # rewrite every block from its file
    python benchmarks/figures.py --check     # exit 1 naming each block that differs (the test)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "ARCHITECTURE.md", "docs/*.md", "benchmarks/README.md", "*/evaluate_modules/*/README.md")
BLOCK = re.compile(
    r"(?P<open><!-- figures: (?P<file>\S+) (?P<table>\w+) -->\n)(?P<body>.*?)(?P<close><!-- /figures -->)", re.S
)


def _mb(value: float) -> str:
    return f"{value:,.0f} MB"


def _s(value: float) -> str:
    return f"{value:,.1f} s"


def _load_span(rows: Iterable[dict[str, Any]]) -> str:
    loads = sorted({row["load"] for row in rows})
    return f"{loads[0]}-{loads[-1]}" if loads and loads[0] != loads[-1] else (str(loads[0]) if loads else "?")


def _header(data: dict[str, Any]) -> str:
    span = _load_span(row for row in data["rows"] if "load" in row)
    return (
        f"Measured {data['started']} to {data['finished']} by `{data['command']}` on {data['machine']}, "
        f"load average {span} (one row each: CPU is user + system of the whole process; peak is its "
        "largest resident set)."
    )


def scale_table(data: dict[str, Any]) -> str:
    """``bench_protoqa_scale.py``: per size and similarity, the baseline beside this version."""
    runs: dict[tuple[int, str], dict[str, dict]] = {}
    identical: dict[tuple[int, str], bool] = {}
    for row in data["rows"]:
        key = (row["questions"], row["similarity"])
        if "identical" in row:
            identical[key] = row["identical"]
        else:
            runs.setdefault(key, {})["baseline" if row["version"].startswith("baseline") else "this"] = row
    baselines = {row["version"] for row in data["rows"] if row.get("version", "").startswith("baseline")}
    smallest = {sim: min(n for n, s in runs if s == sim) for _, sim in runs}

    def cell(run: dict | None) -> str:
        if run is None:
            return "not run"
        if run.get("killed"):
            return f"killed after {_s(run['wall_s'])} wall"
        return f"{_s(run['cpu_s'])}, {_mb(run['peak_mb'])} (load {run['load']})"

    lines = [
        _header(data),
        "",
        "| questions | similarity | "
        + (f"{', '.join(sorted(baselines))}: " if baselines else "no baseline: ")
        + "CPU, peak | this version: CPU, peak | this version at the smallest size, same run | outputs identical |",
        "|---:|---|---|---|---|---|",
    ]
    for (n, sim), pair in sorted(runs.items()):
        first = runs[(smallest[sim], sim)].get("this")
        same = identical.get((n, sim))
        lines.append(
            f"| {n:,} | `{sim}` | {cell(pair.get('baseline'))} | {cell(pair.get('this'))} | "
            f"{cell(first) if first is not None and smallest[sim] != n else '(this row)'} | "
            f"{'yes' if same else 'NO' if same is not None else 'not compared'} |"
        )
    return "\n".join(lines) + "\n"


def cap_table(data: dict[str, Any]) -> str:
    """``bench_input_cap.py``: the predictions document under the cap, before and after, and the
    interpreter with the dev predictions alone."""
    file = data.get("file", {})
    lines = [
        _header(data),
        f"The predictions file: one JSON document of {file.get('megabytes', '?')} MB "
        f"and {file.get('ids', 0):,} question ids.",
        "",
        "| input | version | wall | CPU | peak memory | peak / file size |",
        "|---|---|---:|---:|---:|---:|",
    ]
    same = None
    for row in data["rows"]:
        if "identical" in row:
            same = row["identical"]
            continue
        what = "the document" if row["case"] == "json_document" else "dev predictions only (27 KB)"
        ratio = f"{row['peak_mb'] / file['megabytes']:.2f}x" if row["case"] == "json_document" and file else ""
        killed = " (killed)" if row.get("killed") else ""
        lines.append(
            f"| {what} | {row['version']} | {_s(row['wall_s'])}{killed} | {_s(row['cpu_s'])} | "
            f"{_mb(row['peak_mb'])} | {ratio} |"
        )
    if same is not None:
        lines += ["", f"`--json` output identical to the baseline's: {'yes' if same else 'NO'}."]
    return "\n".join(lines) + "\n"


def cap_leaderboard_table(data: dict[str, Any]) -> str:
    """``bench_input_cap.py --command leaderboard``: the document ranked as one and as two systems, before and
    after, and the interpreter with the dev predictions alone as one system."""
    file = data.get("file", {})
    lines = [
        _header(data),
        f"The predictions file: one JSON document of {file.get('megabytes', '?')} MB "
        f"and {file.get('ids', 0):,} question ids.",
        "",
        *(
            [f"The runs went {data['jobs']} side by side: wall times and loads count each other.", ""]
            if data.get("jobs", 1) > 1
            else []
        ),
        "| input | systems | version | wall | CPU | peak memory | peak / file size |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    same = []
    measured = [r for r in data["rows"] if "identical" not in r]
    # In the order of the comparison, whichever run of a side-by-side measurement ended first.
    measured.sort(
        key=lambda r: (r["case"] != "json_document", r.get("systems", 1), not r["version"].startswith("baseline"))
    )
    for row in measured + [r for r in data["rows"] if "identical" in r]:
        if "identical" in row:
            same.append(f"{row.get('systems', 1)} system(s): {'yes' if row['identical'] else 'NO'}")
            continue
        document = row["case"] == "json_document"
        what = "the document" if document else "dev predictions only (27 KB)"
        ratio = f"{row['peak_mb'] / file['megabytes']:.2f}x" if document and file else ""
        killed = {"memory": " (killed past the memory cap)", "timeout": " (killed at the timeout)"}
        stopped = killed.get(row.get("killed_by", "timeout"), "") if row.get("killed") else ""
        # A killed run's peak is what it had reached when it was stopped: a lower bound.
        peak = f"at least {_mb(row['peak_mb'])}" if row.get("killed") else _mb(row["peak_mb"])
        lines.append(
            f"| {what} | {row.get('systems', 1)} | {row['version']} | {_s(row['wall_s'])}{stopped} | "
            f"{_s(row['cpu_s'])} | {peak} | {ratio} |"
        )
    if same:
        lines += ["", f"`--json` output identical to the baseline's: {'; '.join(same)}."]
    return "\n".join(lines) + "\n"


def prepare_table(data: dict[str, Any]) -> str:
    """``bench_prepare.py``: ``protoqa-eval prepare`` into an empty cache, beside ``import numpy``."""
    lines = [_header(data), "", "| command | round | CPU | peak memory | load |", "|---|---:|---:|---:|---:|"]
    for row in data["rows"]:
        lines.append(
            f"| `{row['command']}` | {row['round']} | {_s(row['cpu_s'])} | {_mb(row['peak_mb'])} | {row['load']} |"
        )
    return "\n".join(lines) + "\n"


def startup_table(data: dict[str, Any]) -> str:
    """``bench_process.py --only startup``: each command's least CPU beside ``import numpy`` in the same
    rounds (the reference evaluator beside this version's exact match), with the ratio within each round."""
    rows = [row for row in data["rows"] if "cpu_s" in row]
    span = _load_span(rows)
    lines = [
        f"Measured {data['started']} to {data['finished']} by `{data['command']}` on {data['machine']}, "
        f"load average {span}. Each round runs every command once, each a new process, one after the "
        "other; CPU is user + system of the whole process, the least of the rounds; the ratio is that "
        "least over the baseline's least in the same rounds, beside the ratio within each round.",
        "",
        "| command | version | CPU | baseline (same rounds) | ratio | within each round | load |",
        "|---|---|---:|---|---:|---|---:|",
    ]
    for row in rows:
        within = ", ".join(f"{r:.2f}" for r in row["round_ratios"])
        lines.append(
            f"| `{row['command']}` | {row['version']} | {row['cpu_s']:.2f} s | `{row['baseline']}`: "
            f"{row['baseline_cpu_s']:.2f} s | **{row['ratio']:.2f}x** | {within} | {row['load']} |"
        )
    return "\n".join(lines) + "\n"


def cluster_cache_table(data: dict[str, Any]) -> str:
    """``bench_cluster_cache.py``: the automatic clusters' paths beside the human clusters' in the same rounds
    (:func:`startup_table`), then the encoder's floor of the first run beside the same baseline."""
    text = startup_table(data)
    floor = next((row for row in data["rows"] if row.get("case") == "encoder_floor"), None)
    human = next((row for row in data["rows"] if row.get("baseline") == "probeval dev --clustering human"), None)
    if floor is None:
        return text
    line = _floor_line(floor, human["baseline_cpu_s"] if human else None, "the human clusters' CPU")
    if human and "exact_floor_cpu_s" in floor:
        base = human["baseline_cpu_s"]
        line += (
            f" Added to the human path's {base:.2f} s, the products alone allow a first run no ratio below "
            f"{(base + floor['floor_cpu_s']) / base:.2f}x in float32 and {(base + floor['exact_floor_cpu_s']) / base:.2f}x"
            " with the exact products."
        )
    return text + "\n" + line + "\n"


def _least(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of least CPU among rounds of one command (the least disturbed by other work)."""
    return min(rows, key=lambda row: row["cpu_s"])


def _rounds(rows: list[dict[str, Any]]) -> str:
    return f"least of {len(rows)} (load {', '.join(str(row['load']) for row in rows)})"


def embedding_paths_table(data: dict[str, Any]) -> str:
    """``bench_embedding_runtime.py``: ``probeval`` on CFC dev with G-means beside the human clusters,
    per version, and the question results that changed against the baseline and between seeds."""
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in data["rows"]:
        if row["case"] == "probeval_cfc_dev":
            runs.setdefault(row["version"], {}).setdefault(row["clustering"], []).append(row)
    lines = [
        _header(data),
        "",
        "| version | `--clustering human` (baseline): CPU, peak | `--clustering gmeans`: CPU, peak | gmeans / human CPU |"
        " rounds |",
        "|---|---|---|---:|---|",
    ]
    for version, pair in runs.items():
        if "human" not in pair or "gmeans" not in pair:
            continue
        human, gmeans = _least(pair["human"]), _least(pair["gmeans"])
        lines.append(
            f"| {version} | {_s(human['cpu_s'])}, {_mb(human['peak_mb'])} | {_s(gmeans['cpu_s'])}, "
            f"{_mb(gmeans['peak_mb'])} | {gmeans['cpu_s'] / human['cpu_s']:.2f}x | {_rounds(pair['gmeans'])} |"
        )
    floor = next((row for row in data["rows"] if row["case"] == "encoder_floor"), None)
    here = runs.get("this version", {})
    if floor is not None and "human" in here and "gmeans" in here:
        human, gmeans = _least(here["human"])["cpu_s"], _least(here["gmeans"])["cpu_s"]
        lines += [
            "",
            f"The floor of the G-means path: {floor['strings']:,} answer strings, {floor['tokens']:,} tokens encoded, "
            f"{floor['mflop_per_token']:.1f} MFLOP a token, {floor['gflop']:.0f} GFLOP of matrix products, at the "
            f"{floor['sgemm_gflops']:.0f} GFLOPS of single-thread sgemm measured in the same run: at least "
            f"{floor['floor_cpu_s']:.2f} s of CPU for any exact float32 encoder of these weights. With the human "
            f"path's {human:.2f} s, that allows no ratio below **{(human + floor['floor_cpu_s']) / human:.2f}x** "
            f"(measured: {gmeans / human:.2f}x)."
            + (
                f" At the {floor['exact_gflops']:.0f} GFLOPS of the exact products this version runs (integers in "
                f"float64, the same for every batch and kernel) the products alone take {floor['exact_floor_cpu_s']:.2f}"
                f" s: no ratio below **{(human + floor['exact_floor_cpu_s']) / human:.2f}x** on this path."
                if "exact_floor_cpu_s" in floor
                else ""
            ),
        ]
    compared = [row for row in data["rows"] if row["case"] == "results_compared"]
    if compared:
        lines += [
            "",
            "ProbEval with every embedding setting (G-means, X-means, HAC, cosine and GP matching) on the human "
            "answers and the GPT-2 XL samples:",
            "",
            "| compared | split | question results changed | largest per-question KL gap | largest mean-KL gap |",
            "|---|---|---:|---:|---:|",
        ]
        for row in compared:
            lines.append(
                f"| {row['other']} against {row['reference']} | {row['split']} | "
                f"{row['questions_changed']:,} of {row['question_results']:,} | {row['largest_kl_gap']:.4f} | "
                f"{row['largest_mean_kl_gap']:.5f} |"
            )
    return "\n".join(lines) + "\n"


def _floor_line(row: dict[str, Any], baseline_cpu: float | None, baseline: str) -> str:
    """One encoder floor (:mod:`encoder_floor`): the least CPU of its products in float32 and as the exact
    products run, each beside the baseline's CPU when given."""

    def beside(seconds: float) -> str:
        return f" ({seconds / baseline_cpu:.1f}x {baseline})" if baseline_cpu else ""

    run = f" of the {row['run']}" if row.get("run") else ""
    line = (
        f"The encoder's floor{run}: {row['tokens']:,} tokens encoded ({row['tokens_finished']:,} finished in the "
        f"last layer), {row['mflop_per_token']:.1f} MFLOP a token, {row['gflop']:.0f} GFLOP of matrix products; "
        f"at the {row['sgemm_gflops']:.0f} GFLOPS of single-thread sgemm measured in the same run, any exact "
        f"float32 run takes at least **{_s(row['floor_cpu_s'])}**{beside(row['floor_cpu_s'])}"
    )
    if "exact_floor_cpu_s" not in row:
        return line + "."
    return line + (
        f"; at the {row['exact_gflops']:.0f} GFLOPS of the exact products (integers in float64, the same for every "
        f"batch and kernel), **{_s(row['exact_floor_cpu_s'])}**{beside(row['exact_floor_cpu_s'])}."
    )


def roberta_table(data: dict[str, Any]) -> str:
    """``bench_roberta.py``: ``protoqa-eval`` on ProtoQA dev with ``roberta`` beside WordNet, per version."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for row in data["rows"]:
        if row["case"] == "protoqa_dev":
            runs.setdefault(row["run"], []).append(row)

    def wordnet_of(run: str) -> list[dict[str, Any]] | None:
        if ", baseline " in run:
            return runs.get("wordnet, baseline " + run.split(", baseline ", 1)[1])
        return runs.get("wordnet (baseline)")

    lines = [
        _header(data),
        "",
        "| run | CPU | peak | against WordNet of the same version | rounds |",
        "|---|---:|---:|---:|---|",
    ]
    for run, rows in runs.items():
        best, wordnet = _least(rows), wordnet_of(run)
        ratio = f"{best['cpu_s'] / _least(wordnet)['cpu_s']:.1f}x" if wordnet else ""
        lines.append(f"| {run} | {_s(best['cpu_s'])} | {_mb(best['peak_mb'])} | {ratio} | {_rounds(rows)} |")
    for row in data["rows"]:
        if row["case"] == "scores_compared":
            same = "yes" if row["identical"] else f"no (largest gap {row['largest_score_gap']:.2e})"
            lines += ["", f"`roberta` scores identical to those of the {row['reference']}: {same}."]
        if row["case"] == "encoder_floor":
            wordnet = runs.get("wordnet (baseline)")
            lines += ["", _floor_line(row, _least(wordnet)["cpu_s"] if wordnet else None, "WordNet's CPU")]
    return "\n".join(lines) + "\n"


def _cpu(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds:.3f} s"


def ledger_table(data: dict[str, Any]) -> str:
    """``bench_ledger.py``: each job the project writes itself, beside the library, in new processes."""
    rows = [row for row in data["rows"] if "cpu_s" in row]
    span = _load_span(rows)
    lines = [
        f"Measured {data['started']} to {data['finished']} by `{data['command']}` on {data['machine']}, "
        f"load average {span}. Each round runs the job with the project's code and with the library, each "
        "in a new process; the figures are the least of the rounds: CPU of the whole process (start-up "
        "included), CPU of the job alone, peak memory.",
        "",
        "| the project's code | lines | the library | where the library is installed | whole process: ours, "
        "library (least ratio; the ratio in each round) | the job alone: ours, library | peak: ours, library | outputs |",
        "|---|---:|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row.get("identical") is None:
            same = "not compared (the logs differ by design)"
        elif row["identical"]:
            same = f"identical ({row['items']:,})"
        elif "max_abs_difference" in row:
            same = (
                f"{row['items_identical']:,} of {row['items']:,} values identical, "
                f"the others within {row['max_abs_difference']:.1e}"
            )
        else:
            same = f"differ ({row['items']:,})"
        lines.append(
            f"| `{row['command']}` | {format(row['lines'], ',') if row['lines'] else 'a few'} | {row['baseline']} | "
            f"{row['installed']} | {_cpu(row['cpu_s'])}, {_cpu(row['baseline_cpu_s'])} (**{row['ratio']:.2g}x**; "
            f"rounds {', '.join(f'{r:.2g}' for r in row['round_ratios'])}) | "
            f"{_cpu(row['work_cpu_s'])}, {_cpu(row['baseline_work_cpu_s'])} | "
            f"{_mb(row['peak_mb'])}, {_mb(row['baseline_peak_mb'])} | {same} |"
        )
    return "\n".join(lines) + "\n"


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "startup_table": startup_table,
    "cluster_cache_table": cluster_cache_table,
    "scale_table": scale_table,
    "cap_table": cap_table,
    "cap_leaderboard_table": cap_leaderboard_table,
    "prepare_table": prepare_table,
    "embedding_paths_table": embedding_paths_table,
    "roberta_table": roberta_table,
    "ledger_table": ledger_table,
}
"""The table kinds a block may name."""


def pages() -> list[Path]:
    """Every page that may quote a results file."""
    found: list[Path] = []
    for pattern in PAGES:
        found += sorted(REPO.glob(pattern))
    return found


def render(text: str) -> tuple[str, list[str]]:
    """``text`` with every block rewritten from its file, and the files it quotes."""
    quoted: list[str] = []

    def one(match: re.Match) -> str:
        quoted.append(match["file"])
        data = json.loads((REPO / match["file"]).read_text(encoding="utf-8"))
        return match["open"] + TABLES[match["table"]](data) + match["close"]

    return BLOCK.sub(one, text), quoted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--check", action="store_true", help="exit 1 naming every page whose blocks differ")
    group.add_argument("--write", action="store_true", help="rewrite every block from its results file")
    args = parser.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new, _ = render(text)
        if new != text:
            stale.append(page.relative_to(REPO))
            if args.write:
                page.write_text(new, encoding="utf-8")
    for page in stale:
        print(f"{page}: {'rewritten' if args.write else 'differs from its results files'}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
