#!/bin/sh
# slurm-array.sh - one task of a plan fanned out over a job array: task K of N
# runs shard K/N of the same plan (same matrix, same seed: whole blocks, so each
# pair is measured on one node), into OUTDIR/slurm-SEED-K.csv; when the array
# is done, merge the shards (docs/fleet.md):
#
#   sbatch --array=1-8 scripts/slurm-array.sh matrices/full.ini 42 [OUTDIR]
#   build/mallocbench merge -o results/full.csv results/slurm-42-*.csv
#
# Slurm: K = SLURM_ARRAY_TASK_ID, N = SLURM_ARRAY_TASK_COUNT; the array must be
# 1-N, contiguous (1-based K; --array=0-7 or 1,3,5 is refused).
# Kubernetes (an Indexed Job, scripts/k8s.py): K = JOB_COMPLETION_INDEX + 1,
# N = MB_SHARDS.
# A node without build/mallocbench builds it once: tasks starting together wait
# on a lock (flock on build.lock in the checkout, git-ignored, opened for writing
# so that an NFS server grants it) and find it built.
# A requeued task (SLURM_RESTART_COUNT > 0) of the same array (SLURM_ARRAY_JOB_ID),
# or a retried pod of the same Job (MB_JOB_UID, the Job's uid), resumes its shard
# (--resume) rather than run it again: the owner is kept beside the shard as OUT.job
# ("slurm:ARRAY_JOB_ID" or the uid), written to a fresh temporary file and renamed
# over it (never through a link; a link there is refused); otherwise an existing
# shard file is refused, never replaced (a new job does not take an old job's
# shards as its own, nor a requeued task one whose owner it cannot tell).
# A failed task leaves its shard missing, and merge names it.
# MALLOCBENCH: the harness to use (default build/mallocbench, built if missing).
#SBATCH --job-name=mallocbench
#SBATCH --exclusive
#SBATCH --output=results/slurm-%A-%a.log
set -eu
usage="usage: sbatch --array=1-N slurm-array.sh MATRIX SEED [OUTDIR]"
matrix=${1:?$usage}
seed=${2:?$usage}
outdir=${3:-results}
die() { echo "slurm-array.sh: $*" >&2; exit 2; }

mode=""
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    mode=slurm
    k=$SLURM_ARRAY_TASK_ID
    n=${SLURM_ARRAY_TASK_COUNT:?SLURM_ARRAY_TASK_COUNT unset: Slurm too old for job arrays}
    min=${SLURM_ARRAY_TASK_MIN:-1} max=${SLURM_ARRAY_TASK_MAX:-$n} step=${SLURM_ARRAY_TASK_STEP:-1}
    [ "$min" = 1 ] || die "the array starts at $min: give --array=1-$n (task K runs shard K/$n, 1-based)"
    [ "$step" = 1 ] && [ "$max" = "$n" ] ||
        die "the array is not contiguous ($n tasks, $min to $max, step $step): give --array=1-$n"
    # the array's id: the same for all its tasks and through a requeue (the shard's owner)
    job=slurm:${SLURM_ARRAY_JOB_ID:?SLURM_ARRAY_JOB_ID unset: not a task of a job array}
    cd "${SLURM_SUBMIT_DIR:-.}"
elif [ -n "${JOB_COMPLETION_INDEX:-}" ]; then
    mode=k8s
    k=$((JOB_COMPLETION_INDEX + 1))
    n=${MB_SHARDS:?MB_SHARDS unset: give the Indexed Job its completions}
    # the Job's uid: its pods' label batch.kubernetes.io/controller-uid (1.27+), else controller-uid
    job=${MB_JOB_UID:-${MB_JOB_UID_LEGACY:-}}
    [ -n "$job" ] || die "MB_JOB_UID unset: give the pod the uid of its Job (scripts/k8s.py does)"
else
    die "run under sbatch --array=1-N, or as a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, MB_SHARDS)"
fi
case "$k$n" in *[!0-9]*) die "task $k of $n: not numbers" ;; esac
[ "$k" -ge 1 ] && [ "$k" -le "$n" ] || die "task $k is outside 1-$n"
[ -f "$matrix" ] || die "$matrix: no such matrix file (relative to $(pwd))"

mb=${MALLOCBENCH:-build/mallocbench}
if [ ! -x "$mb" ]; then
    # one build per checkout: the others wait here, then find it built; the lock's file is
    # opened for writing, as an NFS server (a shared checkout) grants a lock only to a writer
    exec 9>>build.lock
    flock 9
    [ -x "$mb" ] || make build >&2
    exec 9>&-
    [ -x "$mb" ] || die "$mb: not built (make build builds build/mallocbench; MALLOCBENCH names another)"
fi
mkdir -p "$outdir"
out="$outdir/slurm-$seed-$k.csv"
resume=""
[ ! -L "$out.job" ] || die "$out.job is a symbolic link: move it (the shard's owner is never written through a link)"
# read only a regular file (a FIFO planted there would hold cat forever), at most 256 bytes
owner() { [ -f "$out.job" ] && [ ! -L "$out.job" ] && [ "$(head -c 256 "$out.job" 2>/dev/null)" = "$job" ]; }
if [ "$mode" = slurm ] && [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] && [ -e "$out" ]; then
    # a requeued task finds its shard; a task of another array (the same matrix and seed
    # submitted again) finds an old one: not its own
    owner || die "$out was left by another job (its owner in $out.job is not $job): move it, or give another OUTDIR or seed"
    echo "slurm-array.sh: task $k/$n restarted (${SLURM_RESTART_COUNT}): resuming $out" >&2
    resume=--resume
elif [ "$mode" = k8s ] && [ -e "$out" ]; then
    # a Kubernetes pod retried (backoffLimit) finds its shard on the shared volume; a pod of
    # another Job (the same matrix and seed applied again) finds an old one: not its own
    owner || die "$out was left by another Job (its uid in $out.job is not $job): move it, or give another OUTDIR or seed"
    echo "slurm-array.sh: pod $k/$n of its Job found $out: resuming it" >&2
    resume=--resume
fi
if [ -z "$resume" ] && [ ! -e "$out" ]; then
    # the owner, beside the shard: a fresh file renamed over the name (mv -T: rename(2),
    # which replaces a link planted there meanwhile rather than write through it)
    tmp=$(mktemp "$outdir/.slurm-$seed-$k.job.XXXXXX") || die "cannot create a temporary file in $outdir"
    printf '%s\n' "$job" > "$tmp" && mv -T -f "$tmp" "$out.job" || { rm -f "$tmp"; die "cannot write $out.job"; }
fi
# --keep-going: a configuration with no ok sample is rows with their status in this shard, not a
# failed array task (which would keep the afterok merge from running)
exec "$mb" run -m "$matrix" --seed "$seed" --shard "$k/$n" -q --keep-going $resume -o "$out"
