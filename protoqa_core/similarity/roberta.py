"""The ProtoQA paper's third similarity ("RoBERTa similarity"): contextual vectors and a GP per cluster.

The method, its length-scale rule and how the default rule was chosen are in
``docs/protoqa-metric.md`` ("The RoBERTa similarity"). Hyperparameters come from the vectors by a
fixed rule (no random restart), so the same inputs give the same result on the same device; on
numpy, a question's cluster vectors are kept in the user's cache (:data:`ENCODINGS_CACHE`).
"""

from __future__ import annotations

import io
import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np

from protoqa_core.install import install_command
from protoqa_core.io.cache_files import CacheFolder
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Question

from .embedding import (
    EMBEDDING_DECIMALS,
    MAX_ANSWER_TOKENS,
    MAX_CONTEXT_TOKENS,
    ContextEncoder,
    ModelLocation,
    locate_model,
    model_revision,
)
from .exact_products import EXACT_BITS
from .gaussian_process import LengthScale, OneVsAll, fit_one_vs_all, length_scale_rule
from .numpy_encoder import choose_runtime

__all__ = [
    "DEFAULT_ENCODER",
    "VALIDATED_ENCODER",
    "VALIDATED_REVISIONS",
    "UNVALIDATED",
    "DEFAULT_LENGTH_SCALE",
    "PAPERS_LENGTH_SCALE",
    "DEFAULT_THRESHOLD",
    "PAPERS_THRESHOLD",
    "ENCODER_OPTION",
    "MAX_TRAINING_ANSWERS",
    "RobertaSimilarity",
    "ENCODINGS_CACHE",
    "check_encoder_folder",
    "locate_encoder",
]

DEFAULT_ENCODER = "roberta-base"
"""The encoder the ``roberta`` similarity uses unless told otherwise: the paper's, not the validated one."""
VALIDATED_ENCODER = "all-MiniLM-L6-v2"
"""The encoder the default rule was chosen and measured with (``python -m studies.validation similarity-controls``)."""
VALIDATED_REVISIONS = frozenset({"sha256:53aa51172d14"})
"""The weights of :data:`VALIDATED_ENCODER` the default rule was measured with; others are ``unvalidated``."""
UNVALIDATED = "unvalidated"
"""The label part of a rule and encoder that no study measured."""
DEFAULT_THRESHOLD = 0.6
"""The threshold on the best cluster's regression score, chosen with the length scale on ProtoQA dev folds."""
PAPERS_THRESHOLD = 0.1
"""The ProtoQA paper's threshold on the best cluster's regression score."""
DEFAULT_LENGTH_SCALE = "median*0.5"
"""The RBF length-scale rule: half the median distance between the question's distinct cluster strings."""
PAPERS_LENGTH_SCALE = 1.0
"""The length scale of the papers' code: scikit-learn's default kernel before version 1.9, fixed at 1."""
MAX_TRAINING_ANSWERS = 5_000
"""Distinct cluster strings a question may have (about 50 in ProtoQA): more is an error, never a silent cut."""
ENCODER_OPTION = (
    "Give another encoder with --encoder (a Hugging Face Hub id or a local folder; "
    "ProtoQA('roberta', encoder=...) in Python)"
)


def locate_encoder(encoder: str = DEFAULT_ENCODER, runtime: str = "auto") -> ModelLocation:
    """Where the encoder's weights are: a folder, the Hugging Face cache or the Hub (never another model).

    >>> locate_encoder("/nonexistent/encoder")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: the encoder /nonexistent/encoder was not found. Looked in: ...--encoder...
    """
    if not isinstance(encoder, str) or not encoder.strip():
        raise ValueError("the encoder must be a Hugging Face Hub id or a local folder")
    location = locate_model(
        encoder.strip(),
        what="encoder",
        folder_hint=f"a local folder named {encoder!r} (none)",
        override_hint=ENCODER_OPTION,
    )
    check_encoder_folder(location.path, encoder)
    if choose_runtime(runtime, location.path, "runtime") == "torch":
        import importlib.util

        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        if missing:
            raise ImportError(
                f"the roberta similarity needs {' and '.join(missing)} for the encoder {encoder} "
                f"(it cannot run on numpy): {install_command('roberta')} and PyTorch (the CPU build is enough)"
            )
    return location


