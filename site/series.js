// series.js - the two plots of a series page from window.MB_DATA (data.js):
// the nightly median with its 95% CI band, the detector's segment means as
// steps, change points (effect, p, status), fingerprint changes and nights
// without a value marked; below it the ratio to the baseline configuration.
// A night without a value is a gap, never 0.
"use strict";
// A value with its unit as every view writes it (words.fmt_value, which test_one_answer holds this
// to under node): the unit's scale (B/s as GB/s, s as ms or \u00b5s, a rate past 10^4 with k/M/G/T,
// a fraction in percent), 3 significant digits never in exponent form, an exact tie to even.
window.MB_VALUE = {
  PREFIX: [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]],
  // [factor, unit text] for values near v (words._unit_scale)
  scale: function (v, unit) {
    var a = v != null && v === v ? Math.abs(v) : 0, P = window.MB_VALUE.PREFIX, i;
    if (unit === "fraction") return [100, "%"];
    if (unit.indexOf("s/") === 0) { var t = window.MB_VALUE.scale(v, "s"); return [t[0], t[1] + unit.slice(1)]; }
    if (unit === "us") return a >= 1e6 ? [1e-6, "s"] : a >= 1e3 ? [1e-3, "ms"] : [1, "\u00b5s"];
    if (unit === "s") return a >= 1 || a === 0 ? [1, "s"] : a >= 1e-3 ? [1e3, "ms"] : [1e6, "\u00b5s"];
    if (unit === "B/s" || unit === "B") {
      for (i = 0; i < P.length; i++) if (a >= P[i][0]) return [1 / P[i][0], P[i][1] + unit];
      return [1, unit];
    }
    if (unit !== "MiB" && unit !== "" && a >= 1e4) {
      for (i = 0; i < P.length; i++) if (a >= P[i][0]) return [1 / P[i][0], P[i][1] + (unit.charAt(0) === "/" ? unit : " " + unit)];
    }
    return [1, unit];
  },
  // x with d decimals as Python's format writes it: an exact tie rounds to even (toFixed: away from 0)
  fixed: function (x, d) {
    if (Math.abs(x) >= 1e21) return BigInt(x).toString();  // an integer; toFixed writes 1e+21
    var up = x.toFixed(d);
    var exact = x.toFixed(Math.min(100, d + 40)).replace(/0+$/, "");  // x's whole decimal expansion if a tie
    var frac = exact.split(".")[1] || "";
    if (frac.length !== d + 1 || frac.charAt(d) !== "5") return up;  // no exact tie
    var down = exact.slice(0, -1).replace(/\.$/, "");  // the tie rounded toward zero
    return +down.charAt(down.length - 1) % 2 === 0 ? down : up;
  },
  // words.fmt: nd significant digits, never in exponent form
  number: function (v, nd) {
    if (v == null || !isFinite(v)) return "-";
    if (v === 0) return "0";
    var digits = Math.max(0, (nd || 3) - 1 - Math.floor(Math.log10(Math.abs(v))));
    return window.MB_VALUE.fixed(v, Math.min(digits, 9));
  },
  // words.fmt_value(v, unit); a missing value is the site's dash
  text: function (v, unit) {
    if (v == null) return "\u2013";
    var f = window.MB_VALUE.scale(v, unit || ""), u = f[1];
    return window.MB_VALUE.number(v * f[0]) + (u.charAt(0) === "/" || u === "" || u === "%" ? "" : " ") + u;
  }
};
(function () {
  var id = document.body.dataset.series;
  var s = (window.MB_DATA && window.MB_DATA.series || []).find(function (x) { return x.id === id; });
  var absEl = document.getElementById("plot-abs"), ratioEl = document.getElementById("plot-ratio");
  if (!s) { absEl.textContent = "series not found in data.js: " + id; return; }
  var machine = (window.MB_DATA.machine_kinds || {})[s.machine_kind] || {};  // what the series follows
  var unit = s.unit || "";
  function fmt(v) { return MB_VALUE.text(v, unit); }
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
