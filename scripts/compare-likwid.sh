#!/usr/bin/env bash
# Compare `tune machine` with likwid-bench on this machine.
#
#   scripts/compare-likwid.sh     env: RUNS=3 rounds, LIKWID_REPS=10 likwid samples a round
#
# Installs likwid from Debian's packages when likwid-bench is missing, builds tune, then
# runs RUNS interleaved rounds of
#   ./target/release/tune machine --json --refresh
#   LIKWID_REPS turns of
#     likwid-bench -t stream_<isa> -i 1 -W S0:<3 x tune's array bytes>B:1
#     machine_bench <tune's array bytes> 3 1      (tune's benchmark program, as tune machine runs it)
#   and the same on all CPUs (-W N:<3 x tune's array bytes>B:<all>, machine_bench ... <all>)
#   likwid-bench -t peakflops_<isa>_fma -W S0:16kB:1                          3 times
#   likwid-bench -t peakflops_<isa>_fma -W N:<16 x all>kB:<all>               3 times
# where <isa> is avx512 on CPUs with AVX-512F, else avx (AVX2 + FMA, compared with tune's
# avx2_fma), else the scalar kernels. It prints metric, likwid, tune, tune/likwid and
# PASS/FAIL (|ratio - 1| <= 15%) for the triad bandwidth and the widest FMA peak, on one
# thread and on all online CPUs.
#
# The same statistic on both sides: the best of many single sweeps. tune times each of
# its repetitions of the triad separately and keeps the best; likwid-bench averages
# over all iterations of a run, so it runs one sweep per invocation (-i 1), and the
# best is kept. Over RUNS rounds both sides keep their best (on a noisy machine, noise
# only ever makes a number smaller). The DRAM sweeps of both sides take turns: on a
# host whose other guests load the memory, the best of a block of runs depends on the
# minute it ran in (a block of likwid runs read 27 and 38 GB/s twenty minutes apart),
# so blocks of each side's runs disagree by 20-30% either way where turns agree. -W (not -w) makes
# every likwid thread first-touch its own chunk, as tune's parallel initialization does.
#
# Conventions (both sides alike): triad a[i] = b[i] + s*c[i] moves 24 bytes per element
# (2 loads + 1 store, STREAM counting, no write-allocate traffic), ordinary stores (no
# non-temporal ones: likwid's stream_* kernels without _mem), GB = 1e9 bytes (likwid's
# MByte = 1e6 bytes); three arrays of the same size on both sides.
# Peak: 2 flops per FMA per lane, GFLOP = 1e9; likwid's peakflops kernels load one
# vector per iteration from a small L1-resident array, tune's run on registers only.
# Cache levels: for every data cache level tune measured (L1, L2, L3), its load bandwidth
# against likwid-bench's load_<isa> kernel on working sets inside the level (tune's
# array bytes, a sixth of the level; half; and three quarters of the level; the fastest
# kept, as tune keeps the faster of its two sizes), 1 thread (-w S0:<bytes>B:1) and all
# (-W N:<bytes>B:<all>), best of LIKWID_REPS likwid runs with its own iteration count
# (a single sweep of a cache-sized array is too short to time) against tune's best of
# 5 timed repetitions of many sweeps.
# Exit status: 0 all PASS, 1 some FAIL, 2 likwid-bench cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
LIKWID_REPS=${LIKWID_REPS:-10}
say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

# ---------------------------------------------------------------- likwid
if ! command -v likwid-bench >/dev/null 2>&1; then
  say "installing likwid"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq likwid
fi

# ---------------------------------------------------------------- tune
say "building tune"
cargo build --release -q -p tune-cli --bin tune
TUNE=./target/release/tune

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Flattens serde_json's pretty output into path=value lines (bandwidth_1.triad=19.1).
flatten() {
  awk '
    function path(k,   i, p) { p = ""; for (i = 1; i <= depth; i++) p = p stack[i] "."; return p k }
    {
      line = $0; sub(/^[ \t]+/, "", line); sub(/,$/, "", line)
      if (line ~ /^"[^"]*": [\[{]$/) { k = line; sub(/^"/, "", k); sub(/".*/, "", k); stack[++depth] = k; next }
      if (line == "{" || line == "[") { if (NR > 1) stack[++depth] = "[]"; next }
      if (line == "}" || line == "]") { depth--; next }
      if (line ~ /^"[^"]*": /) {
        k = line; sub(/^"/, "", k); sub(/".*/, "", k)
        v = line; sub(/^"[^"]*": /, "", v); gsub(/"/, "", v)
        print path(k) "=" v
      }
    }'
}
get() { awk -F= -v k="$2" '$1 == k { print $2; exit }' "$1"; }
# max of two numbers, either possibly empty or "null"
maxof() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
  if (a == "" || a == "null") { print b; exit }
  if (b == "" || b == "null") { print a; exit }
  print (a + 0 > b + 0) ? a : b }'; }

