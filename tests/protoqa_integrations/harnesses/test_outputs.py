"""Every system file read in one pass: each text format told and read, the answers cap, long first lines, files
too large to parse whole.

The outputs of real harness runs are converted and ranked where the harness runs, on the run made there:
lm-eval's logged samples in ``lm_eval_tasks/test_harness.py``, lighteval's details in
``lighteval_tasks/test_tasks.py``.
"""

from __future__ import annotations

import json

import pytest

from protoqa_core.io.files import DataFormatError

# ---------------------------------------------------------------- one read of any system file


def _lm_eval_lines(samples: dict[str, list[str]]) -> str:
    return "".join(
        json.dumps({"doc_id": i, "doc": {"id": qid}, "filter": "answers", "filtered_resps": [answers]}) + "\n"
        for i, (qid, answers) in enumerate(samples.items())
    )


@pytest.mark.parametrize("size", ["small", pytest.param("large", marks=pytest.mark.slow)])
def test_every_text_format_is_told_and_read_in_one_pass_keeping_what_is_asked(tmp_path, size):
    from protoqa_integrations.harnesses.outputs import detect_format, read_system_file

    # "large": past the 16 MB parsed whole, so each format is told from its first line and streamed.
    padding = {f"pad{i}": [f"answer {j}" for j in range(200)] for i in range(7_500 if size == "large" else 2)}
    samples = {"q1": ["dog", "dog", "cat"], "q2": ["fish"], **padding}
    files = {
        "lm-eval": ("samples_protoqa_2026-01-01T00-00-00.jsonl", _lm_eval_lines(samples)),
        "answers": ("a.json", json.dumps({"model_answers": samples, "generation": {"model": "m"}}, indent=1)),
        "predictions": ("p.json", json.dumps(samples, indent=1)),
    }
    keep = lambda field, qid, line: qid in ("q1", "q2")  # noqa: E731
    for fmt, (name, text) in files.items():
        (tmp_path / name).write_text(text)
        assert (tmp_path / name).stat().st_size > 16 * 2**20 or size == "small"
        assert detect_format(tmp_path / name) == fmt
        read = read_system_file(tmp_path / name, keep=keep)
        got = (
            read.harness.samples
            if read.harness is not None
            else read.document.lists("model_answers" if fmt == "answers" else None)
        )
        assert read.format == fmt and got == {"q1": ["dog", "dog", "cat"], "q2": ["fish"]}
    # A repeated id is refused by the default keep, naming the file, the line and the id.
    repeated = tmp_path / "samples_protoqa_2026-01-02T00-00-00.jsonl"
    repeated.write_text(_lm_eval_lines({"q1": ["dog"]}) * 2)
    with pytest.raises(DataFormatError, match=r"line 2, question 'q1': duplicate question id \(first on line 1\)"):
        read_system_file(repeated)


def test_the_answers_cap_holds_for_harness_outputs_with_their_line(tmp_path):
    from protoqa_integrations.harnesses.outputs import read_system_file

    path = tmp_path / "samples_protoqa_2026-01-01T00-00-00.jsonl"
    path.write_text(_lm_eval_lines({"q1": ["dog"], "q2": ["cat"] * 11}))
    with pytest.raises(DataFormatError, match=r"line 2, question 'q2': more than 10 answers"):
        read_system_file(path, max_answers=10)
    assert read_system_file(path, max_answers=11).harness.samples["q2"] == ["cat"] * 11


def _count_parses(monkeypatch) -> list:
    """Every parse of the readers: ``("line", text)`` for a value parsed whole, ``("stream", line)`` for one
    parsed as it is read."""
    from protoqa_core.io import json_values
    from protoqa_integrations.harnesses import harness_logs, outputs

    parses: list = []
    for module in (json_values, outputs, harness_logs):
        real = module.parse_json
        monkeypatch.setattr(
            module,
            "parse_json",
            lambda text, *args, real=real: parses.append(("line", text.strip())) or real(text, *args),
        )
    real_events = json_values.json_events
    monkeypatch.setattr(
        json_values,
        "json_events",
        lambda stream, path, line: parses.append(("stream", line)) or real_events(stream, path, line),
    )
    return parses


@pytest.mark.parametrize("long_line", [8, None], ids=["long line of 8 bytes", "long line of 1 MB"])
def test_a_document_whose_first_line_is_long_is_told_and_read_as_a_document_once(tmp_path, monkeypatch, long_line):
    from protoqa_core.io import json_values
    from protoqa_integrations.harnesses import outputs

    answers = ["dog", "cat"] if long_line else ["an answer of some length"] * 48_000
    if long_line:
        monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", long_line)
        monkeypatch.setattr(outputs, "LARGE_LINE_BYTES", long_line)
    path = tmp_path / "p.json"
    path.write_text('{"q1": ' + json.dumps(answers) + ',\n"q2": ["b"]}\n')
    assert path.read_bytes().index(b"\n") > (long_line or json_values.LARGE_LINE_BYTES)
    parses = _count_parses(monkeypatch)
    read = outputs.read_system_file(path)
    assert read.format == "predictions" and read.document.lists() == {"q1": answers, "q2": ["b"]}
    assert [kind for kind, _ in parses].count("stream") == 0  # the document parsed to tell the format is read


@pytest.mark.parametrize("fmt", ["predictions", "lm-eval"])
def test_a_file_too_large_to_parse_whole_has_each_line_parsed_once(tmp_path, monkeypatch, fmt):
    from protoqa_integrations.harnesses import outputs

    monkeypatch.setattr(outputs, "_WHOLE_BYTES", 200)  # told from its first line, then streamed
    samples = {f"q{i}": ["dog", "cat"] for i in range(12)}
    if fmt == "lm-eval":
        text = _lm_eval_lines(samples)
    else:
        text = "".join(json.dumps({qid: answers}) + "\n" for qid, answers in samples.items())
    path = tmp_path / "samples_protoqa_2026-01-01T00-00-00.jsonl"
    path.write_text(text)
    parses = _count_parses(monkeypatch)
    read = outputs.read_system_file(path)
    got = read.harness.samples if read.harness is not None else read.document.lists()
    assert read.format == fmt and got == samples
    assert sorted(parses) == sorted(("line", line) for line in text.splitlines())


def test_a_large_file_whose_first_line_is_long_is_not_parsed_from_a_piece_of_it(tmp_path, monkeypatch):
    from protoqa_core.io import json_values
    from protoqa_integrations.harnesses import outputs

    monkeypatch.setattr(outputs, "_WHOLE_BYTES", 64)
    monkeypatch.setattr(outputs, "LARGE_LINE_BYTES", 16)
    monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", 16)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"q0": ["dog"] * 20}) + "\n" + "".join(f'{{"q{i}":[]}}\n' for i in range(1, 8)))
    parses = _count_parses(monkeypatch)
    read = outputs.read_system_file(path)
    assert read.document.lists() == {"q0": ["dog"] * 20, **{f"q{i}": [] for i in range(1, 8)}}
    assert parses == [("stream", 1)] + [("line", f'{{"q{i}":[]}}') for i in range(1, 8)]
