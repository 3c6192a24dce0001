"""The import graph follows ARCHITECTURE.md: no module imports a layer above its own, and
no modules import one another in a circle.

The layers are read from the ``layers`` block of ARCHITECTURE.md, so the document and
this check cannot drift apart. Every import statement counts, including those inside
functions. The core does not even name a package above it in a string (a module path
to find or import later is an import all the same); only its docs may.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from tests.support.packages import INSTALLED, imported_from

REPO = Path(__file__).resolve().parents[2]
PACKAGES_OUTSIDE_THE_WHEEL = ("space", "studies", "benchmarks", "examples")
# Folders whose files run as scripts from the folder itself (``python app.py``), so that a
# bare ``import demo_data`` there means the sibling file ``demo_data.py``.
SCRIPT_FOLDERS = ("space", "benchmarks")


def _layers() -> dict[str, int]:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no ```layers block"
    layers = {}
    for line in block.group(1).splitlines():
        match = re.match(r"\s*(\d+)\s*:\s*(.+)", line)
        if match:
            for package in match.group(2).split():
                layers[package] = int(match.group(1))
    return layers


def _modules() -> list[Path]:
    layers = _layers()
    files = []
    for package in layers:
        folder = REPO / package
        if folder.is_dir():
            files += [p for p in folder.rglob("*.py") if not p.is_symlink()]
    return sorted(files)


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every import in ``path``, relative ones resolved."""
    own = path.relative_to(REPO).parts[0]
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, own if node.level else (node.module or "").split(".")[0]))
    return found


@functools.cache
def _tree(path: Path) -> ast.Module:
    # Each rule below walks the same few hundred files: each is read and parsed once per run.
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_layers_block_names_every_package():
    layers = _layers()
    assert {"protoqa_core", "protoqa_metric", "cfc_probeval", "protoqa_dataset", "protoqa_integrations"} <= set(layers)
    assert layers["protoqa_core"] < layers["protoqa_metric"] < layers["protoqa_integrations"]


def _upward_imports(path: Path, layers: dict[str, int]) -> list[str]:
    """Every import in ``path`` of a package above its own layer, or of its own layer outside the applications."""
    own = path.relative_to(REPO).parts[0]
    wrong = []
    for line, package in _imported(path):
        if package not in layers or package == own:
            continue
        # below its own layer: always allowed; the same layer only for applications
        if layers[package] < layers[own] or (layers[package] == layers[own] and own in PACKAGES_OUTSIDE_THE_WHEEL):
            continue
        wrong.append(
            f"{path.relative_to(REPO)}:{line} imports {package} (layer {layers[package]}) from layer {layers[own]}"
        )
    return wrong


def test_no_module_imports_upward_or_sideways():
    layers = _layers()
    wrong = [found for path in _modules() for found in _upward_imports(path, layers)]
    assert not wrong, "\n".join(wrong)


def test_wheel_layout_leaves_research_out():
    """setup.cfg installs the six packages and nothing from the applications."""
    text = (REPO / "setup.cfg").read_text(encoding="utf-8")
    include = re.search(r"\[options\.packages\.find\]\ninclude =\n((?:\s+.+\n)+)", text).group(1).split()
    assert not [p for p in include if p.split(".")[0] in PACKAGES_OUTSIDE_THE_WHEEL]
    assert {p for p in include if "." not in p} == set(INSTALLED)


def _module_edges(path: Path, modules: set[str], root: Path = REPO) -> list[tuple[int, str]]:
    """(line, module) for every import in ``path`` that names a module of the repository.

    ``from package import name`` points at the submodule ``package.name`` when there is
    one, else at ``package`` itself. The parent packages Python initializes on the way are
    not counted: a submodule's own package is always being initialized already.
    """
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, package)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            folder = path.parent
            if (
                folder.parent == root
                and folder.name in SCRIPT_FOLDERS
                and f"{folder.name}.{target.split('.')[0]}" in modules
            ):
                target = f"{folder.name}.{target}"
            while target and target not in modules:  # ``import a.b.c`` where c is a name in a.b
                target = target.rpartition(".")[0]
            if target:
                edges.append((node.lineno, target))
    return edges


