"""test_diagnose_keys.py - diagnose's document held to its one key table (harness/watch/diagdoc.h's
DIAGDOC_KEYS, exported by `mallocbench schema --diagnose --json`), no root: the documents the C
writer makes of a window built by hand (tests/unit/diagdoc_doc.c, in each mode) and the fixture
(tests/fixtures/diagnose-pid.json) have only keys of the table, each of its type, and together
every key of it; every key scripts/mallocbench/diagnose.py reads of the document (traced while it
analyses and words the fixture and variations of it: each mode, a command with env(1) dropped) is
in the table; and every key of the table is read or listed in NOT_RENDERED (which names no key it
reads).

Usage: test_diagnose_keys.py MALLOCBENCH DIAGDOC_DOC SOURCE_ROOT"""
import copy
import json
import os
import subprocess
import sys

from mallocbench import diagnose
from mbtest import check, check_eq

# keys of the document diagnose.py does not read: measured for the --json reader and for checks
NOT_RENDERED = {
    "target.pid", "target.children", "target.allocator", "target.tunables", "target.exit_status",
    "window.started_unix", "watch.throttled", "watch.model_bytes",
    "processes[].image", "processes[].forked", "processes[].parent_image", "processes[].allocator.path",
    "processes[].allocator.environment_from", "processes[].proc_start.utime_s", "processes[].proc_start.stime_s",
    "processes[].proc_end.utime_s", "processes[].proc_end.stime_s",
}
# keys diagnose.py reads that are not the harness's: `stacks`, which its --stacks adds itself
ADDED = {"stacks"}
TYPES = {"text": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "list of objects": list,
         "list of text": list, "list of integers": list, "list of [number, integer, integer]": list,
         "number or null": (int, float, type(None)), "object or null": (dict, type(None))}


def paths(v, p=""):
    """Every key path of a document, with its value ("processes[].faults.minor")."""
    if isinstance(v, dict):
        for k, x in v.items():
            q = f"{p}.{k}" if p else k
            yield q, x
            yield from paths(x, q)
    elif isinstance(v, list) and p and all(isinstance(x, dict) for x in v):
        for x in v:
            yield from paths(x, p + "[]")


class Traced(dict):
    """A document that records the path of every key read (items and values included)."""
    def __init__(self, d, path, seen):
        super().__init__({k: wrap(v, f"{path}.{k}" if path else k, seen) for k, v in d.items()})
        self._path, self._seen = path, seen

    def _note(self, k):
        self._seen.add(f"{self._path}.{k}" if self._path else k)

    def __getitem__(self, k):
        self._note(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self._note(k)
        return super().get(k, default)

    def items(self):
        for k in self.keys():
            self._note(k)
        return super().items()

    def values(self):
        return [v for _, v in self.items()]


def wrap(v, path, seen):
    if isinstance(v, dict):
        return Traced(v, path, seen)
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return [Traced(x, path + "[]", seen) for x in v]
    return v


def reads(doc):
    """The keys diagnose.py reads of doc while it analyses it and says it in words."""
    seen = set()
    t = wrap(copy.deepcopy(doc), "", seen)
    diagnose.render(t)
    return seen


def main():
    mb, docprog, root = sys.argv[1:4]
    table = json.loads(subprocess.run([mb, "schema", "--diagnose", "--json"], capture_output=True, text=True,
                                      check=True).stdout)
    check_eq(table["schema"], diagnose.SCHEMA_RAW, "the table's schema is the one diagnose.py reads")
    keys = {k["path"]: k["type"] for k in table["keys"]}
    check_eq(len(keys), len(table["keys"]), "each path once")
    md = subprocess.run([mb, "schema", "--diagnose"], capture_output=True, text=True, check=True).stdout
    check("| `processes[].calls.{call}.alloc_bytes` | integer |" in md, "the Markdown table names {set} keys")

    fixture = json.load(open(os.path.join(root, "tests", "fixtures", "diagnose-pid.json")))
    docs = {"fixture": fixture}
    for mode in ("pid", "all", "command"):
        out = subprocess.run([docprog, mode], capture_output=True, text=True, check=True).stdout
        docs[mode] = json.loads(out)
        check_eq(docs[mode]["mode"], mode, f"diagdoc_doc {mode}")
    # the page model's whole-block counts (diagdoc_doc's window: a whole 2 MiB block given back by the
    # allocator and two of its pages re-faulted; a half block given back and one page re-faulted)
    own = [e for e in docs["pid"]["processes"] if not e["forked"]][0]["faults"]
    check_eq((own["alloc_refault_whole"], own["alloc_whole_blocks"]), (2, 1), "re-faults on whole blocks, blocks")
    written = set()
    for name, d in docs.items():
        for p, v in paths(d):
            written.add(p)
            check(p in keys, f"{name}: '{p}' is a key of the table")
            if p in keys:
                check(isinstance(v, TYPES[keys[p]]) and not (keys[p] in ("integer", "number") and isinstance(v, bool)),
                      f"{name}: '{p}' is of type {keys[p]}: {v!r}")
    check_eq(sorted(set(keys) - written), [], "every key of the table is written")

    # diagnose.py's reads, over the modes and the branches the fixture alone does not take
    cmd = copy.deepcopy(fixture)
    cmd["mode"] = "command"
    cmd["target"].update(exec_command=["python3", "serve.py"], exec_dropped=["MALLOC_CONF"], command=["env", "x"])
    cmd["processes"][0]["allocator"]["as_exec"] = {"library": "/opt/libjemalloc.so", "settings": [],
                                                   "not_settable": ["X"]}
    cmd["processes"][0]["allocator"]["malloc_conf_compiled"] = "narenas:1"
    joined = copy.deepcopy(fixture)  # a setting it started with, joined into the fix; the model capped
    joined["processes"][0]["allocator"]["vars"] = ["MALLOC_CONF=narenas:2"]
    joined["watch"].update(capped=True, model_limit=1 << 28, dropped_records=3, lost=2)
    read = {"schema"}  # diagnose.load's: a document of another schema is refused
    check(diagnose.load(os.path.join(root, "tests", "fixtures", "diagnose-pid.json")) == fixture, "load reads it")
    for d in (fixture, cmd, joined, docs["pid"], docs["command"], docs["all"]):
        read |= reads(d)
    read -= ADDED
    check_eq(sorted(p for p in read if p not in keys), [], "every key diagnose.py reads is in the table")
    check_eq(sorted(p for p in NOT_RENDERED if p not in keys), [], "NOT_RENDERED names keys of the table")
    check_eq(sorted(NOT_RENDERED & read), [], "NOT_RENDERED names no key diagnose.py reads")
    check_eq(sorted(set(keys) - read - NOT_RENDERED), [], "every key is read by diagnose.py or listed as not rendered")
    print(f"ok: {len(keys)} keys, {len(read & set(keys))} read, {len(NOT_RENDERED)} not rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
