"""Writing the study and the leaderboard: JSON, markdown and scatter plots.

Files (under the output folder, ``studies/reports/`` by default):

* ``validation.json``: ``{data set: {sampling: {"<clustering>+<matching>" or "protoqa_score":
  held-out mean Spearman, "ci": {key: {"low", "high"}}}}, "matching": {"protoqa_dev": {matcher:
  {"precision", "recall", "f1", "ci"}}}, "system_level": {"cfc_test": {setting: rho,
  "automatic_default": rho, "ci": {...}}}, "notes": {...}}`` (CFC dev: a sanity check only);
* ``validation_details.json``: the chosen parameters (overall and per fold), the tuning
  grid's results, held-out and in-sample correlations (per question, constant-score
  questions, dropped-variant and pooled figures with intervals), the matching and
  system-level studies in full, the set-size sensitivity, pool statistics and timings;
* ``validation.md``: the tables beside the paper's figures, the chosen parameters and why;
* ``validation_<data set>_<sampling>.png``: automatic vs gold KL of every answer set;
* ``leaderboard.json`` and ``leaderboard.md`` (:mod:`studies.validation.leaderboard_report`).

The system-level section and table come from :mod:`studies.validation.system_report`, the
shared figure formatting from :mod:`studies.validation.report_text`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .design import BASELINE, PAPER_FIGURES, default_parameters
from .report_text import DATASET_LABELS, SAMPLING_LABELS, ci_text, fmt, write_json
from .study import StudyResult
from .system_report import system_level_markdown, system_level_table

__all__ = [
    "write_study",
    "study_markdown",
    "plot_study",
    "best_automatic",
    "validation_table",
]


def best_automatic(table: Mapping[str, float]) -> Optional[tuple[str, float]]:
    """The fully automatic setting (not human clusters, not the baseline) with the highest correlation.

    >>> best_automatic({"human+wordnet": 0.8, "hac+wordnet": 0.6, "gmeans+gp": 0.7, "protoqa_score": 0.9})
    ('gmeans+gp', 0.7)
    """
    candidates = [
        (k, v)
        for k, v in table.items()
        if k != BASELINE and not k.startswith("human+") and v is not None and not math.isnan(v)
    ]
    return max(candidates, key=lambda kv: kv[1]) if candidates else None


def _corr_json(c: Any) -> dict[str, Any]:
    return {
        "mean": c.mean,
        "mean_dropped": c.mean_dropped,
        "pooled": c.pooled,
        "ci": dict(c.ci),
        "questions_with_constant_side": list(c.constant),
        "per_question": dict(c.per_question),
    }


def _details(
    result: StudyResult, matching: Optional[Mapping[str, Any]], systems: Optional[Mapping[str, Any]]
) -> dict[str, Any]:
    def block(correlations: Mapping[str, Any]) -> dict[str, Any]:
        return {
            ds: {
                sampling: {key: _corr_json(c) for key, c in by_key.items()} for sampling, by_key in by_sampling.items()
            }
            for ds, by_sampling in correlations.items()
        }

    return {
        "settings": result.settings,
        "chosen_parameters": result.chosen,
        "tuned": result.tuned,
        "current_defaults": default_parameters(),
        "tuning": result.tuning.as_dict() if result.tuning is not None else {},
        "paper": PAPER_FIGURES,
        "correlations_held_out": block(result.correlations),
        "correlations_in_sample": block(result.in_sample),
        "info": result.info,
        "matching": matching,
        "system_level": systems,
    }


def _setting_keys(result: StudyResult) -> list[str]:
    keys: list[str] = []
    for by_sampling in result.correlations.values():
        for by_key in by_sampling.values():
            keys.extend(k for k in by_key if k not in keys)
    return [k for k in keys if k != BASELINE] + [BASELINE]


def validation_table(
    result: StudyResult, matching: Optional[Mapping[str, Any]] = None, systems: Optional[Mapping[str, Any]] = None
) -> dict[str, Any]:
    """``validation.json``: the headline figures, each dict of figures with a ``"ci"`` dict beside it.

    ``{data set: {sampling: {key: rho, "ci": {key: {"low", "high"}}}}, "matching": {"protoqa_dev":
    {matcher: {"precision", "recall", "f1", "ci", ...}}}, "system_level": {"cfc_test": {setting: rho,
    "automatic_default": rho, "ci": {...}}, ...}, "notes": {...}}``. Correlations are held out (each
    question scored with parameters chosen without it), a constant-score question counting 0.
    """
    out: dict[str, Any] = {}
    for ds, by_sampling in result.correlations.items():
        out[ds] = {}
        for sampling, by_key in by_sampling.items():
            cell: dict[str, Any] = {key: c.mean for key, c in by_key.items()}
            cell["ci"] = {key: c.ci.get("mean") for key, c in by_key.items()}
            out[ds][sampling] = cell
    if matching is not None:
        rows = {}
        for name, r in matching["matchers"].items():
            w = r["weighted"]
            rows[name] = {
                "precision": w["precision"],
                "recall": w["recall"],
                "f1": w["f1"],
                "ci": w["ci"],
                "unweighted": r["unweighted"],
                "threshold": r["threshold"],
                "questions": r["questions_covered"],
            }
        out["matching"] = {"protoqa_dev": rows, "paper_table4": matching["paper_table4"]}
    if systems is not None:
        out["system_level"] = system_level_table(systems)
    out["notes"] = {
        "protoqa_dev": "agreement with the gold KL on ProtoQA dev GPT-2 samples (answer sets by the authors' "
        "procedure); held-out parameters; constant-score questions count 0",
        "cfc_dev": "SANITY CHECK ONLY: the CFC dev annotated pool is the ground truth relabelled, so matching it "
        "to the human clusters is near-tautological; not comparable with the paper's CFC figure",
        "system_level": "Spearman over the eight CFC test model systems against ProbEval with the human clusters "
        "(cfc_test; the nine-system figure with the references' own human answers as an oracle in "
        "cfc_test_with_oracle); the automatic default as ProbEval ships it (chosen only by python -m studies.validation "
        "clusters), and levers explored on dev pools only, none of them the default",
    }
    return out


def _label(key: str) -> str:
    return "ProtoQA score (1 − Max Answers@10, WordNet)" if key == BASELINE else f"`{key}`"


def _reproduction(
    info: Mapping[str, Any],
    matching: Optional[Mapping[str, Any]],
    systems: Optional[Mapping[str, Any]],
    seconds: Optional[float],
) -> list[str]:
    """Which command reproduces what, with the times this run measured."""
    if not seconds:
        return []
    timings = info.get("timings_s", {})
    parts = [f"{name} {value:.0f} s" for name, value in timings.items() if name != "total"]
    load = os.getloadavg()[2] if hasattr(os, "getloadavg") else None
    lines = [
        "Which command reproduces what (times measured in this run, on a shared 2-core machine"
        + (
            f", 15-minute load average {load:.1f} when it ended (the study itself keeps about two cores busy; "
            "other work on the machine slows every step in proportion)"
            if load is not None
            else ""
        )
        + "; the two processes of `--jobs 2` overlap, so the parts add up to more than the whole):",
        "",
        f"- `python -m studies.validation study`: **every figure of this report** (`validation.json`, "
        f"`validation_details.json`, this file and the plots) from the raw data, nothing cached: "
        f"**{seconds:.0f} s** in all. The headline (ProtoQA dev centered row with intervals, matching validity, "
        "system level) needs the whole tuning (every sampling of both dev sets), so it is not cheaper on its "
        "own; the error types, the CFC dev sanity check and the set-size sensitivity come with it.",
        f"  - agreement study (main process): {timings.get('total', 0):.0f} s ({', '.join(parts)});",
    ]
    if matching is not None:
        lines.append(
            "  - matching validity (second process): "
            + ", ".join(f"{name} {r['seconds']:.0f} s" for name, r in matching["matchers"].items())
            + ";"
        )
    if systems is not None:
        lines.append(f"  - system level (second process, after the matching study): {systems['seconds']:.0f} s.")
    lines += [
        "- `python -m studies.validation all`: the same, then the leaderboard (`leaderboard.{json,md}`).",
        "- `--jobs 1` runs everything in one process, with the same figures.",
        "",
    ]
    return lines


def study_markdown(
    result: StudyResult,
    command: str = "python -m studies.validation all",
    plots: Sequence[str] = (),
    matching: Optional[Mapping[str, Any]] = None,
    systems: Optional[Mapping[str, Any]] = None,
    seconds: Optional[float] = None,
) -> str:
    """``validation.md``: the headline figures with intervals, what they can and cannot show, and how.

    >>> print(study_markdown(run_study("../shared/data", num_questions=2, num_sets=5)))  # doctest: +SKIP
    """
    keys = _setting_keys(result)
    pools = result.info.get("pools", {})
    lines = _intro_lines(result, command, matching, systems, seconds)
    lines += _headline_lines(result, keys, pools)
    lines += _matching_lines(matching)
    if systems is not None:
        lines += system_level_markdown(systems)
    lines += _cfc_dev_lines(result, keys, pools)
    lines += _parameter_lines(result, matching)
    lines += _pool_lines(pools, plots)
    return "\n".join(lines) + "\n"


def _intro_lines(
    result: StudyResult,
    command: str,
    matching: Optional[Mapping[str, Any]],
    systems: Optional[Mapping[str, Any]],
    seconds: Optional[float],
) -> list[str]:
    """The title, how to regenerate the report, the run's parameters and what the study can and cannot show."""
    info = result.info
    lines = [
        "# ProbEval validation: agreement with human judgment",
        "",
        f"Regenerate with `{command}` (from the repository root; data from `../shared/data`, `--data-dir` or "
        "`$PROTOQA_DATA_DIR`). Code: `studies/validation/` (`sampling.py` draws the answer sets, "
        "`study.py` scores them, `matching_study.py` checks the matchers, `systems.py` the system level, "
        "`selection.py` the dev pools the levers are chosen on; the automatic default is chosen by "
        "`python -m studies.validation clusters` only).",
        "",
        *_reproduction(info, matching, systems, seconds),
        f"{info['num_sets']} answer sets per question and sampling, seed {info['seed']}, embedder "
        f"`{info['embedder']}`, {info['folds']}-fold cross-validation over questions, 95% bootstrap intervals "
        f"over questions ({info['resamples']} resamples, seeded)"
        + (f", first {info['num_questions']} questions per data set" if info.get("num_questions") else "")
        + ".",
        "",
        "## What this study can and cannot show",
        "",
        "- It **can** show whether, on ProtoQA dev, ProbEval's automatic settings order answer sets of one "
        "question the way the gold procedure (human clusters, the annotators' matching) does, how well each "
        "matcher reproduces the annotators' assignments, and whether an automatic setting chosen on dev "
        "data ranks eight real model systems on CFC test as the human clusters do.",
        "- It **cannot** show that agreement on synthetic answer sets carries over to real models: every "
        "category's strings are drawn in their pool proportions, so splitting a human cluster costs almost "
        "nothing here, while it costs a real model that gives only one string of the cluster. The system-level "
        "check covers that, but with eight model systems: one swapped pair moves ρ by about 0.02 to 0.05, and "
        "its intervals are wide. Its dev criterion rests on system-like pools built from dev answers, not on "
        "real dev systems (CFC dev has one model's samples, ProtoQA dev one), so it can only be as good a "
        "guide as those pools are like real systems.",
        "- The CFC dev figures are a **sanity check only**: its annotated pool is the ground truth relabelled "
        "(no annotated CFC model pool is public), so matching it to the human clusters is near-tautological. "
        "They are not agreement figures and are never compared with the paper's.",
        "- Answer sets come from the annotators' own pool, so the study also cannot show how ProbEval behaves on "
        "answers unlike GPT-2's.",
        "",
    ]
    return lines