def _import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}, over every module of the layered packages."""
    paths = {_module_name(p): p for p in _modules()}
    graph: dict[str, dict[str, int]] = {}
    for name, path in paths.items():
        graph[name] = {}
        for line, target in _module_edges(path, set(paths)):
            graph[name].setdefault(target, line)
    return graph


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module, and modules importing themselves (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, {}):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_modules_import_one_another_in_a_circle():
    """Inside a package too, and counting imports inside functions: every import graph is one-way."""
    graph = _import_graph()
    report = []
    for component in _circles(graph):
        members = set(component)
        report.append(
            "circle: "
            + ", ".join(
                f"{source}:{line} imports {target}"
                for source in component
                for target, line in sorted(graph[source].items())
                if target in members
            )
        )
    assert not report, "\n".join(report)


def test_the_circle_check_sees_function_level_and_relative_imports(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    files = {
        "__init__.py": "from .c import y\n",
        "a.py": "from .b import x\n",
        "b.py": "def f():\n    from pkg import a\n",
        "c.py": "import pkg.a\ny = 1\n",
    }
    for file, text in files.items():
        (package / file).write_text(text)
    modules = {"pkg", "pkg.a", "pkg.b", "pkg.c"}
    graph = {
        _module_name(p, tmp_path): {t: n for n, t in _module_edges(p, modules, tmp_path)} for p in package.glob("*.py")
    }
    assert graph == {"pkg": {"pkg.c": 1}, "pkg.a": {"pkg.b": 1}, "pkg.b": {"pkg.a": 2}, "pkg.c": {"pkg.a": 1}}
    assert _circles(graph) == [["pkg.a", "pkg.b"]]
    assert _circles({"pkg.a": {"pkg.a": 1}}) == [["pkg.a"]]
    assert _circles({"pkg.a": {"pkg.b": 1}, "pkg.b": {}}) == []


def test_the_circle_check_sees_bare_imports_between_scripts_of_one_folder(tmp_path):
    space = tmp_path / "space"
    space.mkdir()
    (space / "app.py").write_text("import demo_data\nimport json\n")
    (space / "demo_data.py").write_text("def f():\n    from app import build\n")
    modules = {"space.app", "space.demo_data"}
    graph = {
        _module_name(p, tmp_path): {t: n for n, t in _module_edges(p, modules, tmp_path)} for p in space.glob("*.py")
    }
    assert graph == {"space.app": {"space.demo_data": 1}, "space.demo_data": {"space.app": 2}}
    assert _circles(graph) == [["space.app", "space.demo_data"]]


_UPPER_NAME = re.compile(
    r"(?<![\w.])(?:protoqa_metric|cfc_probeval|protoqa_dataset|protoqa_integrations)\b"
    r"|(?<![\w.])(?:space|studies|benchmarks|examples)[./]\w"
)


def _strings_outside_docs(tree: ast.Module) -> list[ast.Constant]:
    """Every string constant of ``tree`` except docstrings and other bare string statements (docs)."""
    docs = {
        id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def _upper_names_in_core() -> list[str]:
    layers = _layers()
    core = [package for package, layer in layers.items() if layer == 0]
    found = []
    for path in _modules():
        if path.relative_to(REPO).parts[0] not in core:
            continue
        for node in _strings_outside_docs(_tree(path)):
            match = _UPPER_NAME.search(node.value)
            if match:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} names {match.group(0)!r} in {node.value[:60]!r}")
    return found


def test_the_core_names_no_package_above_it():
    """Not in an import, and not in a string either (a module path, a package to locate)."""
    assert not _upper_names_in_core(), "\n".join(_upper_names_in_core())


def test_the_name_check_sees_module_paths_and_folders_but_not_docs():
    tree = ast.parse('''"""Docs may say protoqa_metric.ProtoQA."""
PATHS = {"protoqa": ("protoqa_metric", "evaluate_modules/protoqa/protoqa.py")}
WHERE = f"{1}: studies/reports"
NOTE = "no examples here; the space is free"
''')
    named = [node.value for node in _strings_outside_docs(tree) if _UPPER_NAME.search(node.value)]
    assert sorted(named) == [": studies/reports", "protoqa_metric"]


def _subpackages(package: str) -> list[str]:
    """The folders directly under ``package`` that are Python packages."""
    return sorted(p.name for p in (REPO / package).iterdir() if (p / "__init__.py").is_file())


def _table_rows() -> dict[str, str]:
    """ARCHITECTURE.md's package table: the package named in a row's second cell -> the row."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`\w+`", cells[1]):
            rows[cells[1].strip("`")] = line
    return rows


