#!/usr/bin/env bash
# On the GPU machine (no package index): install the carried wheels of wheels.txt from
# benchmarks/gpu/wheels/ into a folder of their own, lay the package out as it is installed
# (waterdrum_hf with trainers/ and metrics/ inside, as links to this tree: always the code that
# travelled), check the imports, then run the measurements:
#
#   bash benchmarks/gpu/run.sh --only training --output-dir "$OUT"
#   bash benchmarks/gpu/run.sh --smoke --output-dir /tmp/smoke      # the same on the CPU, tiny shape
#   bash benchmarks/gpu/run.sh pytest -m cuda benchmarks/tests/test_gpu.py   # the CUDA tests
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
SITE=${WATERDRUM_SITE:-/tmp/waterdrum-site}
WHEELS=${WATERDRUM_WHEELS:-benchmarks/gpu/wheels}
stamp=$SITE/.wheels-$(sha256sum benchmarks/gpu/wheels.txt | cut -c1-12)
if [[ ! -f $stamp ]]; then
    [[ -d $WHEELS ]] || { echo "no $WHEELS: run benchmarks/gpu/download_wheels.sh and carry it" >&2; exit 2; }
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE/wheels" --find-links "$WHEELS" -r benchmarks/gpu/wheels.txt
    touch "$stamp"
fi
tree=$SITE/source
rm -rf "$tree" && mkdir -p "$tree/waterdrum_hf"
ln -s "$PWD"/waterdrum_hf/* "$tree/waterdrum_hf/"
ln -s "$PWD/trainers" "$tree/waterdrum_hf/trainers"
ln -s "$PWD/metrics" "$tree/waterdrum_hf/metrics"
ln -s "$PWD/benchmarks" "$tree/benchmarks"
# The laid-out package first; the safe path keeps the repository's own waterdrum_hf/ (which
# lacks trainers/) off sys.path, in child processes (accelerate launch) too.
export PYTHONPATH=$tree:$SITE/wheels${PYTHONPATH:+:$PYTHONPATH}
export PYTHONSAFEPATH=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
export HF_HOME=${HF_HOME:-/tmp/waterdrum-hf-home}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
"$PYTHON" -m benchmarks.gpu.preflight
if [[ ${1:-} == pytest ]]; then
    # -p imports the laid-out package first, before a test puts the repository root (whose
    # waterdrum_hf/ lacks trainers/) on sys.path.
    shift
    exec "$PYTHON" -m pytest -p waterdrum_hf.trainers -p no:cacheprovider "$@"
fi
exec "$PYTHON" -m benchmarks.gpu "$@"
