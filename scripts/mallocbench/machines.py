"""machines.py - the data layer's one meaning of "machine" (docs/fleet.md): a machine is one boot
of a host.  mark_machines labels each row with the machine that measured it, as compare, the
nightly history and the dashboard all name it; machine_id(meta) is the same machine as a name
for a folder (HOST-BOOT, the history's folder and make fleet-probe's file name); machine_kind
is the hardware fingerprint (CPU, cores, memory, kernel major, THP), which identical machines
share and which is never a machine.
"""
import hashlib
import json
import re


# ---- machines: which machine measured each row ----------------------------------------------

def machine_descriptions(metas):
    """{run_id: the sidecar's `machine`} over the sidecars, each one's `previous` (the run it
    resumed) and, in a merged one, its shards' (and theirs)."""
    out = {}
    todo = [m for m in metas if isinstance(m, dict)]
    while todo:
        m = todo.pop()
        if m.get("run_id") and isinstance(m.get("machine"), dict):
            out.setdefault(m["run_id"], m["machine"])
        todo += [x for x in (m.get("shards") or []) + [m.get("previous")] if isinstance(x, dict)]
    return out


# What a machine cannot change without a reboot: a sidecar that names no boot (one written
# before sidecars carried boot_id) and differs in one of them from its host's known boot is
# another machine, not that boot.
_BOOT_FIXED = ("kernel", "cpu_model", "mem_total_kib")


def mark_machines(rows, metas):
    """Each row's machine: row["_machine"] its label, row["_machine_desc"] its description
    (the sidecar's `machine`, {} without one).  A machine is one boot of a host (boot_id:
    machines of one image share a host name, a reboot changes a machine's state, and the
    containers of one node share its boot).  A sidecar that names no boot is its host's only
    known boot where it agrees with it on _BOOT_FIXED, else a machine of its own told by its
    kernel and CPU; a row without a sidecar is its host alone where no sidecar names a
    machine of that host, else an unknown machine of its own run.  The label is the host
    name, with the boot's first 6 hex digits (or the kernel, for a machine without a boot)
    where one host name covers several machines.  Returns {label: description}."""
    desc = machine_descriptions(metas)
    known = {}  # host -> {its known boot: its description}
    for r in rows:
        d = desc.get(r.get("run_id"), {})
        if d.get("boot_id"):
            known.setdefault(r.get("host", ""), {}).setdefault(str(d["boot_id"]), d)

    def described(r):  # the machine a row's own sidecar names, None without one
        d = desc.get(r.get("run_id"), {})
        b, host = str(d.get("boot_id") or ""), r.get("host", "")
        if b or not d:
            return ("boot", b) if b else None
        boots = known.get(host, {})
        if len(boots) == 1:
            (only, od), = boots.items()
            if all(d.get(f) in (None, "") or od.get(f) in (None, "") or str(d[f]) == str(od[f])
                   for f in _BOOT_FIXED):
                return ("boot", only)
        if d.get("kernel") or d.get("cpu_model"):
            return ("desc", host, str(d.get("kernel") or ""), str(d.get("cpu_model") or ""))
        return None
    ks = [described(r) for r in rows]
    named = {}  # host -> the machines its sidecars name
    for r, k in zip(rows, ks):
        if k:
            named.setdefault(r.get("host", ""), set()).add(k)
    # a run whose sidecar is lost (a shard's, a copied file's) may be any machine of that host
    # name: its own, unknown, rather than one of theirs
    ks = [k or (("run", r.get("host", ""), r.get("run_id", "")) if named.get(r.get("host", ""))
                else ("host", r.get("host", ""))) for r, k in zip(rows, ks)]
    keys, hosts = {}, {}
    for r, k in zip(rows, ks):
        d = desc.get(r.get("run_id"), {})
        if not keys.get(k) or (d.get("boot_id") and not keys[k].get("boot_id")):
            keys[k] = d
        hosts.setdefault(k, r.get("host", ""))
    per_host = {}
    for k, h in hosts.items():
        per_host.setdefault(h, set()).add(k)

    def label(k):
        h = hosts[k]
        if len(per_host[h]) == 1:
            return h
        if k[0] == "boot":
            return f"{h}/{k[1].replace('-', '')[:6]}"
        if k[0] == "desc":
            same = [o for o in per_host[h] if o[0] == "desc" and o[2] == k[2]]
            return f"{h}/{k[2]}" if len(same) == 1 else f"{h}/{k[2]}/{k[3]}"
        return f"{h}/? (run {k[2]}, no sidecar)"  # a "host" key is its host's only machine
    labels = {k: label(k) for k in hosts}
    for r, k in zip(rows, ks):
        r["_machine"], r["_machine_desc"] = labels[k], keys[k]
    return {labels[k]: d for k, d in keys.items()}


