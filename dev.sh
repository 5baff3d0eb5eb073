#!/usr/bin/env bash
# One entry point for people and CI. Each command first makes ./.venv (once), installs
# torch==2.13.0 *before* the project (pinned, so no dependency pulls a newer release), then the
# project with its dev extras.
#
# Which torch build you get is your package index's choice: PyPI serves the CUDA build on Linux
# x86-64 (several GB). For the CPU-only build, point pip at PyTorch's CPU index:
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu bash dev.sh test
# (passed to pip as --index-url for the torch install only; unset, nothing extra is asked of
# any index).
#
#   bash dev.sh demo   # the whole WaterDrum loop on the built-in small model (`waterdrum demo`)
#   bash dev.sh test   # the test suite (offline)
#   bash dev.sh lint   # ruff check, ruff format --check, then mypy (configured in pyproject.toml)
#   bash dev.sh typecheck   # mypy alone
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=.venv
export HF_HOME=${HF_HOME:-$PWD/.hf_home}
export HF_EVALUATE_OFFLINE=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

setup() {
    local stamp=$VENV/.installed
    local want
    want=$( (cat pyproject.toml dev.sh; echo "${TORCH_INDEX_URL:-}") | sha256sum | cut -d' ' -f1)
    if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
        return
    fi
    [[ -x $VENV/bin/python ]] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    local torch_source=()
    [[ -n ${TORCH_INDEX_URL:-} ]] && torch_source=(--index-url "$TORCH_INDEX_URL")
    "$VENV/bin/python" -m pip install -q "torch==2.13.0" "${torch_source[@]}"
    "$VENV/bin/python" -m pip install -q -e ".[dev]"
    echo "$want" > "$stamp"
}

# mypy cannot follow setuptools' editable-install import hook, and trainers/ and metrics/ are
# installed as waterdrum_hf.trainers and waterdrum_hf.metrics (package-dir in pyproject.toml).
# So mypy reads the package through a tree of links laid out as installed, rebuilt on each run
# (pyproject.toml's mypy_path points at it), and its messages name the files in the repository.
typecheck() {
    local tree=.mypy_cache/tree
    rm -rf "$tree" && mkdir -p "$tree/waterdrum_hf"
    ln -s "$PWD"/waterdrum_hf/* "$tree/waterdrum_hf/"
    ln -s "$PWD/trainers" "$tree/waterdrum_hf/trainers"
    ln -s "$PWD/metrics" "$tree/waterdrum_hf/metrics"
    "$VENV/bin/mypy" "$@" | sed -e "s#^$tree/waterdrum_hf/\(trainers\|metrics\)/#\1/#" \
        -e "s#^$tree/##"
}

case "${1:-}" in
    demo) setup; shift; exec "$VENV/bin/waterdrum" demo "$@" ;;
    test) setup; shift; exec "$VENV/bin/python" -m pytest "$@" ;;
    lint) setup; "$VENV/bin/ruff" check . && "$VENV/bin/ruff" format --check . && typecheck ;;
    typecheck) setup; shift; typecheck "$@" ;;
    *) echo "usage: bash dev.sh {demo|test|lint|typecheck} [args...]" >&2; exit 2 ;;
esac
