"""Gradio Space: ProtoQA and ProbEval on GPT-2 answers.

Pick a question of ProtoQA crowdsourced dev or CFC dev (or type your own), let GPT-2
answer it a few hundred times, and see what each metric rewards: ProtoQA's ranked-list
score rewards popular and diverse answers, ProbEval's KL divergence rewards answers
spread over the clusters the way people's answers are.

Run ``python app.py`` (settings in README.md). The page is built by :func:`build_demo`;
the work is done in the ``demo_*`` modules beside it (``demo_requests`` for one request
end to end, ``demo_render`` for what the page shows).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

# `python space/app.py` from the repository root must find the helper modules beside it.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_api import custom_result, scores_json
from demo_data import DATASETS, DemoData
from demo_errors import DemoError, ModelUnavailableError
from demo_model import (
    DEFAULT_NUM_SAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOP_P,
    MAX_NUM_SAMPLES,
    MAX_TEMPERATURE,
    MIN_TEMPERATURE,
    ModelHolder,
    SamplingSettings,
)
from demo_requests import first_view_result, generate_result, stored_result
from demo_scoring import DemoResult
from demo_settings import DATA_DIR_ENV, configure_environment

# Before gradio and matplotlib are imported: they read these variables once.
configure_environment()

import demo_leaderboard  # noqa: E402
import gradio as gr  # noqa: E402
from demo_render import (  # noqa: E402
    answers_html,
    clusters_html,
    distribution_figure,
    question_html,
    scores_html,
    signatures_markdown,
)

from protoqa_integrations.generation.provenance import FIELDS  # noqa: E402
from protoqa_integrations.hub import serving  # noqa: E402

__all__ = ["SpaceApp", "build_demo", "main", "INTRO", "EXAMPLES", "CSS"]

log = logging.getLogger("protoqa_space")

INTRO = """# What do ProtoQA and ProbEval reward?
Ask GPT-2 a common-sense question a few hundred times and compare its answers with ~100 people's,
grouped by hand into clusters. **ProtoQA** scores the ranked list of answers: it rewards *popular and
diverse* answers (each cluster counts once, weighted by its number of people). **ProbEval** compares the
*distribution* of the sampled answers over the clusters with people's, by KL divergence (lower is better)."""

Outputs = tuple[str, str, str, str, str, Any, str]
"""status, question summary, clusters, answers, scores, chart, signatures."""

Progress = Callable[..., Any]


def _no_progress(*args: Any, **kwargs: Any) -> None:
    return None