def check_encoder_folder(folder: Union[str, Path], encoder: str) -> None:
    """Refuse, in one line naming ``--encoder``, a folder that holds no model or whose configuration asks
    to run its own code (remote code is never run).

    >>> import tempfile
    >>> check_encoder_folder(tempfile.mkdtemp(), "my-encoder")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --encoder my-encoder: the folder ... holds no model (no config.json). ...
    """
    config = Path(folder) / "config.json"
    if not config.is_file():
        raise ValueError(f"--encoder {encoder}: the folder {folder} holds no model (no config.json). {ENCODER_OPTION}")
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(
            f"--encoder {encoder}: {config} is not a readable model configuration ({type(exc).__name__}). "
            f"{ENCODER_OPTION}"
        ) from None
    if isinstance(settings, dict) and settings.get("auto_map"):
        raise ValueError(
            f"--encoder {encoder}: {config} asks to run the model's own code (auto_map), which is never run; "
            f"use an encoder that transformers supports as it is. {ENCODER_OPTION}"
        )


@dataclass(frozen=True)
class _Fitted:
    models: OneVsAll
    strings: dict[str, tuple[int, ...]]
    counted: bool
    cut: bool


class RobertaSimilarity:
    """The ``roberta`` similarity: for one question, which cluster each prediction goes to.

    ``repetition`` trains on the crowd answers with repetition (the paper's; False: each distinct
    string once); ``context`` puts the question before each answer (the paper's); ``length_scale``
    is a :func:`~protoqa_core.similarity.gaussian_process.length_scale_rule`. :attr:`label` names the
    encoder, its weights' revision and every setting, for the signature.

    >>> sim = RobertaSimilarity("/models/roberta-base")  # doctest: +SKIP
    >>> sim.label  # doctest: +SKIP
    'roberta(roberta-base@sha256:...,numpy:round4,gp-rbf:median*0.5,thr=0.6,unvalidated)'
    """

    name = "roberta"

    def __init__(
        self,
        encoder: str = DEFAULT_ENCODER,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        device: str = "cpu",
        repetition: bool = True,
        context: bool = True,
        length_scale: LengthScale = DEFAULT_LENGTH_SCALE,
        runtime: str = "auto",
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not np.isfinite(threshold):
            raise ValueError(f"the roberta threshold must be a finite number, got {threshold!r}")
        self.location = locate_encoder(encoder, runtime if device == "cpu" else "torch")
        self.encoder_name = _short_name(encoder, self.location)
        self.revision = model_revision(self.location)
        self.threshold = float(threshold)
        self.repetition, self.context = bool(repetition), bool(context)
        try:
            self.length_scale: LengthScale = length_scale_rule(length_scale)
        except ValueError as exc:
            raise ValueError(f"roberta similarity: {exc}") from None
        self.encoder = ContextEncoder(self.location.path, device=device, runtime=runtime)
        self._fitted: OrderedDict[tuple, _Fitted] = OrderedDict()
        self.uncounted: set[str] = set()
        # Distinct predictions that are not a cluster string of their question, and those that went to a
        # cluster: with none, the similarity was exact match on what it saw (the metric reads and resets them).
        self.non_identical = 0
        self.non_identical_matched = 0

    @property
    def validated(self) -> bool:
        """Whether a study measured this rule with this encoder: the default rule (length scale, threshold,
        crowd repetition, the question as context) with the weights of :data:`VALIDATED_REVISIONS`."""
        return (
            self.revision in VALIDATED_REVISIONS
            and self.length_scale == DEFAULT_LENGTH_SCALE
            and self.threshold == DEFAULT_THRESHOLD
            and self.repetition
            and self.context
        )

    @property
    def label(self) -> str:
        """The similarity's name in signatures: encoder@revision, every setting that changes numbers, and
        ``unvalidated`` unless :attr:`validated`."""
        rule = self.length_scale
        kernel = f"gp-rbf:{rule}" if isinstance(rule, str) else f"gp-rbf:l={rule:g}"
        runtime = f"{self.encoder.runtime}:round{EMBEDDING_DECIMALS}"
        parts = [f"{self.encoder_name}@{self.revision}", runtime, kernel, f"thr={self.threshold:g}"]
        if not self.repetition:
            parts.append("distinct")
        if not self.context:
            parts.append("no-question")
        if not self.validated:
            parts.append(UNVALIDATED)
        return f"roberta({','.join(parts)})"

    @property
    def unvalidated_message(self) -> Optional[str]:
        """One sentence for the warning a result with an unvalidated rule carries (None when validated)."""
        if self.validated:
            return None
        setting = self.label[len("roberta(") : -len(f",{UNVALIDATED})")]
        return (
            f"the roberta setting of this result ({setting}) was not validated: the default rule "
            f"(median*0.5, threshold 0.6) was chosen and measured with {VALIDATED_ENCODER} only, so no figure "
            "of this setting's precision or of its score on wrong answers exists (signature part "
            f"'{UNVALIDATED}')"
        )

    def _context(self, question: Question) -> str:
        if not self.context:
            return ""
        text = (question.question or question.question_original).strip()
        if not text:
            raise DataFormatError(
                "the roberta similarity puts the question before each answer, but this question has no text",
                question_id=question.id,
            )
        return text

    def _fit(self, question: Question) -> _Fitted:
        """The question's one-vs-all regressions (cached for the last 64 questions)."""
        raw = dict(question.raw_answers or {})
        key = (
            question.id,
            question.question,
            question.question_original,
            tuple((c.answers) for c in question.clusters),
            tuple(sorted(raw.items())) if self.repetition else (),
        )
        found = self._fitted.get(key)
        if found is not None:
            self._fitted.move_to_end(key)
            return found
        strings: dict[str, list[int]] = {}
        for j, cluster in enumerate(question.clusters):
            for answer in cluster.answers:
                owners = strings.setdefault(answer, [])
                if j not in owners:
                    owners.append(j)
        answers = sorted(strings)
        if len(answers) > MAX_TRAINING_ANSWERS:
            raise DataFormatError(
                f"the roberta similarity trains on at most {MAX_TRAINING_ANSWERS} distinct cluster "
                f"strings per question; this one has {len(answers)}",
                question_id=question.id,
            )
        members = np.zeros((len(answers), len(question.clusters)), dtype=bool)
        for i, answer in enumerate(answers):
            members[i, strings[answer]] = True
        counts = [float(raw.get(a) or 1.0) for a in answers] if self.repetition else None
        counted = not self.repetition or (bool(answers) and any(raw.get(a) for a in answers))
        vectors, cut = self._cluster_vectors(self._context(question), answers)
        models = fit_one_vs_all(vectors, members, counts=counts, model="regression", length_scale=self.length_scale)
        fitted = _Fitted(models, {a: tuple(strings[a]) for a in answers}, counted, cut)
        if len(self._fitted) >= 64:
            self._fitted.popitem(last=False)
        self._fitted[key] = fitted
        return fitted

    def _cluster_vectors(self, context: str, answers: list[str]) -> tuple[np.ndarray, bool]:
        """The vectors of a question's cluster strings, and whether one was cut: from the user's cache when kept
        there (the same for every system scored), else encoded and kept."""
        key = self._encodings_key(context, answers) if answers else None
        if key is not None:
            kept = _read_vectors(ENCODINGS_CACHE.read(key), len(answers))
            if kept is not None:
                return kept
        before = self.encoder.num_cut
        vectors = self.encoder.embed(context, answers) if answers else np.zeros((0, 1))
        cut = self.encoder.num_cut > before
        if key is not None:
            buffer = io.BytesIO()
            np.save(buffer, np.ascontiguousarray(vectors, dtype=np.float64), allow_pickle=False)
            ENCODINGS_CACHE.write(key, (b"1" if cut else b"0") + buffer.getvalue())
        return vectors, cut

    def _encodings_key(self, context: str, answers: list[str]) -> Optional[str]:
        """Everything that decides the vectors of ``answers`` in ``context``; None on torch (a vector depends on
        its batch there), where nothing is kept."""
        if self.encoder.runtime != "numpy":
            return None
        from protoqa_core import __version__

        weights = Path(self.location.path) / "model.safetensors"
        try:
            info = weights.stat()
            identity = f"{weights.resolve()}:{info.st_size}:{info.st_mtime_ns}"
        except OSError:
            return None
        return json.dumps(
            {
                "kind": "roberta-encodings",
                "format": 1,
                "version": __version__,
                "encoder": f"{self.encoder_name}@{self.revision}",
                "weights": identity,
                "runtime": f"numpy:round{EMBEDDING_DECIMALS}:exact{EXACT_BITS}",
                "tokens": [MAX_CONTEXT_TOKENS, MAX_ANSWER_TOKENS],
                "context": context,
                "answers": answers,
            },
            ensure_ascii=False,
        )

    def scores(self, question: Question, predictions: Sequence[str]) -> np.ndarray:
        """``S[i, c]``: the regression score of (already normalized) prediction ``i`` for cluster ``c``.

        >>> RobertaSimilarity("/models/roberta-base").scores(question, ["age"])  # doctest: +SKIP
        array([[0.98, 0.01]])
        """
        fitted = self._fit(question)
        if not predictions or not question.clusters:
            return np.zeros((len(predictions), len(question.clusters)))
        vectors = self.encoder.embed(self._context(question), list(predictions))
        return fitted.models.scores(vectors)

    def matrix(self, question: Question, predictions: Sequence[str]) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The metric's 0/1 matrix for normalized predictions, and the cells resting on a cut string.

        Row ``i`` has a 1 in the column of the cluster prediction ``i`` goes to (every
        cluster holding the identical string; else the best-scoring cluster when its
        score exceeds the threshold, all of them when tied) and 0 elsewhere.

        >>> RobertaSimilarity("/models/roberta-base").matrix(question, ["age", "zzz"])[0]  # doctest: +SKIP
        array([[1., 0.], [0., 0.]])
        """
        fitted = self._fit(question)
        if not fitted.counted and self.repetition and question.clusters:
            self.uncounted.add(question.id)
        out = np.zeros((len(predictions), len(question.clusters)))
        if not predictions or not question.clusters:
            return out, []
        before = self.encoder.num_cut
        distinct = sorted(set(predictions) - set(fitted.strings))
        scores = dict(zip(distinct, self.scores(question, distinct), strict=True)) if distinct else {}
        for i, prediction in enumerate(predictions):
            owners = fitted.strings.get(prediction)
            if owners is not None:
                out[i, list(owners)] = 1.0
                continue
            row = scores[prediction]
            best = float(row.max())
            if best > self.threshold:
                out[i, np.flatnonzero(row == best)] = 1.0
        self.non_identical += len(distinct)
        self.non_identical_matched += sum(
            1 for prediction in distinct if float(scores[prediction].max()) > self.threshold
        )
        cut = fitted.cut or self.encoder.num_cut > before
        cells = [(i, j) for i in range(len(predictions)) for j in range(len(question.clusters))] if cut else []
        return out, cells


ENCODINGS_CACHE = CacheFolder("roberta_encodings")
"""Where the vectors of each question's cluster strings are kept (:class:`~protoqa_core.io.cache_files.CacheFolder`)."""


def _read_vectors(body: Optional[bytes], rows: int) -> Optional[tuple[np.ndarray, bool]]:
    """Kept vectors (a cut flag, then a ``.npy`` float64 matrix of ``rows`` rows), None when absent or not that."""
    if body is None or body[:1] not in (b"0", b"1"):
        return None
    try:
        vectors = np.load(io.BytesIO(body[1:]), allow_pickle=False)
    except (ValueError, OSError, EOFError):
        return None
    if vectors.dtype != np.float64 or vectors.ndim != 2 or len(vectors) != rows:
        return None
    return vectors, body[:1] == b"1"


def _short_name(encoder: str, location: ModelLocation) -> str:
    """The encoder's name for a signature: the Hub id, or a folder's name."""
    if location.source == "local":
        parts = [p for p in location.path.split("/") if p]
        # A folder called just "model" (as in a packaged copy) is named by its parent too.
        name = "/".join(parts[-2:]) if parts and parts[-1] in ("model", "models") else (parts[-1] if parts else "")
        return re.sub(r"[|,()\s]", "_", name) or "local"
    return re.sub(r"[|,()\s]", "_", encoder.strip())
