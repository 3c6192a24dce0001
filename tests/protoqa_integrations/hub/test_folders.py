"""The Hub folders of the two evaluate modules: contents, safety, the Hub layout, and a real Space start.

The slow test runs a folder exactly as a Space does: the project's wheel installed into a
fresh virtual environment (not editable), a new process with the folder as working
directory, ``python app.py``; then it calls the page's ``compute`` endpoint over HTTP.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
import venv
from pathlib import Path

import pytest

from tests.support.apps import open_local, started_app
from tests.support.lazy import lazy_import
from tests.support.processes import run_python

evaluate = lazy_import("evaluate")

from protoqa_integrations.hub.folders import MODULES, HubFolderError, main, write_hub_folder  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
REFS = [{"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]
CASES = [  # module, configuration, predictions, key, expected
    ("protoqa", "exact_match", [["cat", "dog"]], "max_answers@1", 4 / 6),
    ("probeval", "human", [["dog"] * 6 + ["cat"] * 4], "kl", 0.0),
]


@pytest.fixture(autouse=True)
def offline(hub_offline, monkeypatch):
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")


@pytest.mark.parametrize("module", list(MODULES))
def test_folder_holds_the_module_card_app_and_requirements(tmp_path, module):
    folder = write_hub_folder(tmp_path / module, module)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "app.py", f"{module}.py", "requirements.txt"]
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "app_file: app.py" in card and "sdk: gradio" in card
    assert f"title: {MODULES[module]['title']}\n" in card
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert [line for line in requirements if not line.startswith("#")] == ["evaluate>=0.4.6"]
    assert any("protoqa-eval" in line for line in requirements if line.startswith("#"))
    script = (folder / f"{module}.py").read_text()
    assert f"class {module.capitalize()}(CheckedReferences, evaluate.Metric)" in script


@pytest.mark.parametrize("module", list(MODULES))
def test_card_has_no_checkout_relative_links_or_wording(tmp_path, module):
    card = (write_hub_folder(tmp_path / module, module) / "README.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", card)
    assert all(link.startswith(("http://", "https://", "#")) for link in links), links
    for wording in ("repository root", "checkout", "project README", "../"):
        assert wording not in card


@pytest.mark.parametrize("module, config, predictions, key, expected", CASES)
def test_loads_by_name_from_the_folder_holding_the_built_folder(
    tmp_path, monkeypatch, module, config, predictions, key, expected
):
    write_hub_folder(tmp_path / module, module)
    monkeypatch.chdir(tmp_path)
    metric = evaluate.load(module, config)
    assert metric.compute(predictions=predictions, references=REFS)[key] == pytest.approx(expected)


@pytest.mark.parametrize("module", list(MODULES))
def test_repository_folders_link_to_the_packaged_module(module):
    """The checkout's protoqa/ and probeval/ hold a link to the packaged script and a README saying so."""
    folder = REPO / module
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith((".", "__pycache__"))) == [
        "README.md",
        f"{module}.py",
    ]
    package = {"protoqa": REPO / "protoqa_metric", "probeval": REPO / "cfc_probeval"}[module]
    script = package / "evaluate_modules" / module / f"{module}.py"
    assert (folder / f"{module}.py").is_symlink() and (folder / f"{module}.py").resolve() == script
    readme = folder / "README.md"
    assert not readme.is_symlink()
    text = readme.read_text(encoding="utf-8")
    assert f'evaluate.load("{module}"' in text
    # Every file the README links to exists.
    links = re.findall(r"\]\(([^)#]+)", text)
    assert script.relative_to(REPO).as_posix() in {Path(link).as_posix().removeprefix("../") for link in links}
    assert links and all((folder / link).resolve().is_file() for link in links), links


def test_requirement_option_and_refusals(tmp_path):
    folder = write_hub_folder(tmp_path / "protoqa", "protoqa", requirement="protoqa-eval @ git+https://example.org/x")
    assert (folder / "requirements.txt").read_text().splitlines()[-1] == "protoqa-eval @ git+https://example.org/x"
    with pytest.raises(HubFolderError, match="not empty.*--overwrite"):
        write_hub_folder(folder, "protoqa")
    with pytest.raises(ValueError, match="one pip requirement line"):
        write_hub_folder(tmp_path / "other", "protoqa", requirement="a\nb")
    with pytest.raises(ValueError, match="unknown module 'bleu'"):
        write_hub_folder(tmp_path / "other", "bleu")


