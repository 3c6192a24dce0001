"""One home per name: an installed module's ``__all__`` names only what the module defines.

A package's ``__init__`` is its public face and gathers the names of its modules; every other
module exports its own definitions only, so each public name has one defining module and callers
import it from there or from the package face, never through a sibling.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from protoqa_core.lazy_exports import homes
from tests.support.packages import INSTALLED, imported_from

REPO = Path(__file__).resolve().parents[2]
MODULES = sorted(p for package in INSTALLED for p in (REPO / package).rglob("*.py") if p.name != "__init__.py")


def _defined(body: list[ast.stmt]) -> set[str]:
    """The names a module body binds by a definition or an assignment (imports bind none)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.If):
            names |= _defined(node.body) | _defined(node.orelse)
        elif isinstance(node, ast.Try):
            names |= _defined(node.body) | _defined(node.orelse) | _defined(node.finalbody)
            for handler in node.handlers:
                names |= _defined(handler.body)
    return names


def reexported(source: str) -> list[str]:
    """The entries of ``__all__`` in ``source`` that the module does not define.

    >>> reexported("from os import sep\\nX = 1\\n__all__ = ['X', 'sep']")
    ['sep']
    """
    tree = ast.parse(source)
    exported: list[str] = []
    for node in tree.body:
        if any(t.id == "__all__" for t in _targets(node)):
            assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
            exported = list(ast.literal_eval(node.value))
    defined = _defined(tree.body)
    return [name for name in exported if name not in defined]


def test_every_installed_package_has_modules():
    assert {p.relative_to(REPO).parts[0] for p in MODULES} == set(INSTALLED)


def test_a_module_exports_only_what_it_defines():
    wrong = [
        f"{path.relative_to(REPO)}:{_all_line(source)}: __all__ names {name}, which the module does not define"
        for path in MODULES
        for source in [path.read_text(encoding="utf-8")]
        for name in reexported(source)
    ]
    assert not wrong, "\n".join(wrong)


def _all_line(source: str) -> int:
    """The line of the last assignment to ``__all__`` in ``source`` (0 without one)."""
    lines = [n.lineno for n in ast.parse(source).body if "__all__" in {t.id for t in _targets(n)}]
    return lines[-1] if lines else 0


def _targets(node: ast.stmt) -> list[ast.Name]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [t for t in targets if isinstance(t, ast.Name)]


def test_the_check_sees_imports_star_chains_and_conditional_definitions():
    source = (
        "from .a import One\n"
        "import b as Two\n"
        "try:\n    from c import Three\nexcept ImportError:\n    Three = None\n"
        "if True:\n    def Four(): ...\n"
        "class Five: ...\n"
        "Six: int = 1\n"
        "__all__ = ['One', 'Two', 'Three', 'Four', 'Five', 'Six']\n"
    )
    assert reexported(source) == ["One", "Two"]


def test_the_harness_task_files_name_each_function_in_its_own_module():
    folder = REPO / "protoqa_integrations" / "harnesses" / "lm_eval_tasks"
    named = [
        match.groups()
        for path in sorted(folder.iterdir())
        if path.suffix != ".py" and path.is_file()
        for match in re.finditer(r"!function ([\w.]+)\.(\w+)", path.read_text(encoding="utf-8"))
    ]
    assert len(named) > 10
    for module, name in named:
        source = REPO / (module.replace(".", "/") + ".py")
        assert name in _defined(ast.parse(source.read_text(encoding="utf-8")).body), f"{module}.{name}"


def _module_path(dotted: str) -> Path | None:
    path = REPO / (dotted.replace(".", "/") + ".py")
    return path if dotted.split(".")[0] in INSTALLED and path.exists() else None


@functools.cache
def _defined_in(source: Path) -> frozenset[str]:
    # Every caller's imports name the same few hundred modules: each is parsed once per run.
    return frozenset(_defined(ast.parse(source.read_text(encoding="utf-8")).body))


def _through_a_sibling(path: Path) -> list[str]:
    """``from module import name`` statements in ``path`` where ``module`` is not a package and does not define ``name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        dotted = imported_from(node, package)
        source = _module_path(dotted)
        if source is None:
            continue
        defined = _defined_in(source)
        found += [f"{node.lineno}: {dotted}.{a.name}" for a in node.names if a.name not in defined and a.name != "*"]
    return found


CALLERS = sorted(
    p
    for folder in (*INSTALLED, "tests", "studies", "space", "benchmarks", "examples")
    for p in (REPO / folder).rglob("*.py")
)


def test_callers_import_a_name_from_where_it_is_defined():
    wrong = [f"{path.relative_to(REPO)}:{found}" for path in CALLERS for found in _through_a_sibling(path)]
    assert not wrong, "\n".join(wrong)


def _private_names_taken(path: Path, source: str | None = None) -> list[str]:
    """The private names of other project modules that ``path`` (or ``source`` standing there) imports or reads
    as ``module._name``."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    modules: dict[str, str] = {}  # local name -> project module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            dotted = imported_from(node, package)
            if dotted.split(".")[0] not in INSTALLED:
                continue
            for alias in node.names:
                if _module_path(f"{dotted}.{alias.name}") or (REPO / dotted.replace(".", "/") / alias.name).is_dir():
                    modules[alias.asname or alias.name] = f"{dotted}.{alias.name}"
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.lineno}: {dotted}.{alias.name}")
        elif isinstance(node, ast.Import):
            modules.update({a.asname: a.name for a in node.names if a.asname and a.name.split(".")[0] in INSTALLED})
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.lineno}: {modules[node.value.id]}.{node.attr}")
    return found


def test_private_names_stay_inside_their_module():
    wrong = [f"{path.relative_to(REPO)}:{found}" for path in MODULES for found in _private_names_taken(path)]
    assert not wrong, "\n".join(wrong)


def test_the_private_name_check_sees_imports_and_attributes():
    source = "from protoqa_core.io.files import _WIDE_BOMS\nfrom protoqa_core.io import files\nfiles._SHORT\n"
    taken = _private_names_taken(REPO / "protoqa_core" / "probe.py", source)
    assert taken == ["1: protoqa_core.io.files._WIDE_BOMS", "3: protoqa_core.io.files._SHORT"]


FACES = sorted(
    p for package in INSTALLED for p in (REPO / package).rglob("__init__.py") if "lazy_exports(" in p.read_text("utf-8")
)


def _face_gaps(source: str) -> tuple[list[str], list[str]]:
    """The names of a lazy face's ``__all__`` that nothing binds, and those its ``TYPE_CHECKING`` block imports
    but ``__all__`` leaves out.

    >>> _face_gaps("if TYPE_CHECKING:\\n    from .a import A, B\\nfrom .c import C\\n__all__ = ['A', 'C', 'D']")
    (['D'], ['B'])
    """
    tree = ast.parse(source)
    exported = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    )
    lazy = homes(source)
    bound = _defined(tree.body) | {
        alias.asname or alias.name.split(".")[0]
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    return [name for name in exported if name not in lazy and name not in bound], [n for n in lazy if n not in exported]


def test_every_lazy_face_has_one_home_for_each_name_it_lists():
    assert len(FACES) >= 4
    gaps = {str(p.relative_to(REPO)): _face_gaps(p.read_text("utf-8")) for p in FACES}
    assert {path: found for path, found in gaps.items() if found != ([], [])} == {}