_CPU_NOISE = {"cpu", "processor", "with", "radeon", "graphics", "core", "@", "r", "tm"}


def fingerprint(meta):
    """The fields that name a machine: CPU model, cores, memory (GiB rounded), kernel major
    version (the first number: 6.18 -> 6.19 is the same machine with an environment change),
    THP mode."""
    m = (meta or {}).get("machine") or {}
    kib = m.get("mem_total_kib")
    kernel = str(m.get("kernel") or "")
    return {
        "cpu_model": str(m.get("cpu_model") or "unknown"),
        "cores": m.get("cores_online"),
        "mem_gib": int(round(kib / 1048576)) if isinstance(kib, (int, float)) else None,
        "kernel_major": kernel.split(".")[0] if kernel else None,
        "thp": m.get("thp_enabled"),
    }


def _slug(text, words=4):
    toks = []
    text = re.sub(r"\((r|tm)\)|\b\d+-core\b|@.*$", " ", text.lower())
    for t in re.split(r"[^a-z0-9.]+", text):
        t = t.strip(".")
        if not t or t in _CPU_NOISE or re.fullmatch(r"\d+-?core|\d+(\.\d+)?ghz", t):
            continue
        toks.append(t.replace(".", ""))
    return "-".join(toks[:words]) or "cpu"


PART_MAX = 40  # characters of one part of a machine's id or kind (a CPU's words: "amd-epyc-7763" is 13)


def _part(value, missing):
    """One part of a machine id from a sidecar's value (someone else's text): lower-case
    letters and digits only, at most PART_MAX of them; `missing` where none is left.  A value
    such as '/../../x' or '..' can never name a folder outside the history."""
    text = re.sub(r"[^a-z0-9]+", "", str(value).lower())[:PART_MAX] if value is not None else ""
    return text or missing


def machine_kind(meta):
    """A machine's kind, not the machine: amd-epyc-2c-24g-k6-madvise-1a2b3c (CPU words, cores,
    GiB, kernel major, THP mode, and 6 hex of a hash of the whole fingerprint so that two kinds
    whose readable parts agree still differ).  Two identical VMs are one kind and two machines.
    Every part is letters, digits and '-' (_part).  Before issue 44 this was the history's
    machine id, the name of its folder (such a folder is still read: nightly.load)."""
    fp = fingerprint(meta)
    h = hashlib.sha1(json.dumps([fp[k] for k in ("cpu_model", "cores", "mem_gib", "kernel_major", "thp")])
                     .encode()).hexdigest()[:6]
    parts = [_slug(fp["cpu_model"])[:PART_MAX].strip("-") or "cpu"]
    parts.append(_part(fp["cores"], "x") + "c")
    parts.append(_part(fp["mem_gib"], "x") + "g")
    parts.append("k" + _part(fp["kernel_major"], "x"))
    parts.append(_part(fp["thp"] or "thpx", "thpx"))
    return "-".join(parts + [h])

def machine_id(meta):
    """The machine a sidecar describes as a folder's name: HOST-BOOT (vm-686f62: its host and
    the first 6 hex digits of its boot_id, as make fleet-probe names its file and compare labels
    one host's boots), HOST-kKERNEL for a sidecar from before boot_id.  Two identical VMs, or
    one VM's two boots, are two ids.  Every part is letters, digits and '-' (_part): built from
    the sidecar's values, it can never name a folder outside the history."""
    m = (meta or {}).get("machine") or {}
    boot = re.sub(r"[^0-9a-f]+", "", str(m.get("boot_id") or "").lower())[:6]
    short = str(m.get("host") or "").split(".")[0]  # as `hostname -s`, which make fleet-probe names by
    host = re.sub(r"[^a-z0-9-]+", "", short.lower())[:PART_MAX].strip("-") or "host"
    return host + "-" + (boot or "k" + _part(m.get("kernel"), "x"))
