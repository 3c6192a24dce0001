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
    ...        "clusters_per_question": 5.0, "varies": "x"}
    >>> t = claim_texts({"system_level": {"automatic_default": fig, "levers": {"grid": fig},
    ...                                   "automatic_default_chosen_by": "python -m studies.validation clusters",
    ...                                   "human_clusters_per_question": 6.8}})
    >>> "0.600 [0.400, 0.800]" in t["default"] and "grid → `g+wordnet [minilm]`" in t["levers"]
    True
    """
    level = table["system_level"]
    d = level["automatic_default"]
    chosen_by = (level.get("automatic_default_chosen_by") or "python -m studies.validation clusters").split(" (")[0]
    default = (
        f"ProbEval's automatic default as it ships, `{d['setting']}`, chosen by one selection path only "
        f"(`{chosen_by}` under `studies/validation/protocol.toml`, below), ranks the eight CFC test model systems as the human clusters do with "
        f"Spearman ρ **{_ci(d['rho'], d['ci'])}** (Kendall τ {_ci(d['kendall'], d['kendall_ci'])}); with the "
        f"references' own human answers added as an oracle ninth system, ρ "
        f"{_ci(d['rho_with_oracle'], d['ci_with_oracle'])}. It makes {_f(d['clusters_per_question'], 1)} clusters per "
        f"test question where the annotators made {_f(level['human_clusters_per_question'], 1)}; its clusters come "
        "from each question's raw answers and counts only."
    )
    levers = (
        "Levers explored beside it, each chosen on dev first by the system-like pools alone, then measured on test "
        "(ρ over the eight models); none of them is the default: "
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
