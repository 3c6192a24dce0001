"""The demo Space's functions (space/), with a tiny GPT-2 built here and the stored GPT-2 answers."""

from __future__ import annotations

import doctest
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.lazy import lazy_import, require
from tests.support.metric_names import PAPER_KEYS

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

require("transformers")
require("torch")
require("gradio", minversion="6.31")  # the demo needs gr.api

SPACE_DIR = Path(__file__).resolve().parents[2] / "space"
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
# Every module of the Space, so that a new one has its docstring examples run too.
SPACE_MODULES = sorted(path.stem for path in SPACE_DIR.glob("*.py"))
sys.path.insert(0, str(SPACE_DIR))

import demo_answers  # noqa: E402
import demo_api  # noqa: E402
import demo_data  # noqa: E402
import demo_errors  # noqa: E402
import demo_limits  # noqa: E402
import demo_model  # noqa: E402
import demo_requests  # noqa: E402
import demo_scoring  # noqa: E402
import demo_settings  # noqa: E402

import protoqa_core.io.data  # noqa: E402
from protoqa_integrations.generation import sampling  # noqa: E402
from protoqa_integrations.hub import serving  # noqa: E402
from tests.support.tiny_lm import build_word_list_gpt2  # noqa: E402

render = lazy_import("demo_render", optional=False)  # matplotlib loads with the first test that draws

TINY_WORDS = ("pumpkin", "cabbage", "watermelon", "melon", "lettuce", "potato", "tomato", "big", "green")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> demo_model.ModelHolder:
    folder = build_word_list_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), TINY_WORDS)
    holder = demo_model.ModelHolder(str(folder))
    holder.get()
    return holder


VEGETABLE_QUESTION = {
    "metadata": {"id": "t1", "source": "test"},
    "question": {
        "original": "Name a vegetable that is about as big as your head.",
        "normalized": "name a vegetable that is about as big as your head.",
    },
    "answers": {
        "raw": {"pumpkin": 50, "cabbage": 20, "lettuce": 2, "watermelon": 15, "melon": 3},
        "clusters": {
            "t1.0": {"count": 50, "answers": ["pumpkin"]},
            "t1.1": {"count": 22, "answers": ["cabbage", "lettuce"]},
            "t1.2": {"count": 18, "answers": ["watermelon", "melon"]},
        },
    },
}


@pytest.fixture
def local_data(tmp_path) -> demo_data.DemoData:
    """A data folder with one hand-made ProtoQA question and no stored answers."""
    (tmp_path / "protoqa").mkdir()
    (tmp_path / "protoqa" / "dev.crowdsourced.jsonl").write_text(json.dumps(VEGETABLE_QUESTION) + "\n")
    return demo_data.DemoData(tmp_path)


@pytest.fixture(scope="module")
def app():
    """The page module, imported without leaving its cache settings in this process's environment."""
    saved = dict(os.environ)
    try:
        import app as module
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


@pytest.fixture(scope="module")
def shared_demo_data() -> demo_data.DemoData:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not available")
    return demo_data.DemoData(SHARED_DATA)


# -- prompts, inputs, settings ----------------------------------------------------------


def test_prompts_follow_the_spec_rules_and_the_cfc_one_shot_format():
    assert (
        demo_model.prompt_for("protoqa", "Name something people bring to a picnic.")
        == "one thing people bring to a picnic is"
    )
    assert demo_model.prompt_for("protoqa", "name a fruit", "finetuned") == "one fruit is\t"
    cfc = demo_model.prompt_for("cfc", "a farmer with new crops.  where are the farmers?")
    assert cfc.startswith("Q: ") and cfc.endswith("\nQ: a farmer with new crops. where are the farmers?\nA:")
    assert cfc.count("\nA: ") == 1  # exactly one worked example
    with pytest.raises(demo_errors.DemoError, match="unknown data set"):
        demo_model.prompt_for("squad", "who?")


