"""``python -m protoqa_integrations.harnesses.lm_eval_tasks``: print the task folder for ``lm_eval --include_path``.

``python -m protoqa_integrations.harnesses.lm_eval_tasks run ARGS...`` runs ``lm_eval run ARGS...`` with the
folder included and the ``protoqa-hf`` backend registered, and with ``lm-eval[api]`` the API
backends of :mod:`.api_backends` (``protoqa-local-completions``, ...).
"""

from __future__ import annotations

import sys

from protoqa_core.install import install_command
from protoqa_integrations.generation.engines.base import EngineError
from protoqa_integrations.generation.settings import GenerationError
from protoqa_integrations.harnesses.lm_eval_tasks import tasks_path


def main(argv: list[str]) -> int:
    if not argv:
        print(tasks_path())
        return 0
    if argv[0] != "run":
        print(
            "usage: python -m protoqa_integrations.harnesses.lm_eval_tasks [run LM_EVAL_RUN_ARGS...]", file=sys.stderr
        )
        return 2
    try:
        from lm_eval.__main__ import cli_evaluate

        from protoqa_integrations.harnesses.lm_eval_tasks import backend  # noqa: F401  (registers protoqa-hf)
    except ImportError as exc:
        print(f"error: lm_eval is not installed ({exc}); {install_command('lm-eval')}", file=sys.stderr)
        return 2
    args = list(argv[1:])
    model = args[args.index("--model") + 1] if "--model" in args[:-1] else ""
    try:
        from protoqa_integrations.harnesses.lm_eval_tasks import api_backends  # noqa: F401  (registers protoqa-local-completions and the others)
    except ImportError as exc:
        if model.endswith("completions"):
            print(f"error: the API backends need lm-eval[api] ({exc}); pip install 'lm-eval[api]'", file=sys.stderr)
            return 2
    if "--include_path" not in args:
        args += ["--include_path", tasks_path()]
    sys.argv = ["lm-eval", "run", *args]
    try:
        cli_evaluate()
    # EngineError: a request that failed past the retries (api_backends.APIRequestError);
    # GenerationError: generation kwargs the protoqa-hf sampler cannot use (backend.sampling_config).
    except (EngineError, GenerationError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
