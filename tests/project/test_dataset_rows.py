"""Both metrics on rows of the project's own dataset export: ProbEval's command line, library and
evaluate module agree on them, and ProtoQA's evaluate module takes the rows' clusters unchanged.

The rows come from stock ``datasets.load_dataset`` on the Parquet export of CFC; their
``clusters`` and ``raw_answers`` fields go to the evaluate module unchanged. The samples
are the GPT-2 XL one-shot samples of CFC dev.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.lazy import lazy_import, require

evaluate = lazy_import("evaluate")
datasets = lazy_import("datasets")
require("pyarrow")

import protoqa_metric  # noqa: E402
from cfc_probeval import evaluate_module_path, evaluate_probeval, read_samples, read_targets  # noqa: E402
from protoqa_core.io.predictions import read_predictions  # noqa: E402
from protoqa_core.io.readers import read_targets as read_protoqa_targets  # noqa: E402
from protoqa_metric import evaluate_predictions  # noqa: E402

SAMPLES = "dev.predictions.gpt2-xl.oneshot.json"


@pytest.fixture(scope="module")
def cfc_rows(dataset_export):
    return datasets.load_dataset(str(dataset_export), "cfc", split="validation")


pytestmark = pytest.mark.usefixtures("hub_offline")


def probeval_json(targets: Path, samples: Path, *flags: str) -> dict:
    """What ``python -m cfc_probeval TARGETS SAMPLES FLAGS --ignore-unknown --json`` prints, parsed."""
    command = [sys.executable, "-m", "cfc_probeval", str(targets), str(samples), *flags, "--ignore-unknown"]
    cli = subprocess.run(command + ["--json", "--quiet"], capture_output=True, text=True, timeout=900)
    assert cli.returncode == 0, cli.stderr
    return json.loads(cli.stdout)


def sample_rows(samples: dict, ids: list) -> list:
    """The evaluate module's ``predictions`` for the questions ``ids``: each question's sampled answers,
    each as many times as it was sampled."""
    return [[a for a, n in samples.get(q, {}).items() for _ in range(n)] for q in ids]


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags, config", [([], "default"), (["--clustering", "human"], "human"), (["--clustering", "hac"], "hac")]
)
def test_cli_library_and_evaluate_on_dataset_rows_agree(cfc_rows, shared_data, flags, config):
    targets_path, samples_path = shared_data / "cfc" / "dev.targets.jsonl", shared_data / "cfc" / SAMPLES
    from_cli = probeval_json(targets_path, samples_path, *flags)

    samples = read_samples(samples_path)
    settings = {} if config == "default" else {"clustering": config}
    with pytest.warns(UserWarning, match="r3q21"):
        from_library = evaluate_probeval(read_targets(targets_path), samples, ignore_unknown=True, **settings)

    module = evaluate.load(evaluate_module_path(), config)
    ids = list(cfc_rows["id"])
    predictions = sample_rows(samples, ids)
    from_rows = module.compute(
        predictions=predictions, references=cfc_rows["clusters"], raw_answers=cfc_rows["raw_answers"], question_ids=ids
    )

    assert from_cli["num_questions"] == from_library.num_questions == from_rows["num_questions"] == 54
    assert abs(from_cli["kl"] - from_library.kl) <= 1e-9
    assert abs(from_rows["kl"] - from_library.kl) <= 1e-9
    assert from_rows["per_question_kl"] == pytest.approx([from_library.per_question[q] for q in ids], abs=1e-9)
    assert from_cli["signature"] == from_library.signature == from_rows["signature"]
    assert "answers:" not in from_rows["signature"]
    assert from_cli["clusters_per_question"] == from_library.clusters_per_question == from_rows["clusters_per_question"]
    assert (
        from_cli["human_clusters_per_question"] == from_rows["human_clusters_per_question"] == pytest.approx(312 / 54)
    )  # CFC dev: 312 human clusters over the 54 scored questions
    if config in ("default", "human"):
        # The rows carry human clusters, so the default is those clusters: the same numbers as
        # --clustering human, and a signature that says how the clustering was chosen.
        assert from_library.kl == pytest.approx(2.70309, abs=5e-6)
        assert from_library.clusters_per_question == from_library.human_clusters_per_question
        prefix = "clustering:auto->human|" if config == "default" else "clustering:human|"
        assert from_library.signature.startswith(prefix + "embedder:none|")
    if config == "hac":
        # The earlier default, chosen explicitly: its numbers are unchanged.
        assert from_library.kl == pytest.approx(1.8008, abs=5e-5)
        assert from_library.clusters_per_question == pytest.approx(25.85, abs=5e-3)
        # The clusters alone share each cluster's count evenly among its strings: other
        # numbers, which the signature says.
        clusters_only = module.compute(predictions=predictions, references=cfc_rows["clusters"], question_ids=ids)
        assert clusters_only["kl"] == pytest.approx(1.6512, abs=5e-5)
        assert clusters_only["signature"] == from_library.signature.replace("|embedder:", "|answers:shared|embedder:")


@pytest.mark.slow
def test_raw_answers_without_clusters_are_clustered_by_the_automatic_default_everywhere(
    cfc_rows, shared_data, tmp_path
):
    """The rows' ``raw_answers`` as references, a targets file without clusters, and ``Question``
    objects without clusters all get G-means (k_init=8) + WordNet, with the same numbers."""
    from protoqa_core.io.readers import read_targets

    targets_path, samples_path = shared_data / "cfc" / "dev.targets.jsonl", shared_data / "cfc" / SAMPLES
    raw_targets = tmp_path / "dev.raw.jsonl"
    with open(targets_path, encoding="utf-8") as src, open(raw_targets, "w", encoding="utf-8") as out:
        for line in src:
            row = json.loads(line)
            row["answers"] = {"raw": row["answers"]["raw"]}
            out.write(json.dumps(row) + "\n")
    from_cli = probeval_json(raw_targets, samples_path)

    samples = read_samples(samples_path)
    questions = read_targets(raw_targets)
    assert not any(q.clusters for q in questions.values())
    with pytest.warns(UserWarning, match="r3q21"):
        from_library = evaluate_probeval(questions, samples, ignore_unknown=True)

    module = evaluate.load(evaluate_module_path())
    ids = list(cfc_rows["id"])
    predictions = sample_rows(samples, ids)
    from_rows = module.compute(predictions=predictions, references=cfc_rows["raw_answers"], question_ids=ids)

    assert from_cli["num_questions"] == from_library.num_questions == from_rows["num_questions"] == 54
    assert abs(from_cli["kl"] - from_library.kl) <= 1e-9 and abs(from_rows["kl"] - from_library.kl) <= 1e-9
    assert from_cli["signature"] == from_library.signature == from_rows["signature"]
    assert from_library.signature.startswith(
        "clustering:auto->gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)|embedder:all-MiniLM-L6-v2@"
    )
    assert (
        from_cli["clusters_per_question"]
        == from_rows["clusters_per_question"]
        == pytest.approx(from_library.clusters_per_question)
    )
    assert from_cli["human_clusters_per_question"] is None and from_rows["human_clusters_per_question"] is None


def test_dataset_rows_work_unchanged(shared_data, dataset_export):
    """The `clusters` column of `load_dataset` on the Parquet export is a reference as it is."""
    rows = datasets.load_dataset(str(dataset_export), "protoqa", split="validation")
    targets = read_protoqa_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    preds = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "wordnet")
    got = metric.compute(
        predictions=[preds[i] for i in rows["id"]], references=rows["clusters"], question_ids=rows["id"]
    )
    lib = evaluate_predictions(targets, preds, "wordnet")
    assert {k: got[k] for k in lib.scores} == lib.scores
    assert got["signature"] == lib.signature
