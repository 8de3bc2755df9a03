"""k8s.py - the Kubernetes equivalent of `sbatch --array=1-N scripts/slurm-array.sh`:
an Indexed Job of N completions whose pod K-1 runs shard K/N of the plan
(JOB_COMPLETION_INDEX + 1, through the same scripts/slurm-array.sh), each
writing OUTDIR/slurm-SEED-K.csv on a volume the pods share (docs/fleet.md).

    k8s.py --image IMAGE --shards N --claim PVC [--name mallocbench] [--parallelism P]
               [--workdir /src/mallocbench] [-o job.yaml [--force]] MATRIX SEED

IMAGE: a Debian 12 image holding the checkout at --workdir (a node without a
build builds one, under the script's lock); --claim: the PersistentVolumeClaim
mounted at WORKDIR/results, where every pod writes its shard (a retried pod
resumes the one it finds there).  Pods run with the least privilege `mallocbench run`
needs (CAP_PERFMON, the node's tracefs read-only: SECURITY below) and one to a node (a
shard's blocks measured alone: podAntiAffinity on the job's pods).  Names, claim and
paths are checked first (DNS-1123, no '..' component, no control character), each
refusal one line and exit 2, before anything is written.  Prints the YAML, or writes -o
(never replacing a file without --force)."""
import argparse
import json
import os
import re
import sys

from . import cli
from . import mbout

# Kubernetes' DNS-1123 rules (k8s.io/apimachinery validation), always with fullmatch: `$`
# would let "name\n" through.  The Job's name is also a label value and its pods' host
# name prefix (NAME-INDEX-xxxxx): a label, kept to 52; a claim is a subdomain, to 253.
NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?")
LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
SUBDOMAIN = re.compile(rf"{LABEL}(\.{LABEL})*")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# Least privilege for `mallocbench run` (read from the harness, docs/fleet.md):
# - CAP_PERFMON: perf_event_open of the child's counters counting kernel mode too (at
#   perf_event_paranoid >= 2; harness/sample/counters.c), and the exec tracepoint's raw
#   samples (harness/sample/execs.c: PERF_SAMPLE_RAW needs it at paranoid > -1).  Kernels
#   before 5.8 have no CAP_PERFMON: perf asks CAP_SYS_ADMIN there (edit the manifest).
# - tracefs: the tracepoint ids and formats are read (counters.c, execs.c), never written;
#   the harness would mount tracefs itself when absent (CAP_SYS_ADMIN), so the node's
#   /sys/kernel/tracing is mounted read-only instead.  It is root's (mode 0700, ids 0440)
#   and the pod runs as uid 0 (the image's), which needs no CAP_DAC_* to read them.
# - no ptrace: /proc/PID/{maps,statm,smaps_rollup} of run's own children (same uid, same
#   capabilities) passes the kernel's read check without CAP_SYS_PTRACE; sched_setaffinity,
#   PR_SET_CHILD_SUBREAPER and PR_SET_PDEATHSIG need nothing.
# - allowPrivilegeEscalation false: nothing in a shard gains privilege by exec.
SECURITY = {
    "privileged": False,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"], "add": ["PERFMON"]},
}
TRACEFS = "/sys/kernel/tracing"


def positive(text):
    v = int(text)
    if v < 1:
        raise ValueError(text)
    return v


def bad_path(what, path):
    """Why path may not go into the pod (a control character, a '..' component), or None."""
    if CONTROL.search(path):
        return f"{what} {path!r}: a control character in a path"
    if ".." in path.split("/"):
        return f"{what} {path!r}: a '..' component (give the path without it)"
    return None


def refusal(a):
    """One line on the first bad argument, or None: every check before anything is written."""
    if not NAME.fullmatch(a.name):
        return (f"--name {a.name!r}: a Kubernetes name (DNS-1123 label) is lower-case letters, digits and '-', "
                "starting and ending with a letter or digit, 1-52 long")
    if not SUBDOMAIN.fullmatch(a.claim) or len(a.claim) > 253:
        return (f"--claim {a.claim!r}: a PersistentVolumeClaim name (DNS-1123 subdomain) is lower-case letters, "
                "digits, '-' and '.', each part starting and ending with a letter or digit, at most 253 long")
    if CONTROL.search(a.image):
        return f"--image {a.image!r}: a control character in an image name"
    if not re.fullmatch(r"[0-9]+", a.seed):
        return f"seed {a.seed!r}: a number (the plan's seed: every shard must share it)"
    why = bad_path("--workdir", a.workdir) or bad_path("matrix", a.matrix)
    if why:
        return why
    if not os.path.isabs(a.workdir):
        return f"--workdir {a.workdir!r}: an absolute path in the image"
    if os.path.isabs(a.matrix):
        return f"matrix {a.matrix!r}: give the matrix relative to the checkout (it is read in the pod, at --workdir)"
    if not os.path.isfile(a.matrix):
        return f"matrix {a.matrix!r}: no such matrix file here (the pod reads it at {a.workdir}/{a.matrix})"
    return None


def manifest(name, image, shards, parallelism, matrix, seed, workdir, claim):
    """The Job as a dict (JSON is YAML: the text is json.dumps of it, one key a line)."""
    volumes = [{"name": "results", "persistentVolumeClaim": {"claimName": claim}},
               {"name": "tracefs", "hostPath": {"path": TRACEFS, "type": "Directory"}}]
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
                        "securityContext": SECURITY,  # least privilege for `run`: SECURITY above
                        # K = JOB_COMPLETION_INDEX + 1 and N = MB_SHARDS: slurm-array.sh's Kubernetes mode
                        "command": ["sh", "scripts/slurm-array.sh", matrix, str(seed), "results"],
                        # MB_JOB_UID: a retried pod resumes its shard only where this Job wrote it
                        "env": [{"name": "MB_SHARDS", "value": str(shards)},
                                {"name": "MB_JOB_UID", "valueFrom": {"fieldRef": {
                                    "fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"}}},
                                {"name": "MB_JOB_UID_LEGACY", "valueFrom": {"fieldRef": {  # before 1.27
                                    "fieldPath": "metadata.labels['controller-uid']"}}}],
                        "volumeMounts": [{"name": "results", "mountPath": workdir.rstrip("/") + "/results"},
                                         {"name": "tracefs", "mountPath": TRACEFS, "readOnly": True}],
                    }],
                    "volumes": volumes,
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
    why = refusal(a)
    if why:
        raise cli.Fail(why, 2)
    par = min(a.parallelism or a.shards, a.shards)
    text = json.dumps(manifest(a.name, a.image, a.shards, par, a.matrix, a.seed, a.workdir, a.claim), indent=2) + "\n"
    if not a.output:
        sys.stdout.write(text)
        return 0
    try:
        mbout.write(a.output, text, force=a.force)
    except mbout.OutputError as e:
        raise cli.Fail(str(e), 2) from None
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