def test_force_rewrites_only_its_own_files(tmp_path):
    folder = tmp_path / "protoqa"
    folder.mkdir()
    (folder / "README.md").write_text("my notes")
    (folder / "keep.txt").write_text("mine")
    (folder / "data").mkdir()
    write_hub_folder(folder, "protoqa", force=True)
    assert (folder / "keep.txt").read_text() == "mine" and (folder / "data").is_dir()
    assert (folder / "README.md").read_text().startswith("---\n")


def test_a_script_that_would_shadow_a_package_is_refused_even_with_force(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "protoqa_metric.py").write_text("# an old build")
    with pytest.raises(HubFolderError, match="protoqa_metric.py, which would be imported instead of the package"):
        write_hub_folder(folder, "protoqa", force=True)
    assert (folder / "protoqa_metric.py").read_text() == "# an old build"


def test_command_line(tmp_path, capsys):
    assert main([str(tmp_path / "probeval"), "--module", "probeval"]) == 0
    captured = capsys.readouterr()
    assert "probeval.py" in captured.out and "does not install protoqa-eval yet" in captured.err
    assert main([str(tmp_path / "probeval"), "--module", "probeval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "--overwrite" in err
    assert (
        main(
            [
                str(tmp_path / "probeval"),
                "--module",
                "probeval",
                "--force",
                "--requirement",
                "protoqa-eval[probeval] @ https://example.org/p.whl",
            ]
        )
        == 0
    )
    capsys.readouterr()
    for unknown in ("bleu", "protoqa_metric"):
        with pytest.raises(SystemExit):
            main([str(tmp_path / "x"), "--module", unknown])
        assert "invalid choice" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_missing_package_is_named_by_its_pip_name(tmp_path, monkeypatch):
    folder = write_hub_folder(tmp_path / "protoqa", "protoqa")
    monkeypatch.setitem(sys.modules, "protoqa_metric", None)  # as if protoqa-eval were not installed
    with pytest.raises(ImportError, match=r"pip install protoqa-eval'"):
        evaluate.load(str(folder / "protoqa.py"))
    imports = evaluate.loading.get_imports(str(REPO / "probeval" / "probeval.py"))
    ours = {
        (name, path) for kind, name, path, _ in imports if name in ("protoqa_core", "protoqa_metric", "cfc_probeval")
    }
    assert ours == {("cfc_probeval", "protoqa-eval[probeval]")}  # one package, so one install line


class _FakeHub(http.server.BaseHTTPRequestHandler):
    """Serves Space files at /spaces/<user>/<space>/resolve/<revision>/<file>, as the Hub does."""

    spaces: dict[str, Path] = {}
    requested: list[str] = []

    def _file(self):
        self.requested.append(self.path)
        match = re.fullmatch(r"/spaces/([^/]+/[^/]+)/resolve/[^/]+/([^/?]+)", self.path.split("?")[0])
        folder = self.spaces.get(match.group(1)) if match else None
        path = folder / match.group(2) if folder else None
        return path if path is not None and path.is_file() else None

    def do_HEAD(self):
        path = self._file()
        self.send_response(200 if path else 404)
        self.send_header("Content-Length", str(path.stat().st_size if path else 0))
        self.send_header("ETag", '"fixed"')
        self.end_headers()

    def do_GET(self):
        path = self._file()
        body = path.read_bytes() if path else b"not found"
        self.send_response(200 if path else 404)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"fixed"')
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.slow
def test_loads_as_user_slash_name_from_an_uploaded_folder(tmp_path):
    """``evaluate.load("<user>/<name>")`` fetches ``<name>.py`` from the Space: the layout the folder has.

    Both modules are uploaded and loaded by one new process (an interpreter start and an ``import evaluate`` each
    cost seconds)."""
    _FakeHub.spaces = {
        f"someone/{module}": write_hub_folder(tmp_path / "upload" / module, module) for module in {c[0] for c in CASES}
    }
    _FakeHub.requested = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    code = "import evaluate, json\n" + "".join(
        f"m = evaluate.load('someone/{module}', {config!r})\n"
        f"print(json.dumps(m.compute(predictions={predictions!r}, references={REFS!r})))\n"
        for module, config, predictions, _, _ in CASES
    )
    env = {
        **os.environ,
        "HF_ENDPOINT": f"http://127.0.0.1:{server.server_port}",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
        "HF_MODULES_CACHE": str(tmp_path / "modules"),
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "PYTHONPATH": str(REPO),
    }
    try:
        done = run_python(["-c", code], tmp_path, env, timeout=300)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(CASES), done.stdout
    for (module, config, _, key, expected), result in zip(CASES, results, strict=True):
        assert result[key] == pytest.approx(expected), (module, config)
        assert any(
            p.endswith(f"/spaces/someone/{module}/resolve/main/{module}.py")
            or re.search(rf"/spaces/someone/{module}/resolve/[^/]+/{module}\.py", p)
            for p in _FakeHub.requested
        ), module


# --- the folders started as a Space starts them -------------------------------------------------


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory, project_wheel):
    """A fresh venv with the project's wheel and what the Hub folders need."""
    root = tmp_path_factory.mktemp("space")
    wheel = project_wheel
    env_dir = root / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # The folders' requirements line, pointing at the wheel (as --requirement would on a real Space),
    # plus gradio, which a Space provides through its sdk header.
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"protoqa-eval[evaluate] @ {wheel.as_uri()}",
            "gradio",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        # A PYTHONPATH holding a source tree with its egg-info would make pip take the
        # project as installed already and skip the wheel.
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if install.returncode != 0 and re.search(r"(?i)connection|resolve host|network is unreachable", install.stderr):
        pytest.skip("the package index is not reachable: " + install.stderr.strip().splitlines()[-1])
    assert install.returncode == 0, install.stderr[-3000:]
    return python, wheel


# Each module's page serves every configuration: one Space start per module checks them all.
SPACE_CASES = {
    module: [(config, predictions, key, expected) for m, config, predictions, key, expected in CASES if m == module]
    for module in MODULES
}
SPACE_CASES["protoqa"].append(("wordnet", [["puppies", "cats"]], "max_answers@all", 1.0))


@pytest.mark.slow
@pytest.mark.parametrize("module", list(SPACE_CASES))
def test_folder_starts_as_a_space_and_computes_over_http(tmp_path, wheel_venv, module):
    gradio_client = pytest.importorskip("gradio_client")
    python, wheel = wheel_venv
    folder = write_hub_folder(tmp_path / module, module, requirement=f"protoqa-eval[evaluate] @ {wheel.as_uri()}")
    check = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--dry-run", "-r", "requirements.txt"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stderr[-2000:]  # the requirements file is installable
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        HF_MODULES_CACHE=str(tmp_path / "modules"),
    )
    log = tmp_path / "app.log"
    with started_app([str(python), "app.py"], cwd=folder, env=env, log=log, timeout=180, ready_path="/") as (base, _):
        url = f"{base}/"
        with open_local(url, timeout=30) as response:
            page = response.read().decode()
        assert MODULES[module]["title"] in page
        client = gradio_client.Client(url, verbose=False)
        assert SPACE_CASES[module]
        for config, predictions, key, expected in SPACE_CASES[module]:
            result = client.predict(json.dumps(predictions), json.dumps(REFS), config, "{}", api_name="/compute")
            result = json.loads(result) if isinstance(result, str) else result
            assert result[key] == pytest.approx(expected), config
            assert isinstance(result["signature"], str)
            with pytest.raises(Exception, match="JSONDecodeError"):
                client.predict("[not json", json.dumps(REFS), config, "{}", api_name="/compute")


@pytest.mark.slow
def test_wheel_holds_the_declared_packages_and_no_research_code(wheel_venv):
    """The study, the Space, the benchmarks and the tests stay out of the installed distribution."""
    import configparser
    import zipfile

    _, wheel = wheel_venv
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    config = configparser.ConfigParser()
    config.read(Path(__file__).resolve().parents[3] / "setup.cfg")
    declared = {p for p in config["options.packages.find"]["include"].split() if "." not in p}
    assert tops == declared and len(declared) == 6
    assert not tops & {"studies", "space", "benchmarks", "tests", "examples", "upstream"}
    assert not [n for n in names if "validation/" in n or "paper_example" in n or "spec_reference" in n]
    assert {f"{top}/py.typed" for top in tops} <= set(names)  # the type hints are for the importing code too
