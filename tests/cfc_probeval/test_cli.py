"""The probeval command: output, errors, per-question files, and agreement with the library and the module."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from cfc_probeval import evaluate_module_path, evaluate_probeval, read_samples, read_targets
from cfc_probeval.cli import main
from cfc_probeval.clustering import XMeansClusterer
from tests.support.compare_files import compare_files
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
SETTINGS = {  # fast settings: the data's clusters, and HAC over dependency-free embeddings
    "human": (["--clustering", "human"], {"clustering": "human"}),
    "hac": (["--clustering", "hac", "--embedder", "char-ngrams"], {"clustering": "hac", "embedder": "char-ngrams"}),
}
FILES = {"human": "dev.predictions.human.json", "gpt2": "dev.predictions.gpt2-xl.oneshot.json"}


@pytest.fixture(scope="module")
def cfc(shared_data):
    return shared_data / "cfc"


def run_cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("which", sorted(FILES))
def test_cli_library_and_evaluate_module_agree_on_cfc_dev(cfc, capsys, monkeypatch, tmp_path, setting, which):
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    flags, settings = SETTINGS[setting]
    targets_path, samples_path = cfc / "dev.targets.jsonl", cfc / FILES[which]

    status, out, err = run_cli(capsys, targets_path, samples_path, *flags, "--ignore-unknown", "--json")
    assert status == 0 and "ignored predictions for 1 question id(s) that are not in the targets: r3q21" in err
    from_cli = json.loads(out)

    targets, samples = read_targets(targets_path), read_samples(samples_path)
    with pytest.warns(UserWarning, match="r3q21"):
        from_library = evaluate_probeval(targets, samples, ignore_unknown=True, **settings)

    module = evaluate.load(evaluate_module_path(), setting)
    ids = list(targets)
    from_module = module.compute(
        predictions=[[a for a, n in samples[q].items() for _ in range(n)] for q in ids],
        references=[
            {
                "id": [c.id for c in targets[q].clusters],
                "answers": [list(c.answers) for c in targets[q].clusters],
                "count": [c.count for c in targets[q].clusters],
            }
            for q in ids
        ],
        raw_answers=[dict(targets[q].answer_counts) for q in ids],
        question_ids=ids,
        **{k: v for k, v in settings.items() if k != "clustering"},
    )

    assert from_cli["num_questions"] == from_library.num_questions == from_module["num_questions"] == 54
    assert from_cli["kl"] == pytest.approx(from_library.kl, abs=1e-12)
    assert from_module["kl"] == pytest.approx(from_library.kl, abs=1e-12)
    assert from_module["per_question_kl"] == pytest.approx([from_library.per_question[q] for q in ids], abs=1e-12)
    assert from_cli["signature"] == from_library.signature == from_module["signature"]
    assert from_cli["ignored"] == ["r3q21"]


def test_human_answers_score_better_than_gpt2_samples(cfc, capsys):
    kls = {}
    for which, name in FILES.items():
        status, out, _ = run_cli(
            capsys,
            cfc / "dev.targets.jsonl",
            cfc / name,
            "--clustering",
            "human",
            "--ignore-unknown",
            "--json",
            "--quiet",
        )
        assert status == 0
        kls[which] = json.loads(out)["kl"]
    # The human file's questions have 23 to 70 answers, so most are made up with wrong answers at 70.
    assert kls["human"] < 1.2 < 2.0 < kls["gpt2"]


def test_text_output_and_per_question_files(cfc, capsys, tmp_path):
    table, lines = tmp_path / "clusters.csv", tmp_path / "clusters.jsonl"
    human = (cfc / "dev.targets.jsonl", cfc / FILES["human"], "--clustering", "human", "--ignore-unknown")
    status, out, _ = run_cli(capsys, *human, "--per-question", table, "--quiet")
    assert status == 0
    assert out.startswith("ProbEval KL: ") and "mean over 54 questions" in out
    assert "\nsignature: clustering:human|embedder:none|matching:wordnet(stop=match)|" in out
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert {r["question"] for r in rows} == set(read_targets(cfc / "dev.targets.jsonl"))
    assert rows[0]["cluster"] == "r1q1.1" and {"p_g", "p_h", "representative"} <= set(rows[0])
    run_cli(capsys, *human, "--per-question", lines, "--quiet")
    first = json.loads(lines.read_text(encoding="utf-8").splitlines()[0])
    assert first["id"] == "r1q1" and first["clusters"][-1]["id"] == "wrong"
    assert sum(c["p_h"] for c in first["clusters"]) == pytest.approx(1.0)


def test_model_answers_with_count_give_the_same_result(cfc, capsys):
    results = []
    for field in ("model_answers", "model_answers_with_count"):
        status, out, _ = run_cli(
            capsys,
            cfc / "dev.targets.jsonl",
            cfc / FILES["gpt2"],
            "--clustering",
            "human",
            "--field",
            field,
            "--ignore-unknown",
            "--json",
            "--quiet",
        )
        assert status == 0
        results.append(json.loads(out))
    assert results[0]["kl"] == pytest.approx(results[1]["kl"], abs=1e-12)


def test_errors_name_the_file_line_and_question(cfc, capsys, tmp_path):
    status, _, err = run_cli(capsys, cfc / "dev.targets.jsonl", cfc / FILES["human"], "--clustering", "human")
    assert status == 2
    assert f"{cfc / FILES['human']}, line 1, question 'r3q21'" in err and "--ignore-unknown" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"r1q1": ["evening"]}\n{"r1q2": ["x", 42]}\n', encoding="utf-8")
    status, _, err = run_cli(capsys, cfc / "dev.targets.jsonl", bad, "--clustering", "human")
    assert status == 2 and f"{bad}, line 2, question 'r1q2': samples must be strings, found 42" in err
    status, _, err = run_cli(capsys, cfc / "dev.targets.jsonl", tmp_path / "missing.json")
    assert status == 2 and "not found" in err


def test_partial_predictions_are_refused_unless_the_score_is_restricted_to_them(cfc, capsys, tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text('{"r1q1": ["evening", "night"]}\n', encoding="utf-8")
    status, out, err = run_cli(capsys, cfc / "dev.targets.jsonl", one, "--clustering", "human", "--json")
    assert status == 2 and out == ""
    assert "probeval: error: the samples answer 1 of the 54 question(s) with target answers; 53 have none" in err
    status, out, _ = run_cli(
        capsys, cfc / "dev.targets.jsonl", one, "--clustering", "human", "--json", "--only-predicted", "--quiet"
    )
    result = json.loads(out)
    assert result["num_questions"] == 1 and "|missing:skip|n:1|n_samples:2|" in result["signature"]


def test_quiet_never_hides_that_questions_were_made_up_with_wrong_answers(cfc, capsys, tmp_path):
    short = tmp_path / "short.jsonl"
    targets = read_targets(cfc / "dev.targets.jsonl")
    with short.open("w", encoding="utf-8") as fh:
        for i, qid in enumerate(targets):
            fh.write(json.dumps({qid: ["evening"] * (10 if i else 4)}) + "\n")
    status, out, err = run_cli(capsys, cfc / "dev.targets.jsonl", short, "--clustering", "human", "--quiet")
    assert status == 0 and "|n_samples:10|short:1|" in out
    assert "1 question(s) have fewer than 10 samples, and their missing samples count as wrong answers: r1q1 (4)" in err


@pytest.mark.slow
def test_python_m_runs_the_same_command_deterministically_across_hash_seeds(cfc, tmp_path):
    samples = tmp_path / "few.jsonl"
    gpt2 = read_samples(cfc / FILES["gpt2"])
    with samples.open("w", encoding="utf-8") as fh:
        for qid in list(gpt2)[:8]:
            fh.write(json.dumps({qid: [a for a, n in gpt2[qid].items() for _ in range(n)]}) + "\n")
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1"}
        done = run_python(
            [
                "-m",
                "cfc_probeval",
                str(cfc / "dev.targets.jsonl"),
                str(samples),
                "--clustering",
                "xmeans",
                "--embedder",
                "char-ngrams",
                "--only-predicted",
                "--json",
            ],
            tmp_path,
            env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert outputs[0]["num_questions"] == 8
    assert outputs[0]["signature"].startswith(
        f"clustering:xmeans(k_init={XMeansClusterer.option('k_init').default},k_max=20,seed=0)|embedder:char-ngrams"
    )


def test_evaluate_module_path_points_at_the_module():
    assert Path(evaluate_module_path()).name == "probeval.py"
    assert Path(evaluate_module_path()).is_file()


def test_compare_two_systems_with_paired_bootstrap(capsys):
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "cfc"
    if not data.is_dir():
        pytest.skip("../shared/data is not available")
    targets = str(data / "dev.targets.jsonl")
    human = str(data / "dev.predictions.human.json")
    gpt2 = str(data / "dev.predictions.gpt2-xl.oneshot.json")
    args = ["compare", targets, human, gpt2, "--clustering", "human", "--field", "model_answers", "--ignore-unknown"]
    args += ["--resamples", "200", "--json"]
    # 70 human answers per question at most against 100 samples: KLs at different counts are not comparable.
    assert main(args) == 2
    assert "different sample counts (a: 70 per question, b: 100)" in capsys.readouterr().err
    status = main([*args, "--accept-mismatch", "samples"])
    assert status == 0
    out = json.loads(capsys.readouterr().out)
    assert out["difference"] == pytest.approx(out["kl_a"] - out["kl_b"])
    assert out["ci_low"] <= out["difference"] <= out["ci_high"] < 0  # humans are closer to the crowd
    assert out["p_value"] < 0.01 and out["num_questions"] == 54 and out["num_samples"] == [70, 100]
    assert out["signature"].startswith("clustering:human|")
    assert out["signature"].endswith(
        "|n_samples:70,100|wordnet:3.0|version:0.1.0|accepted-mismatch:samples|bootstrap:200|bootstrap_seed:12345"
    )


def test_probeval_compare_sub_command(tmp_path, capsys):
    targets, good, bad = compare_files(tmp_path)
    assert main(["compare", str(targets), str(good), str(bad), "--clustering", "human"]) == 2
    assert f"{bad}, line 1, question 'zz': predictions for 1 question id(s)" in capsys.readouterr().err
    assert (
        main(
            [
                "compare",
                str(targets),
                str(good),
                str(bad),
                "--clustering",
                "human",
                "--ignore-unknown",
                "--json",
                "--resamples",
                "100",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["num_questions"] == 12 and out["difference"] < 0 and out["p_value"] < 0.05


def test_the_clustering_seed_and_the_bootstrap_seed_are_two_options(tmp_path, capsys):
    targets, good, bad = compare_files(tmp_path)
    clustering = ["--clustering", "xmeans", "--embedder", "char-ngrams"]
    status, out, err = run_cli(
        capsys, "compare", targets, good, bad, *clustering, "--ignore-unknown", "--resamples", "50", "--json",
        "--cluster-seed", "3", "--seed", "7",
    )  # fmt: skip
    assert status == 0, err
    signature = json.loads(out)["signature"]
    assert ",seed=3)|" in signature and signature.endswith("|bootstrap:50|bootstrap_seed:7")
    # On probeval itself, --seed is kept as the same option as --cluster-seed.
    by_name = [
        run_cli(capsys, targets, good, *clustering, flag, "5", "--json") for flag in ("--cluster-seed", "--seed")
    ]
    assert by_name[0][0] == 0 and by_name[0][1] == by_name[1][1]
    assert ",seed=5)|" in json.loads(by_name[0][1])["signature"]


def test_a_files_recorded_samples_per_question_are_checked_against_its_samples(cfc, tmp_path):
    # A generate file records its samples per question; probeval refuses a claim its content contradicts.
    document = json.loads((cfc / FILES["gpt2"]).read_text(encoding="utf-8"))
    files = {}
    for name, generation in {
        "agrees": {"num_samples": 100, "sampling": "samples:100|temperature:0.69"},
        "claims_more": {"num_samples": 300},
        "claims_more_in_sampling": {"sampling": {"n": 300}},
    }.items():
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps({**document, "generation": generation}), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    targets = str(cfc / "dev.targets.jsonl")

    def probeval(*argv: str):
        command = ["-m", "cfc_probeval", *argv, "--ignore-unknown", "--clustering", "human"]
        return run_python(command, tmp_path, env, timeout=300)

    assert probeval(targets, str(files["agrees"]), "--json").returncode == 0
    for name, key in (("claims_more", "num_samples"), ("claims_more_in_sampling", "sampling n")):
        done = probeval(targets, str(files[name]))
        said = [line for line in done.stderr.splitlines() if "error" in line]
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert said == [
            f"probeval: error: {files[name]} records 300 samples per question ({key}), but its questions "
            "carry at most 100: correct the recorded count, or remove it"
        ], done.stderr
    compared = probeval("compare", targets, str(files["agrees"]), str(files["claims_more"]))
    assert compared.returncode == 2 and "records 300 samples per question" in compared.stderr
    # The ranked answers hold each answer once, not the samples: their count is not the file's claim.
    assert probeval(targets, str(files["claims_more"]), "--field", "model_ranked_answers").returncode == 0


def test_the_seed_and_threshold_flags_parse_by_the_options_declarations(monkeypatch, capsys):
    from cfc_probeval import cli
    from cfc_probeval.options import SEED, THRESHOLD

    monkeypatch.setattr(cli, "SEED", replace(SEED, high=10, accepts=""))
    monkeypatch.setattr(cli, "THRESHOLD", replace(THRESHOLD, high=0.5, accepts=""))
    for argv in (
        ["t", "p", "--cluster-seed", "11"],
        ["t", "p", "--threshold", "0.6"],
        ["cluster", "t", "-o", "c", "--cluster-seed", "11"],
    ):
        with pytest.raises(SystemExit):
            cli.parse_args(argv)
        assert "must be" in capsys.readouterr().err
    args = cli.parse_args(["t", "p", "--cluster-seed", "10", "--threshold", "0.5"])
    assert (args.seed, args.threshold) == (10, 0.5)