class SpaceApp:
    """The page's event handlers, around one :class:`demo_data.DemoData` and one model.

    Handlers never raise: every problem becomes a message in the status box, so a bad
    input or a missing model cannot take the server down.

    >>> app = SpaceApp(DemoData("../shared/data"), ModelHolder("gpt2"))  # doctest: +SKIP
    >>> status, *_ = app.show_stored("protoqa", "r1q1", "")  # doctest: +SKIP
    """

    def __init__(self, data: Optional[DemoData] = None, models: Optional[ModelHolder] = None) -> None:
        self.data = data or DemoData()
        self.models = models or ModelHolder()

    # -- pieces of the page --------------------------------------------------------------

    def dataset_choices(self) -> list[tuple[str, str]]:
        """``(label, key)`` of the data sets.

        >>> SpaceApp(DemoData("/nowhere"), ModelHolder("gpt2")).dataset_choices()
        [('ProtoQA crowdsourced dev', 'protoqa'), ('CFC dev', 'cfc')]
        """
        return [(info.label, key) for key, info in DATASETS.items()]

    def question_update(
        self, dataset_key: str, current: Optional[str] = None
    ) -> tuple[dict[str, Any], dict[str, Any], str]:
        """The question dropdown, the stored-answers button and a note for a data set.

        The dropdown keeps ``current`` when the data set has that question (an example
        sets the data set and the question at once), else shows the first question.

        >>> dropdown, button, note = SpaceApp(DemoData("../shared/data")).question_update("cfc")  # doctest: +SKIP
        >>> dropdown["value"], button["interactive"]  # doctest: +SKIP
        ('r1q1', True)
        """
        try:
            choices = self.data.question_choices(dataset_key)
        except Exception as exc:  # missing data or download failure: say so, keep the page usable
            log.exception("cannot load %s", dataset_key)
            return (gr.update(choices=[], value=None), gr.update(interactive=False), _error_markdown(exc))
        has_stored = self.data.stored_path(dataset_key) is not None
        info = DATASETS[dataset_key]
        note = (
            f"Stored answers: {info.stored_label}."
            if has_stored
            else f"No stored answers here (set `{DATA_DIR_ENV}` to a folder with `{info.stored_names[0]}`)."
        )
        note = f"{self.data.describe().capitalize()}. {note}"
        ids = [key for _, key in choices]
        value = current if current in ids else (ids[0] if ids else None)
        return gr.update(choices=choices, value=value), gr.update(interactive=has_stored), note

    def model_status(self, progress: Progress = _no_progress) -> str:
        """Load the model (once; a failure is not retried here) and say whether generation is possible.

        >>> print(SpaceApp(DemoData("/nowhere"), ModelHolder("/no/model")).model_status())
        **No model could be loaded**: there is no model folder /no/model. Generation is unavailable; ...
        """
        progress(None, desc=f"Loading {self.models.name}")
        try:
            self.models.get()
        except ModelUnavailableError:
            pass  # model_summary says what went wrong
        return self.model_summary()

    def model_controls(self, progress: Progress = _no_progress) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """Load the model, then the model note and the states of the Generate and stored-answers buttons.

        Without a model, Generate is disabled and says why, and the stored answers become
        the primary action.

        >>> note, generate, stored = SpaceApp(DemoData("/nowhere"), ModelHolder("/no/model")).model_controls()
        >>> generate["interactive"], generate["value"], stored["variant"]
        (False, 'Generate (no model loaded)', 'primary')
        """
        note = self.model_status(progress)
        if self.models.loaded is not None:
            return (
                note,
                gr.update(
                    interactive=True, variant="primary", value=f"Generate answers with {self.models.display_name}"
                ),
                gr.update(variant="secondary"),
            )
        return (
            note,
            gr.update(interactive=False, variant="secondary", value="Generate (no model loaded)"),
            gr.update(variant="primary"),
        )

    def model_summary(self) -> str:
        """The model's state in one line, without loading anything.

        >>> SpaceApp(DemoData("/nowhere"), ModelHolder("gpt2")).model_summary()
        'Model **gpt2**: not loaded yet.'
        """
        loaded, error = self.models.loaded, self.models.error
        if loaded is not None:
            parameters = sum(p.numel() for p in loaded.model.parameters())
            size = f"{parameters / 1e6:.0f}M" if parameters >= 1e6 else f"{parameters:,}"
            return f"Model **{loaded.name}** ready ({size} parameters)."
        if error is not None:
            return (
                f"**No model could be loaded**: {str(error).rstrip('.')}. Generation is unavailable; "
                "use **Show stored GPT-2 answers** to see both metrics on real GPT-2 answers."
            )
        return f"Model **{self.models.name}**: not loaded yet."

    # -- events --------------------------------------------------------------------------

    def generate(
        self,
        dataset_key: str,
        question_id: Optional[str],
        custom_question: Optional[str],
        num_samples: Any,
        temperature: Any,
        top_p: Any,
        seed: Any,
        progress: Progress = _no_progress,
    ) -> Outputs:
        """Sample answers with the model and score them.

        >>> space = SpaceApp(DemoData("/nowhere"), ModelHolder("gpt2"))
        >>> space.generate("protoqa", "r1q1", "", 900, 0.69, 0.9, 42)[0]
        '**Cannot do that**: the number of samples must be between 1 and 500, got 900'
        """

        def on_progress(done: int, total: int) -> None:
            progress((done, total), desc="Sampling", unit="samples")

        def on_stage(message: str) -> None:
            progress(None, desc=message)

        def run() -> DemoResult:
            settings = SamplingSettings.from_inputs(num_samples, temperature, top_p, seed)
            return generate_result(
                self.data, self.models, dataset_key, question_id, custom_question, settings, on_progress, on_stage
            )

        return self._respond(run, "generated")

    def show_stored(
        self,
        dataset_key: str,
        question_id: Optional[str],
        custom_question: Optional[str],
        progress: Progress = _no_progress,
    ) -> Outputs:
        """Score the stored GPT-2 answers of the picked question.

        >>> SpaceApp(DemoData("/nowhere"), ModelHolder("gpt2")).show_stored("cfc", None, "")[0]
        '**Cannot do that**: pick a question of the data set, or type your own'
        """

        def run() -> DemoResult:
            progress(None, desc="Scoring the stored answers")
            return stored_result(self.data, dataset_key, question_id, custom_question)

        return self._respond(run, "stored")

    def first_view(self) -> Outputs:
        """The outputs shown when the page opens: the stored GPT-2 answers to ProtoQA dev r1q1, scored.

        >>> SpaceApp(DemoData("/nowhere"), ModelHolder("gpt2")).first_view()[0]  # doctest: +ELLIPSIS
        'Done: 6 distinct answers (stored, ProtoQA dev r1q1), scored against 7 human clusters...'
        """
        try:
            result = first_view_result()
        except Exception as exc:  # the page must open even without its first view
            log.exception("no first view")
            return _empty(f"Pick a question and press a button. (No first view: {exc})")
        outputs = render(result, "stored, ProtoQA dev r1q1")
        return (outputs[0] + " Pick another question, or generate new answers below.",) + outputs[1:]

    # -- API (JSON numbers) --------------------------------------------------------------

    def api_score(self, question: str, clusters: Any, answers: Any) -> dict[str, Any]:
        """Score a ranked answer list against clusters, all given by the caller; JSON numbers.

        >>> out = SpaceApp(DemoData("/nowhere"), ModelHolder("gpt2")).api_score(
        ...     "Name a pet", {"answers": [["dog"], ["cat"]], "count": [6, 4]}, ["cat", "fish"])
        >>> out["protoqa"]["exact_match"]["max_answers@1"]
        0.6666666666666666
        """
        return self._json(lambda: custom_result(question, clusters, answers))

    def api_stored(self, dataset: str, question_id: str) -> dict[str, Any]:
        """Scores of the stored GPT-2 answers to a question of a data set; JSON numbers.

        >>> SpaceApp(DemoData("../shared/data")).api_stored("protoqa", "r1q1")["protoqa"]["wordnet"]["max_answers@1"]  # doctest: +SKIP
        1.0
        """
        return self._json(lambda: stored_result(self.data, dataset, question_id))

    def api_generate(
        self,
        dataset: str,
        question_id: str,
        question: str = "",
        num_samples: int = DEFAULT_NUM_SAMPLES,
        temperature: float = DEFAULT_TEMPERATURE,
        top_p: float = DEFAULT_TOP_P,
        seed: int = DEFAULT_SEED,
    ) -> dict[str, Any]:
        """Sample answers with the model for a question (or a typed one) and score them; JSON numbers.

        >>> SpaceApp(DemoData("/nowhere"), ModelHolder("/no/model")).api_generate("protoqa", "", "Name a fruit")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        gradio.exceptions.Error: 'No model could be loaded: there is no model folder /no/model'
        """

        def run() -> DemoResult:
            settings = SamplingSettings.from_inputs(num_samples, temperature, top_p, seed)
            return generate_result(self.data, self.models, dataset, question_id, question, settings)

        return self._json(run)

    @staticmethod
    def _json(run: Callable[[], DemoResult]) -> dict[str, Any]:
        try:
            return scores_json(run())
        except ModelUnavailableError as exc:
            raise gr.Error(f"No model could be loaded: {exc}") from None
        except DemoError as exc:
            raise gr.Error(f"Cannot do that: {exc}") from None
        except Exception as exc:  # never let one request take the server down
            log.exception("API request failed")
            raise gr.Error(f"{type(exc).__name__}: {exc}") from None

    def _respond(self, run: Callable[[], DemoResult], what: str) -> Outputs:
        try:
            result = run()
        except ModelUnavailableError as exc:
            return _empty(
                f"**No model could be loaded**: {str(exc).rstrip('.')}. Try **Show stored GPT-2 answers** instead."
            )
        except DemoError as exc:
            return _empty(f"**Cannot do that**: {exc}")
        except Exception as exc:  # never let one request take the page down
            log.exception("request failed")
            return _empty(_error_markdown(exc))
        return render(result, what)


