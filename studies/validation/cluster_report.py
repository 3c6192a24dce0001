"""``studies/reports/clusters.{json,md}`` and the marked cluster-level claims of the documents.

Each document marks its cluster-level claims with ``<!-- clusters:NAME -->`` ...
``<!-- /clusters:NAME -->``; ``python -m studies.validation clusters`` rewrites what lies
between from the study's ``clusters.json`` (:func:`write_cluster_claims`), so the
documents say what the last run measured.
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
CLUSTER_CLAIM_FILES = ("README.md", "docs/validation.md", "cfc_probeval/README.md")
COMMAND = "python -m studies.validation clusters"
_NAMES = {"blanc": "BLANC", "ari": "ARI", "v_measure": "V-measure"}


def _f(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(fig: Mapping[str, Any], key: str = "mean") -> str:
    ci = fig.get("ci")
    return _f(fig.get(key)) + (f" [{_f(ci['low'])}, {_f(ci['high'])}]" if ci else "")


def _clean(value: Any) -> Any:
    """JSON-ready: NaN and infinities become None."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _separation(diff: Mapping[str, Any], control: str, metric: str) -> str:
    if diff["separated"] and diff["ci"]["low"] > 0:
        return ""
    if diff["separated"]:
        return f" The default is below {control} by {_NAMES[metric]}."
    return f" By {_NAMES[metric]} the check cannot separate the default from {control}."


def cluster_claims(result: Mapping[str, Any]) -> dict[str, str]:
    """Claim name -> its text, from ``clusters.json``.

    >>> fig = {"mean": 0.6, "ci": {"low": 0.5, "high": 0.7}}
    >>> diff = {"blanc": {"mean": 0.1, "ci": {"low": 0.05, "high": 0.15}, "separated": True}}
    >>> r = {"dev": {"default": "g [minilm]", "selected": "g [minilm]"}, "protocol": {"goal": {"blanc_test": 0.76}},
    ...      "cfc_test": {"candidates": {"g [minilm]": {"blanc": fig, "ari": fig, "v_measure": fig,
    ...      "clusters_per_question": 5.0}}, "default_vs_controls": {"one_cluster": {**diff, "ari": diff["blanc"],
    ...      "v_measure": diff["blanc"]}}, "human_clusters_per_question": 6.8,
    ...      "consistency": {"ceiling_blanc_strings": 0.9, "ceiling_blanc_normalized": 0.88}}}
    >>> "0.600 [0.500, 0.700]" in cluster_claims(r)["headline"]
    True
    """
    test = result["cfc_test"]
    default = result["dev"]["default"]
    fig = test["candidates"][default]
    goal = result["protocol"]["goal"]["blanc_test"]
    parts = [
        f"ProbEval's automatic clustering of raw answers (`{default}`, chosen on CFC dev and ProtoQA dev by "
        f"cluster-level agreement) against the annotators' clusters on CFC test, reported once: BLANC "
        f"**{_ci(fig['blanc'])}**, ARI {_ci(fig['ari'])}, V-measure {_ci(fig['v_measure'])}, "
        f"{_f(fig['clusters_per_question'], 1)} clusters per question where the annotators made "
        f"{_f(test['human_clusters_per_question'], 1)}. "
    ]
    diffs = []
    notes = []
    for control, d in test["default_vs_controls"].items():
        b = test["candidates"].get(control, {}).get("blanc", {})
        diffs.append(f"{control} {_f(b.get('mean'))} (difference {_ci(d['blanc'])})")
        for metric in ("blanc", "ari"):
            note = _separation(d[metric], control, metric)
            if note:
                notes.append(note.strip())
    parts.append("Controls by BLANC, with the paired difference default − control: " + "; ".join(diffs) + ". ")
    parts.extend(n + " " for n in notes)
    blanc = fig["blanc"]["mean"]
    cons = test["consistency"]
    nested = test.get("nested", {}).get("default")
    if nested:
        parts.append(
            f"With the selection redone in every resample of dev questions, test BLANC {_f(nested['blanc_mean'])} "
            f"[{_f(nested['blanc_ci']['low'])}, {_f(nested['blanc_ci']['high'])}]; over the five clustering seeds "
            f"{_f(fig['blanc']['seeds']['min'])}–{_f(fig['blanc']['seeds']['max'])}. "
        )
    earlier = result["dev"].get("current_default")
    if earlier and earlier != default and earlier in test["candidates"]:
        e = test["candidates"][earlier]
        parts.append(
            f"The earlier default `{earlier}`, which dev ranks lower, scores test BLANC {_ci(e['blanc'])} "
            f"(ARI {_ci(e['ari'])}): the dev gain does not carry over to test. "
        )
    sysl = test.get("system_level", {}).get("figures", {})
    if default in sysl:
        s = sysl[default]
        parts.append(f"System level (Spearman over the eight CFC test model systems): {_f(s['rho'])}")
        for key in ("one_cluster", "one_per_string"):
            d = sysl.get(f"default - {key}")
            if d and d["ci"]:
                parts.append(
                    f"; − {key} ({_f(sysl[key]['rho'])}): {_f(d['diff'])} [{_f(d['ci']['low'])}, {_f(d['ci']['high'])}]"
                )
        nested_rho = test["system_level"]["nested"].get("default")
        if nested_rho:
            parts.append(f"; nested [{_f(nested_rho['low'])}, {_f(nested_rho['high'])}]")
        parts.append(". ")
        d = sysl.get("default - one_cluster")
        if d and d["ci"] and d["ci"]["low"] <= 0:
            parts.append(
                "The system-level check cannot separate the default from putting every answer in one cluster. "
            )
    parts.append(
        f"The goal, the inter-annotator level BLANC {goal:.2f}, is "
        + ("reached" if blanc >= goal else f"missed by {_f(goal - blanc)}")
        + f"; the test annotations cap a clustering of distinct strings at {_f(cons['ceiling_blanc_strings'])} and "
        f"one that keeps normalization-equal strings together at {_f(cons['ceiling_blanc_normalized'])}. "
        f"Regenerate with `{COMMAND}`; details in `studies/reports/clusters.md`."
    )
    return {"headline": "".join(parts).strip()}