def test_typed_questions_and_sampling_settings_are_limited():
    assert demo_limits.check_question("  Name   a fruit ") == "Name a fruit"
    with pytest.raises(demo_errors.DemoError, match="type a question"):
        demo_limits.check_question("   ")
    with pytest.raises(demo_errors.DemoError, match="at most 300"):
        demo_limits.check_question("x" * 301)
    assert demo_model.SamplingSettings.from_inputs(500.0, "0.69", 0.9, 7) == demo_model.SamplingSettings(
        500, 0.69, 0.9, 7
    )
    for bad in [(501, 0.69, 0.9, 1), (0, 0.69, 0.9, 1), (10, 0.0, 0.9, 1), (10, 0.69, 1.5, 1), (10, 0.69, 0.9, -1)]:
        with pytest.raises(demo_errors.DemoError):
            demo_model.SamplingSettings(*bad)
    with pytest.raises(demo_errors.DemoError, match="invalid sampling settings"):
        demo_model.SamplingSettings.from_inputs("many", 0.69, 0.9, 1)


def test_data_dir_setting_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv(demo_settings.DATA_DIR_ENV, str(tmp_path / "space"))
    monkeypatch.setenv(demo_settings.FALLBACK_DATA_DIR_ENV, str(tmp_path / "general"))
    assert demo_settings.resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert demo_settings.resolve_data_dir() == tmp_path / "space"
    monkeypatch.delenv(demo_settings.DATA_DIR_ENV)
    assert demo_settings.resolve_data_dir() == tmp_path / "general"


def test_everything_written_goes_under_the_temporary_root(monkeypatch, tmp_path):
    monkeypatch.setenv(demo_settings.TEMP_DIR_ENV, str(tmp_path))
    # The variables it sets are put back as they were, present or not: left set, they would send
    # every later test in this process (the WordNet cache among them) to this temporary folder.
    saved = dict(os.environ)
    try:
        for variable in ("GRADIO_TEMP_DIR", "MPLCONFIGDIR", "PROTOQA_CACHE_DIR"):
            os.environ.pop(variable, None)
        demo_settings.configure_environment()
        for variable in ("GRADIO_TEMP_DIR", "MPLCONFIGDIR", "PROTOQA_CACHE_DIR"):
            assert Path(os.environ[variable]).is_relative_to(tmp_path)
        assert demo_settings.space_temp_dir("models").is_relative_to(tmp_path)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_blank_setting_counts_as_unset_as_in_the_project(monkeypatch, tmp_path):
    # The project reads $PROTOQA_CACHE_DIR blank as unset: the Space must then point it into its own
    # root, or the WordNet copy would be written under the home folder.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv(demo_settings.TEMP_DIR_ENV, "  ")
    assert demo_settings.space_temp_dir("models") == tmp_path / "protoqa_space" / "models"
    monkeypatch.setenv("PROTOQA_CACHE_DIR", " ")
    saved = dict(os.environ)
    try:
        demo_settings.configure_environment()
        assert Path(os.environ["PROTOQA_CACHE_DIR"]) == tmp_path / "protoqa_space" / "protoqa_metric"
    finally:
        os.environ.clear()
        os.environ.update(saved)
    monkeypatch.setenv(demo_settings.MODEL_ENV, " ")
    monkeypatch.setenv(demo_settings.CACHE_DIR_ENV, "\t")
    holder = demo_model.ModelHolder()
    assert (holder.name, holder.cache_dir) == (demo_model.DEFAULT_MODEL, None)
    monkeypatch.setenv(demo_settings.MODEL_ENV, " gpt2 ")
    assert demo_model.ModelHolder().name == "gpt2"


def test_the_button_names_a_local_model_by_its_folder_as_the_loader_reads_it(tmp_path, monkeypatch):
    # sampling.load_model reads these as folders: the button shows the folder's name, not its path.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "my-gpt2").mkdir(parents=True)
    names = ["~/models/my-gpt2", "models/my-gpt2", "/models/my-gpt2", "openai-community/gpt2"]
    assert [demo_model.ModelHolder(n).display_name for n in names] == ["my-gpt2"] * 3 + ["openai-community/gpt2"]


def test_answers_are_cut_at_the_first_sentence_end_and_ranked_by_frequency():
    answers = demo_answers.answers_from_samples(
        ["Pumpkin. A big one", " cabbage", "pumpkin<|endoftext|><|endoftext|>", "", "cabbage!", "pumpkin"],
        "test",
        eos_token="<|endoftext|>",
    )
    assert answers.ranked == ("pumpkin", "cabbage")
    assert dict(answers.samples) == {"pumpkin": 3, "cabbage": 2, "": 1}
    assert answers.num_samples == 6