def render(result: DemoResult, what: str = "generated") -> Outputs:
    """The page's outputs for a result (status, summary, tables, chart, signatures).

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> out = render(score_answers("protoqa", q, answers_from_samples(["dog"], "test")))
    >>> print(out[0])
    Done: 1 distinct answers (generated), scored against 1 human clusters. max_answers@10: **1.000** (exact match), **1.000** (WordNet); ProbEval KL: **0.115**.
    """
    distinct = len({a for a in result.answers.ranked if a})
    if result.scored:
        # The headline numbers sit in the status line too, so they are seen without scrolling.
        headline = result.protoqa.scores
        status = (
            f"Done: {distinct} distinct answers ({what}), scored against "
            f"{len(result.question.clusters)} human clusters. max_answers@10: "
            f"**{headline['exact_match']['max_answers@10']:.3f}** (exact match), "
            f"**{headline['wordnet']['max_answers@10']:.3f}** (WordNet); "
            f"ProbEval KL: **{result.probeval.kl:.3f}**."
        )
    else:
        status = f"Done: {distinct} distinct answers ({what}). A typed question has no human answers, so no scores."
    return (
        status,
        question_html(result),
        clusters_html(result),
        answers_html(result),
        scores_html(result),
        distribution_figure(result),
        signatures_markdown(result),
    )


