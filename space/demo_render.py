"""How the demo page shows a :class:`demo_scoring.DemoResult`: HTML tables and a bar chart.

Every string that comes from the data or the model is HTML-escaped. The tables carry
CSS classes (``human-clusters``, ``model-answers``, ``protoqa-scores``) so that tests
and users' own styles can find them, each inside a ``table-scroll`` box that scrolls
sideways on screens too narrow for it.

>>> from demo_answers import answers_from_samples
>>> from demo_scoring import score_answers
>>> from protoqa_metric import Cluster, Question
>>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
>>> result = score_answers("protoqa", q, answers_from_samples(["dog", "dog", "fish"], "test"))
>>> "C1 dog" in clusters_html(result) and "max_answers@10" in scores_html(result)
True
"""

from __future__ import annotations

import html
import math
from typing import Optional

from demo_data import DATASETS
from demo_scoring import DemoResult
from matplotlib.figure import Figure

from protoqa_core.text import normalize_prediction
from protoqa_metric import PAPER_METRICS

__all__ = [
    "question_html",
    "clusters_html",
    "answers_html",
    "scores_html",
    "distribution_figure",
    "signatures_markdown",
]

SIMILARITY_LABELS = {"exact_match": "exact match", "wordnet": "WordNet", "roberta": "RoBERTa"}
SHOWN_ANSWERS = 20
SHOWN_CLUSTER_ANSWERS = 8
HUMAN_COLOR, MODEL_COLOR, WRONG_COLOR = "#4c78a8", "#f58518", "#9d9d9d"

_SCROLL = "overflow-x:auto;max-width:100%;-webkit-overflow-scrolling:touch"
_TABLE = "width:100%;border-collapse:collapse;font-size:0.92em"
_CELL = "padding:3px 8px;border-bottom:1px solid rgba(128,128,128,0.25);text-align:left;vertical-align:top"
_CLAIMED = "background:#d9f2d9;color:#14501e;border-radius:4px;padding:1px 6px"
_UNMATCHED = "background:#f8dddd;color:#7a1b1b;border-radius:4px;padding:1px 6px"
_MUTED = "color:#888"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _answer_text(answer: str) -> str:
    return _e(answer) if answer else f"<span style='{_MUTED}'>(no answer)</span>"


def _cells(values: list[str], header: bool = False) -> str:
    tag = "th" if header else "td"
    return "<tr>" + "".join(f"<{tag} style='{_CELL}'>{v}</{tag}>" for v in values) + "</tr>"


def _table(css_class: str, header: list[str], rows: list[list[str]], min_width: int = 0) -> str:
    # The wrapper scrolls sideways when a narrow screen (a phone) cannot fit the table,
    # instead of letting the table run off the page; ``min_width`` keeps wide tables
    # from being squeezed into tall, one-word-per-line columns there.
    body = "".join(_cells(r) for r in rows)
    style = _TABLE + (f";min-width:{min_width}px" if min_width else "")
    return (
        f"<div class='table-scroll' style='{_SCROLL}'><table class='{css_class}' style='{style}'>"
        f"<thead>{_cells(header, True)}</thead><tbody>{body}</tbody></table></div>"
    )


def _claim(result: DemoResult, cluster_id: Optional[str]) -> str:
    if cluster_id is None:
        return f"<span style='{_UNMATCHED}'>none</span>"
    return f"<span style='{_CLAIMED}'>{_e(result.cluster_labels.get(cluster_id, cluster_id))}</span>"


def question_html(result: DemoResult) -> str:
    """The question, where the answers come from and the prompt the model completed.

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> r = score_answers("cfc", None, answers_from_samples(["x"], "3 samples"), question_text="Name a <b>fruit</b>")
    >>> "Name a &lt;b&gt;fruit&lt;/b&gt;" in question_html(r)
    True
    """
    info = DATASETS[result.dataset_key]
    source = f"{info.label}, question {_e(result.question.id)}" if result.question else "your own question"
    answers = result.answers
    distinct = len({a for a in answers.ranked if a})
    parts = [
        f"<div class='question-summary'><h3 style='margin:0 0 4px 0'>{_e(result.question_text)}</h3>",
        f"<div style='{_MUTED}'>{source}</div>",
        f"<p style='margin:6px 0'>Answers: {_e(answers.origin)}; ",
        f"{answers.num_samples} samples, {distinct} distinct" if answers.counted else f"{distinct} distinct",
    ]
    if result.seconds:
        took = f"{result.seconds:.1f} s" if result.seconds >= 0.05 else "under 0.1 s"
        parts.append(f"; sampled in {took}")
    parts.append(".</p>")
    if result.prompt is not None:
        shown = _e(result.prompt).replace("\t", "&#8677;").replace("\n", "<br>")
        parts.append(f"<details><summary>Prompt</summary><code>{shown}</code></details>")
    if not result.scored:
        parts.append(
            "<p><b>No scores:</b> there are no human answers to compare with for a typed question. "
            "Pick a question of the data set to see both metrics.</p>"
        )
    elif not answers.counted:
        parts.append(
            f"<p style='{_MUTED}'>These stored answers are a ranked list without sample counts: "
            "ProbEval counts each distinct answer once.</p>"
        )
    parts.append("</div>")
    return "".join(parts)


