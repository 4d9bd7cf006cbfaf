#!/usr/bin/env bash
# Create .venv in the repository root and install Tsuzuri into it (with the test and training tools
# when given --test).
#
# llama-cpp-python compiles llama.cpp from source (about 10 minutes on 2 cores), so the wheel is built
# once per machine and flag set, kept under ~/.cache/tsuzuri/wheels, and installed from there.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_VERSION=0.3.36
# Portable x86-64-v3 build. -march=native would also enable AMX on Xeons that have it, whose tile
# instructions die with SIGILL in sandboxes that do not grant them (seen on this project's machines
# with Q8_0 models). LLAVA (multimodal) is not needed.
LLAMA_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

extras=""
[ "${1:-}" = "--test" ] && extras="[test,train]"  # the suite also trains a tiny model

flags_id=$(printf '%s %s' "$LLAMA_CMAKE_ARGS" "$(uname -m)" | sha256sum | cut -c1-12)
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/tsuzuri/wheels/llama-cpp-python-$LLAMA_VERSION-$flags_id"

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if ! ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "bootstrap: building llama-cpp-python $LLAMA_VERSION for this machine (once; ~10 min on 2 cores)"
  rm -rf "$wheels.partial"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" .venv/bin/python -m pip wheel -q --no-deps --no-cache-dir \
    -w "$wheels.partial" "llama-cpp-python==$LLAMA_VERSION"
  mv "$wheels.partial" "$wheels"
fi
.venv/bin/python -m pip install -q --find-links "$wheels" --only-binary llama-cpp-python -e ".$extras"

echo "bootstrap: ready (.venv)"
