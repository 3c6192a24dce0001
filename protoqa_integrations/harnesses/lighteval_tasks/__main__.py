"""``python -m protoqa_integrations.harnesses.lighteval_tasks``: print the custom-task file for ``lighteval --custom-tasks``;
``... sampling-model MODEL FOLDER``: save a copy of MODEL that lighteval's ``transformers`` backend samples from.
"""

from __future__ import annotations

import sys

from protoqa_integrations.harnesses.lighteval_tasks import save_sampling_model, tasks_file

USAGE = (
    "usage: python -m protoqa_integrations.harnesses.lighteval_tasks [sampling-model MODEL FOLDER] (without arguments: "
    "print the file for lighteval --custom-tasks; sampling-model: save a copy of MODEL whose generation config samples)"
)


def main(argv: list[str]) -> int:
    if not argv:
        print(tasks_file())
        return 0
    if argv[0] == "sampling-model" and len(argv) == 3:
        try:
            folder = save_sampling_model(argv[1], argv[2])
        except (ValueError, OSError) as exc:
            print(f"sampling-model: error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        print(folder)
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