def _headline_lines(result: StudyResult, keys: Sequence[str], pools: Mapping[str, Any]) -> list[str]:
    """The headline (ProtoQA dev, centered) with the set-size sensitivity, then the error types."""
    info = result.info
    lines: list[str] = []
    pq = result.correlations.get("protoqa_dev", {})
    sizes = pools.get("protoqa_dev", {}).get("set_sizes", {})
    if "centered" in pq:
        med = sizes.get("centered", {}).get("median")
        lines += [
            "## Headline: ProtoQA dev, centered sampling",
            "",
            f"Answer sets drawn as the authors' code draws them (50 stratified ground-truth answers added to the "
            f"pool, sizes scaled to the pool, without replacement: median {fmt(med, 0)} answers per set). ρ is the "
            "per-question Spearman correlation with the gold KL, averaged over questions, a question whose score "
            "is constant counting 0 (the authors' way); parameters held out (each question scored with parameters "
            "chosen without it). The paper's figures use different sets drawn the same way.",
            "",
            "| setting | ρ [95% CI] | paper | ρ, constant questions dropped | pooled ρ over all sets [95% CI] |",
            "|---|---:|---:|---:|---:|",
        ]
        for key in keys:
            c = pq["centered"].get(key)
            if c is None:
                continue
            paper = PAPER_FIGURES["protoqa_dev"].get(key)
            lines.append(
                f"| {_label(key)} | {ci_text(c.mean, c.ci.get('mean'))} | "
                f"{fmt(paper) if paper is not None else ''} | "
                f"{ci_text(c.mean_dropped, c.ci.get('mean_dropped'))} | {ci_text(c.pooled, c.ci.get('pooled'))} |"
            )
        sens = info.get("set_size_sensitivity", {}).get("protoqa_dev", {})
        if sens:
            lines += [
                "",
                "Sensitivity (not headline): the earlier procedure, sets as large as the whole annotated "
                'pool or of a fixed size, drawn with replacement, "wrong" fixed at 0 in the error types, '
                "no stratified answers.",
                "",
                "| procedure | median set size | `human+wordnet` ρ [95% CI] | ProtoQA score ρ [95% CI] |",
                "|---|---:|---:|---:|",
            ]
            for size, row in sens.items():
                name = "pool-sized sets" if size == "pool" else f"sets of {size}"
                lines.append(
                    f"| {name} | {fmt(row['median_set_size'], 0)} | "
                    f"{ci_text(row['human+wordnet']['mean'], row['human+wordnet']['ci'])} | "
                    f"{ci_text(row[BASELINE]['mean'], row[BASELINE]['ci'])} |"
                )
        lines.append("")
        lines += [
            "### Error types (ProtoQA dev, held out)",
            "",
            "| setting | " + " | ".join(SAMPLING_LABELS[s] for s in pq) + " |",
            "|---|" + "---:|" * len(pq),
        ]
        for key in keys:
            lines.append(
                f"| {_label(key)} | "
                + " | ".join(ci_text(pq[s][key].mean, pq[s][key].ci.get("mean")) if key in pq[s] else "n/a" for s in pq)
                + " |"
            )
        lines += [
            "",
            "Set sizes (median) per sampling: "
            + ", ".join(f"{SAMPLING_LABELS[s]} {fmt(v['median'], 0)}" for s, v in sizes.items())
            + ". Overlapping intervals "
            "mean the settings cannot be told apart on these 52 questions.",
            "",
        ]
    return lines


