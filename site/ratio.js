// ratio.js - what the plots of a ratio to the baseline share (series.js, fleet.js): the value
// shown for a night, the axis labels, and the dashed line at 1x (no change).
"use strict";
window.MB_RATIO = {
  // as compare prints a ratio (compare._num): 3 decimals under 10, 1 above, and under 0.01
  // 3 significant digits as Python's "%.3g" writes them
  value: function (u, v) {
    if (v == null) return "\u2013";
    return window.MB_RATIO.digits(v) + "\u00d7";
  },
  digits: function (v) {
    if (!(v > 0 && v < 0.01)) return v.toFixed(v < 10 ? 3 : 1);
    var m = v.toExponential(2).split("e"), e = parseInt(m[1], 10);
    var strip = function (t) { return t.indexOf(".") < 0 ? t : t.replace(/0+$/, "").replace(/\.$/, ""); };
    if (e < -4) return strip(m[0]) + "e-" + (-e < 10 ? "0" : "") + (-e);
    return strip(v.toFixed(2 - e));
  },
  axis: { size: 84, values: function (u, vals) { return vals.map(function (v) { return v + "\u00d7"; }); } },
  unity: function (u) {
    var y = u.valToPos(1, "y", true);
    if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) return;
    var c = u.ctx; c.save(); c.strokeStyle = "#777"; c.setLineDash([2, 2]);
    c.beginPath(); c.moveTo(u.bbox.left, y); c.lineTo(u.bbox.left + u.bbox.width, y); c.stroke(); c.restore();
  }
};
