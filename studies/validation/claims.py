"""The system-level claims of the documentation pages, written from ``validation.json``.

Each document marks its claims with ``<!-- claims:NAME -->`` ... ``<!-- /claims:NAME -->``;
``python -m studies.validation claims`` rewrites what lies between from the study's
``validation.json``, so the documents say what the last run measured.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

__all__ = ["CLAIM_FILES", "claim_texts", "rewrite_claims", "rewrite_claim_files", "write_claims"]

ROOT = Path(__file__).resolve().parents[2]
#: The documents whose marked claims are rewritten, relative to the checkout.
CLAIM_FILES = ("docs/validation.md",)


def _f(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(value: Optional[float], ci: Optional[Mapping[str, float]]) -> str:
    return _f(value) if not ci else f"{_f(value)} [{_f(ci['low'])}, {_f(ci['high'])}]"


def claim_texts(table: Mapping[str, Any]) -> dict[str, str]:
    """Claim name -> its text, from ``validation.json``'s ``system_level``.

    >>> fig = {"setting": "g+wordnet [minilm]", "dev_criterion": 0.9, "rho": 0.6, "ci": {"low": 0.4, "high": 0.8},
    ...        "kendall": 0.5, "kendall_ci": None, "rho_with_oracle": 0.7, "ci_with_oracle": None,
    ...        "clusters_per_question": 5.0, "nested_ci": {"low": 0.3, "high": 0.9}, "varies": "x"}
    >>> t = claim_texts({"system_level": {"automatic_default": fig, "levers": {"grid": fig},
    ...                                   "human_clusters_per_question": 6.8}})
    >>> "0.600 [0.400, 0.800]" in t["default"]
    True
    """
    level = table["system_level"]
    d = level["automatic_default"]
    default = (
        f"This study's own system-level pick, by the system-like answer pools of CFC dev and ProtoQA dev alone "
        f"(dev criterion {_f(d['dev_criterion'])}), is `{d['setting']}`; it is not what ships for raw answers "
        f"without clusters (that choice is made under the cluster-level protocol, below, with this pick as one of "
        f"its candidates). Reported once on CFC test, it ranks the eight CFC test model systems as the human clusters do with "
        f"Spearman ρ **{_ci(d['rho'], d['ci'])}** (Kendall τ {_ci(d['kendall'], d['kendall_ci'])}; nested interval, "
        f"the dev selection redone in every resample: {_ci(d['rho'], d['nested_ci'])}); with the references' own "
        f"human answers added as an oracle ninth system, ρ {_ci(d['rho_with_oracle'], d['ci_with_oracle'])}. "
        f"It makes {_f(d['clusters_per_question'], 1)} clusters per test question where the annotators made "
        f"{_f(level['human_clusters_per_question'], 1)}."
    )
    previous = level["levers"].get("previous_default")
    if previous and previous["setting"] == d["setting"]:
        default += (
            " Dev picks the same setting the earlier release had picked on the CFC test systems themselves; "
            "its test ρ rests on small KL gaps between some systems, hence the wide nested interval."
        )
    levers = (
        "Levers tried for a better default, each chosen on dev first, then measured on test (ρ over the "
        "eight models): "
        + "; ".join(
            f"{name} → `{r['setting']}` (dev {_f(r['dev_criterion'])}, test {_ci(r['rho'], r['ci'])})"
            for name, r in level["levers"].items()
        )
        + "."
    )
    return {"default": default, "levers": levers}


def rewrite_claims(text: str, claims: Mapping[str, str], marker: str = "claims") -> str:
    """``text`` with every claim marked ``<!-- MARKER:name -->`` replaced (an unknown name is a ValueError).

    >>> rewrite_claims("a <!-- claims:x -->old<!-- /claims:x --> b", {"x": "new"})
    'a <!-- claims:x -->new<!-- /claims:x --> b'
    >>> rewrite_claims("<!-- clusters:x -->old<!-- /clusters:x -->", {"x": "new"}, marker="clusters")
    '<!-- clusters:x -->new<!-- /clusters:x -->'
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in claims:
            raise ValueError(f"unknown claim marker {marker}:{name!r}; known: {', '.join(sorted(claims))}")
        return f"<!-- {marker}:{name} -->{claims[name]}<!-- /{marker}:{name} -->"

    return re.sub(
        rf"<!-- {re.escape(marker)}:([\w-]+) -->.*?<!-- /{re.escape(marker)}:\1 -->", replace, text, flags=re.S
    )


def rewrite_claim_files(
    files: Sequence[Union[str, Path]], claims: Mapping[str, str], marker: str = "claims"
) -> list[Path]:
    """Rewrite the claims marked ``marker`` in each of ``files``; returns the files that changed."""
    changed = []
    for name in files:
        path = Path(name)
        before = path.read_text(encoding="utf-8")
        after = rewrite_claims(before, claims, marker)
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed.append(path)
    return changed


def write_claims(validation_json: Union[str, Path], files: Sequence[Union[str, Path]] = ()) -> list[Path]:
    """Rewrite the marked claims of ``files`` (default :data:`CLAIM_FILES`) from ``validation_json``;
    returns the files that changed."""
    table = json.loads(Path(validation_json).read_text(encoding="utf-8"))
    if "system_level" not in table:
        raise ValueError(f"{validation_json}: no system_level figures (run the study without --no-systems)")
    return rewrite_claim_files(files or [ROOT / f for f in CLAIM_FILES], claim_texts(table))
