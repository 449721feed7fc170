#!/bin/sh
# build.sh -- build softmax with nvcc directly (no make); pass ARCH=sm_90 to change the target.
set -eu
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
ARCH="${ARCH:-sm_80}"
cd "$(dirname "$0")/.."
echo "building with $CUDA_HOME/bin/nvcc for $ARCH ($# extra arguments)"
"$CUDA_HOME/bin/nvcc" -O3 -arch=sm_80 --expt-relaxed-constexpr \
    -o softmax src/softmax.cu -L"$CUDA_HOME/lib64" -lcudart "$@"