# -- data and stored answers ------------------------------------------------------------


def test_local_folder_questions_and_missing_stored_answers(local_data):
    assert local_data.question_choices("protoqa") == [
        ("t1 · Name a vegetable that is about as big as your head.", "t1")
    ]
    assert local_data.stored_path("protoqa") is None
    with pytest.raises(demo_errors.DemoError, match="no stored answers"):
        demo_requests.stored_result(local_data, "protoqa", "t1")
    with pytest.raises(demo_errors.DemoError, match="no question 'nope'"):
        local_data.question("protoqa", "nope")
    with pytest.raises(demo_errors.DemoError, match="cannot load CFC dev"):
        local_data.questions("cfc")


@pytest.fixture
def no_local_data(monkeypatch, tmp_path):
    """No data folder anywhere: DemoData must download, into the temporary root."""
    for variable in (demo_settings.DATA_DIR_ENV, demo_settings.FALLBACK_DATA_DIR_ENV):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(protoqa_core.io.data, "checkout_data_dir", lambda: None)
    monkeypatch.setenv(demo_settings.TEMP_DIR_ENV, str(tmp_path / "tmp"))
    return tmp_path / "tmp"


def _fake_download(content: Path, calls: list):
    def download(url: str, target: Path) -> None:
        calls.append((url, target))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.read_bytes())

    return download


def test_downloaded_targets_are_verified(no_local_data, monkeypatch, tmp_path):
    forged = tmp_path / "forged.jsonl"
    forged.write_text(json.dumps(VEGETABLE_QUESTION) + "\n")
    calls = []
    monkeypatch.setattr(protoqa_core.io.data, "download_file", _fake_download(forged, calls))
    data = demo_data.DemoData()
    assert data.data_dir is None and "downloaded" in data.describe()
    with pytest.raises(demo_errors.DemoError, match="cannot load ProtoQA crowdsourced dev: .*sha256"):
        data.questions("protoqa")
    assert calls[0][0] == "https://raw.githubusercontent.com/iesl/protoqa-data/master/data/dev/dev.crowdsourced.jsonl"
    assert calls[0][1].is_relative_to(no_local_data)


def test_downloaded_targets_are_read(no_local_data, monkeypatch):
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not available")
    calls = []
    monkeypatch.setattr(
        protoqa_core.io.data, "download_file", _fake_download(SHARED_DATA / "cfc" / "dev.targets.jsonl", calls)
    )
    data = demo_data.DemoData()
    assert len(data.questions("cfc")) == 54 and calls[0][0].endswith("/all_dev_targets.jsonl")
    assert data.stored_path("cfc") is None


def test_stored_protoqa_answers_are_scored_like_the_libraries_do(shared_demo_data):
    from cfc_probeval import evaluate_probeval
    from protoqa_metric import read_predictions

    assert len(shared_demo_data.question_choices("protoqa")) == 52
    result = demo_requests.stored_result(shared_demo_data, "protoqa", "r1q1")
    stored = read_predictions(SHARED_DATA / "protoqa" / "dev.predictions.gpt2finetuned.json")["r1q1"]
    assert list(result.answers.ranked) == stored and not result.answers.counted
    # "age" is the most popular cluster and the model's first answer.
    assert result.protoqa.claims["wordnet"][0] == "r1q1.0"
    assert result.cluster_labels["r1q1.0"] == "C1 age"
    assert result.protoqa.scores["wordnet"]["max_answers@1"] == 1.0
    for by_metric in result.protoqa.scores.values():
        assert set(by_metric) == set(PAPER_KEYS)
        assert all(0.0 <= v <= 1.0 for v in by_metric.values())
    expected = evaluate_probeval(
        {"r1q1": shared_demo_data.question("protoqa", "r1q1")}, {"r1q1": stored}, clustering="human"
    )
    assert result.probeval.kl == pytest.approx(expected.kl)
    assert result.signatures["probeval"].startswith("clustering:human|")
    assert result.signatures["protoqa (wordnet)"].startswith("sim:wordnet|")


