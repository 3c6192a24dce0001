"""``protoqa-eval leaderboard`` and ``convert`` as commands: what the leaderboard prints and writes, the
warnings it gives, and what ``convert`` writes (the ranking itself is tested in test_board.py)."""

from __future__ import annotations

import json

import pytest

from tests.support.leaderboard_files import FAST, protoqa_eval, write_small_files


@pytest.fixture
def small_files(tmp_path):
    """Targets with 3 questions and two prediction files answering them."""
    return write_small_files(tmp_path)


def test_cli_writes_the_table_json_plot_and_model_index(small_files):
    pytest.importorskip("matplotlib")
    out = protoqa_eval(
        "leaderboard",
        "targets.jsonl",
        "a=a.json",
        "b=b.json",
        *FAST,
        "--plot",
        "board.png",
        "--model-index",
        "cards",
        "--dataset-type",
        "someone/pets",
        cwd=small_files,
    )
    assert out.returncode == 0, out.stderr
    assert "--model-index: data set someone/pets (someone/pets) in 2 file(s) under cards" in out.stderr
    table = out.stdout.splitlines()
    assert table[0].split()[:3] == ["system", "format", "max_answers@1"] and table[2].startswith("a ")
    assert out.stdout.count("signature:") == 1 and "signature: protoqa:sim:exact_match|metrics:paper|" in out.stdout
    assert "a: a.json (predictions file (ranked lists or samples))" in out.stderr
    assert (small_files / "board.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (small_files / "cards").iterdir()) == ["a.yaml", "b.yaml"]
    again = protoqa_eval(
        "leaderboard", "targets.jsonl", "a=a.json", "b=b.json", *FAST, "--plot", "board.png", cwd=small_files
    )
    assert again.returncode == 2 and "--overwrite" in again.stderr
    parsed = protoqa_eval("leaderboard", "targets.jsonl", "a=a.json", "b=b.json", *FAST, "--json", cwd=small_files)
    assert json.loads(parsed.stdout)["systems"][1]["scores"]["max_answers@1"]["mean"] == pytest.approx(4 / 6)


def test_questions_no_system_answers_are_named_as_left_out(small_files):
    for name in ("a", "b"):
        (small_files / f"{name}2.json").write_text(json.dumps({"q0": ["dog"], "q1": ["cat"]}))
    out = protoqa_eval("leaderboard", "targets.jsonl", "a=a2.json", "b=b2.json", *FAST, "--csv", cwd=small_files)
    assert out.returncode == 0, out.stderr
    assert "ranking on the 2 of 3 target questions that the systems answer" in out.stderr
    assert out.stdout.startswith("system,file,format,metric,mean,low,high,rank_best,rank_worst,signature\n")


@pytest.fixture
def run_in(small_files, monkeypatch, capsys):
    from protoqa_integrations.cli import main

    monkeypatch.chdir(small_files)

    def run(*argv):
        try:
            status = main(list(argv))
        except SystemExit as stop:  # a usage error, from the parser
            status = stop.code
        out, err = capsys.readouterr()
        return status, out, err.strip().splitlines()

    return run


def test_each_output_format_is_printed_and_only_one_is_taken(run_in):
    args = ("leaderboard", "targets.jsonl", "a=a.json", "b=b.json", *FAST, "--resamples", "50")
    status, out, _ = run_in(*args, "--markdown")
    assert status == 0 and out.startswith("| system |") and "| a |" in out
    status, out, _ = run_in(*args, "--json", "--question-scores")
    board = json.loads(out)
    assert status == 0 and [s["name"] for s in board["systems"]] == ["a", "b"]
    assert board["questions"] == ["q0", "q1", "q2"] and board["per_question"]
    status, out, _ = run_in(*args, "--json")
    assert status == 0 and "per_question" not in json.loads(out)
    status, out, err = run_in(*args, "--json", "--csv")
    assert status == 2 and not out and "argument --csv: not allowed with argument --json" in err[-1]


@pytest.mark.parametrize(
    ("metrics", "status", "message"),
    [
        ("protoqa,probeval", 0, ""),
        ("probeval", 0, ""),
        ("bleu", 2, "expected protoqa, probeval or both, got 'bleu'"),
        (",", 2, "expected protoqa, probeval or both, got ','"),
    ],
)
def test_metrics_are_protoqa_probeval_or_both(run_in, metrics, status, message):
    got, out, err = run_in(
        "leaderboard",
        "targets.jsonl",
        "a=a.json",
        "b=b.json",
        "--metrics",
        metrics,
        "--similarity",
        "exact_match",
        "--resamples",
        "20",
        "--json",
    )
    assert got == status, err
    if status:
        assert len(err) == 1 and err[0].startswith("protoqa-eval leaderboard: error: ") and message in err[0]
    else:
        names = {m for s in json.loads(out)["systems"] for m in s["scores"]}
        assert ("probeval_kl" in names) and (("max_answers@1" in names) == ("protoqa" in metrics))


def test_questions_left_out_by_only_common_are_counted_in_a_warning(run_in, small_files):
    (small_files / "c.json").write_text(json.dumps({"q0": ["dog"], "q1": ["cat"]}))
    status, out, err = run_in("leaderboard", "targets.jsonl", "a=a.json", "c=c.json", *FAST, "--only-common", "--csv")
    assert status == 0, err
    assert (
        "protoqa-eval leaderboard: warning: ranking on the 2 questions every system answers; "
        "1 question id(s) left out (--only-common)"
    ) in err
    assert err[-1].startswith("2 systems scored in ")


def test_bootstrap_options_are_checked_before_any_file_is_read(run_in):
    for option, value, message in (
        ("--resamples", "0", "must be an integer >= 1, got '0'"),
        ("--seed", "-1", "must be an integer >= 0"),
    ):
        status, out, err = run_in("leaderboard", "targets.jsonl", "a=missing.json", "b=b.json", option, value)
        assert status == 2 and len(err) == 1 and message in err[0] and "missing.json" not in err[0], err


def test_the_clustering_seed_is_its_own_option_and_the_signature_names_both(run_in, small_files):
    raw = {"dog": 5, "puppy": 2, "cat": 4, "kitten": 1, "goldfish": 3}
    rows = [
        {"metadata": {"id": f"q{i}"}, "question": {"normalized": "name a pet"}, "answers": {"raw": raw}}
        for i in range(3)
    ]
    (small_files / "raw.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ("leaderboard", "raw.jsonl", "a=a.json", "b=b.json", "--metrics", "probeval", "--resamples", "50", "--json")
    status, out, err = run_in(*args, "--cluster-seed", "4", "--seed", "9")
    assert status == 0, err
    signature = json.loads(out)["signature"]
    assert "clustering:auto->gmeans(" in signature and ",seed=4," in signature
    assert "|bootstrap_seed:9|" in signature


def test_convert_writes_an_answers_file_the_other_commands_read(run_in, small_files):
    samples = {"q0": ["dog", "dog", "cat"], "q1": ["cat"], "q2": ["fish", ""]}
    source = small_files / "samples_protoqa_2026-01-01T00-00-00.jsonl"
    source.write_text(
        "".join(
            json.dumps({"doc_id": i, "doc": {"id": qid}, "filter": "answers", "filtered_resps": [answers]}) + "\n"
            for i, (qid, answers) in enumerate(samples.items())
        )
    )
    status, out, err = run_in("convert", source.name, "-o", "converted.json")
    assert status == 0 and not out, err
    assert err == [f"{source.name}: 3 questions, 3 samples each at most (lm-eval, task protoqa) -> converted.json"]
    document = json.loads((small_files / "converted.json").read_text())
    assert document["model_answers"] == samples and document["generation"]["harness"] == "lm-eval"
    status, _, err = run_in("convert", source.name, "-o", "converted.json")
    assert status == 2 and "--overwrite" in err[-1]
    status, out, err = run_in("leaderboard", "targets.jsonl", "a=converted.json", "b=b.json", *FAST, "--json")
    assert status == 0 and json.loads(out)["systems"][0]["name"] in ("a", "b"), err


def test_convert_refuses_to_write_over_its_source(run_in, small_files):
    status, _, err = run_in("convert", "a.json", "-o", "a.json", "--overwrite")
    assert status == 2 and len(err) == 1 and "a.json" in err[0]
    assert json.loads((small_files / "a.json").read_text())["q0"] == ["dog", "cat"]


def test_convert_caps_one_questions_samples_as_the_other_commands_do(small_files):
    source = small_files / "samples_protoqa_2026-01-01T00-00-00.jsonl"
    record = {"doc_id": 0, "doc": {"id": "q0"}, "filter": "answers", "filtered_resps": [["dog"] * 501]}
    source.write_text(json.dumps(record) + "\n")
    out = protoqa_eval("convert", source.name, "-o", "converted.json", cwd=small_files)
    assert out.returncode == 2 and not (small_files / "converted.json").exists()
    [line] = out.stderr.strip().splitlines()
    assert source.name in line and "'q0'" in line and "500" in line and "--max-answers" in line, line
    raised = protoqa_eval("convert", source.name, "-o", "converted.json", "--max-answers", "501", cwd=small_files)
    assert raised.returncode == 0, raised.stderr
    assert len(json.loads((small_files / "converted.json").read_text())["model_answers"]["q0"]) == 501


def test_a_board_on_a_clustered_file_names_it_by_its_checksum_in_every_column(small_files):
    import hashlib

    from cfc_probeval import ProbEval, write_clustered_targets

    raw = {"dog": 5, "dogs": 2, "cat": 4, "cats": 1, "goldfish": 3}
    rows = [
        {"metadata": {"id": f"q{i}"}, "question": {"normalized": "name a pet"}, "answers": {"raw": raw}}
        for i in range(3)
    ]
    (small_files / "raw.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    clustered = small_files / "clustered.jsonl"
    made = write_clustered_targets(
        small_files / "raw.jsonl", clustered, ProbEval("hac", embedder="char-ngrams", distance_threshold=0.5)
    )
    label = f"clusters:{made['clustering']}@sha256={hashlib.sha256(clustered.read_bytes()).hexdigest()}"
    both = ("--metrics", "protoqa,probeval", "--similarity", "exact_match", "--resamples", "50", "--json")
    out = protoqa_eval("leaderboard", clustered.name, "a=a.json", "b=b.json", *both, cwd=small_files)
    assert out.returncode == 0, out.stderr
    board = json.loads(out.stdout)
    assert board["metrics"] and all(m["signature"].endswith(f"|{label}") for m in board["metrics"])
    # The same answers on the targets with human clusters: no clustered file, no label.
    plain = protoqa_eval("leaderboard", "targets.jsonl", "a=a.json", "b=b.json", *both, cwd=small_files)
    assert plain.returncode == 0, plain.stderr
    assert not any("clusters:" in m["signature"] for m in json.loads(plain.stdout)["metrics"])
