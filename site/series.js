// series.js - the two plots of a series page from window.MB_DATA (data.js):
// the nightly median with its 95% CI band, the detector's segment means as
// steps, change points (effect, p, status), fingerprint changes and nights
// without a value marked; below it the ratio to the baseline configuration.
// A night without a value is a gap, never 0.
"use strict";
(function () {
  var id = document.body.dataset.series;
  var s = (window.MB_DATA && window.MB_DATA.series || []).find(function (x) { return x.id === id; });
  var absEl = document.getElementById("plot-abs"), ratioEl = document.getElementById("plot-ratio");
  if (!s) { absEl.textContent = "series not found in data.js: " + id; return; }
  var machine = window.MB_DATA.machines[s.machine] || {};
  var unit = s.unit || "";
  var SI = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  function fmt(v) {
    if (v == null) return "\u2013";
    var a = Math.abs(v);
    // CPU time per unit of work (s/MiB): as time, then per what (ms/MiB), as every view prints it
    var per = unit.indexOf("s/") === 0 ? unit.slice(1) : "";
    if ((unit === "s" || per) && a > 0 && a < 1) return (a >= 1e-3 ? +(v * 1e3).toPrecision(3) + " ms" : +(v * 1e6).toPrecision(3) + " \u00b5s") + per;
    for (var i = 0; i < SI.length; i++) if (a >= SI[i][0]) return +(v / SI[i][0]).toPrecision(3) + " " + SI[i][1] + unit;
    return (+v.toPrecision(3) + " " + unit).trim();
  }
  var xs = s.nights.map(MB_RATIO.time);
  var steps = s.nights.map(function (n) {
    var seg = (s.segments || []).find(function (g) { return g.start <= n && n <= g.end; });
    return seg ? seg.mean : null;
  });
  var ink = "#222", grey = "#777";
  function width() { return Math.max(480, Math.min(1100, absEl.clientWidth || 900)); }
  function vline(u, night, colour, dash, label, row) {
    var x = Math.round(u.valToPos(MB_RATIO.time(night), "x", true));
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
    var c = u.ctx, dpr = window.devicePixelRatio || 1;
    c.save();
    c.strokeStyle = colour; c.lineWidth = 1.5 * dpr; c.setLineDash(dash.map(function (d) { return d * dpr; }));
    c.beginPath(); c.moveTo(x, u.bbox.top); c.lineTo(x, u.bbox.top + u.bbox.height); c.stroke();
    c.fillStyle = colour; c.font = (11 * dpr) + "px sans-serif"; c.textAlign = "left"; c.textBaseline = "alphabetic";
    var w = c.measureText(label).width, lx = x + 4 * dpr;
    if (lx + w > u.bbox.left + u.bbox.width) lx = x - 4 * dpr - w;
    c.fillText(label, lx, u.bbox.top + (12 + 13 * row) * dpr);
    c.restore();
  }
  function markers(u) {
    var row = 0;
    (machine.environment || []).forEach(function (e) { vline(u, e.night, grey, [4, 3], "\u2699 " + e.what, row++ % 4); });
    (s.changes || []).forEach(function (c) {
      var g = c.direction === "regression" ? "\u25bc " : "\u25b2 ";
      var p = c.p == null ? "" : " p=" + (+c.p).toPrecision(2);
      vline(u, c.night, ink, [], g + (c.change_pct > 0 ? "+" : "") + (+c.change_pct).toFixed(1) + "%" + p + " " + c.status, row++ % 4);
    });
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
    ctx.save(); ctx.fillStyle = grey; ctx.font = (12 * dpr) + "px sans-serif"; ctx.textAlign = "center"; ctx.textBaseline = "alphabetic";
    (s.missing || []).forEach(function (m) {
      var x = u.valToPos(MB_RATIO.time(m.night), "x", true);
      if (x >= u.bbox.left && x <= u.bbox.left + u.bbox.width) ctx.fillText("\u2205", x, u.bbox.top + u.bbox.height - 4 * dpr);
    });
    ctx.restore();
  }
  var colour = s.colour || "#999999";
  var band = colour + "33";
  var absOpts = {
    title: s.workload + " \u00b7 " + s.config + " \u00b7 " + (s.figure || s.metric) + " (" + (unit || "no unit") + ", " + (s.better || "?") + " is better)",
    width: width(), height: 340,
    scales: { x: { time: true } },
    series: [
      MB_RATIO.night,
      { label: "median", stroke: colour, width: 2, points: { show: true, size: 5 }, spanGaps: false, value: function (u, v) { return fmt(v); } },
      { label: "95% CI lo", stroke: "transparent", spanGaps: false, value: function (u, v) { return fmt(v); } },
      { label: "95% CI hi", stroke: "transparent", spanGaps: false, value: function (u, v) { return fmt(v); } },
      { label: "segment mean", stroke: ink, width: 1.5, dash: [6, 3], spanGaps: false, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false }, value: function (u, v) { return fmt(v); } }
    ],
    bands: [{ series: [3, 2], fill: band }],
    axes: [{}, { size: 84, values: function (u, vals) { return vals.map(fmt); } }],
    hooks: { draw: [markers] }
  };
  new uPlot(absOpts, [xs, s.median, s.lo, s.hi, steps], absEl);
  var ratioOpts = {
    title: "ratio to " + (s.baseline || "the baseline") + " on the same night",
    width: width(), height: 220,
    scales: { x: { time: true } },
    series: [
      MB_RATIO.night,
      { label: "vs " + (s.baseline || "baseline"), stroke: colour, width: 2, points: { show: true, size: 4 }, spanGaps: false,
        value: MB_RATIO.value }
    ],
    axes: [{}, MB_RATIO.axis],
    hooks: { draw: [MB_RATIO.unity, markers] }
  };
  new uPlot(ratioOpts, [xs, s.ratio], ratioEl);
})();
