#!/usr/bin/env bash
# The README's Slurm job-array recipe, run on a single-node Slurm cluster started here.
#
#   scripts/test-slurm.sh            (as root; `scripts/bootstrap.sh test` runs it last)
#
# What it does:
#   1. Installs Debian's slurm-wlm and munge with apt-get when missing.
#   2. Starts, in a temporary folder, a munged of its own (its own key and socket) and
#      slurmctld + slurmd on localhost from a generated slurm.conf that needs no cgroups
#      (proctrack/linuxproc, task/none, no accounting), on ports of its own.
#   3. Writes a small suite manifest, datasets/suite.json in the temporary folder: the
#      PROGRAMS below, taken from the dataset's manifest with their flags (the whole
#      dataset of 29 programs takes about 4 minutes at MINI on 2 cores; these 9 take
#      about 45 s).
#   4. Takes the job script and the merge command from the README's bash blocks and runs
#      them as written in the temporary folder (target/release/tune there is a link to
#      the binary under test), with two changes: --preset MINI and --cpus-per-task = this
#      node's CPUs. So the array has the README's 4 tasks (`--shard
#      $SLURM_ARRAY_TASK_ID/4 ... --resume`, 2 or 3 programs each). Once task 0 has finished
#      its first program, it is killed with `scontrol requeue`: Slurm starts it again,
#      and --resume must finish the shard without redoing what its journal holds (should
#      the kill come after the shard's end, the next task is tried; should it come after
#      every task's end, the array runs once more from nothing).
#   5. Runs the README's `tune batch --merge` and checks that the merged results hold
#      the programs of an unsharded `tune batch` run of the same suite (run with the
#      cache the array filled, so it costs seconds) and of the manifest, each once, with
#      its tuned file. The array tasks must all end COMPLETED with exit code 0.
# It stops its daemons and removes the folder on exit; a failure ends it with one line
# `test-slurm: FAIL: ...` and exit code 1 (the daemons' logs are printed before it).
#
# Environment: TUNE_BIN, the tune binary to run (default: `cargo build -p tune-cli --bin
# tune`, the debug build, which tunes the MINI programs as fast as a release build);
# KEEP=1 keeps the temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# 9 programs: shard 0 (sorted: atax, gesummv, trisolv) has 3, so two are still in
# flight when the first is journaled and the task is requeued.
PROGRAMS=(atax bicg durbin gemm gesummv jacobi-1d mvt syrk trisolv)
PRESET=MINI
LIMIT_S=300 # from the daemons' start to the end (installing and building not counted)

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }
tmp=""
fail() {
  if [ -n "$tmp" ] && [ -d "$tmp" ]; then
    for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/munged.log "$tmp"/logs/*; do
      [ -f "$f" ] || continue
      echo "--- $f (last lines)" >&2
      tail -n 15 "$f" >&2
    done
  fi
  echo "test-slurm: FAIL: $*" >&2
  exit 1
}

# --- 1. packages -------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || fail "must run as root (apt-get, and slurmd starts jobs as their user)"
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 ||
  ! command -v sbatch >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  say "installing slurm-wlm and munge"
  apt-get update -qq || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null ||
    fail "apt-get install slurm-wlm munge failed"
fi
command -v python3 >/dev/null 2>&1 || fail "python3 not found (it reads the suite manifest)"

# --- the tune binary -----------------------------------------------------------------
if [ -z "${TUNE_BIN:-}" ]; then
  say "building tune (cargo build -p tune-cli --bin tune)"
  cargo build -q -p tune-cli --bin tune || fail "cargo build of tune failed"
  TUNE_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/tune"
fi
case "$TUNE_BIN" in /*) ;; *) TUNE_BIN="$root/$TUNE_BIN" ;; esac
[ -x "$TUNE_BIN" ] || fail "no tune binary at $TUNE_BIN"

# --- 2. munge and slurm in a temporary folder --------------------------------------
start_s=$SECONDS
tmp=$(mktemp -d /tmp/tune-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
job=""
steps() { # the slurmstepd processes of this test's cluster (their log is in $tmp)
  local d f
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] || continue
    for f in "$d"/fd/*; do
      case "$(readlink "$f" 2>/dev/null)" in "$tmp"/*) echo "${d#/proc/}"; break ;; esac
    done
  done
}
cleanup() {
  local p
  # Jobs first: their slurmstepd and tune processes outlive slurmd.
  if [ -n "$job" ]; then
    scancel "$job" 2>/dev/null || true
    for _ in $(seq 20); do [ -z "$(squeue -h -j "$job" 2>/dev/null)$(steps)" ] && break; sleep 0.5; done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null || true
  done
  for p in $(steps); do kill -9 "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "test-slurm: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/logs" "$tmp/results"
chmod 700 "$tmp/munge"
# A key of our own: the machine's munge (if any) is left alone.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
socket="$tmp/munge/munge.socket"
munged --foreground --force --socket="$socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/munged.log" >>"$tmp/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
munge --socket="$socket" -n </dev/null | unmunge --socket="$socket" >/dev/null 2>&1 ||
  fail "munged did not start (see $tmp/munged.log)"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
host=$(hostname -s)
cpus=$(nproc)
ctl_port=$(free_port)
d_port=$(free_port)
[ "$ctl_port" != "$d_port" ] || d_port=$(free_port)
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=tunetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# A requeued job waits for its credential to expire (120 s by default) before it starts again.
AuthInfo=socket=$socket,cred_expire=10
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes are tracked by their parent, tasks are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

say "starting slurmctld and slurmd ($host, $cpus CPUs, ports $ctl_port/$d_port)"
slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 60); do
  if [ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ]; then ready=1; break; fi
  sleep 0.5
done
[ "$ready" = 1 ] || fail "the node did not come up idle: $(sinfo -h -o '%n %t %E' 2>&1 | head -n 1)"

# --- 3. a small suite from the dataset -----------------------------------------------
mkdir -p "$tmp/datasets" "$tmp/target/release"
suite="$tmp/datasets/suite.json"
python3 - "$root/datasets/suite.json" "$suite" "${PROGRAMS[@]}" <<'EOF' || fail "cannot write the suite manifest"
import json, os, sys
src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
suite = json.load(open(src))
base = os.path.dirname(os.path.abspath(src))
by_name = {p["name"]: p for p in suite["programs"]}
missing = [n for n in names if n not in by_name]
if missing:
    sys.exit(f"not in {src}: {missing}")
programs = []
for n in names:
    p = dict(by_name[n])
    p["file"] = os.path.join(base, p["file"])
    if p.get("verdicts"):
        p["verdicts"] = os.path.join(base, p["verdicts"])
    programs.append(p)
suite["name"] = "slurm-test"
suite["programs"] = programs
json.dump(suite, open(dst, "w"), indent=2)
EOF

# --- 4. the README's job array, one task requeued mid-way -------------------------
# The job script and the merge command are read from the README's fenced bash blocks and
# run as written, in $tmp: datasets/suite.json there is the small suite and
# target/release/tune a link to TUNE_BIN. Only the preset (LARGE -> MINI) and
# --cpus-per-task (-> this node's CPUs) are changed.
readme_block() { # the README's ```bash block that holds $1
  awk -v pat="$1" '
    /^```/ { if (inb) { if (hit && bash) { printf "%s", buf; exit } inb = 0; next }
             inb = 1; bash = ($0 ~ /^```bash/); buf = ""; hit = 0; next }
    inb { buf = buf $0 "\n"; if (index($0, pat)) hit = 1 }' "$root/README.md"
}
recipe=$(readme_block '#SBATCH --array')
merge_cmd=$(readme_block 'batch --merge' | grep -e '--merge' | grep -v '^ *#' || true)
# shellcheck disable=SC2016 # $SLURM_ARRAY_TASK_ID is the README's text, not expanded here
for want in '#SBATCH --array=' '--cpus-per-task=' 'target/release/tune batch datasets/suite.json' \
  '--preset ' '--shard "$SLURM_ARRAY_TASK_ID/' '--resume'; do
  grep -qF -e "$want" <<<"$recipe" || fail "the README's job script no longer holds '$want'; update scripts/test-slurm.sh"
done
grep -qF 'target/release/tune batch --merge results/' <<<"$merge_cmd" ||
  fail "the README's merge command changed ('$merge_cmd'); update scripts/test-slurm.sh"
# shellcheck disable=SC2016
shards=$(sed -n 's/.*--shard "$SLURM_ARRAY_TASK_ID\/\([0-9]*\)".*/\1/p' <<<"$recipe")
sed -e 's/--preset [A-Z]*/--preset '"$PRESET"'/' -e 's/--cpus-per-task=[0-9]*/--cpus-per-task='"$cpus"'/' \
  <<<"$recipe" >"$tmp/array.sh"
ln -s "$TUNE_BIN" "$tmp/target/release/tune"
export TUNE_CACHE="$tmp/cache"

job_states() { # one line per array task: <id>_<task> <state> <exit code>
  scontrol -o show job "$1" 2>/dev/null |
    sed -n 's/.*ArrayJobId=\([0-9]*\) ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .* ExitCode=\([0-9:]*\) .*/\1_\2 \3 \4/p'
}
wait_done() { # until no task of array $1 is pending or running
  local left
  while :; do
    left=$(squeue -h -j "$1" -o %i 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] && return 0
    [ $((SECONDS - start_s)) -lt "$LIMIT_S" ] || fail "array job $1 not finished within ${LIMIT_S}s: $(squeue -h -j "$1" -o '%i %T %r' | tr '\n' ';')"
    sleep 1
  done
}
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# One attempt: submit the array, then requeue the first task that still has programs to
# tune once it has journaled one; sets $job, $victim (empty when every task finished its
# shard before the kill reached it) and $done_before.
attempt() {
  say "sbatch: the README's job array, ${#PROGRAMS[@]} programs at $PRESET in $shards tasks"
  job=$(sbatch --parsable --chdir="$tmp" --output="$tmp/logs/slurm-%A_%a.out" \
    --open-mode=append --requeue "$tmp/array.sh") || fail "sbatch failed"
  job=${job%%;*}
  # Requeue a task once it has journaled a program. The tasks run one after another
  # (--exclusive), so should a task's last programs finish before the kill reaches it (the
  # journal is then complete), the next task is tried.
  nprog=${#PROGRAMS[@]}
  victim="" done_before=0
  for t in $(seq 0 $((shards - 1))); do
    size=$(((nprog - t + shards - 1) / shards))
    [ "$size" -ge 2 ] || continue
    journal="$tmp/results/shard-$t/journal.jsonl"
    i=0
    while [ "$(lines "$journal")" -lt 1 ]; do
      if [ $((i % 10)) -eq 0 ]; then
        state=$(job_states "$job" | awk -v t="_$t" 'substr($1, length($1) - length(t) + 1) == t { print $2 }')
        case "$state" in
          PENDING | RUNNING | CONFIGURING | "") ;;
          *) fail "array task ${job}_$t ended ($state) before its first program was journaled" ;;
        esac
        [ $((SECONDS - start_s)) -lt "$LIMIT_S" ] || fail "no program of shard $t finished within ${LIMIT_S}s"
      fi
      i=$((i + 1))
      sleep 0.1
    done
    done_before=$(lines "$journal")
    say "task ${job}_$t has $done_before of $size programs in its journal: scontrol requeue ${job}_$t"
    scontrol requeue "${job}_$t" || fail "scontrol requeue ${job}_$t failed"
    for _ in $(seq 100); do grep -q 'DUE TO JOB REQUEUE' "$tmp/logs/slurm-${job}_$t.out" 2>/dev/null && break; sleep 0.1; done
    sleep 1
    if [ "$(lines "$journal")" -lt "$size" ]; then victim=$t; break; fi
    say "task ${job}_$t finished its shard before the kill reached it; trying the next task"
  done
}
# The kill races the MINI programs (seconds each): should no task be caught mid-way, the
# array runs once more from nothing (results, logs and cache removed).
for try in 1 2; do
  attempt
  [ -n "$victim" ] && break
  wait_done "$job"
  [ "$try" -eq 1 ] || fail "no array task could be requeued mid-way (each finished its shard first), twice"
  say "no task was caught mid-way; the array runs again from nothing"
  rm -rf "$tmp/results" "$tmp/logs" "$tmp/cache"
  mkdir -p "$tmp/results" "$tmp/logs"
