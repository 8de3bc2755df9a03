// ratio.js - what the nightly plots share (series.js, fleet.js): the night axis (a night's
// time and its legend series) and, for a ratio to the baseline, the value shown for a night,
// the axis labels and the dashed line at 1x (no change).
"use strict";
window.MB_RATIO = {
  // "2026-11-30" as uPlot's time (s), and the legend's night column
  time: function (night) { var p = night.split("-"); return Date.UTC(+p[0], +p[1] - 1, +p[2]) / 1000; },
  night: { label: "night", value: function (u, v) { return v == null ? "\u2013" : new Date(v * 1000).toISOString().slice(0, 10); } },
  // as every view writes a ratio (mbdata.ratio_digits): 3 decimals under 10, 1 from 10, and
  // under 0.01 3 significant digits as Python's "%.3g" writes them; the branch on the rounded
  // value.  data.js already holds a ratio with those digits, so nothing is rounded twice.
  value: function (u, v) {
    if (v == null) return "\u2013";
    return window.MB_RATIO.digits(v) + "\u00d7";
  },
  digits: function (v) {
    if (v > 0 && v < 0.01) {
      var m = v.toExponential(2).split("e"), e = parseInt(m[1], 10);
      var strip = function (t) { return t.indexOf(".") < 0 ? t : t.replace(/0+$/, "").replace(/\.$/, ""); };
      var g = e < -4 ? strip(m[0]) + "e-" + (-e < 10 ? "0" : "") + (-e) : strip(v.toFixed(2 - e));
      if (Number(g) < 0.01) return g;
    }
    var t = v.toFixed(3);
    return Number(t) < 10 ? t : v.toFixed(1);
  },
  axis: { size: 84, values: function (u, vals) { return vals.map(function (v) { return v + "\u00d7"; }); } },
  unity: function (u) {
    var y = u.valToPos(1, "y", true);
    if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) return;
    var c = u.ctx; c.save(); c.strokeStyle = "#777"; c.setLineDash([2, 2]);
    c.beginPath(); c.moveTo(u.bbox.left, y); c.lineTo(u.bbox.left + u.bbox.width, y); c.stroke(); c.restore();
  }
};
