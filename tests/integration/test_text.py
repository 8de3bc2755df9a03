"""test_text.py - issue 18: any byte string given as a label, unit, command
word or parameter is either refused in one line (exit 2, nothing written) or
comes back unchanged through the CSV (the harness's writer, then
scripts/mallocbench/mbcsv.py's reader); the sidecar stays UTF-8 JSON; cells a spreadsheet
would read as formulas get a leading ' that mbcsv takes off again.
argv: MALLOCBENCH CASE SOURCE_ROOT (cases: refuse, formula, sidecar, property)."""
import json
import os
import random
import shlex
import subprocess
import sys

from mbtest import SKIP, check, check_eq  # noqa: E402

from mallocbench import mbcsv

QUICK = ["-r", "1", "--warmup-runs", "0", "--no-limit", "-q"]


def b(s):
    """A str of the bytes given (os.fsencode gives them back to the child)."""
    return os.fsdecode(s) if isinstance(s, bytes) else s


def mb_run(mb, *args, env=None):
    """(exit code, stderr bytes) of the harness run with these arguments (str or bytes)."""
    p = subprocess.run([mb, *[b(a) for a in args]], capture_output=True, timeout=120,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stderr


def one_line(err, what):
    """stderr is exactly one UTF-8 line starting with 'mallocbench: '."""
    try:
        text = err.decode("utf-8")
    except UnicodeDecodeError:
        check(False, f"{what}: stderr is not UTF-8: {err!r}")
        return ""
    check(text.startswith("mallocbench: ") and text.endswith("\n") and text.count("\n") == 1 and "\r" not in text,
          f"{what}: not one line: {text!r}")
    return text


def case_refuse(mb, tmp):
    """Text that is not UTF-8 (or a control character where none belongs) is refused before any run."""
    out = os.path.join(tmp, "x.csv")
    exe = ["exec", "-a", "glibc", *QUICK, "-o", out]
    mat = os.path.join(tmp, "m.ini")
    with open(mat, "wb") as f:
        f.write(b"[run]\nallocators = gl\xffibc\n[workload exec]\ncmd = true\n")
    cases = [
        (exe + ["--", "/bin/echo", b"\xff\xfe"], "argument 14 (word 2 of the command after --) '\\xff\\xfe': not UTF-8 at byte 0"),
        (exe + ["--", b"/bin/ech\xc0\xaf"], "(word 1 of the command after --)"),
        (["run", "-a", b"l\xffx=glibc", *QUICK, "-w", "exec:cmd=true", "-o", out], "(the value of -a) 'l\\xffx=glibc': not UTF-8 at byte 1"),
        (["run", "-a", "jemalloc", "-t", b"jemalloc:dirty_decay_ms=1\xed\xa0\x80", *QUICK, "-w", "exec:cmd=true", "-o", out],
         "not UTF-8 at byte 25"),
        (["run", "-a", "glibc", *QUICK, "-w", b"tensor_copy:size=1\xff", "-o", out], "(the value of -w)"),
        (exe[:-2] + ["-o", os.path.join(tmp, b"x\xff.csv".decode("latin-1")).encode("latin-1"), "--", "true"],
         "(the value of -o)"),
        (exe + ["--metric", "([0-9]+)", "--unit", b"M\xffB", "--", "/bin/echo", "7"], "(the value of --unit)"),
        (exe + ["--metric", "([0-9]+)", "--unit", "M\x01B", "--", "/bin/echo", "7"],
         "bad value for exec:unit: a control character at byte 1"),
        (exe + ["--metric", "([0-9]+)", "--unit", "M\tB", "--", "/bin/echo", "7"], "a control character at byte 1"),
        (exe + ["--", "/bin/echo", "a\x1b[2Jb"], "bad value for exec:cmd: a control character at byte"),
        (exe + ["--", "/bin/echo", "a\nb"], "bad value for exec:cmd: a control character at byte"),
        (["run", "-a", ",.=glibc", *QUICK, "-w", "exec:cmd=true", "-o", out], "empty item in the allocator list"),
        (exe + ["--metric", "([0-9]+)", "--unit", "a,", "--", "/bin/echo", "7"], "empty parameter"),
        (exe + ["--", "/bin/echo", "x,metric=y"], "parameter exec:metric given twice"),
        (["run", "-a", "a\nb=glibc", *QUICK, "-w", "exec:cmd=true", "-o", out], "bad label 'a\\x0ab'"),
        (["run", "-m", mat, *QUICK, "-o", out], "m.ini:2: not UTF-8 at byte 15 of the line"),
    ]
    for args, needle in cases:
        rc, err = mb_run(mb, *args)
        what = repr(args[-4:])
        check_eq(rc, 2, f"{what}: exit code")
        text = one_line(err, what)
        check(needle in text, f"{what}: {needle!r} not in {text!r}")
        check(not [f for f in os.listdir(tmp) if f.endswith(".csv")], f"{what}: nothing written")


def read_back(path):
    """The rows of a run CSV as every script reads them (scripts/mallocbench/mbcsv.py)."""
    return mbcsv.read(path)[1]


def raw_cells(path, col):
    import csv
    with open(path, newline="", encoding="utf-8") as f:
        return [r[col] for r in csv.DictReader(f)]


def case_formula(mb, tmp):
    """Labels and units that start like a formula: a leading ' in the file, the value itself through mbcsv."""
    k = 0
    for env, guard in (({}, "'"), ({"MALLOCBENCH_CSV_RAW": "1"}, "")):
        # (label, its cell, unit, its cell): plain numbers are never guarded
        for label, lcell, unit, ucell in (("-x", "'-x", "=1+1", "'=1+1"), ("+cmd", "'+cmd", "@SUM(A1)", "'@SUM(A1)"),
                                          ("-1", "-1", "-5", "-5"), ("x-", "x-", "+3.5", "+3.5")):
            k += 1
            out = os.path.join(tmp, f"f{k}.csv")
            rc, err = mb_run(mb, "exec", "-a", f"{label}=glibc", *QUICK, "-o", out, "--metric", "([0-9]+)",
                             "--unit", unit, "--", "/bin/echo", "7", env=env)
            check_eq(rc, 0, f"{label} {unit}: exit code ({err!r})")
            if rc:
                continue
            if not guard:
                lcell, ucell = lcell.lstrip("'"), ucell.lstrip("'")
            check_eq(raw_cells(out, "config"), [lcell], f"config cell of {label!r} {env}")
            check_eq(raw_cells(out, "throughput_unit"), [ucell], f"unit cell of {unit!r} {env}")
            r = read_back(out)[0]
            check_eq(r["config"], label, "config read back")
            check_eq(r["throughput_unit"], unit, "unit read back")
    # tunables with negative values stay as they are (numbers, and names first)
    out = os.path.join(tmp, "t.csv")
    rc, err = mb_run(mb, "run", "-a", "jemalloc", "-t", "jemalloc:dirty_decay_ms=-1", *QUICK, "-w", "exec:cmd=true",
                     "-o", out)
    if rc == 0:
        check_eq(raw_cells(out, "requested_tunables"), ["dirty_decay_ms=-1"], "requested_tunables untouched")
        check_eq(raw_cells(out, "config"), ["jemalloc[dirty_decay_ms=-1]"], "config untouched")


def case_sidecar(mb, tmp):
    """The sidecar's command list is UTF-8 JSON that gives argv back, tabs and quotes included."""
    out = os.path.join(tmp, "s\u00e9 \"q\".csv")
    args = ["exec", "-a", "glibc", *QUICK, "-o", out, "--", "/bin/echo", "a\tb \\ \"c\" \u00e9\u20ac"]
    rc, err = mb_run(mb, *args)
    check_eq(rc, 0, f"exit code ({err!r})")
    meta = os.path.splitext(out)[0] + ".meta.json"
    with open(meta, "rb") as f:
        data = f.read()
    data.decode("utf-8")  # raises: not UTF-8
    check(b"\t" not in data.split(b'"command"')[1].split(b"]")[0], "no raw tab in the command list")
    check_eq(json.loads(data)["command"][1:], args, "command read back")
    r = read_back(out)[0]
    cmd = r["workload_params"].split(",cmd=", 1)[1]
    check_eq(shlex.split(cmd), args[-2:], "the command through the CSV")


# what labels, units and words are made of, and what breaks them
SAFE = [bytes([c]) for c in b"aZ09._+-=@' $:;/"]
HOSTILE = [b"\t", b"\r", b"\n", b'"', b",", b"\\", b"\x01", b"\x7f", b"\xff", b"\xfe", b"\xc3\xa9", b"\xc3",
           b"\xed\xa0\x80", b"\xe2\x82\xac", b"\xc2\x85", b"\xf4\x90\x80\x80", b"\xc0\xaf", b",cmd=",
           b",metric=", b",unit=x"]


def case_property(mb, tmp):
    """Seeded random byte strings as labels, units and exec words: refused in one line, or read back equal."""
    rng = random.Random(int(os.environ.get("MB_TEXT_SEED", "18")))
    n = int(os.environ.get("MB_TEXT_CASES", "90"))
    kept = refused = 0
    for i in range(n):
        kind = ("label", "unit", "arg")[i % 3]
        value = b"".join(rng.choice(HOSTILE if rng.random() < 0.2 else SAFE) for _ in range(rng.randint(1, 6)))
        out = os.path.join(tmp, f"p{i}.csv")
        if kind == "label":
            args = ["exec", "-a", value + b"=glibc", *QUICK, "-o", out, "--", "true"]
        elif kind == "unit":
            args = ["exec", "-a", "glibc", *QUICK, "-o", out, "--metric", "([0-9]+)", "--unit", value, "--",
                    "/bin/echo", "7"]
        else:
            args = ["exec", "-a", "glibc", *QUICK, "-o", out, "--", "/bin/echo", value]
        rc, err = mb_run(mb, *args)
        what = f"{kind} {value!r}"
        if rc == 2:
            refused += 1
            one_line(err, what)
            check(not os.path.exists(out), f"{what}: refused, yet a CSV was written")
            continue
        check_eq(rc, 0, f"{what}: exit code ({err!r})")
        if rc:
            continue
        kept += 1
        try:
            r = read_back(out)[0]
        except mbcsv.CsvError as e:
            check(False, f"{what}: the CSV does not read back: {e}")
            continue
        text = value.decode("utf-8")  # kept: it must have been UTF-8
        if kind == "label":
            check_eq(r["config"], text, f"{what}: config read back")
        elif kind == "unit":
            check_eq(r["throughput_unit"], text, f"{what}: unit read back")
        else:
            cmd = r["workload_params"].split(",cmd=", 1)[1]
            check_eq(shlex.split(cmd)[1:], [text], f"{what}: the command word read back")
    print(f"{n} byte strings: {kept} kept and read back, {refused} refused in one line", file=sys.stderr)
    check(kept >= n // 6 and refused >= n // 6, "both outcomes exercised")


if __name__ == "__main__":
    mb = sys.argv[1]
    if not os.access(mb, os.X_OK):
        sys.exit(SKIP)
    import tempfile
    import mbtest
    with tempfile.TemporaryDirectory() as tmp:
        {"refuse": case_refuse, "formula": case_formula, "sidecar": case_sidecar,
         "property": case_property}[sys.argv[2]](mb, tmp)
    sys.exit(1 if mbtest.FAILS else 0)
