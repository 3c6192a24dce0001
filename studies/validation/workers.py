"""The second process of ``python -m studies.validation --jobs 2``: the matching study, then the system level.

It lives in its own module so that a spawned process can import it whatever module
started the run.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional

__all__ = ["side_studies", "receive", "run_matching", "run_systems", "cosine_threshold", "limit_threads"]


def log(message: str) -> None:
    """Progress on stderr."""
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def limit_threads(threads: int) -> Iterator[None]:
    """Cap PyTorch and the BLAS/OpenMP pools at ``threads`` while the block runs.

    The study is thousands of small matrix operations (GP fits, K-means, MiniLM on
    short strings); on a shared 2-core machine letting each library start a thread
    per core made them 10 to 20 times slower than one thread.

    >>> from threadpoolctl import threadpool_info
    >>> with limit_threads(1):
    ...     all(pool["num_threads"] == 1 for pool in threadpool_info())
    True
    """
    from threadpoolctl import threadpool_limits

    try:
        import torch
    except ImportError:  # pragma: no cover - torch comes with sentence-transformers
        torch = None
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        if torch is not None and before is not None:
            torch.set_num_threads(before)


def side_studies(inbox: Any, outbox: Any, options: dict[str, Any]) -> None:
    """Second process: the matching study, then the system level once the parent sends the tuned settings.

    Queues (not a bare pipe) so that sending a result never waits for the other process to read it.
    """
    try:
        with limit_threads(options["threads"]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            matching = run_matching(options)
            outbox.put(("matching", matching))
            if options["systems"]:
                options = {**options, "cosine_threshold": cosine_threshold(matching)}
                outbox.put(("systems", run_systems(options, lambda: receive(inbox, "settings"))))
    except BaseException as exc:  # noqa: BLE001 (whatever stops the worker is reported by the parent, which exits with a one-line error)
        outbox.put(("error", f"{type(exc).__name__}: {exc}"))


def receive(queue: Any, wanted: str, worker: Any = None) -> Any:
    """The next message of the other process, which must be ``wanted``; RuntimeError on its error or death."""
    import queue as queues

    while True:
        try:
            kind, payload = queue.get(timeout=5)
            break
        except queues.Empty:
            if worker is not None and not worker.is_alive():
                raise RuntimeError("the second process ended without sending its results") from None
    if kind == "error":
        raise RuntimeError(f"second process: {payload}")
    if kind != wanted:
        raise RuntimeError(f"second process: expected {wanted}, got {kind}")
    return payload


def run_matching(options: Mapping[str, Any]) -> dict:
    """The matching-validity study with the run's options."""
    from .matching_study import run_matching_study

    log("matching validity (ProtoQA dev)")
    return run_matching_study(
        options["data_dir"],
        embedder=options["embedder"],
        matchers=options["matchers"],
        num_questions=options["questions"],
        seed=options["seed"],
        log=log,
        budgets={"wordnet_wup": options["wup_budget"]},
    )


def run_systems(options: Mapping[str, Any], settings: Callable[[], Mapping[str, Any]]) -> dict:
    """The system-level study; ``settings`` is called for the study's tuned settings after the search."""
    from .design import UNTUNED_PARAMETERS
    from .system_study import run_system_study

    log("levers chosen on dev pools, then the system level (CFC test) with the shipped automatic default")
    cosine = options["cosine_threshold"]
    if cosine is None:
        cosine = UNTUNED_PARAMETERS["cosine_threshold"]
    return run_system_study(
        options["data_dir"],
        settings,
        cosine_threshold=cosine,
        embedders=list(dict.fromkeys([options["embedder"] or "minilm", "char-ngrams"])),
        extra_embedders=options.get("extra_embedders", ()),
        seed=options["seed"],
        num_questions=options["questions"],
        log=log,
    )


def cosine_threshold(matching: Mapping[str, Any]) -> Optional[float]:
    """The cosine threshold the matching study chose on all questions (None when cosine was not studied)."""
    cosine = matching.get("matchers", {}).get("cosine")
    return None if not cosine or cosine.get("threshold") is None else float(cosine["threshold"])