def _empty(status: str) -> Outputs:
    return (status, "", "", "", "", None, "")


def _error_markdown(exc: BaseException) -> str:
    return f"**Error** ({type(exc).__name__}): {exc}"


EXAMPLES = (
    ("protoqa", "r1q7", "ProtoQA r1q7: a vegetable about as big as your head"),
    ("protoqa", "r1q5", "ProtoQA r1q5: before leaving the house for work"),
    ("protoqa", "r1q3", "ProtoQA r1q3: something a monk would not own"),
    ("cfc", "r1q2", "CFC r1q2: how armed forces provide security"),
)
"""(data set, question id, label) of the example questions under the question picker."""

CSS = """
.table-scroll { overflow-x: auto; max-width: 100%; }
#distribution img { max-width: 100%; height: auto; }
/* The picked question's text stops before the dropdown's arrow. */
#question input { padding-right: 2.2em !important; text-overflow: ellipsis; }
/* Signatures wrap instead of running off the page. */
#signatures code { white-space: pre-wrap; overflow-wrap: anywhere; }
/* Leaderboard headers wrap between words only, never inside one. */
#leaderboard-table th, #leaderboard-table th *, #leaderboard-intervals th, #leaderboard-intervals th * {
  word-break: normal !important; overflow-wrap: normal !important; hyphens: none !important;
}
#leaderboard-table td, #leaderboard-table td * { overflow-wrap: anywhere; }
/* Metric headers are the command line's ids (max_incorrect@5), which cannot wrap: a smaller type keeps the
   paper's seven metrics and the KL on a desktop screen. */
#leaderboard-table th .header { font-size: 0.8em; }
#leaderboard-phone { display: none; }
#leaderboard-note code { white-space: pre-wrap; overflow-wrap: anywhere; }
.lb-phone { margin: 0; padding-left: 0; list-style: none; }
.lb-phone li { padding: 0.3em 0; border-bottom: 1px solid #ddd; overflow-wrap: anywhere; }
.lb-rank { display: inline-block; min-width: 2.5em; color: #666; }
.lb-ci { color: #666; white-space: nowrap; }
.lb-phone-head { font-weight: 600; margin-bottom: 0.3em; }
@media (max-width: 700px) {
  /* On a phone the ranking is a list, each system with its main figure; the full table scrolls sideways. */
  #leaderboard-phone { display: block; }
  /* On a phone the chart keeps its own size (labels stay readable) and scrolls sideways. */
  #distribution { overflow-x: auto; }
  #distribution img { max-width: none !important; width: auto !important; }
  /* So does the board's plot (two panels a row, ProbEval KL first), instead of shrinking to a strip: its frame
     starts at the left edge, where Gradio centres it (the overflow on the left could not be scrolled to). */
  #leaderboard-plot .image-container { overflow-x: auto; }
  #leaderboard-plot .image-container button { justify-content: flex-start !important; }
  #leaderboard-plot img { max-width: none !important; width: auto !important; height: auto !important; }
}
"""


