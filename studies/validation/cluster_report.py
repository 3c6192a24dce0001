"""``studies/reports/clusters.{json,md}`` and the marked cluster-level claims of the documents.

Each document marks its cluster-level claims with ``<!-- clusters:NAME -->`` ...
``<!-- /clusters:NAME -->``; ``python -m studies.validation clusters`` rewrites what lies
between from the study's ``clusters.json`` (:func:`write_cluster_claims`), so the
documents say what the last run measured. ``headline`` is a paragraph; ``trust`` is the
rows of the README's table (part | criterion | figure | best control | difference).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

from .claims import rewrite_claim_files

__all__ = [
    "CLUSTER_CLAIM_FILES",
    "cluster_markdown",
    "cluster_claims",
    "write_cluster_study",
    "write_cluster_claims",
]

ROOT = Path(__file__).resolve().parents[2]
#: The documents whose marked cluster-level claims are rewritten, relative to the checkout.
CLUSTER_CLAIM_FILES = ("README.md", "docs/validation.md", "docs/probeval.md", "cfc_probeval/README.md")
COMMAND = "python -m studies.validation clusters"
_NAMES = {"blanc": "BLANC", "ari": "ARI", "v_measure": "V-measure"}
_CRITERIA = {
    "blanc": "cluster BLANC",
    "answer_sets": "answer-set ρ (Table 2)",
    "pools": "system-like pools ρ",
    "panel": "system panel ρ",
    "wording": "wording panel ρ",
    "stability": "stability ARI",
}
#: The string-KL controls: each (normalized) string its own cluster.
_STRING_CONTROLS = ("normalized_strings", "one_per_string")
_SETS = {"cfc_dev": "CFC dev", "protoqa_dev": "ProtoQA dev", "cfc_test": "CFC test"}


def _f(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _signed(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _iv(ci: Optional[Mapping[str, float]], signed: bool = False) -> str:
    if not ci:
        return ""
    show = _signed if signed else _f
    return f" [{show(ci['low'])}, {show(ci['high'])}]"


def _diff(d: Optional[Mapping[str, Any]]) -> str:
    """A paired difference as ``+0.012 [-0.003, +0.027]``."""
    if not d:
        return "n/a"
    return _signed(d.get("diff", d.get("mean"))) + _iv(d.get("ci"), signed=True)


def _clean(value: Any) -> Any:
    """JSON-ready: NaN and infinities become None."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _criterion_name(key: str) -> str:
    name, dev_set = key.split(":")
    return f"{_CRITERIA.get(name, name)}, {_SETS.get(dev_set, dev_set)}"


def _best_control(entry: Mapping[str, Any], controls: Sequence[str]) -> str:
    return max(controls, key=lambda c: (entry["figures"][c]["value"], -controls.index(c)))


def _controls(result: Mapping[str, Any]) -> list[str]:
    """The controls' labels, in the protocol's simplicity order."""
    return list(next(iter(result["dev"]["control_shares"].values())))


def _criteria_list(keys: Sequence[str]) -> str:
    """Criterion keys as words, grouped by criterion: ``answer-set ρ (Table 2) on CFC dev and ProtoQA dev``."""
    by_name: dict[str, list[str]] = {}
    for key in keys:
        name, dev_set = key.split(":")
        by_name.setdefault(name, []).append(_SETS.get(dev_set, dev_set))
    return "; ".join(f"{_CRITERIA.get(n, n)} on {' and '.join(sets)}" for n, sets in by_name.items())


