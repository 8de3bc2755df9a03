#!/usr/bin/python3
"""test_metric_lists.py - the views' lists of metrics name them by their keys in the registry
(mbdata.METRICS), never by a display string, and every name matches a metric (issue 44: the
dashboard's order named "faults per gb", which matched nothing, so faults sorted after peak RSS).
The check runs on made-up lists first.  Standard library only; no harness, no input."""
import sys

from mallocbench import dashboard, mbdata, report, summary
from mbtest import FAILS, check, check_eq


def unmatched(lists, registry):
    """{list name: [names in it that are no key of registry]}: a name that matches nothing."""
    return {name: bad for name, keys in lists.items() if (bad := [k for k in keys if k not in registry])}


def the_views_lists():
    return {"dashboard.METRIC_ORDER": dashboard.METRIC_ORDER, "report.STAT_TABLES": report.STAT_TABLES,
            "summary.METRIC_COLS": list(summary.METRIC_COLS.values()), "summary.CPU_KEYS": summary.CPU_KEYS}


def main():
    # the check itself, on made-up lists: a display string and a drifted name are caught, keys pass
    made_up = {"faults": None, "peak_rss": None, "user_cpu": None}
    check_eq(unmatched({"order": ["faults", "peak_rss"]}, made_up), {}, "keys of the registry pass")
    check_eq(unmatched({"order": ["faults per gb", "peak RSS", "user_cpu"]}, made_up),
             {"order": ["faults per gb", "peak RSS"]}, "a name that matches no key is caught")
    # the views' lists
    check_eq(unmatched(the_views_lists(), mbdata.METRIC), {}, "the views' metric lists name registry keys only")
    check(set(summary.METRIC_COLS) <= set(summary.COLS),
          f"summary.METRIC_COLS heads not in COLS: {sorted(set(summary.METRIC_COLS) - set(summary.COLS))}")
    # the dashboard sorts every metric the history stores (its series' `metric` is the key) in the
    # registry's order, none after the metrics it does not know: faults before peak RSS
    keys = [m.key for m in mbdata.metrics("history")]
    check_eq(sorted(reversed(keys), key=dashboard.metric_key), keys, "the dashboard's tabs in the registry's order")
    check(all(dashboard.metric_key(k) < dashboard.metric_key("not a metric") for k in keys),
          "a stored metric sorts after one the dashboard does not know")
    check(dashboard.metric_key("faults") < dashboard.metric_key("peak_rss"), "faults sort after peak RSS")
    if FAILS:
        sys.exit(1)
    print("test_metric_lists: ok")


if __name__ == "__main__":
    main()
