"""Bounds for every page that scores requests from outside: the demo Space and the Hub-folder apps.

Three layers, each cheap before the next costs anything: :class:`BodyLimit` (an ASGI middleware
refusing a large body before it is read), :func:`check_question_limits` and
:func:`check_compute_request` (caps checked before any scoring), and :func:`run_with_budget`
(scoring in a forked process under a time and memory budget). The Space and the apps that
``python -m protoqa_integrations.hub.folders`` writes share them; the figures: docs/space.md.

>>> check_question_limits([["dog", "puppy"], ["cat"]], [6, 4], ["cat", "fish"])  # comparisons
6
>>> check_question_limits([["dog"]], [6], ["dog"] * 501)
Traceback (most recent call last):
...
protoqa_integrations.hub.serving.LimitError: 501 answers; at most 500 are scored
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from protoqa_core.cli_options import DEFAULT_MAX_ANSWERS

__all__ = [
    "LimitError",
    "MAX_REQUEST_BYTES",
    "MAX_QUESTION_CHARS",
    "MAX_ANSWERS",
    "MAX_ANSWER_CHARS",
    "MAX_CLUSTERS",
    "MAX_CLUSTER_STRINGS",
    "MAX_CLUSTER_ANSWER_CHARS",
    "MAX_CLUSTER_ANSWER_TOKENS",
    "MAX_SCORED_PAIRS",
    "MAX_CLUSTER_COUNT",
    "MAX_QUESTIONS",
    "MAX_REQUEST_PAIRS",
    "SCORE_TIME_BUDGET",
    "SCORE_MEMORY_BUDGET",
    "BodyLimit",
    "launch_options",
    "check_question_limits",
    "check_compute_request",
    "run_with_budget",
]

MAX_REQUEST_BYTES = 2 * 2**20
"""Largest request body read (2 MiB); the caps below fit in about 0.7 MB of JSON."""
MAX_QUESTION_CHARS = 300
MAX_ANSWERS = DEFAULT_MAX_ANSWERS
"""Answers (or samples) per question: the command lines' default cap, so that a file the Space scores is one
``protoqa-eval`` scores at its defaults, and the other way round."""
MAX_ANSWER_CHARS = 1000
MAX_CLUSTERS = 50
MAX_CLUSTER_STRINGS = 300
"""Answer strings in all the clusters of a question."""
MAX_CLUSTER_ANSWER_CHARS = 200
MAX_CLUSTER_ANSWER_TOKENS = 25
MAX_SCORED_PAIRS = 50_000
"""(distinct answer, cluster answer) comparisons per question."""
MAX_CLUSTER_COUNT = 1_000_000
MAX_QUESTIONS = 200
"""Questions in one ``compute`` request of a Hub-folder app."""
MAX_REQUEST_PAIRS = 400_000
"""Comparisons in one ``compute`` request, all questions together."""
SCORE_TIME_BUDGET = 20.0
"""Seconds a request may spend scoring."""
SCORE_MEMORY_BUDGET = 768 * 2**20
"""Bytes the scoring process may grow by."""


class LimitError(ValueError):
    """A request over a cap or a budget; the message says which and what is allowed."""


class BodyLimit:
    """ASGI middleware: refuse a request body over ``max_bytes`` with ``413`` before the app reads it.

    A body without ``Content-Length`` is counted as it arrives.

    >>> from starlette.middleware import Middleware  # doctest: +SKIP
    >>> FastAPI(middleware=[Middleware(BodyLimit, max_bytes=MAX_REQUEST_BYTES)])  # doctest: +SKIP
    """

    def __init__(self, app: Any, max_bytes: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _refuse(self, send: Callable[..., Any]) -> None:
        body = (
            f'{{"error": "the request body is larger than {self.max_bytes} bytes, the most this page reads"}}'
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Mapping[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.strip().isdigit() or int(declared) > self.max_bytes):
            await self._refuse(send)
            return
        received = 0
        started = refused = False

        async def counted_receive() -> Any:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # Answer now and tell the app the client left: what it read so far is dropped,
                    # and a web framework that turns read errors into 400 never sees one.
                    refused = True
                    if not started:
                        await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: Mapping[str, Any]) -> None:
            nonlocal started
            if refused:
                return  # the 413 has been sent
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted_receive, watched_send)


def launch_options(max_bytes: int = MAX_REQUEST_BYTES) -> dict[str, Any]:
    """Keyword arguments for ``gr.Blocks.launch`` that put :class:`BodyLimit` in front of the app.

    >>> sorted(launch_options()["app_kwargs"])
    ['middleware']
    """
    from starlette.middleware import Middleware  # gradio's web framework; only a page needs it

    return {"app_kwargs": {"middleware": [Middleware(BodyLimit, max_bytes=max_bytes)]}}


def check_question_limits(
    cluster_answers: Sequence[Sequence[str]],
    counts: Sequence[int],
    answers: Sequence[str],
    question: str = "",
    cluster_ids: Optional[Sequence[str]] = None,
) -> int:
    """Refuse (:class:`LimitError`) one question over a cap; return its comparison count.

    ``cluster_answers[i]`` holds the strings of cluster ``i``, ``counts[i]`` its count;
    ``answers`` are the answers or samples to score (repeats allowed).

    >>> check_question_limits([["a " * 30]], [1], ["dog"], cluster_ids=["q1.0"])
    Traceback (most recent call last):
    ...
    protoqa_integrations.hub.serving.LimitError: cluster 'q1.0' has an answer of 30 words; at most 25 are allowed
    """
    if len(answers) > MAX_ANSWERS:
        raise LimitError(f"{len(answers)} answers; at most {MAX_ANSWERS} are scored")
    for answer in answers:
        if len(answer) > MAX_ANSWER_CHARS:
            raise LimitError(
                f"an answer has {len(answer)} characters; at most {MAX_ANSWER_CHARS} are allowed "
                "(the metric reads only the first 50)"
            )
    if len(question) > MAX_QUESTION_CHARS:
        raise LimitError(f"the question has {len(question)} characters; at most {MAX_QUESTION_CHARS} are allowed")
    if len(cluster_answers) > MAX_CLUSTERS:
        raise LimitError(f"{len(cluster_answers)} clusters; at most {MAX_CLUSTERS} are allowed")
    strings = sum(len(c) for c in cluster_answers)
    if strings > MAX_CLUSTER_STRINGS:
        raise LimitError(f"the clusters hold {strings} answer strings; at most {MAX_CLUSTER_STRINGS} are allowed")
    distinct = len(set(answers))
    pairs = distinct * strings
    if pairs > MAX_SCORED_PAIRS:
        raise LimitError(
            f"{distinct} distinct answers against {strings} cluster answers make {pairs} comparisons; "
            f"at most {MAX_SCORED_PAIRS} are allowed"
        )
    ids = list(cluster_ids) if cluster_ids is not None else [str(i) for i in range(len(cluster_answers))]
    for cid, strings_of, count in zip(ids, cluster_answers, counts, strict=True):
        if count > MAX_CLUSTER_COUNT:
            raise LimitError(f"cluster {cid!r} counts {count} people; at most {MAX_CLUSTER_COUNT}")
        for answer in strings_of:
            if len(answer) > MAX_CLUSTER_ANSWER_CHARS:
                raise LimitError(
                    f"cluster {cid!r} has an answer of {len(answer)} characters; at most "
                    f"{MAX_CLUSTER_ANSWER_CHARS} are allowed"
                )
            words = len(answer.split())
            if words > MAX_CLUSTER_ANSWER_TOKENS:
                raise LimitError(
                    f"cluster {cid!r} has an answer of {words} words; at most {MAX_CLUSTER_ANSWER_TOKENS} are allowed"
                )
    return pairs


def _reference_strings(reference: Any, question_id: str) -> tuple[list[list[str]], list[int], list[str]]:
    """(cluster strings, counts, ids) of one reference: clusters, or raw answers (each its own string)."""
    from protoqa_core.io.readers import clusters_from_records
    from protoqa_core.io.rows import raw_answer_counts

    if isinstance(reference, Mapping) and set(reference) == {"answer", "count"}:
        raw = raw_answer_counts(reference, question_id) or {}
        return [[answer] for answer in raw], [int(min(c, MAX_CLUSTER_COUNT + 1)) for c in raw.values()], list(raw)
    clusters = clusters_from_records(reference, question_id)
    return [list(c.answers) for c in clusters], [c.count for c in clusters], [c.id for c in clusters]


def check_compute_request(predictions: Any, references: Any) -> None:
    """Refuse (:class:`LimitError`) an ``evaluate`` ``compute`` request over a cap, before any scoring.

    Every question within :func:`check_question_limits`; :data:`MAX_QUESTIONS` and
    :data:`MAX_REQUEST_PAIRS` bound the request.

    >>> check_compute_request([["cat"]], [{"answers": [["dog"], ["cat"]], "count": [6, 4]}])
    >>> check_compute_request([["cat"]] * 201, [{"answers": [["cat"]], "count": [1]}] * 201)
    Traceback (most recent call last):
    ...
    protoqa_integrations.hub.serving.LimitError: 201 questions; at most 200 in one request
    """
    if not isinstance(predictions, list) or not isinstance(references, list):
        raise LimitError("predictions and references must be JSON lists, one entry per question")
    if max(len(predictions), len(references)) > MAX_QUESTIONS:
        raise LimitError(f"{max(len(predictions), len(references))} questions; at most {MAX_QUESTIONS} in one request")
    total = 0
    for i, (answers, reference) in enumerate(zip(predictions, references, strict=False)):
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise LimitError(f"question {i}: predictions must be a list of strings")
        strings, counts, ids = _reference_strings(reference, str(i))
        try:
            total += check_question_limits(strings, counts, answers, cluster_ids=ids)
        except LimitError as exc:
            raise LimitError(f"question {i}: {exc}") from None
        if total > MAX_REQUEST_PAIRS:
            raise LimitError(
                f"the questions up to question {i} make {total} comparisons; at most {MAX_REQUEST_PAIRS} in one request"
            )


def _budget_child(sender: Any, function: Callable[..., Any], args: tuple, kwargs: dict, memory: int) -> None:
    try:
        import resource

        with open("/proc/self/status", encoding="ascii") as fh:
            vm_size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm_size + memory, vm_size + memory))
    except (ImportError, OSError, ValueError, StopIteration):
        pass  # no /proc or no rlimits: the caps and the time budget still apply
    try:
        sender.send((True, function(*args, **kwargs)))
        return
    except MemoryError:
        pass  # answered below: until this block ends, the traceback's frames hold the memory they filled
    except BaseException as exc:  # noqa: BLE001 (everything goes back to the server as a value)
        try:
            sender.send((False, exc))
        except Exception:  # noqa: BLE001 (an exception that cannot be pickled: the server must still get an answer)
            sender.send((False, LimitError(f"{type(exc).__name__}: {exc}")))
        return
    sender.send((False, LimitError(f"scoring needed more than its {memory // 2**20} MB memory budget and was stopped")))


def run_with_budget(
    function: Callable[..., Any],
    *args: Any,
    seconds: float = SCORE_TIME_BUDGET,
    memory: int = SCORE_MEMORY_BUDGET,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` in a forked process, stopped after ``seconds`` (:class:`LimitError`).

    The child inherits what the server has loaded (WordNet, the metric), so it starts in milliseconds;
    its address space may grow by at most ``memory`` bytes. Without ``fork`` it runs in this process.

    >>> run_with_budget(sum, [1, 2, 3])
    6
    >>> import time
    >>> run_with_budget(time.sleep, 5, seconds=0.5)
    Traceback (most recent call last):
    ...
    protoqa_integrations.hub.serving.LimitError: scoring took longer than the 0.5 s budget and was stopped
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        return function(*args, **kwargs)
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_budget_child, args=(sender, function, args, kwargs, memory), daemon=True)
    process.start()
    sender.close()
    ended = False
    try:
        if not receiver.poll(seconds):
            raise LimitError(f"scoring took longer than the {seconds:g} s budget and was stopped")
        ok, value = receiver.recv()
    except EOFError:
        ended = True
    finally:
        receiver.close()
        if process.is_alive():
            process.kill()
        process.join()
    if ended:
        raise LimitError(f"scoring stopped unexpectedly ({_how_it_ended(process.exitcode)})")
    if not ok:
        raise value
    return value


def _how_it_ended(exitcode: Optional[int]) -> str:
    """Say how a scoring process that sent no result ended, from its exit code.

    A signal is named, since SIGKILL is what an out-of-memory killer sends.

    >>> _how_it_ended(-9)
    'killed by SIGKILL: out of memory?'
    >>> _how_it_ended(1)
    'exit status 1'
    """
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (": out of memory?" if name == "SIGKILL" else "")
    return f"exit status {exitcode}"