def test_stored_cfc_samples_are_cleaned_and_counted(shared_demo_data):
    result = demo_requests.stored_result(shared_demo_data, "cfc", "r1q1")
    answers = result.answers
    assert answers.counted and answers.num_samples == 100
    assert not any("<|endoftext|>" in a or "\n" in a for a in answers.samples)
    counts = [answers.samples[a] for a in answers.ranked]
    assert counts == sorted(counts, reverse=True)
    model_total = sum(c.model_count for c in result.probeval.clusters)
    assert model_total == pytest.approx(100)
    assert math.isfinite(result.probeval.kl) and result.probeval.kl > 0


def test_the_space_shows_the_numbers_of_the_libraries(shared_demo_data):
    """Sampled answers are ranked, scored and compared exactly as the Trainer hooks do it."""
    from protoqa_integrations.training.samples import metric_key, score_sampled_answers

    for qid in ("r1q1", "r1q9"):  # r1q9: two long answers that the metric reads as one
        result = demo_requests.stored_result(shared_demo_data, "cfc", qid)
        samples = [answer for answer, n in result.answers.samples.items() for _ in range(n)]
        library = score_sampled_answers(
            [result.question], [samples], similarity=list(demo_scoring.SIMILARITIES), metrics="paper", probeval=True
        )
        shown = {metric_key(s, m): v for s, by_metric in result.protoqa.scores.items() for m, v in by_metric.items()}
        assert shown == {k: v for k, v in library.items() if k != "probeval_kl"}
        assert result.probeval.kl == library["probeval_kl"]


# -- the model --------------------------------------------------------------------------


def test_an_unloadable_model_is_reported_and_remembered(tmp_path, local_data, app):
    holder = demo_model.ModelHolder(str(tmp_path / "no-model"))
    with pytest.raises(demo_errors.ModelUnavailableError, match="no model folder"):
        holder.get()
    assert holder.loaded is None and isinstance(holder.error, demo_errors.ModelUnavailableError)
    with pytest.raises(demo_errors.ModelUnavailableError, match="cannot load the model"):
        demo_model.load_model(str(tmp_path))  # a folder, but no model in it
    space = app.SpaceApp(local_data, holder)
    assert "Show stored GPT-2 answers" in space.model_status()
    status, *rest = space.generate("protoqa", "t1", "", 10, 0.69, 0.9, 1)
    assert status.startswith("**No model could be loaded**") and rest[-2] is None


def test_models_load_without_remote_code(monkeypatch, tmp_path):
    import transformers

    seen = []

    def refuse(name, **kwargs):
        seen.append(kwargs.get("trust_remote_code"))
        raise OSError("offline")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", refuse)
    monkeypatch.setattr(sampling, "hub_unavailable", lambda: None)  # as if the Hub answered
    with pytest.raises(demo_errors.ModelUnavailableError, match="offline"):
        demo_model.load_model("gpt2", cache_dir=tmp_path)
    assert seen == [False]


@pytest.mark.slow
def test_generation_with_the_tiny_model_is_scored_and_reproducible(tiny_model, local_data):
    progress, stages = [], []
    settings = demo_model.SamplingSettings(num_samples=60, seed=3)
    result = demo_requests.generate_result(
        local_data,
        tiny_model,
        "protoqa",
        "t1",
        None,
        settings,
        lambda done, total: progress.append((done, total)),
        stages.append,
    )
    assert progress == [(30, 60), (60, 60)]  # the library's sampler: two generate calls of 30
    assert stages[0].startswith("Loading the model") and stages[-1].startswith("Scoring")
    assert result.answers.num_samples == 60 and result.prompt == "one vegetable that is about as big as your head is"
    assert set(result.answers.ranked) <= set(result.answers.samples)
    # The tiny vocabulary is made of the cluster words: some single-word answers claim clusters.
    assert any(c is not None for c in result.protoqa.claims["wordnet"])
    assert sum(c.model_count for c in result.probeval.clusters) == pytest.approx(60)
    assert "samples:60" in result.signatures["sampling"] and "seed:3" in result.signatures["sampling"]
    again = demo_requests.generate_result(local_data, tiny_model, "protoqa", "t1", None, settings)
    assert again.answers.samples == result.answers.samples


