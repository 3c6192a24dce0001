"""Automatic clusters written as a targets file: the same KLs as clustering on the fly, named by checksum."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from cfc_probeval import ProbEval, read_targets, write_clustered_targets
from cfc_probeval.clustered import (
    clustered_file_label,
    clusters_label,
    clusters_provenance,
    read_targets_and_label,
)
from cfc_probeval.inputs import has_human_clusters
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.readers import CLUSTERS_PROVENANCE_KEY
from tests.support.processes import run_python


def _raw_targets(source, path, questions):
    """The first ``questions`` lines of a clustered targets file, without their clusters."""
    with open(source, encoding="utf-8") as fh, open(path, "w", encoding="utf-8") as out:
        for line in list(fh)[:questions]:
            record = json.loads(line)
            record["answers"].pop("clusters")
            out.write(json.dumps(record) + "\n")
    return path


def _probeval(*argv, cwd):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = run_python(["-m", "cfc_probeval", *map(str, argv)], cwd, env, timeout=600)
    return done


def test_scoring_the_clustered_file_gives_the_kls_of_clustering_on_the_fly(shared_data, tmp_path):
    raw = _raw_targets(shared_data / "cfc" / "dev.targets.jsonl", tmp_path / "raw.jsonl", 10)
    samples = shared_data / "cfc" / "dev.predictions.gpt2-xl.oneshot.json"
    made = _probeval("cluster", raw, "-o", "clustered.jsonl", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    clustered = tmp_path / "clustered.jsonl"
    scored = {}
    for name, targets, setting in (("file", clustered, []), ("fly", raw, ["--clustering", "gmeans"])):
        done = _probeval(targets, samples, *setting, "--ignore-unknown", "--only-predicted", "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        scored[name] = json.loads(done.stdout)
    assert scored["file"]["num_questions"] == scored["fly"]["num_questions"] == 10
    # Bit for bit: JSON writes each float exactly (shortest repr), and the parsed values are compared.
    assert scored["file"]["per_question"] == scored["fly"]["per_question"]
    assert scored["file"]["kl"] == scored["fly"]["kl"]
    digest = hashlib.sha256(clustered.read_bytes()).hexdigest()
    assert scored["file"]["signature"].endswith(
        f"|clusters:gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)@sha256={digest}"
    )
    provenance = clusters_provenance(clustered)
    assert provenance["source_sha256"] == hashlib.sha256(raw.read_bytes()).hexdigest()
    assert provenance["embedder"].startswith("all-MiniLM-L6-v2@") and provenance["embedder"].endswith(":numpy:round4")
    assert len(provenance["embedder_weights_sha256"]) == 64 and provenance["version"]
    again = _probeval("cluster", raw, "-o", "clustered.jsonl", cwd=tmp_path)
    assert again.returncode == 2 and "--overwrite" in again.stderr and len(again.stderr.strip().splitlines()) == 1


def _small_raw(path, answers):
    rows = [
        {"metadata": {"id": f"q{i}"}, "question": {"normalized": "name a pet"}, "answers": {"raw": answers}}
        for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_library_writes_every_line_with_clusters_and_one_provenance(tmp_path):
    raw = _small_raw(tmp_path / "raw.jsonl", {"dog": 5, "dogs": 2, "cat": 4, "cats": 1, "goldfish": 3})
    out = tmp_path / "clustered.jsonl"
    pe = ProbEval("hac", embedder="char-ngrams", distance_threshold=0.5)
    provenance = write_clustered_targets(raw, out, pe)
    assert provenance["clustering"] == "hac(linkage=complete,threshold=0.5,metric=cosine)"
    assert provenance["embedder"] == "char-ngrams:3x256" and provenance["embedder_weights_sha256"] is None
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line[CLUSTERS_PROVENANCE_KEY] for line in lines] == [provenance] * 3
    assert lines[0]["answers"]["raw"] == {"dog": 5, "dogs": 2, "cat": 4, "cats": 1, "goldfish": 3}
    targets = read_targets(out)
    on_the_fly = pe.clusters_for(read_targets(raw)["q0"])
    assert [(c.id, c.answers, c.count) for c in targets["q0"].clusters] == [
        (c.id, c.answers, c.count) for c in on_the_fly
    ]
    assert clustered_file_label(raw) is None
    # A file whose lines disagree about where their clusters come from is refused, naming the line.
    lines[2][CLUSTERS_PROVENANCE_KEY] = {**provenance, "clustering": "gmeans"}
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DataFormatError, match="line 3"):
        clusters_provenance(out)


def test_a_question_is_found_by_its_id_as_every_targets_reader_finds_it(tmp_path):
    raw = _small_raw(tmp_path / "raw.jsonl", {"dog": 5, "dogs": 2, "cat": 4})
    rows = [json.loads(line) for line in raw.read_text().splitlines()]
    rows[1] = {**rows[1], "metadata": {"source": "old"}, "questionid": rows[1]["metadata"]["id"]}
    raw.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "clustered.jsonl"
    write_clustered_targets(raw, out, ProbEval("hac", embedder="char-ngrams", distance_threshold=0.5))
    assert all(has_human_clusters(t) for t in read_targets(out).values())


def test_clusters_are_written_only_from_raw_answers_and_by_an_automatic_clustering(tmp_path):
    clustered = tmp_path / "t.jsonl"
    record = {
        "metadata": {"id": "q0"},
        "question": {"normalized": "a"},
        "answers": {"clusters": {"q0.0": {"count": 2, "answers": ["dog"]}}},
    }
    clustered.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match="1 question\\(s\\) already carry clusters: q0"):
        write_clustered_targets(clustered, tmp_path / "out.jsonl", ProbEval("hac", embedder="char-ngrams"))
    with pytest.raises(ValueError, match="needs an automatic clustering, not human"):
        write_clustered_targets(clustered, tmp_path / "out.jsonl", ProbEval("human"))
    assert not (tmp_path / "out.jsonl").exists()


def _hac_clustered(tmp_path):
    """A clustered file of three questions (made by HAC on character n-grams, no model) and two systems' samples."""
    raw = _small_raw(tmp_path / "raw.jsonl", {"dog": 5, "dogs": 2, "cat": 4, "cats": 1, "goldfish": 3})
    clustered = tmp_path / "clustered.jsonl"
    write_clustered_targets(raw, clustered, ProbEval("hac", embedder="char-ngrams", distance_threshold=0.5))
    (tmp_path / "a.json").write_text(json.dumps({f"q{i}": ["dog", "cat", "dogs", "fish"] for i in range(3)}))
    (tmp_path / "b.json").write_text(json.dumps({f"q{i}": ["cat", "cat", "cat", "goldfish"] for i in range(3)}))
    return clustered


