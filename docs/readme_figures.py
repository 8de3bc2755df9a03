#!/usr/bin/env python3
"""readme_figures.py - the figures the README quotes, from a committed run (docs/examples/):
how long the run took and on what, and for one workload each configuration against the
baseline as every view words it (compare's paired estimate and verdict), with its faults per
unit of work.  The README shows this output in an `exact` example block, so tests/integration/
test_readme.py fails the day the README and the committed run disagree.

    PYTHONPATH=scripts python3 docs/readme_figures.py docs/examples/quick.csv [WORKLOAD]
"""
import datetime
import sys

from mallocbench import change, mbdata, stats, words


def when(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def main():
    stats.require_scipy()  # the verdicts: Debian's interpreter where this one lacks scipy
    path = sys.argv[1]
    wl = sys.argv[2] if len(sys.argv) > 2 else "tensor_copy"
    run = mbdata.load(path)
    meta = run.metas[0] if run.metas else {}
    m = meta.get("machine", {})
    stamps = [when(r["timestamp"]) for r in run.rows if r.get("timestamp")]
    took = (max(stamps) - when(meta["started"])).total_seconds() if stamps and meta.get("started") else None
    blocks = len({r["block"] for r in run.rows})
    print(f"run: {len(run.rows)} samples ({len(run.ok)} ok), {len(run.configs)} configurations x "
          f"{len({(r['workload'], r['workload_params']) for r in run.rows})} workloads x {blocks} blocks"
          + (f", {int(took // 60)} min {int(took % 60)} s" if took is not None else ""))
    print(f"machine: {m.get('cpu_model')}, {m.get('cores_online')} cores, kernel {m.get('kernel')}")
    res = change.analyse(run.ok, baseline=run.config_order[0], order={c: i for i, c in enumerate(run.config_order)},
                          trade_offs=set(run.with_trait("trade_off")),
                          metrics=[x for x in change.METRICS if x[4] in ("throughput", "faults")])
    cells = [c for c in res if c.workload == wl and not c.geomean]
    for c in cells:
        if c.table != change.PRIMARY:
            continue
        faults = next((f for f in cells if f.table == "faults" and f.config == c.config
                       and f.params == c.params), None)
        fv = f"{words.fmt(faults.median)} faults{faults.unit}" if faults else "faults not measured"
        what = "baseline" if c.is_base else f"{words.change_words(c)} vs {c.baseline}"
        print(f"{wl} {c.config}: {words.fmt_value(c.median, c.unit)}, {what}, {fv}")


if __name__ == "__main__":
    main()