def test_sampling_time_is_shown_and_is_not_the_scoring_budget(tiny_model, local_data, monkeypatch):
    budgets = []
    real_run = demo_limits.run_with_budget

    def spy(function, *args, **kwargs):
        budgets.append(kwargs.get("seconds", serving.SCORE_TIME_BUDGET))
        return real_run(function, *args, **kwargs)

    monkeypatch.setattr(demo_limits, "run_with_budget", spy)
    # Sampling far faster than scoring (as on a GPU): the scoring budget must stay the Space's own.
    monkeypatch.setattr(demo_requests, "_timed", lambda function: (function(), 0.0001))
    result = demo_requests.generate_result(
        local_data, tiny_model, "protoqa", "t1", None, demo_model.SamplingSettings(num_samples=8)
    )
    assert budgets == [serving.SCORE_TIME_BUDGET] and result.scored
    assert result.seconds == 0.0001
    assert "sampled in under 0.1 s" in render.question_html(result)


def test_a_typed_question_gets_answers_but_no_scores(tiny_model, local_data):
    result = demo_requests.generate_result(
        local_data,
        tiny_model,
        "cfc",
        None,
        "a dog <b>barks</b>. when does it bark?",
        demo_model.SamplingSettings(num_samples=5),
    )
    assert not result.scored and result.probeval is None and result.answers.num_samples == 5
    assert result.prompt.endswith("Q: a dog <b>barks</b>. when does it bark?\nA:")
    assert render.distribution_figure(result) is None
    summary = render.question_html(result)
    assert "&lt;b&gt;barks&lt;/b&gt;" in summary and "<b>barks</b>" not in summary
    assert "No scores" in summary and "model-answers" in render.answers_html(result)


# -- the page -------------------------------------------------------------------------------


def test_page_handlers_render_results_and_errors(tiny_model, local_data, app):
    from matplotlib.figure import Figure

    space = app.SpaceApp(local_data, tiny_model)
    status, summary, clusters, answers, scores, figure, signatures = space.generate(
        "protoqa", "t1", "", 20, 0.69, 0.9, 42
    )
    assert status.startswith("Done:") and "scored against 3 human clusters" in status
    assert "class='human-clusters'" in clusters and "C1 pumpkin" in clusters
    assert "class='model-answers'" in answers
    assert "class='protoqa-scores'" in scores and scores.count(">max_") == 7 and "KL(P" in scores
    assert isinstance(figure, Figure)
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels == ["C1 pumpkin", "C2 cabbage", "C3 watermelon", "wrong"]
    assert "sampling:" in signatures and "probeval:" in signatures
    assert space.generate("protoqa", "t1", "", 1000, 0.69, 0.9, 42)[0].startswith("**Cannot do that**")
    assert "no question 'zz'" in space.generate("protoqa", "zz", "", 5, 0.69, 0.9, 42)[0]
    assert "no stored answers" in space.show_stored("protoqa", "t1", "")[0]
    assert "clear the typed question" in space.show_stored("protoqa", "t1", "Name a fruit")[0]


def test_stored_answers_page_for_a_dev_question(shared_demo_data, tiny_model, app):
    status, summary, clusters, answers, scores, figure, _ = app.SpaceApp(shared_demo_data, tiny_model).show_stored(
        "cfc", "r1q1", ""
    )
    assert status.startswith("Done:") and "(stored)" in status
    assert "GPT-2 XL" in summary and "100 samples" in summary
    assert "Times sampled" in answers and figure is not None


def test_the_page_queues_generation_one_at_a_time(local_data, tiny_model, app):
    import gradio as gr

    demo = app.build_demo(app.SpaceApp(local_data, tiny_model))
    assert isinstance(demo, gr.Blocks)
    queued = {fn.name: fn for fn in demo.fns.values() if fn.queue}
    assert {"generate_event", "stored_event", "status_event", "generate_scores"} <= set(queued)
    for name in ("generate_event", "stored_event", "status_event", "generate_scores"):
        assert queued[name].concurrency_limit == 1 and queued[name].concurrency_id == "model"
    for name in ("score", "stored_scores"):
        assert queued[name].concurrency_limit == 1 and queued[name].concurrency_id == "score"