def test_probeval_and_compare_name_the_clustered_file_by_its_checksum_whatever_its_cluster_ids(tmp_path):
    clustered = _hac_clustered(tmp_path)
    label = f"clusters:{clusters_provenance(clustered)['clustering']}@sha256="
    # Renamed clusters are the same clusters: the label comes from the provenance block, not from the ids.
    renamed = tmp_path / "renamed.jsonl"
    lines = [json.loads(line) for line in clustered.read_text().splitlines()]
    for line in lines:
        line["answers"]["clusters"] = {f"x{i}": c for i, c in enumerate(line["answers"]["clusters"].values())}
    renamed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # Clusters with automatic-looking ids but no provenance block are a file like any other.
    for line in lines:
        line.pop(CLUSTERS_PROVENANCE_KEY)
        line["answers"]["clusters"] = {
            f"{line['metadata']['id']}.auto{i}": c for i, c in enumerate(line["answers"]["clusters"].values())
        }
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for path, named in ((clustered, True), (renamed, True), (plain, False)):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        scored = _probeval(path, "a.json", "--json", cwd=tmp_path)
        compared = _probeval("compare", path, "a.json", "b.json", "--resamples", "50", "--json", cwd=tmp_path)
        assert scored.returncode == 0 and compared.returncode == 0, scored.stderr + compared.stderr
        signatures = [json.loads(scored.stdout)["signature"], json.loads(compared.stdout)["signature"]]
        for signature in signatures:
            assert (f"|{label}{digest}" in signature) is named, signature
            assert ("clusters:" in signature) is named
        assert signatures[1].endswith("|bootstrap:50|bootstrap_seed:12345")


def test_the_label_comes_from_the_one_read_of_the_targets(tmp_path):
    clustered = _hac_clustered(tmp_path)
    targets, label = read_targets_and_label(clustered)
    assert list(targets) == ["q0", "q1", "q2"] and targets["q0"].clusters
    assert (
        label
        == clustered_file_label(clustered)
        == clusters_label(clusters_provenance(clustered), hashlib.sha256(clustered.read_bytes()).hexdigest())
    )
    assert read_targets_and_label(tmp_path / "raw.jsonl")[1] is None