def _control_sentence(result: Mapping[str, Any]) -> str:
    """One sentence: does any clustering beat every control under the rule, and what ships then?"""
    dev = result["dev"]
    chosen = dev["chosen"]
    if chosen != dev["chosen_clustering"]:
        return (
            f"No clustering beats the control `{chosen}`, which is as good on every dev criterion, so it ships as the "
            "simplest option."
        )
    beating = dev.get("clusterings_beating_every_control", [])
    against = dev["chosen_clustering_against_controls"]
    if chosen in beating:
        return (
            f"`{chosen}` beats every control: non-inferior to each on every dev criterion and better on at least one."
        )
    lose = sorted({k for v in against.values() for k in v["inferior_on"]})
    shortfalls = [set(v["inferior_on"]) for v in dev["controls_against_chosen_clustering"].values()]
    win = sorted(set.intersection(*shortfalls)) if shortfalls else []
    who = (
        "no clustering of the grid beats every control"
        if not beating
        else f"only {', '.join(beating)} beats every control"
    )
    return (
        f"Under the rule {who}: `{chosen}` is not non-inferior to some control on {_criteria_list(lose)}; but no "
        f"control is as good as it (every control falls short on {_criteria_list(win) or 'at least one criterion'}), "
        f"so no simpler option is as good and `{chosen}` stays."
    )


def trust_rows(result: Mapping[str, Any]) -> list[str]:
    """The README table's rows for ProbEval's automatic clustering: each dev criterion and CFC test's two figures.

    >>> fig = lambda v: {"value": v, "ci": {"low": v - 0.01, "high": v + 0.01}}
    >>> d = {"diff": 0.1, "ci": {"low": 0.05, "high": 0.15}}
    >>> r = {"dev": {"chosen": "g", "chosen_clustering": "g", "old": "o", "current": "g",
    ...      "chosen_clustering_against_controls": {"one_cluster": {}}, "control_shares": {"blanc:cfc_dev":
    ...      {"one_cluster": 0.86}},
    ...      "criteria": {"blanc:cfc_dev": {"figures": {"g": fig(0.7), "one_cluster": fig(0.6)},
    ...                                      "chosen_minus_controls": {"one_cluster": d}}}},
    ...      "cfc_test": {"new": "g", "candidates": {"g": {"blanc": {"mean": 0.5, "ci": None}},
    ...                   "one_cluster": {"blanc": {"mean": 0.3, "ci": None}}},
    ...                   "new_minus": {"one_cluster": {"blanc": d}},
    ...                   "system_level": {"figures": {"g": {"rho": 0.9, "ci": None},
    ...                                    "one_cluster": {"rho": 0.95, "ci": None}},
    ...                                    "new_minus": {"one_cluster": d}}}}
    >>> trust_rows(r)[0]
    '| ProbEval automatic clustering `g` (dev) | cluster BLANC, CFC dev | 0.700 [0.690, 0.710] | one_cluster 0.600 | +0.100 [+0.050, +0.150] |'
    """
    dev, test = result["dev"], result["cfc_test"]
    chosen = dev["chosen"]
    controls = [c for c in _controls(result) if c != chosen]
    part = f"ProbEval automatic clustering `{chosen}`"
    rows = []
    for key, entry in dev["criteria"].items():
        best = _best_control(entry, controls)
        fig = entry["figures"][chosen]
        rows.append(
            f"| {part} (dev) | {_criterion_name(key)} | {_f(fig['value'])}{_iv(fig['ci'])} | "
            f"{best} {_f(entry['figures'][best]['value'])} | {_diff(entry['chosen_minus_controls'][best])} |"
        )
    new = test["new"]
    blanc = test["candidates"]
    best = max(controls, key=lambda c: blanc[c]["blanc"]["mean"])
    rows.append(
        f"| {part} (CFC test, after the choice; its reference is inconsistent) | cluster BLANC | "
        f"{_f(blanc[new]['blanc']['mean'])}{_iv(blanc[new]['blanc']['ci'])} | {best} {_f(blanc[best]['blanc']['mean'])} | "
        f"{_diff(test['new_minus'][best]['blanc'])} |"
    )
    sysl = test["system_level"]
    best = max(controls, key=lambda c: sysl["figures"][c]["rho"])
    rows.append(
        f"| {part} (CFC test, after the choice) | ρ over the eight GPT-2 systems | {_f(sysl['figures'][new]['rho'])}"
        f"{_iv(sysl['figures'][new]['ci'])} | {best} {_f(sysl['figures'][best]['rho'])} | "
        f"{_diff(sysl['new_minus'][best])} |"
    )
    return rows