def test_the_api_has_named_json_endpoints_only(local_data, tiny_model, app):
    demo = app.build_demo(app.SpaceApp(local_data, tiny_model))
    public = {fn.api_name for fn in demo.fns.values() if fn.api_visibility == "public"}
    assert public == {"score", "stored", "generate", "leaderboard"}
    info = demo.get_api_info()
    assert (
        set(info["named_endpoints"]) == {"/score", "/stored", "/generate", "/leaderboard"}
        and not info["unnamed_endpoints"]
    )


# -- dataset rows, first view, limits, budget, API ------------------------------------------


@pytest.fixture(scope="module")
def export_row(dataset_export, tmp_path_factory):
    """Row r1q1 of the dataset export, read back with stock load_dataset."""
    datasets = pytest.importorskip("datasets")
    cache = tmp_path_factory.mktemp("cache")
    rows = datasets.load_dataset(str(dataset_export), "protoqa", split="validation", cache_dir=str(cache))
    return rows[0]


def test_a_dataset_row_works_unchanged(export_row, shared_demo_data):
    question = shared_demo_data.question("protoqa", "r1q1")
    answers = shared_demo_data.stored_answers("protoqa", "r1q1")
    from_row = demo_scoring.score_answers("protoqa", export_row, answers)
    from_question = demo_scoring.score_answers("protoqa", question, answers)
    assert from_row.question == question
    assert from_row.protoqa.scores == from_question.protoqa.scores
    assert from_row.probeval.kl == from_question.probeval.kl
    assert (
        demo_limits.scored_within_budget("protoqa", export_row, answers).protoqa.scores == from_question.protoqa.scores
    )
    with pytest.raises(demo_errors.DemoError, match="clusters"):
        demo_scoring.score_answers("protoqa", {"id": "x", "question": "q"}, answers)
    with pytest.raises(demo_errors.DemoError, match="Question or a dataset row"):
        demo_scoring.score_answers("protoqa", 42, answers)


def test_first_view_is_the_stored_gpt2_answers_to_r1q1(shared_demo_data, export_row, app):
    stored = json.loads(demo_requests.FIRST_VIEW_PATH.read_text(encoding="utf-8"))
    assert stored["row"] == export_row  # the shipped row is the export's own row
    first = demo_requests.first_view_result()
    expected = demo_requests.stored_result(shared_demo_data, "protoqa", "r1q1")
    assert first.answers.ranked == expected.answers.ranked
    assert first.protoqa.scores == expected.protoqa.scores and first.probeval.kl == expected.probeval.kl
    outputs = app.SpaceApp(demo_data.DemoData("/nowhere"), demo_model.ModelHolder("/nowhere")).first_view()
    assert outputs[0].startswith("Done:") and "class='protoqa-scores'" in outputs[4] and outputs[5] is not None
    with pytest.raises(demo_errors.DemoError, match="cannot read the first view"):
        demo_requests.first_view_result(SPACE_DIR / "missing.json")


def test_limits_are_checked_before_scoring(monkeypatch):
    def no_scoring(*args, **kwargs):
        raise AssertionError("scoring started")

    monkeypatch.setattr(demo_limits, "score_answers", no_scoring)
    monkeypatch.setattr(demo_limits, "run_with_budget", no_scoring)
    hostile = [
        ({"answers": [["dog " * 250_000]], "count": [1]}, ["dog"], "1000000 characters"),
        ({"answers": [[" ".join(["dog", "cat", "car"] * 10)[:199] + " x"]], "count": [1]}, ["dog"], "words"),
        ({"answers": [[f"a{i}" for i in range(200)]], "count": [1]}, [f"b{i}" for i in range(251)], "comparisons"),
        ({"answers": [["dog"]], "count": [1]}, ["dog"] * 501, "501 answers"),
        ({"answers": [["dog"]], "count": [1]}, ["d" * 1001], "1001 characters"),
        ({"answers": [[f"a{i}"] for i in range(51)], "count": [1] * 51}, ["dog"], "51 clusters"),
    ]
    for clusters, answers, message in hostile:
        with pytest.raises(demo_errors.DemoError, match=message):
            demo_api.custom_result("Name a pet", clusters, answers)
    with pytest.raises(demo_errors.DemoError, match="at most 300"):
        demo_api.custom_result("x" * 301, {"answers": [["dog"]], "count": [1]}, ["dog"])


