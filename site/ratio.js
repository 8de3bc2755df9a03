// ratio.js - what the plots of a ratio to the baseline share (series.js, fleet.js): the value
// shown for a night, the axis labels, and the dashed line at 1x (no change).
"use strict";
window.MB_RATIO = {
  value: function (u, v) { return v == null ? "\u2013" : v.toFixed(3) + "\u00d7"; },
  axis: { size: 84, values: function (u, vals) { return vals.map(function (v) { return v + "\u00d7"; }); } },
  unity: function (u) {
    var y = u.valToPos(1, "y", true);
    if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) return;
    var c = u.ctx; c.save(); c.strokeStyle = "#777"; c.setLineDash([2, 2]);
    c.beginPath(); c.moveTo(u.bbox.left, y); c.lineTo(u.bbox.left + u.bbox.width, y); c.stroke(); c.restore();
  }
};
