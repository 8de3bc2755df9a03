#!/usr/bin/env python3
"""test_fleet.py - a plan over several machines (docs/fleet.md): the job array script, a
running one-node Slurm cluster of the test's own, and the Kubernetes manifest.

Usage: test_fleet.py MALLOCBENCH CASE.  Cases:
  array_script  scripts/slurm-array.sh outside Slurm, with the variables Slurm sets: an
                array that does not start at 1, is not contiguous, or a task outside it
                refused with the fix; two tasks starting together on a checkout without a
                build build once (under the lock) and both run; a requeued task
                (SLURM_RESTART_COUNT > 0) resumes its torn shard to the full one, a fresh
                task refuses an existing shard and leaves it as it was; the shard's owner
                (SLURM_ARRAY_JOB_ID) recorded in OUT.job: a requeued task of another array,
                or of a shard without an owner, refused it; OUT.job a symbolic link refused,
                nothing written through it; a shard whose
                sidecar is lost: merge warns, and its rows are a machine of their own.
  slurm         a private munged, slurmctld -D and slurmd -D -N n1 (every key, socket,
                port, state, spool, pid and log in a temporary folder; no cgroup
                plugin); a 3-task array of a real plan through scripts/slurm-array.sh;
                the merged CSV equals the plan run in one process in plan, seed, cell
                set, sample count and deterministic cells; a requeued task resumes its
                shard (no sample twice); a failed task's shard is named by merge; every
                daemon killed by pid, none left.  Prints the array's overhead against
                one process.  Skips where slurm-wlm or munge are missing, or not root.
  k8s           scripts/k8s.py's manifest parsed by a YAML parser: an Indexed Job of N
                completions on a claim, and its pod I runs shard I+1/N (the container's own
                command, run here with JOB_COMPLETION_INDEX = I; run again, as a retried pod,
                it resumes; a pod of another Job (another uid) is refused the old shard);
                bad input refused, an existing output kept without --force.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from mallocbench import mbdata
from mbtest import SKIP, check, check_eq, main, rows

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARRAY = os.path.join(ROOT, "scripts", "slurm-array.sh")
K8S = os.path.join(ROOT, "scripts", "k8s.py")

# a real plan: two families, six blocks (two per shard of three)
PLAN = """[run]
repetitions = 6
warmup_runs = 0
allocators = glibc,glibc-b=glibc