def test_scoring_runs_under_a_time_budget():
    import time

    started = time.perf_counter()
    with pytest.raises(demo_errors.DemoError, match="0.5 s budget"):
        demo_limits.run_with_budget(time.sleep, 30, seconds=0.5)
    assert time.perf_counter() - started < 5
    with pytest.raises(ZeroDivisionError):
        demo_limits.run_with_budget(lambda: 1 / 0)
    with pytest.raises(demo_errors.DemoError, match="memory"):
        demo_limits.run_with_budget(lambda: bytearray(2 * 2**30), memory=256 * 2**20)
    assert demo_limits.run_with_budget(sorted, [3, 1, 2]) == [1, 2, 3]


def test_api_returns_json_numbers(shared_demo_data, app):
    space = app.SpaceApp(shared_demo_data, demo_model.ModelHolder("/nowhere"))
    out = space.api_score("Name a pet", json.dumps({"answers": [["dog"], ["cat"]], "count": [6, 4]}), "cat\nfish")
    assert out["protoqa"]["exact_match"]["max_answers@1"] == pytest.approx(4 / 6)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    records = space.api_score(
        "Name a pet", [{"answers": ["dog"], "count": 6}, {"answers": ["cat"], "count": 4}], ["cat", "fish"]
    )
    assert records["protoqa"] == out["protoqa"]
    stored = space.api_stored("protoqa", "r1q1")
    assert stored["protoqa"]["wordnet"]["max_answers@1"] == 1.0 and stored["probeval_kl"] > 0
    import gradio as gr

    with pytest.raises(gr.Error, match="at most 200"):
        space.api_score("Name a pet", {"answers": [["dog " * 1000]], "count": [1]}, ["dog"])
    with pytest.raises(gr.Error, match="No model could be loaded"):
        space.api_generate("protoqa", "r1q1")
    with pytest.raises(gr.Error, match="no answers to score"):  # not the smoothed empty distribution's KL
        space.api_score("Name a pet", {"answers": [["dog"], ["cat"]], "count": [6, 4]}, [])


def test_no_answers_are_refused_where_one_wrong_answer_is_scored(shared_demo_data, app):
    from demo_answers import answers_from_ranked_list
    from demo_scoring import score_answers

    from protoqa_metric import Cluster, Question

    pets = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    with pytest.raises(demo_errors.DemoError, match="no answers to score"):
        score_answers("protoqa", pets, answers_from_ranked_list([], "test"))
    space = app.SpaceApp(shared_demo_data, demo_model.ModelHolder("/nowhere"))
    status = space._respond(lambda: score_answers("protoqa", pets, answers_from_ranked_list([], "test")), "given")[0]
    assert status.startswith("**Cannot do that**: there are no answers to score")
    wrong = score_answers("protoqa", pets, answers_from_ranked_list(["fish"], "test"))
    assert wrong.probeval.kl > score_answers("protoqa", pets, answers_from_ranked_list(["dog"], "test")).probeval.kl


def test_generate_is_disabled_and_explained_without_a_model(local_data, tiny_model, tmp_path, app):
    note, generate, stored = app.SpaceApp(local_data, demo_model.ModelHolder(str(tmp_path / "none"))).model_controls()
    assert generate["interactive"] is False and "no model" in generate["value"]
    assert stored["variant"] == "primary" and "Show stored GPT-2 answers" in note
    note, generate, stored = app.SpaceApp(local_data, tiny_model).model_controls()
    assert generate["interactive"] is True and generate["variant"] == "primary" and "ready" in note


def test_question_update_keeps_a_valid_question(shared_demo_data, app):
    space = app.SpaceApp(shared_demo_data, demo_model.ModelHolder("/nowhere"))
    assert space.question_update("cfc", "r1q2")[0]["value"] == "r1q2"
    assert space.question_update("protoqa", "r1q4")[0]["value"] == "r1q1"  # no r1q4 in ProtoQA dev
    for key, qid, _ in app.EXAMPLES:
        assert shared_demo_data.question(key, qid)


@pytest.mark.parametrize("name", SPACE_MODULES)
def test_docstring_examples(name, monkeypatch, app):
    monkeypatch.chdir(SPACE_DIR.parent)  # examples name ../shared/data relative to the checkout
    result = doctest.testmod(sys.modules[name], optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