def write_cluster_claims(clusters_json: Union[str, Path], files: Sequence[Union[str, Path]] = ()) -> list[Path]:
    """Rewrite the marked claims of ``files`` (default :data:`CLUSTER_CLAIM_FILES`); returns those that changed."""
    claims = cluster_claims(json.loads(Path(clusters_json).read_text(encoding="utf-8")))
    return rewrite_claim_files(files or [ROOT / f for f in CLUSTER_CLAIM_FILES], claims, marker="clusters")


def _metric_row(label: str, fig: Mapping[str, Any]) -> str:
    cells = [_ci(fig[m]) for m in ("blanc", "ari", "v_measure")]
    spread = fig["blanc"].get("seeds")
    seeds = f"{_f(spread['min'])}–{_f(spread['max'])}" if spread else ""
    return f"| {label} | " + " | ".join(cells) + f" | {seeds} | {_f(fig['clusters_per_question'], 1)} |"


def _table(title: str, candidates: Mapping[str, Any], labels: Sequence[str]) -> list[str]:
    lines = [
        f"**{title}**",
        "",
        "| clustering | BLANC | ARI | V-measure | BLANC over seeds | clusters/question |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_metric_row(label, candidates[label]) for label in labels]
    return lines + [""]


def cluster_markdown(result: Mapping[str, Any]) -> str:
    """The report page of the cluster-level study."""
    dev, test = result["dev"], result["cfc_test"]
    lines = _intro_lines(result)
    lines += _dev_lines(dev, list(test["default_vs_controls"]))
    lines += _test_lines(dev, test)
    lines += _goal_lines(result["protocol"], dev, test)
    lines += _test_system_lines(test["system_level"])
    lines += _consistency_lines(dev, test["consistency"])
    return "\n".join(lines)


def _intro_lines(result: Mapping[str, Any]) -> list[str]:
    """The title, how to regenerate the page, what is measured, and the protocol with its changes."""
    proto = result["protocol"]
    lines = [
        "# Cluster-level agreement: ProbEval's automatic clusters against the annotators'",
        "",
        f"Regenerate with `{COMMAND}` ({_f(result['seconds'], 0)} s in this run"
        + (f", first {result['questions_limit']} questions of each set" if result.get("questions_limit") else "")
        + ").",
        "",
        "Per question, every raw answer occurrence is a mention (pairs weighted by counts); an automatic "
        "clustering sees only the distinct raw answers, as ProbEval does for references without clusters. "
        "Figures are means over questions with 95% bootstrap intervals over questions, averaged over the "
        f"clustering seeds {result['seeds']} (the spread over seeds is given beside).",
        "",
        "## Protocol",
        "",
        f"`{proto['file']}`, SHA-256 `{proto['sha256']}`, commit `{proto['commit']}`. Every choice below was made "
        "on CFC dev and ProtoQA dev; CFC test was read once, afterwards.",
        "",
        "Changes and events bearing on the protocol:",
        "",
    ]
    lines += [f"- {c['date']}: {c['what']} Reason: {c['reason']}" for c in proto["changes"]]
    return lines


def _dev_lines(dev: Mapping[str, Any], controls: Sequence[str]) -> list[str]:
    """The choice on dev: the selected clustering and default, the top candidates, each dev set's table."""
    default, selected = dev["default"], dev["selected"]
    lines = [
        "",
        "## Choice on dev",
        "",
        f"- Selected clustering (best of the whole grid by dev BLANC, system-like pools as gate): `{selected}`",
        f"- ProbEval's automatic default after the study: `{default}`"
        + (
            " (unchanged: no shippable candidate beats it on dev by more than the tie margin)"
            if default == dev["current_default"]
            else f" (was `{dev['current_default']}`)"
        ),
        "- Nested: how often each clustering wins when the selection is redone in resamples of dev questions: "
        + ", ".join(f"`{k}` {v}" for k, v in list(dev["nested_selected"].items())[:5])
        + "; for the default rule: "
        + ", ".join(f"`{k}` {v}" for k, v in list(dev["nested_default"].items())[:5]),
        "",
    ]
    top = sorted(
        (k for k, v in dev["candidates"].items() if not v["control"]), key=lambda k: -dev["candidates"][k]["criterion"]
    )
    lines += [
        "| clustering | dev BLANC (criterion) | pools criterion (gate) | count gap | shippable |",
        "|---|---|---|---|---|",
    ]
    for label in top[:15] + [k for k, v in dev["candidates"].items() if v["control"]]:
        c = dev["candidates"][label]
        lines.append(
            f"| {label} | {_f(c['criterion'])} | {_f(c['pools'])} | {_f(c['count_gap'])} | {'yes' if c['shippable'] else 'no'} |"
        )
    lines += ["", f"The other {len(top) - 15} candidates are in `clusters.json`.", ""] if len(top) > 15 else [""]
    for name, s in dev["sets"].items():
        lines += _table(
            f"{name} ({s['questions']} questions; annotators {_f(s['human_clusters_per_question'], 1)} clusters per question)",
            s["candidates"],
            list(dict.fromkeys([default, selected, dev["current_default"], *controls])),
        )
    return lines


def _test_lines(dev: Mapping[str, Any], test: Mapping[str, Any]) -> list[str]:
    """CFC test (read once): the table of the choices and controls, and the paired differences."""
    default, selected = dev["default"], dev["selected"]
    controls = list(test["default_vs_controls"])
    lines = ["## CFC test (read once)", ""]
    lines += _table(
        f"CFC test ({test['questions']} questions; annotators {_f(test['human_clusters_per_question'], 1)} clusters "
        "per question)",
        test["candidates"],
        list(dict.fromkeys([default, selected, dev["current_default"], *controls])),
    )
    lines += ["Paired differences, default − control (95% bootstrap over test questions):", ""]
    lines += ["| control | BLANC | ARI | V-measure |", "|---|---|---|---|"]
    for control, d in test["default_vs_controls"].items():
        lines.append(f"| {control} | " + " | ".join(_ci(d[m]) for m in ("blanc", "ari", "v_measure")) + " |")
    notes = [
        _separation(d[m], control, m).strip()
        for control, d in test["default_vs_controls"].items()
        for m in ("blanc", "ari", "v_measure")
    ]
    lines += [""] + [n for n in notes if n] + [""]
    if selected != default:
        lines += [
            "Paired differences, selected − control:",
            "",
            "| control | BLANC | ARI | V-measure |",
            "|---|---|---|---|",
        ]
        for control, d in test["selected_vs_controls"].items():
            lines.append(f"| {control} | " + " | ".join(_ci(d[m]) for m in ("blanc", "ari", "v_measure")) + " |")
        lines.append("")
    return lines


def _goal_lines(proto: Mapping[str, Any], dev: Mapping[str, Any], test: Mapping[str, Any]) -> list[str]:
    """Whether the default reaches the goal, beside the ceilings, and the nested test figures."""
    default = dev["default"]
    lines: list[str] = []
    goal = proto["goal"]["blanc_test"]
    fig = test["candidates"][default]["blanc"]
    best_label = max(
        (k for k in test["candidates"] if k in dev["candidates"] and not dev["candidates"][k]["control"]),
        key=lambda k: test["candidates"][k]["blanc"]["mean"],
    )
    cons = test["consistency"]
    lines += [
        "### Goal",
        "",
        f"Goal: BLANC ≥ {goal:.2f} on CFC test (the CFC paper's inter-annotator level) with every paired interval "
        f"above 0. The default scores {_ci(fig)}: "
        + ("reached." if fig["mean"] >= goal else f"missed by {_f(goal - fig['mean'])}.")
        + f" The ceiling for any clustering of distinct strings (below) is {_f(cons['ceiling_blanc_strings'])}, "
        f"{_f(cons['ceiling_blanc_strings'] - fig['mean'])} above the default; for one that keeps "
        f"normalization-equal strings together it is {_f(cons['ceiling_blanc_normalized'])}, "
        f"{_f(cons['ceiling_blanc_normalized'] - fig['mean'])} above. For orientation only (picked on "
        f"test, so not an honest figure): the highest test BLANC of any grid candidate is "
        f"{_f(test['candidates'][best_label]['blanc']['mean'])} (`{best_label}`).",
        "",
        "### Nested figures",
        "",
    ]
    for rule, n in test["nested"].items():
        lines.append(
            f"- {rule}: test BLANC with the selection redone in each dev resample {_f(n['blanc_mean'])} "
            f"[{_f(n['blanc_ci']['low'])}, {_f(n['blanc_ci']['high'])}]"
        )
    return lines


def _test_system_lines(sysl: Mapping[str, Any]) -> list[str]:
    """The system level on the eight CFC test model systems, with the paired differences to the controls."""
    lines = ["", "### System level (eight CFC test model systems, Spearman with the human clusters' ranking)", ""]
    lines += ["| clustering | ρ | interval | ρ over seeds |", "|---|---|---|---|"]
    for label, f in sysl["figures"].items():
        if "rho" in f:
            ci = f["ci"]
            lines.append(
                f"| {label} | {_f(f['rho'])} | "
                + (f"[{_f(ci['low'])}, {_f(ci['high'])}]" if ci else "n/a")
                + f" | {_f(f['seeds']['min'])}–{_f(f['seeds']['max'])} |"
            )
    for label, f in sysl["figures"].items():
        if "diff" in f:
            ci = f["ci"]
            interval = f"[{_f(ci['low'])}, {_f(ci['high'])}]" if ci else "n/a"
            lines.append("")
            lines.append(
                f"- {label}: {_f(f['diff'])} {interval}, P(difference ≤ 0) {_f(f['p_not_above'], 2)}"
                + (
                    ""
                    if ci and ci["low"] > 0
                    else " — the system-level check cannot separate the default from this control."
                )
            )
    lines += [""] + [
        f"- Nested system-level ρ ({rule}, the selection redone in each dev resample): "
        + (f"[{_f(ci['low'])}, {_f(ci['high'])}]" if ci else "n/a")
        for rule, ci in sysl["nested"].items()
    ]
    return lines


def _consistency_lines(dev: Mapping[str, Any], cons: Mapping[str, Any]) -> list[str]:
    """How consistent each reference is, and the ceilings that puts on any clustering."""
    lines = ["", "## How consistent each reference is", ""]
    lines += [
        "| data | normalization-equal groups | split by the annotators | strings in several clusters | "
        "ceiling BLANC (strings kept whole) | ceiling BLANC (normalized groups kept whole) |",
        "|---|---|---|---|---|---|",
    ]
    refs = {**{k: v["consistency"] for k, v in dev["sets"].items()}, "cfc_test": cons}
    for name, c in refs.items():
        lines.append(
            f"| {name} | {c['normalized_groups']} | {c['groups_split']} ({_f(100 * (c['share_split'] or 0), 1)}%) | "
            f"{c['strings_in_several_clusters']} | {_f(c['ceiling_blanc_strings'])} | {_f(c['ceiling_blanc_normalized'])} |"
        )
    lines += [
        "",
        "A ceiling is the annotators' clustering with every string (or normalization group) moved whole into the "
        "cluster holding most of its occurrences: an attainable clustering that keeps them together, scored "
        "against the annotators. A reviewer should take the CFC test annotators' clusters as the test reference, "
        "as published, and read every test figure against its ceiling: the distance from the ceiling to 1 is "
        "the annotators' own inconsistency, which no clustering that keeps those strings together can recover.",
        "",
    ]
    return lines


def write_cluster_study(result: Mapping[str, Any], out: Union[str, Path]) -> list[Path]:
    """Write ``clusters.json`` and ``clusters.md`` into ``out`` (never through a symlink)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "clusters.json", out / "clusters.md"]
    texts = [json.dumps(_clean(result), indent=1, allow_nan=False) + "\n", cluster_markdown(result)]
    for path, text in zip(paths, texts, strict=True):
        if path.is_symlink():
            raise ValueError(f"{path}: refusing to write through a symlink")
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return paths
