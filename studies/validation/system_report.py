"""The system-level part of the study's report: ``validation.json``'s ``system_level`` and its markdown section.

Eight CFC test model systems ranked by each setting against the human clusters, ProbEval's automatic
default as it ships (chosen by the cluster-level study only), and every lever, an exploration chosen on
dev pools (:mod:`studies.validation.systems` measures them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from .report_text import ci_text, fmt

__all__ = ["system_level_table", "system_level_markdown"]


def _figures(result: Mapping[str, Any]) -> dict[str, Any]:
    test = result["test"]
    return {
        "setting": result["label"],
        "config": result["config"],
        "varies": result.get("varies"),
        "dev_criterion": result["dev"]["criterion"],
        "dev": result["dev"]["dev_sets"],
        "rho": test["rho"],
        "ci": test["ci"],
        "kendall": test["kendall"],
        "kendall_ci": test["kendall_ci"],
        "rho_with_oracle": test["rho_with_oracle"],
        "ci_with_oracle": test["ci_with_oracle"],
        "clusters_per_question": test["clusters_per_question"],
    }


def system_level_table(systems: Mapping[str, Any]) -> dict[str, Any]:
    """``validation.json``'s ``system_level``: every figure over the eight model systems, the nine-system
    (oracle) figures beside, the shipped automatic default (and what chose it), and every lever.

    >>> fig = {"rho": 0.5, "ci": None, "kendall": 0.4, "kendall_ci": None, "rho_with_oracle": 0.6,
    ...        "ci_with_oracle": None, "clusters_per_question": 5.0}
    >>> pick = {"label": "x", "config": {}, "dev": {"criterion": 0.9, "dev_sets": {}}, "test": fig}
    >>> t = system_level_table({"settings": {"s": {**fig, "label": "s"}}, "default": {**pick, "chosen_by": "c"},
    ...                         "levers": {"grid": pick}, "human_clusters_per_question": 6.0})
    >>> t["cfc_test"]["automatic_default"], t["cfc_test_with_oracle"]["s"]
    (0.5, 0.6)
    """
    default = systems["default"]
    cell: dict[str, Any] = {key: v["rho"] for key, v in systems["settings"].items()}
    cell["automatic_default"] = default["test"]["rho"]
    cell["ci"] = {key: v["ci"] for key, v in systems["settings"].items()}
    cell["ci"]["automatic_default"] = default["test"]["ci"]
    oracle: dict[str, Any] = {key: v["rho_with_oracle"] for key, v in systems["settings"].items()}
    oracle["automatic_default"] = default["test"]["rho_with_oracle"]
    oracle["ci"] = {key: v["ci_with_oracle"] for key, v in systems["settings"].items()}
    oracle["ci"]["automatic_default"] = default["test"]["ci_with_oracle"]
    return {
        "cfc_test": cell,
        "cfc_test_with_oracle": oracle,
        "automatic_default": _figures(default),
        "automatic_default_setting": default["label"],
        "automatic_default_config": default["config"],
        "automatic_default_chosen_by": default.get("chosen_by"),
        "levers": {name: _figures(r) for name, r in systems["levers"].items()},
        "human_clusters_per_question": systems["human_clusters_per_question"],
    }


def _closest(means: Sequence[float], models: Sequence[str], systems: Sequence[str]) -> float:
    """Smallest gap between two model systems' mean KLs.

    >>> _closest([0.5, 0.1, 0.35, 9.0], ["a", "b", "c"], ["a", "b", "c", "h"])
    0.15
    """
    values = sorted(means[systems.index(m)] for m in models)
    return round(min(b - a for a, b in pairwise(values)), 12)


def _protocol_lines(systems: Mapping[str, Any]) -> list[str]:
    """The section's title, what is measured on CFC test, and how every choice is made on dev."""
    pools = systems["dev_pools"]
    return [
        "## System level (CFC test: eight model systems, the human file as an oracle)",
        "",
        f"Spearman ρ and Kendall τ between each setting's KL (averaged over {systems['questions']} questions) and "
        "the human-cluster setting's (human clusters + WordNet) over the eight model systems: "
        + ", ".join(f"`{s}`" for s in systems["model_systems"])
        + ". The ninth file, `human`, holds the "
        "references' own raw answers: it ranks first under every setting, so the nine-system ρ is shown beside, "
        "labelled oracle. The eight model files hold distinct answers without sample counts, so each answer weighs "
        "1 and absolute KLs differ from the paper's Table 5; only rankings compare. Intervals: 95% bootstrap over "
        "test questions.",
        "",
        "**The automatic default is not chosen here.** It is ProbEval's automatic setting as it ships, chosen by "
        "one selection path only, the cluster-level study under `studies/validation/protocol.toml` "
        "(`python -m studies.validation clusters`, report `clusters.md`); this section measures it. Its clusters are "
        "made from each test question's raw answers and counts only, never from clusters a targets file carries.",
        "",
        "**Levers (an exploration: no pick becomes the default).** Each lever's choice is made on dev data only; no "
        "choice reads a CFC test file (a test checks it with an audit hook on every file opened). Each candidate "
        "scores "
        + ", ".join(
            f"{len(v['pools'])} system-like pools of {name.replace('_', ' ')} ({v['questions']} questions)"
            for name, v in pools.items()
        )
        + ": per question, seeded shares of the dev set's distinct model answers (CFC dev: GPT-2 XL one-shot "
        "samples; ProtoQA dev: the annotated GPT-2 samples), of its extra human answers and of other questions' "
        "answers (off-topic), each kept once with weight 1 as in the test files. The dev criterion is Spearman's ρ "
        "between the candidate's pool means and the human-cluster reference's, averaged over the two dev sets; ties "
        "go to the cluster count per question closest to the annotators' on dev. The cosine threshold of the grid "
        "comes from the matching study (ProtoQA dev). CFC test is read once, after every choice is fixed.",
        "",
    ]