def clusters_html(result: DemoResult) -> str:
    """The human clusters, most popular first, with their counts and whether the model claimed them.

    The "claimed" column uses WordNet similarity and Max Answers@10, the paper's headline setting.

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> page = clusters_html(score_answers("protoqa", q, answers_from_samples(["cat"], "test")))
    >>> page.index("C1 dog") < page.index("C2 cat"), page.count("claimed</span>")
    (True, 1)
    """
    if not result.scored or result.question is None:
        return "<p class='human-clusters-empty'>No human clusters for a typed question.</p>"
    claimed = {c for c in result.protoqa.claims["wordnet"] if c is not None}
    total = sum(c.count for c in result.question.clusters) or 1
    rows = []
    for cluster in sorted(result.question.clusters, key=lambda c: -c.count):
        share = cluster.count / total
        bar = (
            f"<div style='background:{HUMAN_COLOR};height:10px;width:{max(share * 100, 1):.0f}%;"
            f"border-radius:2px' title='{share:.0%}'></div>"
        )
        answers = ", ".join(_e(a) for a in cluster.answers[:SHOWN_CLUSTER_ANSWERS])
        if len(cluster.answers) > SHOWN_CLUSTER_ANSWERS:
            answers += f" <span style='{_MUTED}'>+{len(cluster.answers) - SHOWN_CLUSTER_ANSWERS} more</span>"
        mark = (
            f"<span style='{_CLAIMED}'>claimed</span>" if cluster.id in claimed else f"<span style='{_MUTED}'>-</span>"
        )
        rows.append([f"<b>{_e(result.cluster_labels[cluster.id])}</b>", str(cluster.count), answers, mark, bar])
    # The answers come third so that a phone shows them without scrolling sideways (last,
    # they were off-screen and left tall, empty-looking rows); the share bar is last.
    header = [
        "Cluster",
        "People",
        "Answers in the cluster",
        "Claimed (WordNet, @10)",
        "<span style='display:inline-block;min-width:70px'>Share</span>",
    ]
    return f"<p style='margin:2px 0'>{total} people answered; their answers were grouped by hand.</p>" + _table(
        "human-clusters", header, rows, min_width=480
    )


def answers_html(result: DemoResult, limit: int = SHOWN_ANSWERS) -> str:
    """The model's ranked answers, with the cluster each one claimed under exact match and WordNet.

    Claims are those of Max Answers@10 (each cluster claimed once, by the best-placed
    answer); the last column is the cluster(s) ProbEval put the answer in.

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> "C1 dog</span>" in answers_html(score_answers("protoqa", q, answers_from_samples(["dog", "fish"], "test")))
    True
    """
    answers = result.answers
    ranked = list(answers.ranked)
    if not ranked:
        return "<p class='model-answers-empty'>The model gave no answer (every sample was empty).</p>"
    header = ["#", "Answer"] + (["Times sampled"] if answers.counted else [])
    if result.scored:
        header += [f"Claims ({SIMILARITY_LABELS.get(s, s)})" for s in result.protoqa.claims] + ["ProbEval cluster"]
    rows = []
    for rank, answer in enumerate(ranked[:limit], start=1):
        row = [str(rank), _answer_text(answer)]
        if answers.counted:
            row.append(str(answers.samples.get(answer, 0)))
        if result.scored:
            for similarity in result.protoqa.claims:
                claims = result.protoqa.claims[similarity]
                row.append(
                    _claim(result, claims[rank - 1])
                    if rank <= len(claims)
                    else f"<span style='{_MUTED}'>beyond @10</span>"
                )
            ids = result.probeval_clusters.get(normalize_prediction(answer), [])
            row.append(
                ", ".join(_e(result.cluster_labels.get(i, i)) for i in ids) or f"<span style='{_MUTED}'>-</span>"
            )
        rows.append(row)
    more = (
        f"<p style='{_MUTED}'>... and {len(ranked) - limit} more distinct answers.</p>" if len(ranked) > limit else ""
    )
    return _table("model-answers", header, rows, min_width=460 if result.scored else 0) + more


