#!/usr/bin/env bash
# Download the wheels of wheels.txt for the GPU machine (Python 3.12, x86-64 Linux) into
# benchmarks/gpu/wheels/, on a machine with a package index. --no-deps: wheels.txt names each
# package the GPU machine lacks; the rest is there already.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d wheels -r wheels.txt
du -ch wheels/*.whl | tail -1