if grep -qw avx512f /proc/cpuinfo; then
  ISA=avx512; STREAM=stream_avx512; PEAK=peakflops_avx512_fma; TUNE_PEAK=avx512_fma; LOAD=load_avx512
elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  ISA=avx2; STREAM=stream_avx; PEAK=peakflops_avx_fma; TUNE_PEAK=avx2_fma; LOAD=load_avx
else
  ISA=scalar; STREAM=stream; PEAK=peakflops; TUNE_PEAK=scalar; LOAD=load
fi
if [ "$ISA" != avx512 ]; then
  say "this CPU has no AVX-512F: comparing likwid's $STREAM / $PEAK with tune's $TUNE_PEAK"
fi
ALL=$(getconf _NPROCESSORS_ONLN)

# likwid FIELD N ARGS...: runs `likwid-bench ARGS` N times and prints the best FIELD
# (MByte/s or MFlops/s) divided by 1000 (GB/s, GFLOP/s), or fails saying why.
likwid() {
  local field=$1 n=$2 out v best=""
  shift 2
  for _ in $(seq 1 "$n"); do
    if ! out=$(likwid-bench "$@" 2>&1); then
      printf 'likwid-bench %s failed:\n%s\n' "$*" "$out" >&2
      return 1
    fi
    v=$(printf '%s\n' "$out" | awk -v f="$field:" '$1 == f { print $2 / 1000; exit }')
    if [ -z "$v" ]; then
      printf 'likwid-bench %s printed no %s:\n%s\n' "$*" "$field" "$out" >&2
      return 1
    fi
    best=$(maxof "$best" "$v")
  done
  echo "$best"
}

declare -A best
for r in $(seq 1 "$RUNS"); do
  say "round $r/$RUNS: tune machine --json --refresh"
  TUNE_CACHE="$WORK/cache" "$TUNE" machine --json --refresh >"$WORK/tune.json"
  flatten <"$WORK/tune.json" >"$WORK/tune.flat"
  ARRAY=$(get "$WORK/tune.flat" array_bytes)
  for k in bandwidth_1.triad bandwidth_all.triad peak_1.$TUNE_PEAK peak_all.$TUNE_PEAK; do
    best[tune.$k]=$(maxof "${best[tune.$k]:-}" "$(get "$WORK/tune.flat" "$k")")
  done

  say "round $r/$RUNS: likwid-bench"
  SIZE=$((3 * ARRAY))
  # tune's benchmark program, as `tune machine` built it and runs it.
  EXE=$(find "$WORK/cache" -name machine_bench -type f | head -n 1)
  for spec in "1:S0:1" "all:N:$ALL"; do
    IFS=: read -r tag dom n <<<"$spec"
    # DRAM: one likwid sweep, then three of tune's, LIKWID_REPS times in turn, so that
    # both sides sample the same moments of a shared host's memory traffic.
    for _ in $(seq 1 "$LIKWID_REPS"); do
      if ! mb=$(likwid MByte/s 1 -t "$STREAM" -i 1 -W "$dom:${SIZE}B:$n"); then
        echo "likwid-bench cannot run on this machine (see above); tune's numbers:" >&2
        cat "$WORK/tune.json"
        exit 2
      fi
      best[likwid.triad.$tag]=$(maxof "${best[likwid.triad.$tag]:-}" "$mb")
      tb=$(OMP_NUM_THREADS=$n OMP_PROC_BIND=close OMP_PLACES=cores OMP_DYNAMIC=false \
        "$EXE" "$ARRAY" 3 "$n" 0.05 | python3 -c \
        'import json, sys; print(json.load(sys.stdin)["bandwidth"]["triad"])')
      best[tune.triad.$tag]=$(maxof "${best[tune.triad.$tag]:-}" "$tb")
    done
    if ! mf=$(likwid MFlops/s 3 -t "$PEAK" -W "$dom:$((16 * n))kB:$n"); then
      echo "likwid-bench cannot run on this machine (see above)" >&2
      exit 2
    fi
    best[likwid.peak.$tag]=$(maxof "${best[likwid.peak.$tag]:-}" "$mf")
  done
  # The cache levels: "tag level array_bytes load" lines from tune's JSON.
  python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