def _default_lines(systems: Mapping[str, Any]) -> list[str]:
    """The automatic default's paragraph: what ships, what chose it, its test figures and how close the systems are."""
    default = systems["default"]
    dev = default.get("dev") or {}
    return [
        f"**Automatic default** (for raw answers without clusters; what ProbEval ships): `{default['label']}`, chosen "
        f"by `{default.get('chosen_by') or 'python -m studies.validation clusters'}`. On CFC test: ρ over the eight "
        f"models **{ci_text(default['test']['rho'], default['test']['ci'])}**, τ "
        f"{ci_text(default['test']['kendall'], default['test']['kendall_ci'])}; with the oracle (nine systems) "
        f"ρ {ci_text(default['test']['rho_with_oracle'], default['test']['ci_with_oracle'])}. Its figure on this "
        f"study's dev pools (not what chose it): {fmt(dev.get('criterion'))}. It makes "
        f"{fmt(default['test']['clusters_per_question'], 1)} clusters per test question; the annotators made "
        f"{fmt(systems['human_clusters_per_question'], 1)}. The closest two model systems differ by "
        f"{fmt(_closest(default['test']['system_means'], systems['model_systems'], systems['systems']), 4)} in "
        f"mean KL under the default and by "
        f"{fmt(_closest(systems['reference_system_means'], systems['model_systems'], systems['systems']), 4)} "
        "under the reference.",
        "",
    ]


def system_level_markdown(systems: Mapping[str, Any]) -> list[str]:
    """The report's system-level section: the protocol, the shipped default, every lever, the study's settings."""
    levers = systems["levers"]
    lines = [
        *_protocol_lines(systems),
        *_default_lines(systems),
        "Every lever, its choice made on dev first, then its test figure (all levers shown, whatever their figure; "
        "an exploration, not the default; `grid` is the best of the earlier grid by the dev pools alone):",
        "",
        "| lever | what it varies | choice (on dev) | dev criterion | CFC dev ρ / ProtoQA dev ρ "
        "| ρ, 8 models [95% CI] | τ, 8 models | ρ, 9 with oracle | clusters per test question |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in levers.items():
        dev_sets = r["dev"]["dev_sets"]
        t = r["test"]
        lines.append(
            f"| {name} | {r['varies']} ({r['candidates']} candidates) | `{r['label']}` | {fmt(r['dev']['criterion'])} "
            f"| {' / '.join(fmt(dev_sets[d]['spearman']) for d in dev_sets)} | {ci_text(t['rho'], t['ci'])} "
            f"| {ci_text(t['kendall'], t['kendall_ci'])} | {ci_text(t['rho_with_oracle'], t['ci_with_oracle'])} "
            f"| {fmt(t['clusters_per_question'], 1)} |"
        )
    ranked = sorted(systems["dev_candidates"].items(), key=lambda kv: (-kv[1]["criterion"], kv[1]["count_gap"]))
    lines += [
        "",
        f"How sharply dev separates the candidates (dev figures only; {len(ranked)} candidates): "
        + ", ".join(f"`{label}` {fmt(v['criterion'])}" for label, v in ranked[:8])
        + f"; median {fmt(float(np.median([v['criterion'] for _, v in ranked])))}.",
    ]
    if systems["settings"]:
        lines += [
            "",
            "The study's settings (parameters tuned on the dev sets):",
            "",
            "| setting | ρ, 8 models [95% CI] | τ, 8 models | ρ, 9 with oracle | clusters per question |",
            "|---|---:|---:|---:|---:|",
        ]
    for v in systems["settings"].values():
        lines.append(
            f"| `{v['label']}` | {ci_text(v['rho'], v['ci'])} | {ci_text(v['kendall'], v['kendall_ci'])} "
            f"| {ci_text(v['rho_with_oracle'], v['ci_with_oracle'])} "
            f"| {fmt(v['clusters_per_question'], 1)} |"
        )
    lines.append("")
    return lines