def _side_by_side(*panels: tuple[str, Any]) -> None:
    """One row of titled columns, each rendering its component (inside a ``gr.Blocks``)."""
    with gr.Row():
        for title, component in panels:
            with gr.Column(min_width=300):
                gr.Markdown(f"### {title}")
                component.render()


def _three_decimals(headers: list[str], rows: list[list[Any]]) -> Any:
    """The table with every figure shown to three decimals, as the CLI prints them (``0.480``, not ``0.48``);
    the cells keep their numbers, so that a column still sorts by value."""
    import pandas as pd

    return pd.DataFrame(rows, columns=headers).style.format(precision=3, na_rep="")


def _leaderboard_view(key: str, files: Any = None, only_common: bool = False, accept: Any = None) -> tuple[Any, ...]:
    """The table, the intervals, the phone list, the plot and the legend of a board, with uploads ranked in it."""
    view = demo_leaderboard.board_view(key, files or [], bool(only_common), list(accept or []))
    return (
        view.status,
        _three_decimals(view.headers, view.rows),
        {"headers": view.interval_headers, "data": view.interval_rows},
        view.phone,
        view.plot,
        view.note,
    )


def _leaderboard_tab() -> None:
    """The Leaderboard tab (inside ``gr.Blocks``): a board picker, the sortable table, the plot, an upload."""
    first = next(iter(demo_leaderboard.BOARDS))
    status, table, intervals, phone, plot, note = _leaderboard_view(first)
    gr.Markdown(
        "Systems ranked on every question of a data set: each figure is a mean over questions; *rank* is the range "
        "of ranks a system may hold on the main figure (ProbEval KL, lower is better) once Holm-corrected paired "
        "bootstrap tests say which differences are significant. The 95% bootstrap intervals (the same resampled "
        "questions for every system) are in the plot and under it. The tables and the plot name each metric as the "
        "command line does (`max_answers@1` is the paper's Max Answers@1) and show every figure to three decimals. "
        "Click a column to sort. "
        f"Upload up to {demo_leaderboard.MAX_UPLOADS} answers files (from `protoqa-eval generate`, a predictions "
        "file, lm-eval `--log_samples` output or lighteval details) to rank them against the shipped systems."
    )
    choice = gr.Radio(
        [(info.label, key) for key, info in demo_leaderboard.BOARDS.items()],
        value=first,
        label="Leaderboard",
        elem_id="leaderboard-board",
    )
    status_line = gr.Markdown(status, elem_id="leaderboard-status")
    phone_list = gr.HTML(phone, elem_id="leaderboard-phone")
    frame = gr.Dataframe(value=table, interactive=False, wrap=True, label="Leaderboard", elem_id="leaderboard-table")
    image = gr.Image(plot, type="filepath", label="Scores and intervals", elem_id="leaderboard-plot")
    legend = gr.Markdown(note, elem_id="leaderboard-note")
    with gr.Accordion("95% intervals and rank ranges of every metric", open=False):
        spans = gr.Dataframe(
            value=intervals, interactive=False, wrap=True, show_label=False, elem_id="leaderboard-intervals"
        )
    uploads = gr.File(
        file_count="multiple",
        file_types=[".json", ".jsonl", ".parquet"],
        label=f"Answers files to rank (at most {demo_leaderboard.MAX_UPLOADS})",
        elem_id="leaderboard-upload",
    )
    common = gr.Checkbox(
        False,
        label="Rank on the questions every upload answers (leaves the others out, for every system)",
        elem_id="leaderboard-common",
    )
    accept = gr.CheckboxGroup(
        list(FIELDS),
        value=[],
        label=demo_leaderboard.ACCEPT_LABEL,
        info="Uploads that record different settings (data set, split, samples per question, sampling, prompt) are "
        "refused: their figures are not comparable. Tick a field to rank them anyway; the board is then marked "
        "NOT COMPARABLE AS RECORDED.",
        elem_id="leaderboard-accept",
    )
    rank = gr.Button("Rank the uploaded files", elem_id="leaderboard-rank")
    outputs = [status_line, frame, spans, phone_list, image, legend]
    private = {"api_visibility": "private"}
    choice.change(_leaderboard_view, inputs=[choice], outputs=outputs, queue=False, **private)
    rank.click(
        _leaderboard_view,
        inputs=[choice, uploads, common, accept],
        outputs=outputs,
        concurrency_limit=1,
        concurrency_id="score",
        **private,
    )