def cluster_claims(result: Mapping[str, Any]) -> dict[str, str]:
    """Claim name -> its text, from ``clusters.json``: ``headline`` (a paragraph) and ``trust`` (table rows)."""
    dev, test = result["dev"], result["cfc_test"]
    chosen, old = dev["chosen"], dev["old"]
    sysl = test["system_level"]
    panel = [dev["criteria"][k] for k in dev["criteria"] if k.startswith("panel:")]
    detect = ", ".join(
        f"{_SETS[p['dev_set']]} {_f(p['detectable_difference']['median'])}"
        for p in panel
        if p.get("detectable_difference")
    )
    kept = "stays" if chosen == dev["current"] else f"replaces `{dev['current']}`"
    parts = [
        f"ProbEval's automatic clustering of raw answers is `{chosen}`: under the committed protocol "
        f"(version {result['protocol']['version']}, {result['protocol']['fixed']}) it {kept}, since no candidate "
        "or control is non-inferior to it on every dev criterion and better on one. ",
        _control_sentence(result) + " ",
    ]
    if old in sysl["figures"] and old != chosen:
        t_old = sysl["new_minus"][old]
        parts.append(
            f"On CFC test, read after the choice, it ranks the eight GPT-2 systems with Spearman ρ "
            f"{_f(sysl['figures'][chosen]['rho'])}{_iv(sysl['figures'][chosen]['ci'])} against the earlier "
            f"`{old}`'s {_f(sysl['figures'][old]['rho'])} (new − old {_diff(t_old)}); cluster BLANC "
            f"{_f(test['candidates'][chosen]['blanc']['mean'])} against {_f(test['candidates'][old]['blanc']['mean'])} "
            f"(new − old {_diff(test['new_minus'][old]['blanc'])}). "
        )
    best = max(_controls(result), key=lambda c: sysl["figures"][c]["rho"])
    parts.append(
        f"Its best control there, {best}, scores {_f(sysl['figures'][best]['rho'])} (new − {best} "
        f"{_diff(sysl['new_minus'][best])}). "
    )
    if old != chosen:
        panel_old = "; ".join(
            f"{_SETS[p['dev_set']]} {_diff(p['chosen_minus_old'])}" for p in panel if p.get("chosen_minus_old")
        )
        test_ci = sysl["new_minus"][old]["ci"]
        panel_low = [p["chosen_minus_old"]["ci"]["low"] for p in panel if p.get("chosen_minus_old")]
        panel_high = [p["chosen_minus_old"]["ci"]["high"] for p in panel if p.get("chosen_minus_old")]
        disagree = (test_ci["high"] < 0 and bool(panel_low) and min(panel_low) > 0) or (
            test_ci["low"] > 0 and bool(panel_high) and max(panel_high) < 0
        )
        parts.append(
            f"On the dev system panel new − old is {panel_old}"
            + (
                ": the panel and the eight test systems disagree, so on this comparison the panel, built from "
                "annotated pool answers with counts, cannot stand in for the test's model answers (distinct "
                "strings without counts). "
                if disagree
                else ". "
            )
        )
    parts.append(_wording_sentence(result))
    parts.append(
        f"The dev system panel ({panel[0]['systems'] if panel else 0} systems whose order is known by construction) "
        f"detects a difference of ρ of about {detect} (80% power){_test_detectable(result)}. "
        f"{_consistency_sentence(result)} Regenerate with `{COMMAND}`; "
        "every figure beside its controls in `studies/reports/clusters.md`."
    )
    header = [
        "| part | criterion | figure | best control | difference |",
        "|---|---|---|---|---|",
    ]
    # The table sits between its markers on lines of its own, so that Markdown renders it.
    return {"headline": "".join(parts).strip(), "trust": "\n" + "\n".join(header + trust_rows(result)) + "\n"}


