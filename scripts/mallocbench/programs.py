"""programs.py - the data layer's reading of the framework suite (docs/frameworks.md): which
program a row measures (an exec row's script, a replay row's trace, a synthetic workload's
trace or the program it is shaped after), rows by program, a replay of the recorded region,
a served model.  frameworks.py computes and words on top of these.
"""
import os

from . import mbdata

TRACE_SPEC = "trace:"


def program_of(r):
    """The program a row measures: an exec row its command's script or binary (train of
    '/usr/bin/python3 workloads/frameworks/train.py --steps 5'), a replay row its trace's
    name (train of 'results/frameworks/train.mbt'), any other row its workload."""
    params = dict(mbdata.parse_params(r["workload_params"]))
    if r["workload"] == "exec":
        words = (params.get("cmd") or "").split()
        picks = [w for w in words if w.endswith((".py", ".sh"))] or words[:1]
        return os.path.splitext(os.path.basename(picks[0]))[0] if picks else "exec"
    if r["workload"] == "replay" and params.get("trace"):
        return os.path.splitext(os.path.basename(params["trace"]))[0]
    return r["workload"]


def replay_region(rows):
    """True when these replay rows measured the region the program marked while it was
    recorded (workload_metrics region=recorded), so their region_* columns stand beside
    the real program's region_*; False when they replayed the whole trace."""
    return bool(rows) and all(mbdata.parse_metrics(r.get("workload_metrics", "")).get("region") == "recorded"
                              for r in rows)


def synth_program(r, match):
    """(program, trace_driven) a synthetic row stands for: the program whose trace gave its
    sizes (a trace:FILE parameter), else match[workload] (frameworks.sh says which program
    each synthetic workload is shaped after); (None, False) for neither."""
    for _, v in mbdata.parse_params(r["workload_params"]):
        if v.startswith(TRACE_SPEC):
            return os.path.splitext(os.path.basename(v[len(TRACE_SPEC):]))[0], True
    return match.get(r["workload"]), False


def by_program(rows, key=program_of):
    """{program: {config: [ok rows]}} in order of first appearance."""
    out = {}
    for r in rows:
        if r["status"] == "ok":
            out.setdefault(key(r), {}).setdefault(r["config"], []).append(r)
    return out


def is_served(r):
    """A served model's row: the serve workload, or an exec row whose figure is requests/s."""
    return r["workload"] == "serve" or (r.get("throughput_unit") or "") == "req/s"
