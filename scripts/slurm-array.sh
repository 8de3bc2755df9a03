#!/bin/sh
# slurm-array.sh - fan a matrix out over a Slurm job array: task K of N runs
# shard K/N of the same plan (same matrix, same seed) on its own node; when
# the array is done, merge the shards:
#
#   sbatch --array=1-8 scripts/slurm-array.sh matrices/full.ini 42
#   build/mallocbench merge -o results/full.csv results/slurm-42-*.csv
#
# Add --allow-mixed-hosts to the merge if the nodes differ (and know that
# you are comparing across machines).
#SBATCH --job-name=mallocbench
#SBATCH --exclusive
#SBATCH --output=results/slurm-%A-%a.log
set -eu
matrix=${1:?usage: sbatch --array=1-N slurm-array.sh MATRIX SEED}
seed=${2:?usage: sbatch --array=1-N slurm-array.sh MATRIX SEED}
k=${SLURM_ARRAY_TASK_ID:?run under sbatch --array}
n=${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array}
cd "${SLURM_SUBMIT_DIR:-.}"
[ -x build/mallocbench ] || make build
# --keep-going: a configuration with no ok sample is rows with their status in this shard, not a
# failed array task (which would keep the afterok merge from running)
exec build/mallocbench run -m "$matrix" --seed "$seed" --shard "$k/$n" -q --keep-going \
    -o "results/slurm-$seed-$k.csv"
