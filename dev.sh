#!/usr/bin/env bash
# One entry point for people and CI. Each command first makes ./.venv (once), installs the CPU
# build of torch 2.13.0 *before* the project so that no multi-GB CUDA build is pulled, then the
# project with its dev extras.
#
#   bash dev.sh demo   # the whole WaterDrum loop on the built-in small model (`waterdrum demo`)
#   bash dev.sh test   # the test suite (offline)
#   bash dev.sh lint   # ruff
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=.venv
export HF_HOME=${HF_HOME:-$PWD/.hf_home}
export HF_EVALUATE_OFFLINE=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

setup() {
    local stamp=$VENV/.installed
    local want
    want=$(cat pyproject.toml dev.sh | sha256sum | cut -d' ' -f1)
    if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
        return
    fi
    [[ -x $VENV/bin/python ]] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q "torch==2.13.0"
    "$VENV/bin/python" -m pip install -q -e ".[dev]"
    echo "$want" > "$stamp"
}

case "${1:-}" in
    demo) setup; shift; exec "$VENV/bin/waterdrum" demo "$@" ;;
    test) setup; shift; exec "$VENV/bin/python" -m pytest "$@" ;;
    lint) setup; exec "$VENV/bin/ruff" check . ;;
    *) echo "usage: bash dev.sh {demo|test|lint} [args...]" >&2; exit 2 ;;
esac