def scores_html(result: DemoResult) -> str:
    """ProtoQA's seven paper metrics under exact match and WordNet, named by their command-line ids
    (``max_answers@1``), as the leaderboard, its plot and ``protoqa-eval`` name them, and ProbEval's KL.

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> "<b>0.000</b>" in scores_html(score_answers("protoqa", q, answers_from_samples(["dog"] * 6, "test")))
    True
    """
    if not result.scored:
        return "<p class='protoqa-scores-empty'>No scores for a typed question.</p>"
    header = ["ProtoQA metric"] + [SIMILARITY_LABELS.get(s, s) for s in result.protoqa.scores]
    rows = [
        [metric.name] + [f"{result.protoqa.scores[s][metric.name]:.3f}" for s in result.protoqa.scores]
        for metric in PAPER_METRICS
    ]
    kl = result.probeval.kl
    return (
        "<p style='margin:2px 0'><b>ProtoQA</b> rewards popular and diverse answers: each cluster counts "
        "once, weighted by how many people gave it (1 = as good as the most popular answers; higher is better).</p>"
        + _table("protoqa-scores", header, rows)
        + "<p class='probeval-kl' style='margin:10px 0 2px 0;font-size:1.1em'><b>ProbEval</b> KL(P<sub>G</sub> || "
        f"P<sub>H</sub>) = <b>{kl:.3f}</b> <span style='{_MUTED}'>(lower is better; 0 = the model's answers "
        "spread over the clusters exactly like people's)</span></p>"
    )


def distribution_figure(result: DemoResult) -> Optional[Figure]:
    """Bar chart of the human (P_G) and model (P_H) distributions over the clusters and "wrong".

    None for a typed question. The figure is built without pyplot, so nothing global
    keeps it alive after the page has it.

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> figure = distribution_figure(score_answers("protoqa", q, answers_from_samples(["dog"], "test")))
    >>> [t.get_text() for t in figure.axes[0].get_xticklabels()]
    ['C1 dog', 'wrong']
    """
    if not result.scored:
        return None
    by_id = {c.id: c for c in result.probeval.clusters}
    order = list(result.cluster_labels) + ["wrong"]
    labels = [_short(result.cluster_labels.get(i, "wrong")) for i in order]
    p_g = [by_id[i].p_g for i in order]
    p_h = [by_id[i].p_h for i in order]
    figure = Figure(figsize=(max(6.0, 0.75 * len(order) + 2), 3.8), dpi=100, layout="constrained")
    axes = figure.subplots()
    positions = range(len(order))
    width = 0.4
    axes.bar([x - width / 2 for x in positions], p_g, width, label="people (P_G)", color=HUMAN_COLOR)
    axes.bar([x + width / 2 for x in positions], p_h, width, label="model (P_H)", color=MODEL_COLOR)
    axes.set_xticks(
        list(positions),
        labels,
        rotation=30 if len(order) > 6 else 0,
        ha="right" if len(order) > 6 else "center",
        fontsize=8,
    )
    axes.get_xticklabels()[-1].set_color(WRONG_COLOR)
    axes.set_ylabel("probability (smoothed)")
    kl = result.probeval.kl
    axes.set_title(f"ProbEval: KL(P_G || P_H) = {kl:.3f}" if math.isfinite(kl) else "ProbEval", fontsize=10)
    axes.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes.spines[["top", "right"]].set_visible(False)
    return figure


def _short(label: str, width: int = 16) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def signatures_markdown(result: DemoResult) -> str:
    """The reproducibility signatures (sampling, ProtoQA per similarity, ProbEval) as Markdown.

    >>> from demo_answers import answers_from_samples
    >>> from demo_scoring import score_answers
    >>> r = score_answers("protoqa", None, answers_from_samples(["x"], "t"), question_text="q",
    ...                   sampling_signature="model:gpt2|samples:1")
    >>> print(signatures_markdown(r))
    **Signatures**
    <BLANKLINE>
    - sampling: `model:gpt2|samples:1`
    """
    if not result.signatures:
        return ""
    lines = ["**Signatures**", ""]
    lines += [f"- {name}: `{signature}`" for name, signature in result.signatures.items()]
    return "\n".join(lines)
