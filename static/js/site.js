// On every page: the phone menu's button, and boxes that scroll sideways (a wide table on a
// phone) get a tab stop so the keyboard can reach and scroll them; re-checked on resize.
// Loaded without defer (pages allow no inline script): the "js" class is on <html> before the
// header is drawn, so below 700 px the menu starts folded (site CSS) and without JavaScript it
// simply stays open.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

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

  function setUpMenu() {
    var button = document.querySelector("header.site .menu-toggle");
    if (!button) { return; }
    var header = button.closest("header");
    function show(open) {
      header.classList.toggle("menu-open", open);
      button.setAttribute("aria-expanded", open ? "true" : "false");
    }
    button.addEventListener("click", function () {
      show(!header.classList.contains("menu-open"));
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && header.classList.contains("menu-open")) {
        show(false);
        button.focus();
      }
    });
  }

  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(markScrollable, 200);
  });
  window.addEventListener("load", markScrollable);
  document.addEventListener("DOMContentLoaded", function () {
    setUpMenu();
    markScrollable();
  });
  window.SchedbenchSite = { markScrollable: markScrollable };
})();