done
wait_done "$job"

bad=$(job_states "$job" | awk '$2 != "COMPLETED" || $3 != "0:0"')
[ -z "$bad" ] || fail "array tasks did not complete: $bad"
logv="$tmp/logs/slurm-${job}_$victim.out"
[ "$(grep -c '^tune batch: ' "$logv")" -ge 2 ] || fail "task ${job}_$victim was not run again after the requeue"
grep -q 'DUE TO JOB REQUEUE' "$logv" || fail "task ${job}_$victim was not killed by the requeue"
# The resumed run's first line: "tune batch: N programs, K already finished, M to tune";
# a program may have finished between the look at the journal and the kill.
n="" k=""
read -r n k < <(sed -n 's/^tune batch: \([0-9]*\) programs, \([0-9]*\) already finished,.*/\1 \2/p' "$logv" | tail -n 1) || true
if [ -z "$k" ] || [ "$k" -lt "$done_before" ] || [ "$k" -ge "$n" ]; then
  fail "the requeued task ${job}_$victim did not resume mid-way: $(grep '^tune batch: ' "$logv" | tail -n 1)"
fi
for s in $(seq 0 $((shards - 1))); do
  d="$tmp/results/shard-$s/journal.jsonl"
  dup=$(python3 -c 'import json,sys,collections; c=collections.Counter(json.loads(l)["program"] for l in open(sys.argv[1])); print(" ".join(k for k, v in c.items() if v > 1))' "$d")
  [ -z "$dup" ] || fail "shard $s tuned again what its journal held: $dup"
