"""The distribution's own name, ``protoqa_eval``, for the tools that find a package's plug-ins by it.

Inspect AI finds the tasks of an installed package through its ``inspect_ai`` entry point and
names them after the package: :mod:`.tasks` declares ``protoqa_eval/protoqa`` and
``protoqa_eval/cfc``, so that after ``pip install`` they run from any folder::

    inspect eval protoqa_eval/protoqa --model hf/./tiny-gpt2 -T samples=8 --limit 1

Importing the package imports Inspect (extra ``inspect``).
"""

from protoqa_eval.tasks import cfc, protoqa

__all__ = ["protoqa", "cfc"]
