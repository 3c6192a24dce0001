"""Every measured figure a page quotes from a benchmark results file is that file's, as written.

The pages (README, docs/, benchmarks/README.md, the cards) quote results files in blocks that
``benchmarks/figures.py`` writes; a page edited by hand, or a results file regenerated without
rewriting the pages, fails here. Each results file names the command that wrote it, the
machine and the load, and each measured row has its baseline from the same run.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _figures():
    spec = importlib.util.spec_from_file_location("bench_figures", REPO / "benchmarks" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_block_on_every_page_is_its_results_file_as_written():
    figures = _figures()
    quoted = []
    for page in figures.pages():
        text = page.read_text(encoding="utf-8")
        rendered, files = figures.render(text)
        assert rendered == text, f"{page.relative_to(REPO)}: run python benchmarks/figures.py --write"
        quoted += files
    for results in (
        "protoqa_scale.json",
        "input_cap.json",
        "embedding_paths.json",
        "roberta.json",
        "startup.json",
        "ledger.json",
    ):
        assert f"benchmarks/results/{results}" in quoted, results


def test_every_results_file_names_its_command_machine_load_and_baseline():
    for path in sorted((REPO / "benchmarks" / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["command"].startswith("python benchmarks/bench_"), path.name
        script = data["command"].split()[1]
        assert (REPO / script).is_file(), (path.name, script)
        assert data["machine"] and data["started"] and data["finished"], path.name
        measured = [row for row in data["rows"] if "cpu_s" in row]
        assert measured and all("load" in row for row in measured), path.name
        paired = [row for row in measured if "baseline_cpu_s" in row]
        if paired:  # each row carries its own baseline, measured in the same rounds
            assert len(paired) == len(measured), path.name
            assert all(row["baseline"] and row["rounds"] == len(row["round_ratios"]) for row in paired), path.name
            continue
        versions = {row.get("version", row.get("command")) for row in measured}
        baseline = (
            any(
                str(v).startswith("baseline") or "import numpy" in str(v) or "dev predictions only" in str(v)
                for v in versions
            )
            or len({row.get("questions") for row in measured}) > 1
        )
        assert baseline, f"{path.name}: no baseline from the same run"


def test_the_figures_that_drifted_are_no_longer_quoted_by_hand():
    metric_page = (REPO / "docs" / "protoqa-metric.md").read_text(encoding="utf-8")
    outside = re.sub(r"<!-- figures: .*?<!-- /figures -->", "", metric_page, flags=re.S)
    for phrase in ("about 7 s of CPU and 250 MB", "144 MB", "169 MB", "1,777 MB"):
        assert phrase not in outside, phrase


def test_the_embedding_table_sets_the_encoder_floor_beside_the_measured_ratio():
    """The G-means path's least possible ratio, (human CPU + floor) / human CPU, beside the one measured."""
    figures = _figures()
    run = {"case": "probeval_cfc_dev", "version": "this version", "round": 1, "load": 1.0, "peak_mb": 100}
    data = {
        "started": "then",
        "finished": "later",
        "command": "python benchmarks/bench_embedding_runtime.py",
        "machine": "a machine",
        "rows": [
            {"case": "encoder_floor", "strings": 1657, "tokens": 7325, "tokens_finished": 7325}
            | {"mflop_per_token": 21.3, "gflop": 155.9, "sgemm_gflops": 130.0, "floor_cpu_s": 1.2},
            run | {"clustering": "human", "cpu_s": 1.5},
            run | {"clustering": "gmeans", "cpu_s": 4.5},
        ],
    }
    table = figures.embedding_paths_table(data)
    assert "| this version | 1.5 s, 100 MB | 4.5 s, 100 MB | 3.00x |" in table
    assert "1,657 answer strings, 7,325 tokens encoded" in table
    assert "at least 1.20 s of CPU" in table and "no ratio below **1.80x** (measured: 3.00x)" in table


def test_the_ledger_sets_each_job_beside_its_library_and_says_how_far_they_agree():
    figures = _figures()
    row = {"command": "ours", "lines": 2359, "baseline": "lib", "installed": "the [x] extra", "load": 1.0}
    row |= {"cpu_s": 0.37, "baseline_cpu_s": 2.06, "ratio": 0.18, "work_cpu_s": 0.3, "baseline_work_cpu_s": 0.004}
    row |= {"peak_mb": 23, "baseline_peak_mb": 212, "rounds": 1, "round_ratios": [0.18]}
    data = {"started": "then", "finished": "later", "command": "python benchmarks/bench_ledger.py", "machine": "m"}
    rows = [
        row | {"identical": True, "items": 10229},
        row | {"lines": 0, "identical": False, "items": 200, "items_identical": 157, "max_abs_difference": 5.5e-17},
        row | {"identical": None, "items": 2000},
    ]
    table = figures.ledger_table(data | {"rows": rows}).splitlines()
    assert (
        "| `ours` | 2,359 | lib | the [x] extra | 0.37 s, 2.06 s (**0.18x**; rounds 0.18) | 0.30 s, 0.004 s | 23 MB, 212 MB |"
        in table[4]
    )
    assert table[4].endswith("| identical (10,229) |")
    assert table[5].startswith("| `ours` | a few |") and table[5].endswith(
        "157 of 200 values identical, the others within 5.5e-17 |"
    )
    assert table[6].endswith("| not compared (the logs differ by design) |")