def _question_column(
    app: SpaceApp,
    first_key: str,
    initial_questions: dict[str, Any],
    initial_note: str,
    outputs: list[Any],
    stored_event: Callable[..., Outputs],
) -> tuple[Any, Any, Any, Any]:
    """The left column of the question tab: data set, question picker, typed question, note, and examples that
    show a question's stored answers in ``outputs``; returns the data set, question, typed question and note."""
    with gr.Column(scale=3, min_width=280):
        dataset = gr.Radio(app.dataset_choices(), value=first_key, label="Data set", elem_id="dataset")
        question = gr.Dropdown(
            initial_questions.get("choices", []),
            value=initial_questions.get("value"),
            label="Question (type to search)",
            filterable=True,
            elem_id="question",
        )
        custom = gr.Textbox(
            label=f"... or type your own question (answers only, no scores; at most "
            f"{serving.MAX_QUESTION_CHARS} characters)",
            placeholder="Name something people bring to a picnic.",
            max_length=serving.MAX_QUESTION_CHARS,
            elem_id="custom-question",
        )
        stored_note = gr.Markdown(initial_note, elem_id="stored-note")
        gr.Examples(
            examples=[[key, qid] for key, qid, _ in EXAMPLES],
            example_labels=[label for *_, label in EXAMPLES],
            inputs=[dataset, question],
            outputs=outputs,
            fn=stored_event,
            run_on_click=True,
            cache_examples=False,
            label="Examples: stored GPT-2 answers to these questions",
            api_visibility="private",
        )
    return dataset, question, custom, stored_note


def _sampling_column(app: SpaceApp, initial_stored: dict[str, Any]) -> tuple[Any, ...]:
    """The right column: the sampling settings and the two buttons; returns the four settings, Generate, Stored."""
    with gr.Column(scale=2, min_width=280):
        with gr.Accordion("Sampling (nucleus sampling, as in the ProtoQA paper)", open=True):
            num_samples = gr.Slider(
                1,
                MAX_NUM_SAMPLES,
                value=DEFAULT_NUM_SAMPLES,
                step=1,
                label="Samples",
                elem_id="num-samples",
            )
            temperature = gr.Slider(
                MIN_TEMPERATURE,
                MAX_TEMPERATURE,
                value=DEFAULT_TEMPERATURE,
                step=0.01,
                label="Temperature",
                elem_id="temperature",
            )
            top_p = gr.Slider(0.05, 1.0, value=DEFAULT_TOP_P, step=0.01, label="top_p", elem_id="top-p")
            seed = gr.Number(DEFAULT_SEED, precision=0, minimum=0, maximum=2**32 - 1, label="Seed", elem_id="seed")
        # Disabled until the model has loaded: a click could only fail before that.
        generate = gr.Button(
            f"Generate answers with {app.models.display_name} (loading the model ...)",
            variant="secondary",
            interactive=False,
            elem_id="generate",
        )
        stored = gr.Button(
            "Show stored GPT-2 answers",
            elem_id="stored",
            interactive=initial_stored.get("interactive", True),
        )
    return num_samples, temperature, top_p, seed, generate, stored


