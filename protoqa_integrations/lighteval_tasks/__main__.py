"""``python -m protoqa_integrations.lighteval_tasks``: print the custom-task file for ``lighteval --custom-tasks``."""

from __future__ import annotations

import sys

from . import tasks_file


def main(argv: list[str]) -> int:
    if argv:
        print(
            "usage: python -m protoqa_integrations.lighteval_tasks (prints the file for lighteval --custom-tasks)",
            file=sys.stderr,
        )
        return 2
    print(tasks_file())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