def test_the_table_names_every_subpackage():
    rows = _table_rows()
    wrong = []
    for package in INSTALLED:
        named = set(re.findall(r"`(\w+)/`", rows[package]))
        nested = {p.name for p in (REPO / package).rglob("*") if (p / "__init__.py").is_file()}
        wrong += [
            f"ARCHITECTURE.md: the row of {package} leaves out {sub}/"
            for sub in _subpackages(package)
            if sub not in named
        ]
        wrong += [
            f"ARCHITECTURE.md: the row of {package} names {sub}/, which is not there" for sub in sorted(named - nested)
        ]
    assert not wrong, "\n".join(wrong)


def test_tests_have_a_folder_for_every_subpackage():
    missing = [
        f"tests/{package}/{sub}/__init__.py"
        for package in INSTALLED
        for sub in _subpackages(package)
        if not (REPO / "tests" / package / sub / "__init__.py").is_file()
    ]
    assert not missing, "\n".join(missing)


def test_every_path_the_page_names_exists():
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    tops = {p.name for p in REPO.iterdir() if p.is_dir()}
    paths = [t for t in re.findall(r"`([\w./-]+)`", text) if "/" in t and t.split("/")[0] in tops]
    assert len(paths) > 10, paths
    assert not [p for p in paths if not (REPO / p).exists()]


def test_every_module_that_holds_code_has_its_docstring():
    modules = [p for package in INSTALLED for p in (REPO / package).rglob("*.py") if p.stat().st_size]
    assert not [str(p.relative_to(REPO)) for p in modules if ast.get_docstring(_tree(p)) is None]


# --- the tests keep the layers too ----------------------------------------------------------------

# What a test module names as code: its import statements, a string that is a module path of an
# installed package (``python -m protoqa_metric``, a name to patch), and an import inside a string of
# code run in a new process. The Space's scripts are imported by their bare names (``import demo_api``).
_CODE_IMPORT = re.compile(r"(?m)^\s*(?:from\s+(\w+)[\w.]*\s+import\b|import\s+(\w+))")