def _wording_sentence(result: Mapping[str, Any]) -> str:
    """The chosen clustering minus the string-KL control on the wording panel, per dev set (``""`` before version 3).

    >>> d = {"diff": 0.3, "ci": {"low": 0.2, "high": 0.4}}
    >>> _wording_sentence({"dev": {"chosen": "g", "criteria": {"wording:cfc_dev": {"name": "wording",
    ...     "dev_set": "cfc_dev", "figures": {"g": {"value": 0.9}, "normalized_strings": {"value": 0.6}},
    ...     "chosen_minus_controls": {"normalized_strings": d}}}}})[:72]
    'On the wording panel (systems ranked only by grouping strings that mean '
    """
    dev = result["dev"]
    chosen = dev["chosen"]
    wording = [e for e in dev["criteria"].values() if e["name"] == "wording"]
    control = _STRING_CONTROLS[0]
    cells = [
        f"{_SETS[e['dev_set']]} ρ {_f(e['figures'][chosen]['value'])} against {_f(e['figures'][control]['value'])}, "
        f"difference {_diff(e['chosen_minus_controls'][control])}"
        for e in wording
        if control in e["chosen_minus_controls"]
    ]
    if not cells:
        return ""
    return (
        "On the wording panel (systems ranked only by grouping strings that mean the same thing), "
        f"`{chosen}` minus the string KL ({control}): " + "; ".join(cells) + ". "
    )


