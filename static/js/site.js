// On every page: a box that scrolls sideways (a wide table on a phone) can be reached and
// scrolled with the keyboard, so it gets a tab stop; re-checked when the window is resized.
(function () {
  "use strict";
  function markScrollable() {
    document.querySelectorAll("table.data, .table-scroll, .panel, pre").forEach(function (el) {
      var scrolls = el.scrollWidth > el.clientWidth + 1;
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.dataset.scrollStop = "1";
      } else if (!scrolls && el.dataset.scrollStop) {
        el.removeAttribute("tabindex");
        delete el.dataset.scrollStop;
      }
    });
  }
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(markScrollable, 200);
  });
  window.addEventListener("load", markScrollable);
  document.addEventListener("DOMContentLoaded", markScrollable);
  window.SchedbenchSite = { markScrollable: markScrollable };
})();
