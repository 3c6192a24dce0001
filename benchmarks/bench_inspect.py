"""What Inspect AI's bookkeeping costs per sample in the ``protoqa`` task, without a model's own time.

The task draws each sample with its own ``generate`` call on a forked copy of the question's
state (``protoqa_integrations.harnesses.inspect_tasks.tasks.sample_answers``), and Inspect records each call
in the sample's transcript. Here Inspect's mock model (``mockllm``, which answers at once) stands
in for the model, so what is measured is Inspect's own work and the scoring: one process per run,
``inspect_ai.eval`` of the task on ``--questions`` ProtoQA dev questions with 1 sample per question
(the baseline) and with ``--samples`` (300 by default, the protocol's), alternated over
``--rounds`` rounds. Printed: the least CPU seconds (user + sys) and wall seconds of each, the
difference per added sample, and the size of the log written.

    python benchmarks/bench_inspect.py [--data-dir ../shared/data] [--questions 3] [--samples 300] [--rounds 2]

Needs ``inspect-ai`` (extra ``inspect``). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN = """
import sys
import inspect_ai
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from protoqa_integrations.harnesses.inspect_tasks.tasks import protoqa

data, samples, questions, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
outputs = []
for _ in range(samples * questions):
    output = ModelOutput.from_content("mockllm/model", " a dog.")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else tiktoken, which downloads
    outputs.append(output)
model = get_model("mockllm/model", custom_outputs=outputs)
log = inspect_ai.eval(protoqa(samples=samples, data_dir=data), model=model, limit=questions, log_dir=out,
                      display="none")[0]
assert log.status == "success", log.error
print(log.location)
"""


def run_once(data: str, samples: int, questions: int, work: Path) -> tuple[float, float, int]:
    """CPU seconds, wall seconds and log bytes of one process running the task."""
    out = Path(tempfile.mkdtemp(dir=work))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUN, data, str(samples), str(questions), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, Path(done.stdout.strip().splitlines()[-1]).stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = str(Path(args.data_dir).resolve())  # Inspect runs a task in its own folder
    results: dict[int, list[tuple[float, float, int]]] = {1: [], args.samples: []}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.rounds):
            for samples in results:
                results[samples].append(run_once(data, samples, args.questions, Path(work)))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}; {args.questions} ProtoQA dev questions, mock model")
    best = {
        samples: (min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2]) for samples, runs in results.items()
    }
    for samples, (cpu, wall, size) in best.items():
        print(f"{samples:4d} samples/question: CPU {cpu:6.1f} s  wall {wall:6.1f} s  log {size / 1e6:5.2f} MB")
    added = (args.samples - 1) * args.questions
    (cpu1, wall1, _), (cpu_n, wall_n, _) = best[1], best[args.samples]
    print(
        f"per added sample: CPU {1000 * (cpu_n - cpu1) / added:.1f} ms, wall {1000 * (wall_n - wall1) / added:.1f} ms"
    )


if __name__ == "__main__":
    main()