[workload tensor_copy small]
size = 256K
count = 2
steps = 20
"""
SEED = "4242"
DETERMINISTIC = ("workload", "workload_params", "config", "block", "position", "checksum", "region_ops",
                 "region_bytes", "status")


def write_plan(tmp):
    path = os.path.join(tmp, "plan.ini")
    with open(path, "w") as f:
        f.write(PLAN)
    return path


def task(env_extra, *args, cwd=ROOT, mb=None, timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JOB_COMPLETION", "MB_SHARDS"))}
    if mb:
        env["MALLOCBENCH"] = mb
    env.update(env_extra)
    return subprocess.run(["sh", ARRAY, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def slurm_env(k, n, lo=1, hi=None, step=1, restart=None, array="100"):
    e = {"SLURM_ARRAY_TASK_ID": str(k), "SLURM_ARRAY_TASK_COUNT": str(n), "SLURM_ARRAY_TASK_MIN": str(lo),
         "SLURM_ARRAY_TASK_MAX": str(hi if hi is not None else n), "SLURM_ARRAY_TASK_STEP": str(step),
         "SLURM_ARRAY_JOB_ID": array}
    if restart is not None:
        e["SLURM_RESTART_COUNT"] = str(restart)
    return e


def det(path):
    return sorted(tuple(r[c] for c in DETERMINISTIC) for r in rows(path))


def case_array_script(mb, tmp):
    plan = write_plan(tmp)
    out = os.path.join(tmp, "out")
    for env, want in ((slurm_env(1, 3, lo=0, hi=2), "--array=1-3"),
                      (slurm_env(2, 3, lo=1, hi=5, step=2), "not contiguous"),
                      (slurm_env(4, 3), "outside 1-3"),
                      ({}, "sbatch --array=1-N")):
        p = task(env, plan, SEED, out, mb=mb)
        check(p.returncode == 2 and want in p.stderr, f"{env}: refused with {want!r}: {p.returncode} {p.stderr!r}")
    check(not os.path.exists(out), "a refused task writes nothing")

    # a checkout without a build: the tasks that start together build it once, under the lock
    co = os.path.join(tmp, "checkout")
    os.makedirs(os.path.join(co, "bin"))
    shutil.copy(plan, os.path.join(co, "plan.ini"))
    log = os.path.join(co, "builds.log")
    with open(os.path.join(co, "bin", "make"), "w") as f:  # a stand-in for `make build`: slow, logged
        f.write(f"#!/bin/sh\necho start >> {log}\nsleep 1\nmkdir -p build\n"
                f"printf '#!/bin/sh\\nexec {mb} \"$@\"\\n' > build/mallocbench\nchmod +x build/mallocbench\n"
                f"echo end >> {log}\n")
    os.chmod(os.path.join(co, "bin", "make"), 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "MALLOCBENCH"))}
    env["PATH"] = os.path.join(co, "bin") + ":" + env["PATH"]
    procs = [subprocess.Popen(["sh", ARRAY, "plan.ini", SEED, "res"], cwd=co, text=True, stderr=subprocess.PIPE,
                              env=dict(env, **slurm_env(k, 3))) for k in (1, 2)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    check(all(p.returncode == 0 for p in procs), f"both tasks ran: {[p.returncode for p in procs]} {errs}")
    check_eq(open(log).read().split(), ["start", "end"], "one build for two tasks started together")
    for k in (1, 2):
        got = rows(os.path.join(co, "res", f"slurm-{SEED}-{k}.csv"))
        check({r["shard"] for r in got} == {f"{k}/3"} and {int(r["block"]) % 3 for r in got} == {k - 1},
              f"task {k} ran shard {k}/3, whole blocks")

    # requeued: resume a torn shard to the full one; fresh: an existing shard refused, kept
    shard = os.path.join(co, "res", f"slurm-{SEED}-1.csv")
    full = det(shard)
    with open(shard) as f:
        lines = f.readlines()
    with open(shard, "w") as f:
        f.writelines(lines[:-1])  # the last sample lost with the node
    torn = open(shard).read()
    p = task(slurm_env(1, 3), "plan.ini", SEED, "res", cwd=co, mb=mb)
    check(p.returncode != 0 and "exists" in p.stderr, f"a fresh task refuses an existing shard: {p.stderr!r}")
    check_eq(open(shard).read(), torn, "the refused shard as it was")
    # the owner beside each shard, a plain file: a requeued task of another array, or one whose
    # shard has no owner recorded, is refused it (issue 43: any shard was resumed)
    job = shard + ".job"
    check(not os.path.islink(job) and open(job).read() == "slurm:100\n", f"the shard's owner: {job}")
    p = task(slurm_env(1, 3, restart=1, array="200"), "plan.ini", SEED, "res", cwd=co, mb=mb)
    check(p.returncode == 2 and "left by another job" in p.stderr and "slurm:200" in p.stderr,
          f"a requeued task of another array refused the shard: {p.returncode} {p.stderr!r}")
    os.rename(job, job + ".away")
    p = task(slurm_env(1, 3, restart=1), "plan.ini", SEED, "res", cwd=co, mb=mb)
    check(p.returncode == 2 and "left by another job" in p.stderr,
          f"a shard whose owner is unknown not resumed: {p.returncode} {p.stderr!r}")
    os.mkfifo(job)  # a FIFO at the owner's name: refused at once, never read (cat waited forever)
    try:
        p = task(slurm_env(1, 3, restart=1), "plan.ini", SEED, "res", cwd=co, mb=mb, timeout=60)
        check(p.returncode == 2 and "left by another job" in p.stderr, f"a FIFO as the shard's owner: {p.returncode} {p.stderr!r}")
    except subprocess.TimeoutExpired:
        check(False, "a FIFO as the shard's owner: the task hung on it")
    os.remove(job)
    os.rename(job + ".away", job)
    check_eq(open(shard).read(), torn, "the refused shard as it was")
    p = task({k: v for k, v in slurm_env(1, 3, restart=1).items() if k != "SLURM_ARRAY_JOB_ID"}, "plan.ini",
             SEED, "res", cwd=co, mb=mb)
    check(p.returncode != 0 and "SLURM_ARRAY_JOB_ID unset" in p.stderr, f"no array id: {p.stderr!r}")
    # OUT.job a link: refused, nothing written through it, whether the task is fresh or requeued
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("keep\n")
    link = os.path.join(co, "res", f"slurm-{SEED}-3.csv.job")
    os.symlink(victim, link)
    for restart in (None, 1):
        p = task(slurm_env(3, 3, restart=restart), "plan.ini", SEED, "res", cwd=co, mb=mb)
        check(p.returncode == 2 and "symbolic link" in p.stderr, f"OUT.job a link refused: {p.stderr!r}")
    check_eq(open(victim).read(), "keep\n", "nothing written through OUT.job's link")
    check(not os.path.exists(os.path.join(co, "res", f"slurm-{SEED}-3.csv")), "the refused task ran nothing")
    os.remove(link)
    p = task(slurm_env(1, 3, restart=1), "plan.ini", SEED, "res", cwd=co, mb=mb)
    check(p.returncode == 0 and "resuming" in p.stderr, f"a requeued task resumes: {p.returncode} {p.stderr!r}")
    check_eq(det(shard), full, "the resumed shard is the full one, no sample twice")

    # a shard that lost its sidecar: merge says so, and its rows are a machine of their own,
    # not merged into the machine the other shard's sidecar names
    lost = os.path.join(tmp, "lost")
    os.makedirs(lost)
    for k in (1, 2):
        for ext in (".csv", ".meta.json"):
            shutil.copy(os.path.join(co, "res", f"slurm-{SEED}-{k}{ext}"), lost)
    os.remove(os.path.join(lost, f"slurm-{SEED}-2.meta.json"))
    merged = os.path.join(lost, "m.csv")
    m = subprocess.run([mb, "merge", "--partial", "-o", merged] + [os.path.join(lost, f"slurm-{SEED}-{k}.csv")
                                                                    for k in (1, 2)],
                       capture_output=True, text=True, timeout=60)
    check(m.returncode == 0 and f"slurm-{SEED}-2.csv' has no readable sidecar" in m.stderr,
          f"merge warns of a shard without its sidecar: {m.returncode} {m.stderr!r}")
    got = sorted(mbdata.load(merged).machines)
    check(len(got) == 2 and sum("no sidecar" in g for g in got) == 1,
          f"the shard without a sidecar on a machine of its own: {got}")


# ---- a one-node Slurm cluster of the test's own ---------------------------------------------

def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Cluster:
    """munged, slurmctld and slurmd on loopback, everything in folder d; stop() kills them by
    pid (and any job still running), and says which survived."""

    def __init__(self, d):
        self.d, self.procs = d, []
        self.env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))
        for k in list(self.env):
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                self.env.pop(k)

    def path(self, name):
        return os.path.join(self.d, name)

    def start(self):
        with open(self.path("munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("munge.key"), 0o400)
        self.spawn(["munged", "-F", "-f", f"--key-file={self.path('munge.key')}",
                    f"--socket={self.path('munge.sock')}", f"--pid-file={self.path('munged.pid')}",
                    f"--log-file={self.path('munged.log')}", f"--seed-file={self.path('munged.seed')}"])
        self.wait_for(lambda: os.path.exists(self.path("munge.sock")), 10, "munged's socket")
        node = dict(f.split("=", 1) for f in subprocess.run(["slurmd", "-C"], capture_output=True, text=True)
                    .stdout.split() if "=" in f)
        cpus, mem = int(node.get("CPUs", 1)), min(int(node.get("RealMemory", 1024)), 4096)
        ctld, slurmd = free_ports(2)
        host = socket.gethostname().split(".")[0]
        for sub in ("state", "spool"):
            os.makedirs(self.path(sub))
        open(self.path("plugstack.conf"), "w").close()
        with open(self.path("slurm.conf"), "w") as f:
            f.write(f"""ClusterName=mbtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
