#!/usr/bin/env bash
# ember's GPU check: one script for the short session on a GPU machine (no network needed).
#
#   bash tests/gpu/run.sh            # on the GPU machine; results under $OUT (default ./gpu-out)
#   bash tests/gpu/run.sh --fake     # the same steps on the CPU stand-in for CuPy (any machine)
#
# Steps, most important first, each with its own time limit (the whole within about 8 minutes;
# TOTAL=seconds changes that): the environment; the CPU-stand-in plumbing tests; the seed notes'
# GPU examples and torch comparisons (test_cuda_examples.py); the demo trained on cuda; the
# OpInfo op suite on cuda in float32; the benchmarks (bench.json); the op suite in the other
# dtypes. Every step writes a log (and pytest steps a junit xml) under $OUT; summary.txt lists
# each step's exit status. The script itself always exits 0 once it has run every step.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
TOTAL=${TOTAL:-470}
FAKE=0
if [ "${1:-}" = "--fake" ]; then
    FAKE=1
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
START=$SECONDS

left() { echo $((TOTAL - (SECONDS - START))); }

# step NAME LIMIT COMMAND...: run with a time limit (capped by the time left), log, record
step() {
    local name=$1 limit=$2
    shift 2
    local remaining
    remaining=$(left)
    if [ "$remaining" -lt 15 ]; then
        echo "$name: skipped (out of time)" | tee -a "$SUMMARY"
        return
    fi
    [ "$limit" -gt "$remaining" ] && limit=$remaining
    echo "== $name (limit ${limit}s)"
    local t0=$SECONDS
    timeout --signal=INT --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name: rc=$rc ($((SECONDS - t0))s) $(tail -n 1 "$OUT/$name.log")" | tee -a "$SUMMARY"
}

PYTEST="python -m pytest -p no:cacheprovider -q -rfEs --tb=short"

# --- the environment
{
    date -u
    nvidia-smi 2>&1 | head -20
    python - <<'EOF'
import sys, numpy, torch
print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__,
      "torch.cuda", torch.cuda.is_available())
try:
    import cupy
    print("cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount(),
          "runtime", cupy.cuda.runtime.runtimeGetVersion())
except Exception as err:
    print("cupy unavailable:", type(err).__name__, err)
import ember
print("ember", ember.__file__, "cuda available", ember.cuda.is_available())
EOF
} > "$OUT/env.log" 2>&1
cat "$OUT/env.log"

if [ $FAKE = 1 ]; then
    export EMBER_FAKE_CUDA=1
    # the stand-in is bound inside the process: programs start through this launcher
    DEMO=(python tests/gpu/fake_launch.py ember.demo)
    BENCH_FLAGS=(--fake --small)
else
    DEMO=(python -m ember.demo)
    BENCH_FLAGS=()
fi

step plumbing 60 $PYTEST tests/test_device_plumbing.py --junitxml="$OUT/plumbing.xml"
step examples 90 $PYTEST tests/gpu/test_cuda_examples.py --junitxml="$OUT/examples.xml"
step demo 90 "${DEMO[@]}" --device cuda --epochs 3 --out "$OUT/demo"
step ops_float32 150 env EMBER_GPU_DTYPES=float32 $PYTEST tests/gpu/test_cuda_ops.py \
    --junitxml="$OUT/ops_float32.xml"
step bench 150 python tests/gpu/bench_cuda.py "${BENCH_FLAGS[@]}" --budget 110 \
    --out "$OUT/bench.json"
step ops_other_dtypes 300 env \
    EMBER_GPU_DTYPES=float64,float16,bfloat16,int64,int32,int16,int8,uint8,bool,complex64,complex128 \
    $PYTEST tests/gpu/test_cuda_ops.py --junitxml="$OUT/ops_other_dtypes.xml"

echo "total $((SECONDS - START))s" | tee -a "$SUMMARY"
echo "results in $OUT:"
ls "$OUT"
exit 0