for tag, key in (("1", "cache_bandwidth_1"), ("all", "cache_bandwidth_all")):
    for c in m.get(key, []):
        print(tag, c["level"], c["array_bytes"], c["load"], c["capacity_bytes"] // 2 // 256 * 256,
              c["capacity_bytes"] * 3 // 4 // 256 * 256)
' "$WORK/tune.json" >"$WORK/levels"
  while read -r tag level bytes load half three_quarters; do
    # Three working sets inside the level, the fastest kept (as tune keeps the faster of
    # its two): tune's array, half and three quarters of the level (likwid's two-thread
    # L1 load on Zen 3 is fastest at half: 295 GB/s, against 253 at tune's array and
    # 283 at three quarters). On L1, likwid-bench's load kernel is called once per
    # sweep, and a sweep of tune's 5 kB array is short enough for the call to show.
    for b in "$bytes" "$half" "$three_quarters"; do
      if [ "$tag" = 1 ]; then ws="-w S0:${b}B:1"; else ws="-W N:${b}B:$ALL"; fi
      # shellcheck disable=SC2086
      if ! ml=$(likwid MByte/s "$LIKWID_REPS" -t "$LOAD" $ws); then
        echo "likwid-bench cannot run on this machine (see above)" >&2
        exit 2
      fi
      best[likwid.L$level.$tag]=$(maxof "${best[likwid.L$level.$tag]:-}" "$ml")
    done
    best[tune.L$level.$tag]=$(maxof "${best[tune.L$level.$tag]:-}" "$load")
    levels="${levels:-} $level"
  done <"$WORK/levels"
done

echo
echo "host: $(get "$WORK/tune.flat" host)   cpu: $(get "$WORK/tune.flat" cpu_model)   online CPUs: $ALL"
echo "arrays: 3 x $ARRAY bytes on both sides (likwid -W <domain>:${SIZE}B:<threads>)"
echo "statistic: best single sweep (DRAM: $RUNS x $LIKWID_REPS turns of one likwid run of -i 1 and one run of tune's"
echo "           benchmark program of 3 sweeps; tune machine itself read triad $(get "$WORK/tune.flat" bandwidth_1.triad) / $(get "$WORK/tune.flat" bandwidth_all.triad) GB/s in its last run);"
echo "           peak: best of $RUNS tune runs (x 5 timed runs) and of $RUNS x 3 likwid runs"
echo "convention: triad = 24 bytes/element (2 loads + 1 store, no write-allocate), ordinary stores, GB = 1e9 B;"
echo "            peak = 2 flops per FMA per lane, GFLOP = 1e9 (likwid: $STREAM, $PEAK; tune: triad, $TUNE_PEAK)"
echo
fails=0
row() {
  local name=$1 l=$2 t=$3
  local line
  line=$(awk -v n="$name" -v l="$l" -v t="$t" 'BEGIN {
    if (l + 0 <= 0 || t == "" || t == "null") { printf "%-30s %10s %10s %8s  %s\n", n, l, t, "-", "FAIL"; exit }
    r = t / l; ok = (r >= 0.85 && r <= 1.15) ? "PASS" : "FAIL"
    printf "%-30s %10.2f %10.2f %8.3f  %s\n", n, l, t, r, ok }')
  echo "$line"
  case $line in *FAIL) fails=$((fails + 1)) ;; esac
}
printf '%-30s %10s %10s %8s  %s\n' metric likwid tune ratio "within 15%"
row "triad GB/s, 1 thread" "${best[likwid.triad.1]}" "${best[tune.triad.1]}"
row "triad GB/s, $ALL threads" "${best[likwid.triad.all]}" "${best[tune.triad.all]}"
row "$ISA FMA GFLOP/s, 1 thread" "${best[likwid.peak.1]}" "${best[tune.peak_1.$TUNE_PEAK]}"
row "$ISA FMA GFLOP/s, $ALL threads" "${best[likwid.peak.all]}" "${best[tune.peak_all.$TUNE_PEAK]}"
for level in $(printf '%s\n' ${levels:-} | sort -un); do
  row "L$level load GB/s, 1 thread" "${best[likwid.L$level.1]:-}" "${best[tune.L$level.1]:-}"
  row "L$level load GB/s, $ALL threads" "${best[likwid.L$level.all]:-}" "${best[tune.L$level.all]:-}"
done
[ "$fails" -eq 0 ]