def _named_packages(path: Path, layers: dict[str, int]) -> list[tuple[int, str]]:
    """(line, package) for every layered package that the test module ``path`` imports or runs."""
    script_names = {p.stem: folder for folder in SCRIPT_FOLDERS for p in (REPO / folder).glob("*.py")}
    found = []
    for node in ast.walk(_tree(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"\w+(\.\w+)*", node.value) and node.value.split(".")[0] in INSTALLED:
                names = [node.value]
            names += [a or b for a, b in _CODE_IMPORT.findall(node.value)]
        for name in names:
            top = name.split(".")[0]
            top = script_names.get(top, top)
            if top in layers:
                found.append((node.lineno, top))
    return found


def _test_modules() -> list[Path]:
    layers = _layers()
    return sorted(p for p in (REPO / "tests").rglob("*.py") if p.relative_to(REPO / "tests").parts[0] in layers)


def _support_modules(path: Path) -> list[Path]:
    """The modules of tests/support/ that the test module ``path`` imports."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.support."):
            found.append(REPO.joinpath(*node.module.split(".")).with_suffix(".py"))
    return [p for p in found if p.is_file()]


def _tests_above_their_package(path: Path) -> list[str]:
    """What the test module ``path``, or a tests/support/ module it imports, names above its package."""
    layers = _layers()
    own = path.relative_to(REPO / "tests").parts[0]
    return [
        f"{source.relative_to(REPO)}:{line} names {package} (layer {layers[package]}) for the tests of {own}"
        for source in [path, *_support_modules(path)]
        for line, package in _named_packages(source, layers)
        if package != own and layers[package] >= layers[own]
    ]


def test_the_tests_of_a_package_name_only_it_and_the_layers_below():
    """tests/<package>/ tests that package: it imports or runs its own package and lower layers only
    (and tests/support). A test that joins packages of one layer, or runs one above, is in tests/project/."""
    wrong = [found for path in _test_modules() for found in _tests_above_their_package(path)]
    assert not wrong, "\n".join(wrong)


def test_the_test_layer_check_sees_imports_module_paths_and_code_strings(tmp_path):
    folder = tmp_path / "tests" / "protoqa_core"
    folder.mkdir(parents=True)
    test = folder / "test_x.py"
    test.write_text(
        "import json\n"
        "from protoqa_core.text import normalize_unicode\n"
        "def test_a():\n"
        "    from cfc_probeval import cli\n"
        "    run = ['python', '-m', 'protoqa_metric.cli']\n"
        "    code = 'import sys\\nfrom protoqa_integrations.cli import main\\n'\n"
        "    import demo_api\n"
        "    note = 'the metric, protoqa_metric, is above'\n"
    )
    named = sorted(_named_packages(test, _layers()))
    assert named == [
        (2, "protoqa_core"),
        (4, "cfc_probeval"),
        (5, "protoqa_metric"),
        (6, "protoqa_integrations"),
        (7, "space"),
    ]


def test_tests_share_code_through_tests_support_only():
    """A helper two test modules use lives in tests/support/, never in one of the test modules."""
    wrong = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("tests."):
                if not node.module.startswith("tests.support"):
                    wrong.append(f"{path.relative_to(REPO)}:{node.lineno} imports {node.module}")
    assert not wrong, "\n".join(wrong)


# --- one test module per module with logic -------------------------------------------------------

# A module with no function or class (data only: a schema, a table) needs no test module of its own.


def _has_logic(path: Path) -> bool:
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in _tree(path).body)


def _test_module_of(module: Path) -> Path:
    """``tests/<package>/<folders>/test_<name>.py``; a folder named after its one module
    (``evaluate_modules/probeval/probeval.py``) is left out of the path."""
    parts = module.relative_to(REPO).parts
    if len(parts) >= 3 and parts[-2] == module.stem:
        parts = parts[:-2] + parts[-1:]
    return REPO.joinpath("tests", *parts[:-1], f"test_{module.stem}.py")


def _modules_with_logic() -> list[Path]:
    return [
        path
        for package in INSTALLED
        for path in sorted((REPO / package).rglob("*.py"))
        if path.name not in ("__init__.py", "__main__.py") and _has_logic(path)
    ]


def test_every_module_with_logic_has_its_test_module():
    untested = {
        path.relative_to(REPO).as_posix() for path in _modules_with_logic() if not _test_module_of(path).is_file()
    }
    assert not untested, f"modules without their test module (tests/<package>/.../test_<name>.py): {sorted(untested)}"


def test_the_test_module_path_mirrors_the_module_path():
    assert _test_module_of(REPO / "protoqa_core/io/readers.py") == REPO / "tests/protoqa_core/io/test_readers.py"
    assert _test_module_of(REPO / "cfc_probeval/evaluate_modules/probeval/probeval.py") == (
        REPO / "tests/cfc_probeval/evaluate_modules/test_probeval.py"
    )
    assert not _has_logic(REPO / "protoqa_dataset/schema.py") and _has_logic(REPO / "protoqa_core/text.py")
