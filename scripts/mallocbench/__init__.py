"""mallocbench - the Python half of mallocbench: everything that reads the harness's CSV.

The harness (`mallocbench`, C) measures and writes one CSV schema; these modules only read
it.  Each entry runs as `python3 -m mallocbench.MODULE ...`, as scripts/MODULE.py (a shim),
or through the harness (`mallocbench compare`, `mallocbench tune`, `run --profile`):

    summary     the tables of one or more runs            compare    paired statistics, verdicts
    report      a Markdown report with plots               plots      PNG/SVG figures
    tune        the tunables search of `mallocbench tune`  frameworks make frameworks' report
    history     the nightly history's store                detect     its change-point detector
    dashboard   the nightly dashboard as a static site     flamegraph perf.data to flame graphs

and what they share: mbcsv (the schema and the strict reader), mbdata (the data layer: runs,
the metric registry, params, traits), stats (the estimators), mbout (how a file is written),
cli (how an entry ends: modules raise cli.Fail, only an entry's __main__ exits).
"""
