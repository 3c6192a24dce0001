"""Write an ``evaluate`` module as a folder ready to run as a Hugging Face Space.

    python -m protoqa_integrations.hub.folders OUT_DIR [--module protoqa|probeval]
                                 [--requirement "protoqa-eval[evaluate] @ URL"] [--overwrite]

A metric on the Hub is a Space holding the module script ``<name>/<name>.py``, its
card (README.md with the Space header), an ``app.py`` page and a
``requirements.txt``. The folder works as a Space runs it: ``python app.py`` in a new
process whose working directory is the folder, with this project installed from a
wheel. Name the folder (and the Space) after the module: ``evaluate.load("protoqa")``
then works from the folder's parent, and ``evaluate.load("<user>/protoqa")`` after
``huggingface-cli upload <user>/protoqa OUT_DIR . --repo-type space``.

The module scripts import the installed package, which is not on PyPI: pass
``--requirement`` with where it comes from (``protoqa-eval[evaluate] @
git+https://...``, a wheel URL). Without it, ``requirements.txt`` lists only
``evaluate`` and a comment saying what to add; the page then stops with a message
naming ``protoqa-eval``.

A non-empty OUT_DIR is refused unless ``--overwrite``, which rewrites only the four files
this command writes and leaves every other file alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Sequence
from operator import methodcaller
from pathlib import Path
from string import Template
from typing import Optional

from protoqa_core.cli import add_overwrite_option, write_output_file

__all__ = ["MODULES", "HubFolderError", "write_hub_folder", "main"]


class HubFolderError(ValueError):
    """The output folder cannot be written without destroying or shadowing something."""


# module name -> (package whose README.md is the card, title, configs import, default config, examples)
MODULES = {
    "protoqa": {
        "package": "protoqa_metric",
        "script": "evaluate_modules/protoqa/protoqa.py",
        "title": "ProtoQA",
        "configs": "from protoqa_metric.evaluate_modules import PROTOQA_CONFIGS as CONFIGS",
        "extra": "evaluate",
        "default_config": "wordnet",
        "predictions": '[["cats", "dog"]]',
        "references": '[{"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]',
    },
    "probeval": {
        "package": "cfc_probeval",
        "script": "evaluate_modules/probeval/probeval.py",
        "title": "ProbEval",
        "configs": "from cfc_probeval.evaluate_modules import PROBEVAL_CONFIGS as CONFIGS",
        "extra": "probeval",
        "default_config": "default",
        "predictions": '[["dog", "dog", "dog", "puppy", "cat", "banana"]]',
        "references": '[{"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]',
    },
}
# Scripts with these names beside app.py would be imported instead of the packages.
_PACKAGES = ("protoqa_metric", "cfc_probeval", "protoqa_dataset")
_WRITTEN = ("app.py", "README.md", "requirements.txt")
# The README's example requirement names the repository as <you>/<this-repo>.
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w-]*>")

_APP = Template('''"""The page of the $title evaluate module, run by a Space as ``python app.py`` in this folder."""

import json
import math
from pathlib import Path

import evaluate
import gradio as gr

try:
    $configs
    from protoqa_integrations.hub import serving
except ImportError as exc:
    raise SystemExit("$name: the package protoqa-eval is not installed; add a line installing it to "
                     f"requirements.txt (see the comment there) ({exc})") from None

HERE = Path(__file__).resolve().parent
SCRIPT = str(HERE / "$name.py")
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


def _compute(config, predictions, references, kwargs):
    return _module(config).compute(predictions=predictions, references=references, **kwargs)


def compute(predictions: str, references: str, config: str, options: str) -> dict:
    """The module's result for JSON predictions and references under one configuration.

    The caps of protoqa_integrations.hub.serving are checked first, and the scoring runs in a
    forked process within its time and memory budget, as in the project's demo Space.
    """
    try:
        kwargs = json.loads(options or "{}")
        if not isinstance(kwargs, dict):
            raise ValueError("options must be a JSON object of keyword arguments, such as {}")
        if config not in CONFIGS:
            raise ValueError(f"unknown configuration {config!r}")
        predictions, references = json.loads(predictions), json.loads(references)
        serving.check_compute_request(predictions, references)
        _module(config)  # loaded here, kept for the next request
        result = serving.run_with_budget(_compute, config, predictions, references, kwargs)
        if not _finite(result):
            raise ValueError("no question could be scored (the result is not a finite number)")
    except Exception as exc:  # shown in the page instead of crashing the server
        raise gr.Error(f"{type(exc).__name__}: {exc}")
    return result


with gr.Blocks(title="$title") as demo:
    gr.Markdown("# $title\\n\\nOne JSON list entry per question; the metric card is below.")
    config = gr.Dropdown(list(CONFIGS), value="$default_config", label="configuration")
    # Long JSON lines wrap instead of running off the field; labels stay short so that the
    # copy and download buttons of a field never cover them on a phone.
    with gr.Row():
        predictions = gr.Code(value=$predictions, language="json", label="predictions", wrap_lines=True)
        references = gr.Code(value=$references, language="json", label="references", wrap_lines=True)
    gr.Markdown("Other keyword arguments of `compute`, as a JSON object:")
    options = gr.Code(value="{}", language="json", label="options", wrap_lines=True, lines=1)
    button = gr.Button("Compute", variant="primary")
    result = gr.JSON(label="result")
    button.click(compute, [predictions, references, config, options], result, api_name="compute")
    gr.Markdown(CARD)

if __name__ == "__main__":
    # Request bodies over serving.MAX_REQUEST_BYTES are refused before they are read or parsed.
    demo.launch(**serving.launch_options())
''')

_NO_REQUIREMENT = """\
# The $name module imports the protoqa-eval package, which is not on PyPI. Before
# uploading, add a line that installs it (or rebuild with --requirement), e.g.
#   protoqa-eval[$extra] @ git+https://github.com/<you>/<this-repository>
#   protoqa-eval[$extra] @ https://<host>/protoqa_eval-<version>-py3-none-any.whl
# Without it the page stops at start with a message naming protoqa-eval.
evaluate>=0.4.6
"""
_WITH_REQUIREMENT = """\
# The protoqa-eval package, which the $name module imports (evaluate comes with its extra).
$requirement
"""


def _package_folder(package: str) -> Path:
    # found without importing the package: writing a folder needs none of its dependencies
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {package!r} is not installed")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _check_out_dir(out: Path, name: str, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise HubFolderError(f"{out} exists and is not a folder")
    if not out.is_dir():
        return
    present = sorted(p.name for p in out.iterdir())
    shadowing = [n for n in present if n.endswith(".py") and n[:-3] in _PACKAGES]
    if shadowing:
        raise HubFolderError(
            f"{out} holds {', '.join(shadowing)}, which would be imported instead of the package "
            "of the same name when the Space runs; remove it"
        )
    if present and not force:
        raise HubFolderError(
            f"{out} is not empty ({', '.join(present[:5])}{', ...' if len(present) > 5 else ''}); "
            f"pass --overwrite to rewrite {', '.join((f'{name}.py',) + _WRITTEN)} there "
            "(other files are left alone)"
        )


def write_hub_folder(
    out_dir: str | Path, module: str = "protoqa", requirement: Optional[str] = None, force: bool = False
) -> Path:
    """Write ``<module>.py``, ``README.md``, ``app.py`` and ``requirements.txt`` into ``out_dir``.

    ``out_dir`` must be empty or absent unless ``force`` is true; then only these four
    files are rewritten.

    >>> import tempfile
    >>> folder = write_hub_folder(Path(tempfile.mkdtemp()) / "protoqa")
    >>> sorted(p.name for p in folder.iterdir())
    ['README.md', 'app.py', 'protoqa.py', 'requirements.txt']
    >>> write_hub_folder(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protoqa_integrations.hub.folders.HubFolderError: ... is not empty (...); pass --overwrite to rewrite ...
    """
    if module not in MODULES:
        raise ValueError(f"unknown module {module!r}; choose one of {', '.join(MODULES)}")
    name = module
    spec = MODULES[name]
    if requirement is not None and (not requirement.strip() or "\n" in requirement):
        raise ValueError("--requirement must be one pip requirement line")
    placeholder = _PLACEHOLDER.search(requirement) if requirement is not None else None
    if requirement is not None and placeholder:
        raise ValueError(
            f"--requirement still holds the placeholder {placeholder.group(0)!r} "
            f"({requirement.strip()!r}); put the real location of the package there, e.g. "
            "'protoqa-eval[evaluate] @ git+https://github.com/ORG/REPO'"
        )
    out = Path(out_dir)
    _check_out_dir(out, name, force)
    folder = _package_folder(spec["package"])
    script = folder / spec["script"]
    card = folder / "README.md"
    out.mkdir(parents=True, exist_ok=True)
    files = {
        f"{name}.py": script.read_text(encoding="utf-8"),
        "README.md": card.read_text(encoding="utf-8"),
        "app.py": _APP.substitute(
            name=name,
            title=spec["title"],
            configs=spec["configs"],
            default_config=spec["default_config"],
            predictions=repr(spec["predictions"]),
            references=repr(spec["references"]),
        ),
        "requirements.txt": (
            Template(_WITH_REQUIREMENT).substitute(name=name, requirement=requirement.strip())
            if requirement
            else Template(_NO_REQUIREMENT).substitute(name=name, extra=spec["extra"])
        ),
    }
    for filename, text in files.items():
        # A fresh file replaces each name, so a link planted there is replaced, never written through.
        write_output_file(out / filename, methodcaller("write", text))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line of :func:`write_hub_folder`; exit status 2 with one line when the folder is refused."""
    parser = argparse.ArgumentParser(
        prog="python -m protoqa_integrations.hub.folders",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("out_dir")
    parser.add_argument("--module", choices=list(MODULES), default="protoqa", help="protoqa (default) or probeval")
    parser.add_argument(
        "--requirement",
        help="pip requirement line installing this project, e.g. "
        "'protoqa-eval[evaluate] @ git+https://...' (default: a comment saying what to add)",
    )
    add_overwrite_option(parser, "write into a non-empty folder (rewrites only the files this command writes)")
    args = parser.parse_args(argv)
    try:
        out = write_hub_folder(args.out_dir, args.module, args.requirement, force=args.overwrite)
    except (HubFolderError, ValueError, OSError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}: " + ", ".join(sorted(p.name for p in out.iterdir())))
    if not args.requirement:
        print(
            f"{parser.prog}: warning: {out / 'requirements.txt'} does not install protoqa-eval yet; add the line its comment "
            "describes (or rebuild with --requirement) before uploading",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
