"""test_huge.py MALLOCBENCH CASE - the huge-page condition (-t LABEL:huge=..., docs/thp.md):
condition: huge=never shows no huge page and proves THP off in every process reading, advise turns
  the family's setting on and shows huge pages where the kernel gives them, and a process that
  switches THP back on makes its sample an error;
refusals: advise where the family has no setting, a setting that contradicts the condition, glibc's
  hugetlbfs mode with no pages reserved and a bad value are refused before anything runs."""
import os
import re
import sys

import mbtest
from mbtest import check, check_eq, rows, run, thp_word

TC = "tensor_copy:size=16M,count=2,steps=3"


def proof(r):
    """(off, read) from a row's huge_proof, or None."""
    m = re.fullmatch(r"THP_enabled 0 in (\d+) of (\d+) process readings", r["huge_proof"])
    return (int(m.group(1)), int(m.group(2))) if m else None


def case_condition(mb, tmp):
    out = os.path.join(tmp, "huge.csv")
    gives = thp_word("enabled") in ("always", "madvise")
    p = run(mb, "run", "-w", TC, "-a", "glibc", "-t", "glibc:huge=never,advise", "-r", "1", "--no-limit",
            "-o", out, expect_rc=0 if gives else 2)
    if not gives:
        check("gives no transparent huge pages" in p.stderr, f"advise refused on a THP-less kernel: {p.stderr}")
        return
    got = {r["config"]: r for r in rows(out) if r["status"] == "ok"}
    check_eq(sorted(got), ["glibc[huge=advise]", "glibc[huge=never]"], "one configuration per condition")
    never, advise = got.get("glibc[huge=never]"), got.get("glibc[huge=advise]")
    if never:
        check_eq((never["huge"], never["huge_share_peak"], never["anon_huge_peak_kib"]), ("never", "0.0000", "0"),
                 "huge=never: no huge page at the peak")
        pr = proof(never)
        check(pr is not None and pr[1] > 0 and pr[0] == pr[1], f"huge=never proven in every reading: {never['huge_proof']}")
    if advise:
        check_eq((advise["huge"], advise["requested_tunables"]), ("advise", "hugetlb=1"), "advise sets glibc's own")
        check(float(advise["huge_share_peak"]) > 0 and int(advise["anon_huge_peak_kib"]) >= 2048, f"huge=advise: huge pages at the peak ({advise['huge_share_peak']})")
        check(int(advise["thp_faults"]) > 0, "huge=advise: the machine counted huge faults")
        check(proof(advise) is not None and proof(advise)[0] == 0, f"advise leaves THP on: {advise['huge_proof']}")
    # a process of the tree that switches THP back on breaks the condition: an error, said
    bad = os.path.join(tmp, "bad.csv")
    run(mb, "exec", "-a", "glibc", "-t", "glibc:huge=never", "-r", "1", "-o", bad, "--", sys.executable, "-c",
        "import ctypes, time; ctypes.CDLL(None).prctl(41, 0, 0, 0, 0); time.sleep(0.3)", expect_rc=4)
    errs = [r for r in rows(bad) if r["status"] == "error"]
    check(errs and "huge=never did not hold" in errs[0]["message"], f"THP switched on is an error: {errs[:1]}")


def refused(mb, tmp, want, *args):
    out = os.path.join(tmp, "refused.csv")
    p = run(mb, "run", "-w", TC, "-r", "1", *args, "-o", out, expect_rc=2)
    check(want in p.stderr and len(p.stderr.strip().splitlines()) == 1, f"{args}: one line naming '{want}': {p.stderr}")
    check(not os.path.exists(out), f"{args}: nothing written before the refusal")


def case_refusals(mb, tmp):
    have = mbtest.installed(mb)
    refused(mb, tmp, "bad value 'sometimes' for huge", "-a", "glibc", "-t", "glibc:huge=sometimes")
    # set for one configuration by its family and its label: neither may win silently
    refused(mb, tmp, "huge given twice for configuration 'g2'", "-a", "glibc,g2=glibc", "-t", "g2:huge=system",
            "-t", "glibc:huge=never")
    if "tcmalloc" in have:
        refused(mb, tmp, "gperftools 2.10 has no transparent-huge-page setting", "-a", "tcmalloc",
                "-t", "tcmalloc:huge=advise")
    if "scudo" in have:
        refused(mb, tmp, "huge=advise refused", "-a", "scudo", "-t", "scudo:huge=advise")
    if "jemalloc" in have:
        refused(mb, tmp, "huge=never contradicts thp=always", "-a", "je=jemalloc", "-t", "je:huge=never",
                "-t", "je:thp=always")
        if thp_word("enabled") in ("always", "madvise"):
            refused(mb, tmp, "huge=advise sets thp=always; -t gives thp=never", "-a", "jemalloc",
                    "-t", "jemalloc:huge=advise", "-t", "jemalloc:thp=never")
    with open("/proc/sys/vm/nr_hugepages") as f:
        if int(f.read()) == 0:
            refused(mb, tmp, "hugetlb=2 refused: it takes hugetlbfs pages", "-a", "glibc", "-t", "glibc:hugetlb=2")


if __name__ == "__main__":
    sys.exit(mbtest.main({"condition": case_condition, "refusals": case_refusals}))