AuthInfo=socket={self.path('munge.sock')}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={self.path('state')}
SlurmdSpoolDir={self.path('spool')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd.pid')}
SlurmctldLogFile={self.path('slurmctld.log')}
SlurmdLogFile={self.path('slurmd.log')}
PlugStackConfig={self.path('plugstack.conf')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
NodeName=n1 NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN
PartitionName=debug Nodes=n1 Default=YES MaxTime=INFINITE State=UP
""")
        self.spawn(["slurmctld", "-D", "-i"])
        self.spawn(["slurmd", "-D", "-N", "n1"])
        self.wait_for(lambda: self.sh("sinfo", "-h", "-n", "n1", "-o", "%T").strip() == "idle", 60,
                      "node n1 idle")

    def spawn(self, argv):
        log = open(self.path(os.path.basename(argv[0]) + ".out"), "w")
        self.procs.append(subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True))

    def sh(self, *argv):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60).stdout

    def wait_for(self, cond, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for p in self.procs:
                if p.poll() is not None:
                    raise SystemExit(f"{p.args[0]} exited ({p.returncode}) while waiting for {what}: "
                                     + self.tail(os.path.basename(p.args[0])))
            if cond():
                return
            time.sleep(0.2)
        raise SystemExit(f"no {what} after {timeout} s: " + self.tail("slurmctld") + self.tail("slurmd"))

    def tail(self, name):
        for f in (self.path(name + ".log"), self.path(name + ".out")):
            if os.path.exists(f):
                return f"\n{f}: " + "".join(open(f, errors="replace").readlines()[-5:])
        return ""

    def done(self, job):
        """Every task of array job `job` ended: {task: state}."""
        out = self.sh("scontrol", "-o", "show", "job", str(job))
        states = {}
        for line in out.splitlines():
            f = dict(x.split("=", 1) for x in line.split() if "=" in x)
            if f.get("ArrayJobId") == str(job) and f.get("ArrayTaskId", "").isdigit():
                states[int(f["ArrayTaskId"])] = f.get("JobState")
        return states

    def wait_job(self, job, tasks, timeout=300):
        end_states = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}
        got = {}
        self.wait_for(lambda: len(got.update(self.done(job)) or got) == tasks and set(got.values()) <= end_states
                      and not self.sh("squeue", "-h", "-j", str(job)).strip(), timeout, f"job {job} to end")
        return got

    def stop(self):
        """Cancel what runs, kill the daemons by pid (TERM, then KILL); the survivors."""
        if self.procs and self.procs[0].poll() is None:
            subprocess.run(["scancel", "--full", "-u", "root"], env=self.env, capture_output=True, timeout=30)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return [pid for pid in os.listdir("/proc") if pid.isdigit() and self.mentions(pid)]

    def mentions(self, pid):
        """Does process pid belong to this cluster (its folder in its command line or environment)?"""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            return False
        return int(pid) != os.getpid() and (self.d.encode() in cmd or self.d.encode() in env)


def case_slurm(mb, tmp):
    missing = [t for t in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol") if not shutil.which(t)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed (scripts/deps.sh fleet)", file=sys.stderr)
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("SKIP: a private Slurm cluster runs its daemons as root here", file=sys.stderr)
        sys.exit(SKIP)
    plan = write_plan(tmp)
    d = tempfile.mkdtemp(prefix="mb-slurm-")
    os.chmod(d, 0o700)
    cluster = Cluster(d)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # the finally below still runs
    try:
        cluster.start()
        # the same plan in one process
        one = os.path.join(tmp, "one.csv")
        t0 = time.monotonic()
        subprocess.run([mb, "run", "-q", "-m", plan, "--seed", SEED, "--keep-going", "-o", one], check=True,
                       capture_output=True, timeout=300)
        t_one = time.monotonic() - t0
        # ... and as a 3-task array
        out = os.path.join(tmp, "shards")
        t0 = time.monotonic()
        job = cluster.sh("sbatch", "--parsable", "--array=1-3", f"--output={tmp}/task-%A-%a.log",
                         f"--export=ALL,MALLOCBENCH={mb}", ARRAY, plan, SEED, out).strip().split(";")[0]
        check(job.isdigit(), f"sbatch gave job {job!r}")
        states = cluster.wait_job(job, 3)
        t_array = time.monotonic() - t0
        logs = "".join(open(os.path.join(tmp, f), errors="replace").read()[-300:]
                       for f in sorted(os.listdir(tmp)) if f.startswith("task-"))
        check_eq(states, {1: "COMPLETED", 2: "COMPLETED", 3: "COMPLETED"}, f"the array's tasks ({logs})")
        shards = [os.path.join(out, f"slurm-{SEED}-{k}.csv") for k in (1, 2, 3)]
        merged = os.path.join(tmp, "merged.csv")
        subprocess.run([mb, "merge", "-o", merged, *shards], check=True, capture_output=True, timeout=60)
        a, b = rows(one), rows(merged)
        check_eq({r["matrix_id"] for r in b}, {r["matrix_id"] for r in a}, "one plan")
        check_eq({r["plan_seed"] for r in b}, {SEED}, "one seed")
        check_eq(len(b), len(a), "the sample count")
        check_eq({(r["workload_params"], r["config"]) for r in b}, {(r["workload_params"], r["config"]) for r in a},
                 "the cell set")
        check_eq(det(merged), det(one), "the deterministic cells (plan position, checksum, work)")
        for k, path in enumerate(shards, 1):
            blocks = {int(r["block"]) for r in rows(path)}
            check(blocks == {k - 1, k + 2}, f"shard {k}/3 holds whole blocks {sorted(blocks)}")
        print(f"one process: {t_one:.1f} s; 3-task array (submit to merged, tasks one at a time on this "
              f"node, --exclusive): {t_array:.1f} s; overhead {t_array - t_one:+.1f} s "
              f"({(t_array - t_one) / 3:.1f} s a task)")

        # a requeued task resumes its shard rather than run it twice
        before = det(shards[1])
        cluster.sh("scontrol", "requeue", f"{job}_2")
        # slurmctld holds a requeued job back (BeginTime two minutes on): now
        cluster.sh("scontrol", "update", f"JobId={job}_2", "StartTime=now")
        check_eq(cluster.wait_job(job, 3)[2], "COMPLETED", "the requeued task")
        log2 = open(os.path.join(tmp, f"task-{job}-2.log"), errors="replace").read()
        check("resuming" in log2, f"the requeued task resumed: {log2[-300:]!r}")
        check_eq(det(shards[1]), before, "the requeued shard: the same samples, none twice")

        # a failed task: its shard missing, and merge says which
        out2 = os.path.join(tmp, "failing")
        os.makedirs(os.path.join(out2, f"slurm-{SEED}-2.csv"))  # task 2 cannot write its shard
        job2 = cluster.sh("sbatch", "--parsable", "--array=1-3", f"--output={tmp}/fail-%A-%a.log",
                          f"--export=ALL,MALLOCBENCH={mb}", ARRAY, plan, SEED, out2).strip().split(";")[0]
        st = cluster.wait_job(job2, 3)
        check(st[2] == "FAILED" and st[1] == st[3] == "COMPLETED", f"task 2 failed, the others not: {st}")
        m = subprocess.run([mb, "merge", "-o", os.path.join(tmp, "m2.csv"),
                            *[os.path.join(out2, f"slurm-{SEED}-{k}.csv") for k in (1, 3)]],
                           capture_output=True, text=True, timeout=60)
        check(m.returncode == 2 and "shard 2/3 has no rows" in m.stderr, f"merge names shard 2/3: {m.stderr!r}")
    finally:
        left = cluster.stop()
        check_eq(left, [], "no daemon or job of the test's cluster left running")
        shutil.rmtree(d, ignore_errors=True)


def case_k8s(mb, tmp):
    try:
        import yaml
    except ImportError:
        print("SKIP: python3-yaml not installed", file=sys.stderr)
        sys.exit(SKIP)
    py = sys.executable

    def gen(*args):
        return subprocess.run([py, K8S, "--claim", "mb-results", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)

    p = gen("--image", "debian-mb:1", "--shards", "4", "matrices/quick.ini", SEED)
    check_eq(p.returncode, 0, f"k8s.py: {p.stderr}")
    job = yaml.safe_load(p.stdout)
    spec = job["spec"]
    check_eq((job["apiVersion"], job["kind"]), ("batch/v1", "Job"), "a batch/v1 Job")
    check_eq(spec["completionMode"], "Indexed", "completionMode")
    check_eq(spec["completions"], 4, "completions = N")
    check(1 <= spec["parallelism"] <= 4, f"parallelism {spec['parallelism']}")
    pod = spec["template"]["spec"]
    c = pod["containers"][0]
    sc = c["securityContext"]
    check_eq((sc["privileged"], sc["allowPrivilegeEscalation"]), (False, False), "not privileged, no escalation")
    check_eq(sc["capabilities"], {"drop": ["ALL"], "add": ["PERFMON"]}, "only CAP_PERFMON (perf_event_open)")
    tfs = [m for m in c["volumeMounts"] if m["mountPath"] == "/sys/kernel/tracing"]
    vol = {v["name"]: v for v in pod["volumes"]}
    check(len(tfs) == 1 and tfs[0]["readOnly"] is True and
          vol[tfs[0]["name"]]["hostPath"] == {"path": "/sys/kernel/tracing", "type": "Directory"},
          f"the node's tracefs mounted read-only, not by the harness: {tfs}")
    check(pod["affinity"]["podAntiAffinity"], "one pod a node")
    check(pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "mb-results" and
          c["volumeMounts"][0]["mountPath"].endswith("/results"), "the shards on the claim, at results/")
    # the index mapping: run the container's command here as pod I: it runs shard I+1/N
    plan = write_plan(tmp)
    env_pod = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    uid = [e for e in c["env"] if e["name"] == "MB_JOB_UID"]
    check(uid and uid[0]["valueFrom"]["fieldRef"]["fieldPath"]
          == "metadata.labels['batch.kubernetes.io/controller-uid']", f"the pod knows its Job's uid: {uid}")
    legacy = [e for e in c["env"] if e["name"] == "MB_JOB_UID_LEGACY"]
    check(legacy and legacy[0]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['controller-uid']",
          f"and before Kubernetes 1.27: {legacy}")
    env_pod["MB_JOB_UID"] = "job-1"  # as the downward API gives it
    for index in (0, 3):
        argv = [plan if a == "matrices/quick.ini" else (os.path.join(tmp, "pods") if a == "results" else a)
                for a in c["command"]]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update(env_pod, JOB_COMPLETION_INDEX=str(index), MALLOCBENCH=mb)
        r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        if index == 0:  # 6 blocks over 4 shards: pod 0 runs shard 1/4 (blocks 0, 4)
            check_eq(r.returncode, 0, f"pod {index}: {r.stderr}")
            got = rows(os.path.join(tmp, "pods", f"slurm-{SEED}-1.csv"))
            check_eq({x["shard"] for x in got}, {"1/4"}, "pod 0 runs shard 1/4")
            check_eq({int(x["block"]) for x in got}, {0, 4}, "shard 1/4's whole blocks")
            before = det(os.path.join(tmp, "pods", f"slurm-{SEED}-1.csv"))
            again = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            check(again.returncode == 0 and "resuming" in again.stderr, f"a retried pod resumes: {again.stderr!r}")
            check_eq(det(os.path.join(tmp, "pods", f"slurm-{SEED}-1.csv")), before, "the retried pod's shard, no sample twice")
            # the same Job applied again (another uid) finds the old shard: refused, kept
            other = subprocess.run(argv, cwd=ROOT, env=dict(env, MB_JOB_UID="job-2"), capture_output=True,
                                   text=True, timeout=300)
            check(other.returncode == 2 and "another Job" in other.stderr,
                  f"a new Job does not resume an old Job's shard: {other.returncode} {other.stderr!r}")
            check_eq(det(os.path.join(tmp, "pods", f"slurm-{SEED}-1.csv")), before, "the old shard as it was")
        else:
            check_eq(r.returncode, 0, f"pod {index}: {r.stderr}")
            check_eq({x["shard"] for x in rows(os.path.join(tmp, "pods", f"slurm-{SEED}-4.csv"))}, {"4/4"},
                     "pod 3 runs shard 4/4")
    for bad, want in ((["--shards", "0", "matrices/quick.ini", SEED], "--shards"),
                      (["--shards", "2", "--name", "Bad_Name", "matrices/quick.ini", SEED], "--name"),
                      (["--shards", "2", "nope.ini", SEED], "no such matrix"),
                      (["--shards", "2", "matrices/quick.ini", "x1"], "seed")):
        r = gen("--image", "x", *bad)
        check(r.returncode == 2 and want in r.stderr, f"{bad}: refused naming {want!r}: {r.stderr!r}")
    # refused in one line naming the argument, exit 2, nothing written (-o stays absent)
    refused = os.path.join(tmp, "refused.yaml")
    quick = "matrices/quick.ini"
    for opts, matrix, want in ((["--name", "mb\n"], quick, "--name"),
                               (["--claim", "Bad_Claim"], quick, "--claim"),
                               (["--claim", "results-"], quick, "--claim"),
                               (["--workdir", "/src/../etc"], quick, "--workdir"),
                               ([], "matrices/../matrices/quick.ini", "'..' component"),
                               ([], quick + "\n", "control character")):
        bad = [*opts, matrix]
        r = gen("--image", "x", "--shards", "2", "-o", refused, *bad, SEED)
        check(r.returncode == 2 and want in r.stderr and r.stderr.count("\n") == 1 and not r.stdout,
              f"{bad}: refused in one line naming {want!r}: {r.returncode} {r.stderr!r}")
        check(not os.path.exists(refused), f"{bad}: nothing written")
    out = os.path.join(tmp, "job.yaml")
    with open(out, "w") as f:
        f.write("mine\n")
    r = gen("--image", "x", "--shards", "2", "-o", out, "matrices/quick.ini", SEED)
    check(r.returncode == 2 and "--force" in r.stderr and open(out).read() == "mine\n",
          f"an existing output kept: {r.stderr!r}")
    r = gen("--image", "x", "--shards", "2", "-o", out, "--force", "matrices/quick.ini", SEED)
    check(r.returncode == 0 and yaml.safe_load(open(out))["spec"]["completions"] == 2, "--force replaces it")
    json.loads(open(out).read())  # JSON, which is YAML


if __name__ == "__main__":
    sys.exit(main({name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}))
