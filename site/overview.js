// overview.js - metric tabs on index.html: one metric's grid per machine at a
// time (the primary figure first).  Without JavaScript every grid shows.
"use strict";
(function () {
  document.querySelectorAll(".machine").forEach(function (sec) {
    var buttons = sec.querySelectorAll(".tabs button");
    var tabs = sec.querySelectorAll(".tab");
    function show(id) {
      tabs.forEach(function (t) { t.hidden = t.id !== id; });
      buttons.forEach(function (b) { b.classList.toggle("on", b.dataset.tab === id); });
    }
    buttons.forEach(function (b) { b.addEventListener("click", function () { show(b.dataset.tab); }); });
    if (buttons.length) show(buttons[0].dataset.tab);
  });
})();