def _register_api(app: SpaceApp) -> None:
    """The API (inside ``gr.Blocks``): JSON numbers under stable names."""

    def score(question: str, clusters: dict, answers: list[str]) -> dict:
        """Score ``answers`` (ranked, best first) against ``clusters`` ({"id", "answers", "count"} lists, or
        a list of {"answers", "count"} records), with ProtoQA (exact match, WordNet) and ProbEval."""
        return app.api_score(question, clusters, answers)

    def stored_scores(dataset: str, question_id: str) -> dict:
        """Scores of the stored GPT-2 answers to a question of "protoqa" (crowdsourced dev) or "cfc" (dev)."""
        return app.api_stored(dataset, question_id)

    def generate_scores(
        dataset: str,
        question_id: str,
        question: str = "",
        num_samples: int = 50,
        temperature: float = DEFAULT_TEMPERATURE,
        top_p: float = DEFAULT_TOP_P,
        seed: int = DEFAULT_SEED,
    ) -> dict:
        """Sample answers with the Space's model and score them (a typed question gets answers only)."""
        return app.api_generate(dataset, question_id, question, num_samples, temperature, top_p, seed)

    def leaderboard(
        board: str, uploads: list[dict], only_common: bool = False, accept_mismatch: Optional[list[str]] = None
    ) -> dict:
        """Rank answers files against a shipped board ("protoqa_dev", "cfc_dev" or "cfc_test"): ``uploads`` is a
        list of {"name": "mine.jsonl", "content": TEXT} (or "base64": DATA for Parquet); ``accept_mismatch`` lists
        the recorded settings ("samples", "dataset", ...) in which they may differ, marked in the result;
        ``error`` is the one line the page shows when they cannot be ranked (the shipped board is then returned)."""
        return demo_leaderboard.api_rank(board, uploads, only_common, accept_mismatch)

    gr.api(score, api_name="score", concurrency_limit=1, concurrency_id="score")
    gr.api(leaderboard, api_name="leaderboard", concurrency_limit=1, concurrency_id="score")
    gr.api(stored_scores, api_name="stored", concurrency_limit=1, concurrency_id="score")
    gr.api(generate_scores, api_name="generate", concurrency_limit=1, concurrency_id="model")


@dataclass
class _Controls:
    """The question tab's inputs, buttons and status line, for wiring their events."""

    dataset: Any
    question: Any
    custom: Any
    stored_note: Any
    num_samples: Any
    temperature: Any
    top_p: Any
    seed: Any
    generate: Any
    stored: Any
    model_status: Any


def _wire_events(
    demo: gr.Blocks, app: SpaceApp, c: _Controls, outputs: list[Any], stored_event: Callable[..., Outputs]
) -> None:
    """The page's own (private) events: data set change, Generate, Stored, and the model's status on load."""
    private = {"api_visibility": "private"}

    def generate_event(
        dataset_key: str,
        question_id: Optional[str],
        custom_question: str,
        n: float,
        temp: float,
        p: float,
        s: float,
        progress: gr.Progress = gr.Progress(),
    ) -> Outputs:
        return app.generate(dataset_key, question_id, custom_question, n, temp, p, s, progress)

    def status_event(progress: gr.Progress = gr.Progress()) -> tuple[str, dict[str, Any], dict[str, Any]]:
        return app.model_controls(progress)

    c.dataset.change(
        app.question_update,
        inputs=[c.dataset, c.question],
        outputs=[c.question, c.stored, c.stored_note],
        queue=False,
        **private,
    )
    c.generate.click(
        generate_event,
        inputs=[c.dataset, c.question, c.custom, c.num_samples, c.temperature, c.top_p, c.seed],
        outputs=outputs,
        concurrency_limit=1,
        concurrency_id="model",
        **private,
    ).then(app.model_summary, outputs=c.model_status, queue=False, show_progress="hidden", **private)
    c.stored.click(
        stored_event,
        inputs=[c.dataset, c.question, c.custom],
        outputs=outputs,
        concurrency_limit=1,
        concurrency_id="model",
        **private,
    )
    demo.load(
        status_event,
        outputs=[c.model_status, c.generate, c.stored],
        concurrency_limit=1,
        concurrency_id="model",
        **private,
    )


