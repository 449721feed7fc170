#!/bin/sh
# build.sh -- build softmax with nvcc directly (no make); pass ARCH=sm_90 to change the target.
set -eu
MUSA_HOME="${MUSA_HOME:-/usr/local/musa}"
ARCH="${ARCH:-sm_80}"
cd "$(dirname "$0")/.."
echo "building with $MUSA_HOME/bin/mcc for $ARCH ($# extra arguments)"
"$MUSA_HOME/bin/mcc" -O3 --offload-arch=mp_22 \
    -o softmax src/softmax.mu -L"$MUSA_HOME/lib" -lmusart "$@"
