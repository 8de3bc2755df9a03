// fleet.js - the plot of a fleet page from window.MB_DATA (data.js): one line per machine
// (its nightly ratio to the baseline configuration) and the ratio pooled over the machines
// with its CI as a band (random effects; a CI from three machines).  A night without a value
// is a gap, never 0.
"use strict";
(function () {
  var id = document.body.dataset.fleet;
  var f = (window.MB_DATA && window.MB_DATA.fleet || []).find(function (x) { return x.id === id; });
  var el = document.getElementById("plot-fleet");
  if (!f) { el.textContent = "fleet entry not found in data.js: " + id; return; }
  // the Okabe-Ito palette (colour-blind safe), machine by machine
  var palette = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"];
  var ratio = MB_RATIO.value;
  var xs = f.nights.map(MB_RATIO.time);
  var series = [MB_RATIO.night];
  var data = [xs];
  f.machines.forEach(function (m, i) {
    series.push({ label: m, stroke: palette[i % palette.length], width: 1.5, points: { show: true, size: 4 }, spanGaps: false, value: ratio });
    data.push(f.ratio[m]);
  });
  var lo = series.length;
  series.push({ label: "pooled 95% CI lo", stroke: "transparent", spanGaps: false, value: ratio });
  series.push({ label: "pooled 95% CI hi", stroke: "transparent", spanGaps: false, value: ratio });
  series.push({ label: "pooled", stroke: "#222", width: 2.5, points: { show: true, size: 5 }, spanGaps: false, value: ratio });
  data.push(f.lo, f.hi, f.pooled);
  var opts = {
    title: f.workload + " \u00b7 " + f.config + " vs " + (f.baseline || "the baseline") + " on " + f.machines.length + " machines",
    width: Math.max(480, Math.min(1100, el.clientWidth || 900)), height: 340,
    scales: { x: { time: true } },
    series: series,
    bands: [{ series: [lo + 1, lo], fill: "rgba(34,34,34,0.15)" }],
    axes: [{}, MB_RATIO.axis],
    hooks: { draw: [MB_RATIO.unity] }
  };
  new uPlot(opts, data, el);
})();
