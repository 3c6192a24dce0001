"""The page of the ProbEval evaluate module, run by a Space as ``python app.py`` in this folder."""

import json
import math
from pathlib import Path

import evaluate
import gradio as gr

try:
    from cfc_probeval.evaluate_modules import PROBEVAL_CONFIGS as CONFIGS
except ImportError as exc:
    raise SystemExit("probeval: the package protoqa-eval is not installed; add a line installing it to "
                     f"requirements.txt (see the comment there) ({exc})") from None

HERE = Path(__file__).resolve().parent
SCRIPT = str(HERE / "probeval.py")
CARD = (HERE / "README.md").read_text(encoding="utf-8").split("---", 2)[-1]
_loaded = {}


def _module(config):
    if config not in _loaded:
        _loaded[config] = evaluate.load(SCRIPT, config)
    return _loaded[config]


def _finite(value):
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def compute(predictions: str, references: str, config: str, options: str) -> dict:
    """The module's result for JSON predictions and references under one configuration."""
    try:
        kwargs = json.loads(options or "{}")
        if not isinstance(kwargs, dict):
            raise ValueError("options must be a JSON object of keyword arguments, such as {}")
        result = _module(config).compute(predictions=json.loads(predictions),
                                         references=json.loads(references), **kwargs)
        if not _finite(result):
            raise ValueError("no question could be scored (the result is not a finite number)")
    except Exception as exc:  # shown in the page instead of crashing the server
        raise gr.Error(f"{type(exc).__name__}: {exc}")
    return result


with gr.Blocks(title="ProbEval") as demo:
    gr.Markdown("# ProbEval\n\nOne JSON list entry per question; the metric card is below.")
    config = gr.Dropdown(list(CONFIGS), value="default", label="configuration")
    with gr.Row():
        predictions = gr.Code(value='[["dog", "dog", "dog", "puppy", "cat", "banana"]]', language="json", label="predictions")
        references = gr.Code(value='[{"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]', language="json", label="references")
    options = gr.Code(value="{}", language="json", label="other keyword arguments of compute (JSON object)")
    button = gr.Button("Compute", variant="primary")
    result = gr.JSON(label="result")
    button.click(compute, [predictions, references, config, options], result, api_name="compute")
    gr.Markdown(CARD)

if __name__ == "__main__":
    demo.launch()