def _test_detectable(result: Mapping[str, Any]) -> str:
    """``; the eight CFC test systems, about 0.25`` (median over the test comparisons), or ``""``."""
    sysl = result["cfc_test"]["system_level"]
    found = sorted(d["detectable"] for d in sysl["new_minus"].values() if d.get("detectable") is not None)
    if not found:
        return ""
    median = found[len(found) // 2] if len(found) % 2 else (found[len(found) // 2 - 1] + found[len(found) // 2]) / 2
    return f"; the {len(sysl['systems'])} CFC test systems, about {_f(median)}"


def _consistency_sentence(result: Mapping[str, Any]) -> str:
    """How often each reference splits groups of several normalization-equal strings across its clusters."""
    rows = [(n, s["consistency"]) for n, s in result["dev"]["clusters"].items()]
    test = result["cfc_test"]["consistency"]

    def part(c: Mapping[str, Any]) -> str:
        return f"{c.get('multi_string_groups_split', 'n/a')} of {c.get('multi_string_groups', 'n/a')}"

    dev = ", ".join(f"{_SETS.get(n, n)} {part(c)}" for n, c in rows)
    return (
        f"CFC test's annotators split {part(test)} groups of several normalization-equal strings across clusters "
        f"({dev}), so its cluster-level figures are read with that caveat and no goal is set on them."
    )


def write_cluster_claims(clusters_json: Union[str, Path], files: Sequence[Union[str, Path]] = ()) -> list[Path]:
    """Rewrite the marked claims of ``files`` (default :data:`CLUSTER_CLAIM_FILES`); returns those that changed."""
    claims = cluster_claims(json.loads(Path(clusters_json).read_text(encoding="utf-8")))
    return rewrite_claim_files(files or [ROOT / f for f in CLUSTER_CLAIM_FILES], claims, marker="clusters")


def cluster_markdown(result: Mapping[str, Any]) -> str:
    """The report page of the cluster-level study."""
    lines = _intro_lines(result)
    lines += _dev_lines(result)
    lines += _panel_lines(result)
    lines += _cluster_level_lines(result)
    lines += _test_lines(result)
    lines += _consistency_lines(result)
    return "\n".join(lines) + "\n"


def _intro_lines(result: Mapping[str, Any]) -> list[str]:
    proto = result["protocol"]
    lines = [
        "# ProbEval's automatic clustering: every dev criterion, the controls, and CFC test after the choice",
        "",
        f"Regenerate with `{COMMAND}` ({_f(result['seconds'], 0)} s wall, {_f(result.get('cpu_seconds'), 0)} s CPU "
        "in this run"
        + (f", first {result['questions_limit']} questions of each set" if result.get("questions_limit") else "")
        + ").",
        "",
        "## Protocol",
        "",
        f"`{proto['file']}` version {proto['version']}, fixed {proto['fixed']}, SHA-256 `{proto['sha256']}`, "
        f"commit `{proto['commit']}`. Every choice below was made on CFC dev and ProtoQA dev; CFC test was read "
        "only afterwards (every run of CFC test is in the changes below). Clustering seeds "
        f"{result['seeds']}: every figure averages them. Embedder: "
        + (", ".join(f"`{v}`" for v in result["dev"].get("embedders", {}).values()) or "not recorded")
        + ".",
        "",
        "Dev criteria (each on CFC dev and on ProtoQA dev; higher is better) and their non-inferiority margins:",
        "",
    ]
    for name, c in proto["criteria"].items():
        lines.append(f"- {_CRITERIA.get(name, name)} (margin {c['margin']}): {c['what']}.")
    lines += [
        "",
        "Rule: a candidate, control or clustering, replaces the current default only when, on every criterion, "
        "the lower bound of the paired 95% interval of candidate − current is above −margin, and on at least "
        "one above 0. A control as good as the chosen clustering on every criterion ships instead.",
        "",
        "Changes and events bearing on the protocol:",
        "",
    ]
    lines += [f"- {c['date']}: {c['what']} Reason: {c['reason']}" for c in proto.get("changes", [])]
    return lines + [""]


def _dev_lines(result: Mapping[str, Any]) -> list[str]:
    dev = result["dev"]
    keys = list(dev["criteria"])
    labels = list(dev["criteria"][keys[0]]["figures"])
    chosen, current, old = dev["chosen"], dev["current"], dev["old"]
    lines = [
        "## Choice on dev",
        "",
        f"- Current default (what shipped when the protocol was fixed): `{current}`; the one before it: `{old}`.",
        f"- Chosen by the rule: **`{chosen}`**.",
        f"- {_control_sentence(result)}",
        "",
        "Every candidate on every dev criterion (95% bootstrap intervals over questions):",
        "",
        "| candidate | " + " | ".join(_criterion_name(k) for k in keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for label in labels:
        cells = []
        for k in keys:
            fig = dev["criteria"][k]["figures"][label]
            cells.append(_f(fig["value"]) + _iv(fig["ci"]))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"The rule against the current default `{current}` (candidate − current, paired):",
        "",
        "| candidate | " + " | ".join(_criterion_name(k) for k in keys) + " | verdict |",
        "|---|" + "---|" * (len(keys) + 1),
    ]
    for label in labels:
        if label == current:
            continue
        v = dev["verdicts_against_current"][label]
        cells = [_diff(dev["criteria"][k]["minus_current"][label]) for k in keys]
        if v["replaces"]:
            verdict = "replaces"
        elif v["inferior_on"]:
            verdict = f"inferior on {len(v['inferior_on'])}"
        else:
            verdict = "non-inferior, better on none"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {verdict} |")
    controls = [c for c in _controls(result) if c != chosen]
    lines += [
        "",
        f"The chosen `{chosen}` against the old default and each control (chosen − other, paired), and each control's "
        "figure as a share of the chosen clustering's:",
        "",
        "| criterion | chosen | − "
        + " | − ".join([old] + controls)
        + " | "
        + " | ".join(f"{c} share" for c in controls)
        + " |",
        "|---|---|" + "---|" * (1 + 2 * len(controls)),
    ]
    lines += _chosen_rows(dev, keys, chosen, controls)
    every = dev.get("clusterings_against_controls")
    if every:
        ctl = list(next(iter(every.values())))
        lines += [
            "",
            "Every clustering against each control under the rule (beats: non-inferior on every criterion and "
            "better on one; otherwise the criteria where it is not non-inferior; paired differences in "
            "`clusters.json`, `candidates_minus_controls`):",
            "",
            "| clustering | " + " | ".join(ctl) + " |",
            "|---|" + "---|" * len(ctl),
        ]
        for label, verdicts in every.items():
            cells = [
                "beats" if v["replaces"] else (", ".join(_short(k) for k in v["inferior_on"]) or "better on none")
                for v in (verdicts[c] for c in ctl)
            ]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + [""]


def _short(key: str) -> str:
    """``answer_sets:cfc_dev`` as ``answer sets (CFC dev)``."""
    name, dev_set = key.split(":")
    return f"{name.replace('_', ' ')} ({_SETS.get(dev_set, dev_set)})"


def _chosen_rows(dev: Mapping[str, Any], keys: Sequence[str], chosen: str, controls: Sequence[str]) -> list[str]:
    """One row per criterion: the chosen figure, chosen − old, chosen − each control, each control's share."""
    lines = []
    for k in keys:
        entry = dev["criteria"][k]
        cells = [_f(entry["figures"][chosen]["value"]), _diff(entry["chosen_minus_old"])]
        cells += [_diff(entry["chosen_minus_controls"].get(c)) for c in controls]
        cells += [_f(dev["control_shares"][k].get(c), 2) for c in controls]
        lines.append(f"| {_criterion_name(k)} | " + " | ".join(cells) + " |")
    return lines


def _panel_lines(result: Mapping[str, Any]) -> list[str]:
    dev = result["dev"]
    panel = result["protocol"]["panel"]
    lines = [
        "## The dev system panel",
        "",
        f"Per dev question, {panel['answers']} expected answers from the question's annotated pool (every answer's "
        f"gold cluster known): (a) the annotators' cluster frequencies with a share {panel['wrong_rates']} replaced by "
        f"wrong-question answers; (b) all answers correct, cluster frequencies raised to the powers {panel['powers']} "
        "(flattened below 1, sharpened above). Each system's KL by construction is the gold KL of its counts; the "
        "criterion is Spearman of a candidate's KLs with those. The all-wrong-question system is the wrong-question "
        "control, kept out of the Spearman.",
        "",
        "| dev set | systems | questions | detectable ρ difference (median over candidates; min–max) |",
        "|---|---|---|---|",
    ]
    for entry in dev["criteria"].values():
        if entry["name"] != "panel":
            continue
        d = entry["detectable_difference"]
        lines.append(
            f"| {_SETS[entry['dev_set']]} | {entry['systems']} | {entry['questions']} | {_f(d['median'])} "
            f"({_f(d['min'])}–{_f(d['max'])}) |"
        )
    lines += [
        "",
        f"The detectable difference is (z(0.975) + z({panel['power']})) times the bootstrap standard deviation of the "
        "paired difference candidate − current default. CFC dev's annotated pool is its targets relabelled (see "
        "docs/validation.md), so on CFC dev the panel and the answer-set criterion see reference strings only.",
        "",
        "Share of questions where a candidate scores the all-wrong-question system at least as well as the "
        "question's real answers (0 is right):",
        "",
        "| candidate | " + " | ".join(_SETS[n] for n in dev["wrong_question_not_worse"]) + " |",
        "|---|" + "---|" * len(dev["wrong_question_not_worse"]),
    ]
    sets = list(dev["wrong_question_not_worse"])
    for label in dev["wrong_question_not_worse"][sets[0]]:
        lines.append(
            f"| {label} | " + " | ".join(_f(dev["wrong_question_not_worse"][n][label], 2) for n in sets) + " |"
        )
    return lines + [""] + _wording_lines(result)


def _wording_lines(result: Mapping[str, Any]) -> list[str]:
    """The wording panel: every candidate's ρ and its difference from each string-KL control (version 3 on)."""
    dev = result["dev"]
    entries = [e for e in dev["criteria"].values() if e["name"] == "wording"]
    if not entries:
        return []
    powers = result["protocol"]["panel"].get("wording_powers", [])
    lines = [
        "## The wording panel",
        "",
        "Systems whose order depends only on grouping strings that mean the same thing (protocol version 3): per dev "
        f"question, {result['protocol']['panel']['answers']} expected answers from the question's own reference "
        f"strings, all correct, cluster frequencies raised to the powers {powers}; `reworded(b)` gives each cluster's "
        "answers to its strings of other normalized forms than its most frequent one, `same_words(b)` to its strings "
        "in their reference proportions. Both have the same KL by construction. A KL over strings (each normalized "
        "string its own cluster) adds a within-cluster term only for `reworded`, so it fails this panel by "
        "construction. The criterion is Spearman of a candidate's KLs with the KLs by construction; candidate − "
        "control is paired over questions (95% bootstrap intervals).",
        "",
    ]
    header_cells = []
    for e in entries:
        header_cells += [f"{_SETS[e['dev_set']]} ρ"] + [f"− {c}, {_SETS[e['dev_set']]}" for c in _STRING_CONTROLS]
    lines.append("| candidate | " + " | ".join(header_cells) + " |")
    lines.append("|---|" + "---|" * len(header_cells))
    for label in entries[0]["figures"]:
        cells = []
        for e in entries:
            fig = e["figures"][label]
            cells.append(f"{_f(fig['value'])}{_iv(fig['ci'])}")
            minus = e["candidates_minus_controls"].get(label, {})
            cells += [_diff(minus[c]) if c in minus else "—" for c in _STRING_CONTROLS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    for e in entries:
        d = e.get("detectable_difference") or {}
        lines.append(
            f"- {_SETS[e['dev_set']]}: {e['systems']} systems, {e['questions']} questions; detectable ρ difference "
            f"{_f(d.get('median'))} (median over candidates, 80% power)."
        )
    return lines + [""]


def _metric_row(label: str, fig: Mapping[str, Any]) -> str:
    cells = [_f(fig[m]["mean"]) + _iv(fig[m]["ci"]) for m in ("blanc", "ari", "v_measure")]
    spread = fig["blanc"].get("seeds")
    seeds = f"{_f(spread['min'])}–{_f(spread['max'])}" if spread else ""
    return f"| {label} | " + " | ".join(cells) + f" | {seeds} | {_f(fig['clusters_per_question'], 1)} |"


def _metric_table(title: str, candidates: Mapping[str, Any], labels: Sequence[str]) -> list[str]:
    lines = [
        f"**{title}**",
        "",
        "| clustering | BLANC | ARI | V-measure | BLANC over seeds | clusters/question |",
        "|---|---|---|---|---|---|",
    ]
    return lines + [_metric_row(label, candidates[label]) for label in labels] + [""]


def _cluster_level_lines(result: Mapping[str, Any]) -> list[str]:
    lines = ["## Cluster level on dev", ""]
    for name, s in result["dev"]["clusters"].items():
        title = (
            f"{_SETS[name]} ({s['questions']} questions; annotators {_f(s['human_clusters_per_question'], 1)} "
            "clusters per question)"
        )
        lines += _metric_table(title, s["candidates"], list(s["candidates"]))
    return lines


def _test_lines(result: Mapping[str, Any]) -> list[str]:
    test = result["cfc_test"]
    new = test["new"]
    labels = list(test["candidates"])
    lines = ["## CFC test (read after the choice)", ""]
    title = (
        f"CFC test ({test['questions']} questions; annotators {_f(test['human_clusters_per_question'], 1)} clusters "
        "per question)"
    )
    lines += _metric_table(title, test["candidates"], labels)
    lines += [
        f"Paired differences, `{new}` − other (95% bootstrap over test questions), and the other's BLANC as a share "
        f"of `{new}`'s:",
        "",
        "| other | BLANC | ARI | V-measure | BLANC share |",
        "|---|---|---|---|---|",
    ]
    new_blanc = test["candidates"][new]["blanc"]["mean"]
    for label, d in test["new_minus"].items():
        share = test["candidates"][label]["blanc"]["mean"] / new_blanc if new_blanc else None
        lines.append(
            f"| {label} | " + " | ".join(_diff(d[m]) for m in ("blanc", "ari", "v_measure")) + f" | {_f(share, 2)} |"
        )
    sysl = test["system_level"]
    lines += [
        "",
        f"**System level**: Spearman over the {len(sysl['systems'])} CFC test GPT-2 systems ({sysl['questions']} "
        "questions) of the KLs averaged over the seeds, against ProbEval with the human clusters and WordNet matching.",
        "",
        "| clustering | ρ | ρ over seeds |",
        "|---|---|---|",
    ]
    for label, fig in sysl["figures"].items():
        lines.append(
            f"| {label} | {_f(fig['rho'])}{_iv(fig['ci'])} | {_f(fig['seeds']['min'])}–{_f(fig['seeds']['max'])} |"
        )
    lines += [
        "",
        "| new − other | ρ difference | detectable difference (80% power) | other's ρ as a share of new's |",
        "|---|---|---|---|",
    ]
    new_rho = sysl["figures"][new]["rho"]
    for label, d in sysl["new_minus"].items():
        share = sysl["figures"][label]["rho"] / new_rho if new_rho else None
        lines.append(f"| {label} | {_diff(d)} | {_f(d.get('detectable'))} | {_f(share, 2)} |")
    return lines + [""] + _seed_lines(test)


def _seed_lines(test: Mapping[str, Any]) -> list[str]:
    """What the seed moves on CFC test (protocol version 4 on): partitions, data-set KLs, system pairs."""
    stability, figures = test.get("stability"), test["system_level"]["figures"]
    if not stability:
        return []
    lines = [
        "**What the seed moves on CFC test**: per question, ARI between the partitions at two seeds (the second on "
        "shuffled answers), mean over the seed pairs; the range of each system's data-set KL over the seeds; the "
        "system pairs whose order differs between two seeds (point estimates).",
        "",
        "| clustering | stability ARI, mean | min | questions with one partition | largest KL range | pairs reordered |",
        "|---|---|---|---|---|---|",
    ]
    for label, st in stability.items():
        spread = figures[label].get("seed_spread", {})
        pairs = spread.get("pairs_reordered", [])
        lines.append(
            f"| {label} | {_f(st['mean'])} | {_f(st['min'])} | {_f(st['identical'], 2)} | "
            f"{_f(spread.get('max_range'), 4)} | {len(pairs)} of {spread.get('pairs', 0)} |"
        )
    return lines + [""]


def _consistency_lines(result: Mapping[str, Any]) -> list[str]:
    rows = [(name, s["consistency"]) for name, s in result["dev"]["clusters"].items()]
    rows.append(("cfc_test", result["cfc_test"]["consistency"]))
    lines = [
        "## How consistent each reference is",
        "",
        "| data | normalization-equal groups | split by the annotators | groups of several strings | split | "
        "their mentions split | strings in several clusters | ceiling BLANC (strings kept whole) | "
        "ceiling BLANC (normalized groups kept whole) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in rows:
        share = c.get("share_split")
        mentions = c.get("multi_string_mentions")
        lines.append(
            f"| {_SETS.get(name, name)} | {c['normalized_groups']} | {c['groups_split']} "
            f"({_f(None if share is None else 100 * share, 1)}%) | {c.get('multi_string_groups')} | "
            f"{c.get('multi_string_groups_split')} | {_f(c.get('multi_string_mentions_split'), 0)} of "
            f"{_f(mentions, 0)} | {c['strings_in_several_clusters']} | "
            f"{_f(c['ceiling_blanc_strings'])} | {_f(c['ceiling_blanc_normalized'])} |"
        )
    lines += [
        "",
        "A ceiling is the annotators' clustering with every string (or normalization group) moved whole into the "
        "cluster holding most of its occurrences, scored against the annotators. " + _consistency_sentence(result),
    ]
    return lines


def write_cluster_study(result: Mapping[str, Any], out: Union[str, Path]) -> list[Path]:
    """Write ``clusters.json`` then ``clusters.md`` into ``out`` (never through a symlink)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "clusters.json", out / "clusters.md"]
    clean = _clean(result)
    for path, render in zip(
        paths,
        (lambda: json.dumps(clean, indent=1, allow_nan=False) + "\n", lambda: cluster_markdown(clean)),
        strict=True,
    ):
        if path.is_symlink():
            raise ValueError(f"{path}: refusing to write through a symlink")
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(render(), encoding="utf-8")
        tmp.replace(path)
    return paths
