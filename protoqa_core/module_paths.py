"""Where the ``evaluate`` module scripts of this distribution are, found without importing their packages."""

from __future__ import annotations

from pathlib import Path

__all__ = ["evaluate_module_path"]


# module name -> (package holding it, script path inside that package)
_EVALUATE_MODULES = {
    "protoqa": ("protoqa_metric", "evaluate_modules/protoqa/protoqa.py"),
    "probeval": ("cfc_probeval", "evaluate_modules/probeval/probeval.py"),
}
_DEPRECATED_MODULES = {  # old name -> (package, script, new name); kept for one release
    "protoqa_metric": ("protoqa_metric", "protoqa_metric.py", "protoqa"),
    "cfc_probeval": ("cfc_probeval", "cfc_probeval.py", "probeval"),
}


def evaluate_module_path(name: str = "protoqa") -> str:
    """Path of the script of an ``evaluate`` module shipped in this distribution: ``protoqa`` or ``probeval``.

    Works from any directory, for an installed wheel as for a checkout. The old
    names ``protoqa_metric`` and ``cfc_probeval`` still work for one release, with a
    DeprecationWarning.

    >>> evaluate_module_path("probeval").endswith("probeval.py")
    True
    >>> import evaluate  # doctest: +SKIP
    >>> metric = evaluate.load(evaluate_module_path("protoqa"), "wordnet")  # doctest: +SKIP
    """
    import importlib.util
    import warnings

    if name in _DEPRECATED_MODULES:
        package, script, new = _DEPRECATED_MODULES[name]
        warnings.warn(f'the evaluate module name "{name}" is deprecated and will be removed in the next release; '
                      f'use evaluate_module_path("{new}")', DeprecationWarning, stacklevel=2)
    elif name in _EVALUATE_MODULES:
        package, script = _EVALUATE_MODULES[name]
    else:
        raise ValueError(f"unknown evaluate module {name!r}; choose one of {', '.join(_EVALUATE_MODULES)}")
    # located without importing it: the core does not import the layers built on it
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {package!r} is not installed (pip install protoqa-eval)")
    folder = Path(list(spec.submodule_search_locations)[0]).resolve()
    return str(folder / script)
