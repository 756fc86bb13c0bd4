#!/usr/bin/env bash
# Times a whole program four ways in one rotation: the user's file built with gcc, the
# same file built with clang-19 and Polly (alone, and with -polly-parallel), and tune's
# output built with gcc; the same flags for all, whole-program wall time, every run's
# output compared with the original's: tune's must be equal; Polly's may differ in the
# last digits (clang contracts floating-point expressions otherwise than gcc), which
# is said below its times.
#
#   scripts/compare-program.sh [-n RUNS] ORIGINAL.c TUNED.c [cc flags...] [-- program arguments...]
#
# Other source files of the program go with the flags (`other.c -lm`).
# Prints each binary's median, its spread (half the min..max range over the median)
# and its speedup over gcc. Needs clang-19 with Polly (libpolly-19-dev) for the Polly
# rows; without it they are left out.
set -euo pipefail

runs=5
if [[ "${1:-}" == "-n" ]]; then
  runs=$2
  shift 2
fi
if [[ $# -lt 2 ]]; then
  echo "usage: $0 [-n RUNS] ORIGINAL.c TUNED.c [cc flags...] [-- program arguments...]" >&2
  exit 2
fi
orig=$1
tuned=$2
shift 2
flags=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
  flags+=("$1")
  shift
done
[[ "${1:-}" == "--" ]] && shift
args=("$@")
cflags=${CFLAGS:--O3 -march=native}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# -fopenmp for the tuned file when tune added OpenMP; harmless for the others.
gcc $cflags "${flags[@]}" -fopenmp "$orig" -o "$dir/gcc" -lm
gcc $cflags "${flags[@]}" -fopenmp -I"$(dirname "$orig")" "$tuned" -o "$dir/tuned" -lm
names=(gcc tuned)
# Polly twice: as it schedules alone, and with its own OpenMP code (-polly-parallel).
if command -v clang-19 >/dev/null &&
  clang-19 $cflags -mllvm -polly "${flags[@]}" -fopenmp "$orig" -o "$dir/polly" -lm 2>/dev/null; then
  names=(gcc polly tuned)
  if clang-19 $cflags -mllvm -polly -mllvm -polly-parallel "${flags[@]}" -fopenmp "$orig" \
    -o "$dir/polly-par" -lm 2>/dev/null; then
    names=(gcc polly polly-par tuned)
  fi
fi

"$dir/gcc" "${args[@]}" >"$dir/want.out" 2>/dev/null
for name in "${names[@]}"; do : >"$dir/$name.times"; done
for _ in $(seq "$runs"); do
  for name in "${names[@]}"; do
    start=$(date +%s.%N)
    "$dir/$name" "${args[@]}" >"$dir/got.out" 2>/dev/null
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN {printf "%.6f\n", b - a}' >>"$dir/$name.times"
    if ! cmp -s "$dir/want.out" "$dir/got.out"; then
      # tune's output must be the original's; clang contracts floating-point
      # expressions otherwise than gcc, so Polly's may print other last digits.
      if [[ "$name" != polly* ]]; then
        echo "$name: output differs from the original's" >&2
        exit 1
      fi
      touch "$dir/$name.differs"
    fi
  done
done

median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
spread() { sort -g "$1" | awk -v m="$2" 'NR==1{lo=$1} {hi=$1} END {printf "%.0f", 100*(hi-lo)/2/m}'; }
base=$(median "$dir/gcc.times")
printf "%-8s %12s %8s %8s\n" binary "median ms" spread "vs gcc"
for name in "${names[@]}"; do
  m=$(median "$dir/$name.times")
  awk -v n="$name" -v m="$m" -v b="$base" -v s="$(spread "$dir/$name.times" "$m")" \
    'BEGIN {printf "%-8s %12.1f %7s%% %7.2fx\n", n, m * 1000, s, b / m}'
done
for name in "${names[@]}"; do
  [[ -e "$dir/$name.differs" ]] && echo "$name: output differs from the original's (timed all the same)"
done
echo "outputs of gcc and tuned: equal to the original's ($runs runs each, in rotation)"
