// What axe-core asks of Material's theme that only a script can change, in markup the theme draws at run time
// (tests/test_docs_accessibility.py runs axe on the built site):
// - the copy button's bar is a <nav>, yet no navigation region: left a landmark, each code block adds one more
//   unnamed "navigation" to the page (axe's landmark-unique);
// - a table wider than the screen scrolls inside its wrapper, which a keyboard must be able to reach and a
//   screen reader to name (axe's scrollable-region-focusable).
(function () {
  function fix() {
    document.querySelectorAll("nav.md-code__nav").forEach(function (nav) {
      nav.setAttribute("role", "none");
    });
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrap, index) {
      if (wrap.scrollWidth > wrap.clientWidth) {  // only a table that scrolls is worth a stop of the Tab key
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", "Table " + (index + 1) + ", scrolls sideways");
      } else if (wrap.hasAttribute("tabindex")) {
        ["tabindex", "role", "aria-label"].forEach(function (name) { wrap.removeAttribute(name); });
      }
    });
  }
  fix();
  // Material draws them when a page loads and again on every instant navigation; a turned phone resizes
  new MutationObserver(fix).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", fix);
})();
