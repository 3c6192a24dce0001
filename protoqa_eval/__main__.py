"""``python -m protoqa_eval``: print this package's folder as a path relative to the working folder.

``inspect list tasks`` lists the task files of the folders it is given, by relative path only
(inspect-ai 0.3.285 fails on an absolute one), and not the tasks of installed packages' entry
points; this path lets it list the installed tasks from any folder::

    inspect list tasks "$(python -m protoqa_eval)"

which prints ``.../protoqa_eval/tasks.py@cfc`` and ``.../protoqa_eval/tasks.py@protoqa``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

USAGE = 'usage: python -m protoqa_eval (prints the package folder for inspect list tasks "$(python -m protoqa_eval)")'


def main(argv: list[str]) -> int:
    if argv:
        print(USAGE, file=sys.stderr)
        return 2
    print(os.path.relpath(Path(__file__).resolve().parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
