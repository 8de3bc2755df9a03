#!/usr/bin/env python3
"""k8s.py - the Kubernetes equivalent of `sbatch --array=1-N scripts/slurm-array.sh`:
an Indexed Job of N completions whose pod K-1 runs shard K/N of the plan
(JOB_COMPLETION_INDEX + 1, through the same scripts/slurm-array.sh), each
writing OUTDIR/slurm-SEED-K.csv on a volume the pods share (docs/fleet.md).

    k8s.py --image IMAGE --shards N --claim PVC [--name mallocbench] [--parallelism P]
               [--workdir /src/mallocbench] [-o job.yaml [--force]] MATRIX SEED

IMAGE: a Debian 12 image holding the checkout at --workdir (a node without a
build builds one, under the script's lock); --claim: the PersistentVolumeClaim
mounted at WORKDIR/results, where every pod writes its shard (a retried pod
resumes the one it finds there).  Pods must run privileged (perf_event_open and tracefs)
and one to a node (a shard's blocks measured alone): the manifest asks for
both (podAntiAffinity on the job's pods).  Prints the YAML, or writes -o
(never replacing a file without --force)."""
import argparse
import json
import os
import re
import sys

from mallocbench import mbout

NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$")


def positive(text):
    v = int(text)
    if v < 1:
        raise ValueError(text)
    return v


def manifest(name, image, shards, parallelism, matrix, seed, workdir, claim):
    """The Job as a dict (JSON is YAML: the text is json.dumps of it, one key a line)."""
    volume = {"name": "results", "persistentVolumeClaim": {"claimName": claim}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"app": "mallocbench"}},
        "spec": {
            "completionMode": "Indexed",
            "completions": shards,
            "parallelism": parallelism,
            "backoffLimit": shards,  # a failed pod is retried: slurm-array.sh resumes the shard it finds
            "template": {
                "metadata": {"labels": {"app": "mallocbench", "mallocbench-job": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchLabels": {"mallocbench-job": name}},
                        "topologyKey": "kubernetes.io/hostname"}]}},
                    "containers": [{
                        "name": "shard",
                        "image": image,
                        "workingDir": workdir,
                        "securityContext": {"privileged": True},
                        # K = JOB_COMPLETION_INDEX + 1 and N = MB_SHARDS: slurm-array.sh's Kubernetes mode
                        "command": ["sh", "scripts/slurm-array.sh", matrix, str(seed), "results"],
                        # MB_JOB_UID: a retried pod resumes its shard only where this Job wrote it
                        "env": [{"name": "MB_SHARDS", "value": str(shards)},
                                {"name": "MB_JOB_UID", "valueFrom": {"fieldRef": {
                                    "fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"}}},
                                {"name": "MB_JOB_UID_LEGACY", "valueFrom": {"fieldRef": {  # before 1.27
                                    "fieldPath": "metadata.labels['controller-uid']"}}}],
                        "volumeMounts": [{"name": "results", "mountPath": workdir.rstrip("/") + "/results"}],
                    }],
                    "volumes": [volume],
                },
            },
        },
    }


def main(argv=None):
    ap = argparse.ArgumentParser(prog="k8s.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("matrix")
    ap.add_argument("seed")
    ap.add_argument("--image", required=True)
    ap.add_argument("--shards", required=True, type=positive)
    ap.add_argument("--parallelism", type=positive)
    ap.add_argument("--name", default="mallocbench")
    ap.add_argument("--claim", required=True,
                    help="the PersistentVolumeClaim the pods write their shards to (results/ in the pod)")
    ap.add_argument("--workdir", default="/src/mallocbench")
    ap.add_argument("-o", "--output")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    if not NAME.match(a.name):
        ap.error(f"--name {a.name!r}: a Kubernetes name is lower-case letters, digits and '-', 1-52 long")
    if not re.fullmatch(r"[0-9]+", a.seed):
        ap.error(f"seed {a.seed!r}: a number (the plan's seed: every shard must share it)")
    if os.path.isabs(a.matrix) or a.matrix.startswith(".."):
        ap.error(f"{a.matrix}: give the matrix relative to the checkout (it is read in the pod, at --workdir)")
    if not os.path.isfile(a.matrix):
        ap.error(f"{a.matrix}: no such matrix file here (the pod reads it at {a.workdir}/{a.matrix})")
    if not os.path.isabs(a.workdir):
        ap.error(f"--workdir {a.workdir!r}: an absolute path in the image")
    par = min(a.parallelism or a.shards, a.shards)
    text = json.dumps(manifest(a.name, a.image, a.shards, par, a.matrix, a.seed, a.workdir, a.claim), indent=2) + "\n"
    if not a.output:
        sys.stdout.write(text)
        return 0
    try:
        mbout.write(a.output, text, force=a.force)
    except mbout.OutputError as e:
        print(f"k8s.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