def build_demo(app: Optional[SpaceApp] = None) -> gr.Blocks:
    """The page. Generation and scoring share one queue slot (``concurrency_id="model"``).

    It opens on :meth:`SpaceApp.first_view` (scores already computed, no click needed).
    Named API endpoints return JSON numbers: ``/score`` (caller's clusters and answers),
    ``/stored`` (stored GPT-2 answers of a question) and ``/generate``; the page's own
    events are private.

    >>> demo = build_demo(SpaceApp(DemoData("../shared/data"), ModelHolder("gpt2")))  # doctest: +SKIP
    >>> demo.queue(max_size=32).launch()  # doctest: +SKIP
    """
    app = app or SpaceApp()
    first_key = next(iter(DATASETS))
    initial_questions, initial_stored, initial_note = app.question_update(first_key, "r1q1")
    first = app.first_view()

    with gr.Blocks(title="ProtoQA & ProbEval on GPT-2 answers", analytics_enabled=False) as demo:
        # Built first and placed below, so that the examples beside the question picker can fill them.
        status = gr.Markdown(first[0], elem_id="status", render=False)
        summary = gr.HTML(first[1], elem_id="summary", render=False)
        scores = gr.HTML(first[4], elem_id="scores", render=False)
        # No label badge: it would sit on the chart's title.
        plot = gr.Plot(first[5], show_label=False, format="png", elem_id="distribution", render=False)
        clusters = gr.HTML(first[2], elem_id="clusters", render=False)
        answers = gr.HTML(first[3], elem_id="answers", render=False)
        signatures = gr.Markdown(first[6], elem_id="signatures", render=False)
        outputs = [status, summary, clusters, answers, scores, plot, signatures]

        def stored_event(
            dataset_key: str,
            question_id: Optional[str],
            custom_question: str = "",
            progress: gr.Progress = gr.Progress(),
        ) -> Outputs:
            return app.show_stored(dataset_key, question_id, custom_question, progress)

        gr.Markdown(INTRO)
        with gr.Tabs():
            with gr.Tab("One question", id="question"):
                model_status = gr.Markdown(f"Model **{app.models.name}**: loading ...", elem_id="model-status")
                with gr.Row():
                    picked = _question_column(app, first_key, initial_questions, initial_note, outputs, stored_event)
                    sampling = _sampling_column(app, initial_stored)
                status.render()
                summary.render()
                _side_by_side(("Scores", scores), ("ProbEval: people vs model over the clusters", plot))
                _side_by_side(
                    ("People's answers (clusters)", clusters), ("The model's answers, most sampled first", answers)
                )
                signatures.render()
            with gr.Tab("Leaderboard", id="leaderboard"):
                _leaderboard_tab()

        controls = _Controls(*picked, *sampling, model_status)
        _wire_events(demo, app, controls, outputs, stored_event)
        _register_api(app)
    return demo


def main() -> None:
    """Launch the page; host and port come from ``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT``.

    >>> main()  # serves http://127.0.0.1:7860 until stopped  # doctest: +SKIP
    """
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    demo = build_demo()
    demo.queue(max_size=32, default_concurrency_limit=1)
    # Request bodies over serving.MAX_REQUEST_BYTES are refused before they are read or parsed.
    # The shipped leaderboards' plots are served from the Space's own folder, wherever it is started from.
    demo.launch(
        show_error=False,
        css=CSS,
        allowed_paths=[str(demo_leaderboard.LEADERBOARD_DIR), str(demo_leaderboard.plots_dir())],
        **serving.launch_options(),
    )


if __name__ == "__main__":
    main()