def _matching_lines(matching: Optional[Mapping[str, Any]]) -> list[str]:
    """Every matcher against the annotators' assignments, beside the ProtoQA paper's Table 4."""
    lines: list[str] = []
    if matching is not None:
        lines += [
            "## Matching validity (ProtoQA dev GPT-2 samples, the later ProtoQA paper's Table 4 design)",
            "",
            f"{matching['answers']} distinct annotated answers ({matching['answer_instances']} with repetition) of "
            f"{matching['questions']} questions, each matched to the human clusters and compared with the "
            "annotators' assignment. Precision = correct / assigned to some cluster, recall = correct / put in "
            "some cluster by the annotators (an answer given to m clusters counts 1/m each). Thresholds chosen by "
            "count-weighted F1 with cross-validation over questions; the figures are held out.",
            "",
            "| matcher | threshold | precision [95% CI] | recall [95% CI] | F1 [95% CI] | unweighted P / R / F1 |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, r in matching["matchers"].items():
            w, u = r["weighted"], r["unweighted"]
            cover = (
                ""
                if r["questions_covered"] == matching["questions"]
                else f" (first {r['questions_covered']} questions: time-bounded)"
            )
            lines.append(
                f"| `{name}`{cover} | {fmt(r['threshold'], 2) if r['threshold'] is not None else '—'} | "
                + " | ".join(ci_text(w[k], w["ci"][k]) for k in ("precision", "recall", "f1"))
                + f" | {fmt(u['precision'])} / {fmt(u['recall'])} / {fmt(u['f1'])} |"
            )
        lines += [
            "",
            "The ProtoQA paper's Table 4 (in a later version than the EMNLP 2020 one; its own annotations of other "
            "answers, so not the same data): "
            + "; ".join(
                f"{k} {v['precision']:.3f} / {v['recall']:.3f} / {v['f1']:.3f}"
                for k, v in matching["paper_table4"].items()
            )
            + ".",
            "",
        ]
    return lines


def _cfc_dev_lines(result: StudyResult, keys: Sequence[str], pools: Mapping[str, Any]) -> list[str]:
    """The CFC dev sanity check (its annotated pool is the ground truth relabelled)."""
    lines: list[str] = []
    cfc = result.correlations.get("cfc_dev", {})
    if cfc:
        gt = pools.get("cfc_dev", {}).get("annotations_are_ground_truth", 0)
        lines += [
            "## CFC dev: sanity check only (not an agreement figure)",
            "",
            f"For {gt} of {pools.get('cfc_dev', {}).get('questions', 0)} questions the annotated CFC dev answers "
            '("wrong" aside) are exactly the ground-truth answers with their counts, and the only "wrong" answer is '
            'the placeholder string "wrong". Matching them to the human clusters is near-tautological, so these '
            "figures only check that the pipeline runs end to end on a second data set; they say nothing about "
            "agreement with human judgment and are not comparable with the paper's CFC figures.",
            "",
            "| setting | " + " | ".join(SAMPLING_LABELS[s] for s in cfc) + " |",
            "|---|" + "---:|" * len(cfc),
        ]
        for key in keys:
            lines.append(
                f"| {_label(key)} | "
                + " | ".join(
                    ci_text(cfc[s][key].mean, cfc[s][key].ci.get("mean")) if key in cfc[s] else "n/a" for s in cfc
                )
                + " |"
            )
        lines.append("")
    return lines


def _parameter_lines(result: StudyResult, matching: Optional[Mapping[str, Any]]) -> list[str]:
    """The chosen parameters (overall, per fold, untuned) and the deviations from the authors' procedure."""
    info = result.info
    lines = [
        "## Parameters and how they were chosen",
        "",
        "| parameter | chosen on all questions | per fold | untuned value (ProbEval default) |",
        "|---|---:|---|---:|",
    ]
    current = default_parameters()
    folds = info.get("fold_parameters", {})
    for name, value in result.chosen.items():
        per = sorted({str(p.get(name)) for p in folds.values()}) if folds else []
        if name in ("cosine_threshold", "gp_threshold") and matching is not None:
            m = matching["matchers"].get(name.split("_")[0])
            per = sorted({str(t) for t in m["fold_thresholds"].values()}) if m and "fold_thresholds" in m else per
        lines.append(f"| `{name}` | **{value}** | {', '.join(per)} | {current.get(name)} |")
    lines += [
        "",
        "Clustering parameters: the grid value with the highest correlation averaged over the four samplings and "
        "both dev sets (a constant-score question counting 0), chosen per fold on the other folds' questions. "
        "Cosine and GP thresholds: matching F1 against the annotators on ProtoQA dev, per fold likewise (CFC dev "
        "questions use the threshold chosen on all ProtoQA dev questions, which never saw them).",
        "",
        "## Deviations from the authors' procedure",
        "",
        "- Reproduced: 50 stratified ground-truth answers in each pool; Laplace-smoothed P_model and P_gold; "
        '"wrong" perturbed like any category in the error types; set sizes scaled to the scarcest category '
        "and drawn without replacement; constant-score questions counted as 0.",
        "- Not reproduced: the authors' loop raising the scaling ratio until rounded counts keep the intended "
        "ranking (wrong ranking, wrong score), because it changes set sizes depending on the draw; and the "
        "authors score the ProtoQA baseline on each setting's own clusters, while this study scores it on the "
        "human clusters (one baseline row, comparable across settings).",
        "- Seeds: the authors' code draws from unseeded global generators; here every draw is seeded per "
        "question and sampling.",
        "",
        "## Answer pools",
        "",
    ]
    return lines


def _pool_lines(pools: Mapping[str, Any], plots: Sequence[str]) -> list[str]:
    """How each data set's answer pools were built, and the scatter plots' files."""
    lines: list[str] = []
    for ds, p in pools.items():
        lines.append(
            f"- **{DATASET_LABELS.get(ds, ds)}**: {p['questions']} questions, {p['clusters']} clusters; "
            f"{p.get('stratified_answers', 0)} stratified ground-truth answers added per question; mean "
            f"P_model(wrong) {fmt(p['mean_p_model_wrong'])}; set sizes "
            + ", ".join(
                f"{SAMPLING_LABELS[s]} {v['min']}–{v['max']} (median {fmt(v['median'], 0)})"
                for s, v in p.get("set_sizes", {}).items()
            )
            + "."
        )
    if plots:
        lines += ["", "Scatter plots: " + ", ".join(f"`{Path(x).name}`" for x in plots) + "."]
    return lines


def plot_study(result: StudyResult, out_dir: Path) -> list[Path]:
    """One PNG per data set and sampling: every setting's KL (and the baseline) against the gold KL.

    >>> plot_study(run_study("../shared/data", num_questions=2, num_sets=5), Path("/tmp"))  # doctest: +SKIP
    [PosixPath('/tmp/validation_protoqa_dev_centered.png'), ...]
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for ds, by_sampling in result.scores.items():
        for sampling, by_key in by_sampling.items():
            gold = by_key["gold"]
            keys = [k for k in by_key if k != "gold"]
            keys = [k for k in keys if k != BASELINE] + [BASELINE]
            cols = 4
            rows = math.ceil(len(keys) / cols)
            fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.4 * rows), squeeze=False)
            colours = plt.get_cmap("tab20")
            for ax, key in zip(axes.flat, keys, strict=False):
                for i, (qid, values) in enumerate(by_key[key].items()):
                    ax.scatter(gold[qid], values, s=4, alpha=0.5, color=colours(i % 20), linewidths=0)
                rho = result.correlations[ds][sampling][key].mean
                title = "ProtoQA score (1 − MA@10)" if key == BASELINE else key
                ax.set_title(f"{title}: ρ = {fmt(rho)}", fontsize=10)
                ax.set_xlabel("gold KL", fontsize=8)
                ax.set_ylabel("1 − Max Answers@10" if key == BASELINE else "automatic KL", fontsize=8)
                ax.tick_params(labelsize=7)
            for ax in list(axes.flat)[len(keys) :]:
                ax.axis("off")
            fig.suptitle(
                f"{DATASET_LABELS.get(ds, ds)}, {SAMPLING_LABELS.get(sampling, sampling)} sampling: "
                "automatic score vs gold KL per answer set (mean per-question Spearman ρ)",
                fontsize=12,
            )
            fig.tight_layout(rect=(0, 0, 1, 0.96))
            path = out_dir / f"validation_{ds}_{sampling}.png"
            fig.savefig(path, dpi=90)
            plt.close(fig)
            paths.append(path)
    return paths


def write_study(
    result: StudyResult,
    out_dir: Path,
    *,
    command: str = "python -m studies.validation all",
    plots: bool = True,
    matching: Optional[Mapping[str, Any]] = None,
    systems: Optional[Mapping[str, Any]] = None,
    seconds: Optional[float] = None,
) -> list[Path]:
    """Write ``validation.json``, ``validation_details.json``, ``validation.md`` and the plots; returns the paths.

    >>> write_study(run_study("../shared/data"), Path("studies/reports"))  # doctest: +SKIP
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pngs = plot_study(result, out_dir) if plots else []
    written = [out_dir / "validation.json", out_dir / "validation_details.json", out_dir / "validation.md"]
    write_json(written[0], validation_table(result, matching, systems))
    write_json(written[1], _details(result, matching, systems))
    written[2].write_text(
        study_markdown(result, command, [str(p) for p in pngs], matching, systems, seconds), encoding="utf-8"
    )
    return written + pngs
