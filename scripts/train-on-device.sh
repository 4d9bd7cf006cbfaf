#!/usr/bin/env bash
# The one command for a lent GPU machine:  scripts/train-on-device.sh CONFIG MINUTES [-- TRAIN-OPTIONS]
# checks the GPU, runs a 20-second smoke run (the loss falls, the GGUF exports), then the budgeted run, and
# leaves in $OUT the Q8_0 GGUF in parts of at most 15 MiB, run.json, loss.tsv and smoke.json.
# Bring them back with:  tsuzuri-train assemble FILES_AT --out daemon/models/NAME.gguf   (joins, checks, evals)
#
# Needs the pack (tsuzuri-train pack --out build/pack, carried to the device as an ignored path) and
# Python with torch and numpy; the pack's site/ supplies gguf and PyYAML where they are not installed.
# TSUZURI_PACK (default build/pack), TSUZURI_DEVICE (default cuda; cpu for the test),
# TSUZURI_SMOKE_SECONDS (default 20), TSUZURI_WORK (checkpoints and the whole GGUF, default build/device-run)
# and PYTHON (default python3) change the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 CONFIG MINUTES [-- TRAIN-OPTIONS]" >&2
  exit 2
fi
config=$1 minutes=$2
shift 2
pack=${TSUZURI_PACK:-build/pack}
device=${TSUZURI_DEVICE:-cuda}
python=${PYTHON:-python3}
if [ ! -f "$pack/manifest.json" ]; then
  echo "no pack at $pack: run tsuzuri-train pack --corpus ../shared/corpus --out $pack here, and carry it" >&2
  exit 2
fi
if [ "$device" = cuda ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
fi
# a GPU batch: enough tokens per step to keep the device busy (options after -- override these)
defaults=()
if [ "$device" = cuda ]; then
  defaults=(--batch-size 2048 --lr 2e-3 --warmup 200 --steps 10000000 --threads 8 --log-every 100 --valid-loss-items 4000 --valid-every 500
            --checkpoint-every 100000000)
fi
export PYTHONPATH="$pack/site${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" -m training.device "$config" "$minutes" --pack "$pack" --device "$device" \
  --smoke-seconds "${TSUZURI_SMOKE_SECONDS:-20}" --work "${TSUZURI_WORK:-build/device-run}" \
  -- "${defaults[@]}" "$@"
