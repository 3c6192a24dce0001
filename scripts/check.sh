#!/usr/bin/env bash
# Every check CI runs, in order, on a checkout set up with `bash scripts/setup.sh --test`:
# lint, format, types, the documentation site, then the test suite (arguments go to pytest, e.g. -x or a test file).
#   bash scripts/check.sh
#   bash scripts/check.sh tests/protoqa_metric/test_cli.py -x
# With --fast (first), the checks to run before each commit, in minutes: lint, format, types and
# the fast subset of the tests (-m "not slow and not browser"); no documentation site.
#   bash scripts/check.sh --fast
#   bash scripts/check.sh --fast -x
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
if [ "${1:-}" = --fast ]; then
  fast=1
  shift
fi

echo "== ruff check" >&2
.venv/bin/ruff check .
echo "== ruff format --check" >&2
.venv/bin/ruff format --check .
echo "== mypy" >&2
.venv/bin/mypy
# Two workers, each taking whole test files (module fixtures, such as one server per file, and
# the order inside a file hold): on a machine busy with other work, two processes get about twice
# the share of one.
if [ "$fast" = 1 ]; then
  echo "== pytest (fast subset)" >&2
  exec .venv/bin/python -m pytest -q -n 2 --dist loadfile -m "not slow and not browser" "$@"
fi
echo "== mkdocs build --strict" >&2
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
# MkDocs 1.6 prints a notice about MkDocs 2 on every build; it says nothing about this site.
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
echo "== pytest" >&2
# Most slow tests wait on servers, subprocesses and a browser, which two workers overlap.
.venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
