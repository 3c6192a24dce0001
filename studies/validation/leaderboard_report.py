"""Writing the leaderboard: ``leaderboard.json`` and ``leaderboard.md`` (:mod:`studies.validation.leaderboard`
measures it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from .leaderboard import PROTOQA_METRICS
from .report_text import write_json

__all__ = ["ORACLE_OVERLAP", "leaderboard_markdown", "write_leaderboard"]

ORACLE_OVERLAP = 0.9
"""A file whose answers are at least this share of the targets' own answers is flagged as an oracle."""


def _ci(cell: Optional[Mapping[str, float]]) -> str:
    if not cell:
        return "n/a"
    return f"{cell['mean']:.3f} [{cell['low']:.3f}, {cell['high']:.3f}]"


def leaderboard_markdown(board: Mapping[str, Any], command: str = "python -m studies.validation leaderboard") -> str:
    """``leaderboard.md``: per data set, a ProbEval table and a ProtoQA table, each figure with its 95% interval.

    >>> print(leaderboard_markdown(run_leaderboard("../shared/data", num_questions=5)))  # doctest: +SKIP
    """
    lines = _intro_lines(board.get("info", {}), command)
    for name, data in board.items():
        if name != "info":
            lines += _board_lines(data)
    return "\n".join(lines)


def _intro_lines(info: Mapping[str, Any], command: str) -> list[str]:
    """The page's title, how to regenerate it, and what each column means."""
    defaults = info.get("defaults", {})
    automatic = info.get("automatic") or {
        "clustering": defaults.get("clustering"),
        "matching": defaults.get("matching"),
    }
    described = ", ".join(f"{k} {v}" for k, v in automatic.items() if k not in ("clustering", "matching", "embedder"))
    return [
        "# Leaderboard",
        "",
        f"Regenerate with `{command}` ({info.get('seconds', 0):.0f} s"
        + (f", first {info['num_questions']} questions per data set" if info.get("num_questions") else "")
        + "). Every figure is a mean over questions "
        "with a 95% percentile bootstrap interval over questions (1,000 resamples, fixed seed).",
        "",
        "- **ProbEval KL** (lower is better): *human clusters* = the data's own clusters with WordNet matching "
        "(the setting to use whenever the references carry clusters); *automatic* = the setting for raw "
        f"answers without clusters ({automatic.get('clustering')} clustering of `{info.get('embedder')}` "
        f"embeddings, {automatic.get('matching')} matching"
        + (f", {described}" if described else "")
        + ": ProbEval's automatic default for answers without clusters, passed explicitly). Its seeded starts "
        "move the clusters with the seed, so each automatic KL is the mean over five clusterings (the seed and "
        "the next four) and each resample redraws one: its interval holds the seed's share "
        "(`clustering_draws:5` in the signature).",
        "- **ProtoQA** (higher is better): WordNet similarity, the paper's metrics; only for files whose "
        "answers are ranked.",
        "- *In targets*: the share of a file's answers (with repetition) that are also among the targets' raw "
        "answers; near 100% means the file holds the ground truth itself.",
        "- *Kinds*: a **ranked list** holds distinct answers, best first; **samples** repeat answers as often as "
        "they were given; **distinct samples** are samples with duplicates removed and no ranking. ProbEval "
        "reads distinct answers as one sample each, so for ranked lists and distinct samples P_H says which "
        "clusters the answers cover, not how often a model gives them: their KL is not comparable with that "
        "of real samples. Samples with repetition are ranked by frequency for the ProtoQA score.",
        "- *Samples per question*: every file is scored at the most answers one of its questions has, the "
        'answers a question lacks counting as wrong (docs/spec.md, "Missing samples and the number of '
        'samples"). The files of a board differ in that count, so each board is ranked with the mismatch '
        "accepted, and their KLs compare only loosely; the signatures give the range (`n_samples:`).",
        "",
    ]


def _board_lines(data: Mapping[str, Any]) -> list[str]:
    """One data set's section: the ProbEval table, notes on odd files, the ProtoQA table of ranked files."""
    lines = [
        f"## {data['label']}",
        "",
        f"Targets `{data['targets']}`, {data['questions']} questions.",
        "",
        "| system | file | kind | answers / question (distinct) | in targets | ProbEval KL, human clusters | "
        "ProbEval KL, automatic |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for row in data["systems"]:
        lines.append(
            f"| {row['system']} | `{row['file']}` | {row['kind']} | "
            f"{row['samples_per_question']:.1f} ({row['distinct_per_question']:.1f}) | "
            f"{row.get('overlap_with_targets', 0):.0%} | "
            f"{_ci(row['probeval'].get('human'))} | {_ci(row['probeval'].get('automatic'))} |"
        )
    notes = [f"`{row['file']}`: {row['note']}" for row in data["systems"] if row.get("note")]
    notes += [
        f"`{row['file']}`: {row['overlap_with_targets']:.1%} of its answers (with repetition) are the "
        "targets' own raw answers: it is (nearly) the ground truth itself, an oracle rather than a "
        "system, whatever the file name says"
        for row in data["systems"]
        if row.get("overlap_with_targets", 0) >= ORACLE_OVERLAP
    ]
    notes += [
        f"`{row['file']}`: ids not in the targets ignored: {', '.join(row['ignored_ids'])}"
        for row in data["systems"]
        if row["ignored_ids"]
    ]
    notes += [
        f"`{row['file']}`: questions without answers (scored as empty / 0): {', '.join(row['missing_ids'])}"
        for row in data["systems"]
        if row["missing_ids"]
    ]
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    ranked = [row for row in data["systems"] if row.get("protoqa")]
    if ranked:
        lines += [
            "",
            "| system | ranking | " + " | ".join(PROTOQA_METRICS) + " |",
            "|---|---|" + "---:|" * len(PROTOQA_METRICS),
        ]
        for row in ranked:
            lines.append(
                f"| {row['system']} | {row['ranking']} | "
                + " | ".join(_ci(row["protoqa"][m]) for m in PROTOQA_METRICS)
                + " |"
            )
    unranked = [row["system"] for row in data["systems"] if not row.get("protoqa")]
    if unranked:
        lines += ["", "No ProtoQA score (answers not ranked): " + "; ".join(unranked) + "."]
    lines.append("")
    return lines


def write_leaderboard(
    board: Mapping[str, Any], out_dir: Path, command: str = "python -m studies.validation leaderboard"
) -> list[Path]:
    """Write ``leaderboard.json`` and ``leaderboard.md``; returns their paths.

    >>> write_leaderboard(run_leaderboard("../shared/data"), Path("studies/reports"))  # doctest: +SKIP
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "leaderboard.json", out_dir / "leaderboard.md"]
    write_json(paths[0], board)
    paths[1].write_text(leaderboard_markdown(board, command), encoding="utf-8")
    return paths