done

# --- 5. merge and compare with an unsharded run ------------------------------------
say "$merge_cmd"
(cd "$tmp" && bash -c "$merge_cmd") >"$tmp/logs/merge.out" 2>&1 ||
  fail "tune batch --merge failed: $(tail -n 1 "$tmp/logs/merge.out")"
say "unsharded tune batch of the same suite (cached)"
"$TUNE_BIN" batch "$suite" --preset $PRESET --jobs 2 --out "$tmp/results/unsharded" \
  >"$tmp/logs/unsharded.out" 2>&1 || fail "the unsharded tune batch failed: $(tail -n 1 "$tmp/logs/unsharded.out")"

programs_of() { # the programs a batch folder holds, sorted, one per line; checks each
  python3 - "$1" <<'EOF'
import json, os, sys
out = sys.argv[1]
summary = json.load(open(os.path.join(out, "summary.json")))
entries = [json.loads(l) for l in open(os.path.join(out, "journal.jsonl")) if l.strip()]
names = [e["program"] for e in entries]
if len(set(names)) != len(names):
    sys.exit(f"{out}: a program is journaled twice: {sorted(names)}")
for e in entries:
    if e["status"] != "tuned":
        sys.exit(f"{out}: {e['program']} is {e['status']}")
    if not os.path.isfile(os.path.join(out, e["tuned_file"])):
        sys.exit(f"{out}: {e['tuned_file']} is missing")
print("\n".join(sorted(names)))
EOF
}
merged=$(programs_of "$tmp/results/all") || fail "merged results: $merged"
unsharded=$(programs_of "$tmp/results/unsharded") || fail "unsharded results: $unsharded"
manifest=$(printf '%s\n' "${PROGRAMS[@]}" | sort)
[ "$merged" = "$unsharded" ] ||
  fail "merged programs ($(echo "$merged" | tr '\n' ' ')) differ from the unsharded run's ($(echo "$unsharded" | tr '\n' ' '))"
[ "$merged" = "$manifest" ] ||
  fail "merged programs ($(echo "$merged" | tr '\n' ' ')) differ from the manifest's ($(echo "$manifest" | tr '\n' ' '))"

tail -n 2 "$tmp/logs/merge.out" >&2
echo "test-slurm: ok: $shards array tasks (${job}_$victim requeued after $k of $n programs and resumed), merged $(echo "$merged" | wc -l) programs = the unsharded run's, $((SECONDS - start_s)) s ($SECONDS s in all)"
