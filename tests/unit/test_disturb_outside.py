#!/usr/bin/python3
"""test_disturb_outside.py - a block measured again whole, as the scripts read it:
disturb.outside() on the rows tests/unit/test_remeasure.c gives the harness's rule
(harness/plan/remeasure.c remeasure_outside), with the same answers, so the two rules agree;
mbcsv keeps each block's last attempt only and counts the blocks measured again; a schema 7
file (no `attempt` column) reads as every block's attempt 0."""
import sys

from mallocbench import disturb, mbcsv
from mbtest import FAILS, check, check_eq

# status, total_wall_s, steal_s, region_wall_s, region_run_delay_s, region_task_clock_s,
# region_user_s, region_sys_s, khugepaged_collapses, compactions; the why; on 2 CPUs.
# Keep in step with rows[] in test_remeasure.c.
COLS = ("status", "total_wall_s", "steal_s", "region_wall_s", "region_run_delay_s", "region_task_clock_s",
        "region_user_s", "region_sys_s", "khugepaged_collapses", "compactions")
OUTSIDE_ROWS = [
    (("ok", "10", "0.30", "", "", "", "", "", "", ""), "steal 1.5%"),
    (("ok", "10", "0.10", "1.0", "0.04", "1.0", "", "", "", ""), None),
    (("ok", "10", "", "1.0", "0.5", "1.0", "", "", "", ""), "waited 33% for a CPU beyond its own threads' demand"),
    (("ok", "10", "", "1.0", "1.0", "2.0", "", "", "", ""), None),
    (("ok", "10", "", "1.0", "1.0", "1.8", "", "", "", ""), "waited 7% for a CPU beyond its own threads' demand"),
    (("ok", "10", "", "1.0", "0.10", "", "0.60", "0.40", "", ""), "waited 9% for a CPU beyond its own threads' demand"),
    (("error", "10", "0.50", "1.0", "0.5", "1.0", "", "", "", ""), None),
    (("ok", "10", "0", "1.0", "0.01", "1.0", "", "", "5", "3"), None),
    (("ok", "2", "", "", "0.2", "1.0", "", "", "", ""), "waited 17% for a CPU beyond its own threads' demand"),
    (("ok", "", "", "", "", "", "", "", "", ""), None),
    # past the shares, but shorter than OUTSIDE_MIN_S: one preemption, one jiffy
    (("ok", "0.04", "", "", "0.004", "0.0001", "", "", "", ""), None),
    (("ok", "1", "0.04", "1", "0.04", "0.5", "", "", "", ""), None),
]

for i, (fields, want) in enumerate(OUTSIDE_ROWS):
    check_eq(disturb.outside(dict(zip(COLS, fields)), ncpu=2), want, f"outside() of row {i}")
# the view's mark is another question: khugepaged marks a sample disturbed, never re-measures it
check(disturb.disturbed(dict(zip(COLS, OUTSIDE_ROWS[7][0]))) is not None, "khugepaged still marks disturbed")


def csv_text(version, rows, attempt=True):
    """A CSV of the schema's columns (attempt left out when not attempt) with rows given as
    {column: value} (block, position, attempt, config, run_id, sample)."""
    cols = [c for c, _ in mbcsv.COLUMNS if attempt or c != "attempt"]
    lines = [",".join(cols)]
    for n, r in enumerate(rows):
        base = {"schema_version": version, "run_id": "R", "sample": str(n), "matrix_id": "m1", "status": "ok",
                "workload": "w", "config": "c"}
        base.update(r)
        lines.append(",".join(base.get(c, "") for c in cols))
    return "\n".join(lines) + "\n"


def row(block, position, attempt, config):
    return {"block": str(block), "position": str(position), "attempt": str(attempt), "config": config}


# block 1 measured again twice, block 2 once; block 0 never: the earlier attempts' rows are left out
rows = [row(0, 0, 0, "a"), row(0, 1, 0, "b"), row(1, 0, 0, "a"), row(1, 1, 0, "b"), row(1, 0, 1, "b"),
        row(1, 1, 1, "a"), row(1, 0, 2, "a"), row(1, 1, 2, "b"), row(2, 0, 0, "b"), row(2, 1, 0, "a"),
        row(2, 0, 1, "a"), row(2, 1, 1, "b")]
_, got = mbcsv.parse(csv_text(mbcsv.SCHEMA, rows), "t.csv")
check_eq([(r["block"], r["attempt"], r["position"]) for r in got],
         [("0", "0", "0"), ("0", "0", "1"), ("1", "2", "0"), ("1", "2", "1"), ("2", "1", "0"), ("2", "1", "1")],
         "the last attempt of each block")
check_eq([r.row for r in got], [1, 2, 7, 8, 11, 12], "rows keep their numbers in the file")
check_eq(mbcsv.remeasured(got), 2, "blocks measured again")
check_eq(mbcsv.remeasured(mbcsv.parse(csv_text(mbcsv.SCHEMA, rows[:4]), "t.csv")[1]), 0, "none measured again")
# interrupted during block 1's attempt 1 (one of its two positions measured), never resumed: the
# whole attempt 0 is read, the partial attempt left out and not counted as measured again
cut = rows[:5]
_, got = mbcsv.parse(csv_text(mbcsv.SCHEMA, cut), "t.csv")
check_eq([(r["block"], r["attempt"], r["position"]) for r in got],
         [("0", "0", "0"), ("0", "0", "1"), ("1", "0", "0"), ("1", "0", "1")], "a partial later attempt is ignored")
check_eq(mbcsv.remeasured(got), 0, "a partial attempt is no block measured again")
# block 1: attempt 2 cut short after a whole attempt 1: attempt 1 is read
_, got = mbcsv.parse(csv_text(mbcsv.SCHEMA, rows[:7]), "t.csv")
check_eq([(r["block"], r["attempt"]) for r in got if r["block"] == "1"], [("1", "1"), ("1", "1")],
         "the last whole attempt")

# schema 7: no attempt column, read as attempt 0; a schema 8 row without the column is refused
_, old = mbcsv.parse(csv_text("7", [row(0, 0, 0, "a"), row(0, 1, 0, "b")], attempt=False), "old.csv")
check_eq([(r["attempt"], r["config"]) for r in old], [("0", "a"), ("0", "b")], "schema 7 rows are attempt 0")
check_eq(mbcsv.parse(csv_text("7", [], attempt=False), "old.csv")[1], [], "a schema 7 header alone")
try:
    mbcsv.parse(csv_text(mbcsv.SCHEMA, [row(0, 0, 0, "a")], attempt=False), "new.csv")
    check(False, "a schema 8 file without attempt was read")
except mbcsv.CsvError as e:
    check_eq(str(e), f"new.csv: header: no column attempt (schema_version {mbcsv.SCHEMA} has it)", "its refusal")

if FAILS:
    print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("ok")
