// panes.js: at phone width the toy's bigram table and its Python listing
// never share the screen, so a switch below the step shows one of them
// (style.css shows the pane body[data-toy-pane] names; wider pages show
// both side by side and hide the switch). The pick is the learner's: kept
// in localStorage and set again on every view the page swaps in (the
// server renders the switch as it first looks), and the pane shown keeps
// the current step's cell or line in view. The page (app.js) and the
// one-file export (export.js) announce each new view with tracer:view.
(() => {
  "use strict";
  const store = "tracer.toyPane";
  let pane = "table";
  try { if (localStorage.getItem(store) === "listing") pane = "listing"; } catch { /* private mode */ }

  // parts are the switch and the pane it shows, or null when the view has
  // no toy or the page is too wide for the switch.
  function parts() {
    const sw = document.querySelector("[data-testid=pane-switch]");
    if (!sw || getComputedStyle(sw).display === "none") return null;
    const box = document.getElementById(pane === "listing" ? "toy-listing" : "toy-table");
    return box ? { sw, box } : null;
  }

  // current is the pane's highlighted cell (the pick) or row, or line.
  function current(box) {
    if (pane === "listing") return box.querySelector(".line.active");
    return box.querySelector(".cell.active") || box.querySelector("tr.active");
  }

  // below is where the page shows below the sticky controls, in px from
  // the window's top.
  function below() {
    const c = document.querySelector(".controls");
    return c ? Math.max(0, c.getBoundingClientRect().bottom) : 0;
  }

  // mark shows the pick on the switch and the page.
  function mark() {
    document.body.dataset.toyPane = pane;
    for (const b of document.querySelectorAll("[data-testid=pane-switch] button[data-pane]")) {
      b.setAttribute("aria-pressed", String(b.dataset.pane === pane));
    }
  }

  // follow keeps the current cell or line in view while the learner reads
  // the pane: its top above the window's middle and its bottom below the
  // controls. A pane off screen (the learner reads the step above it, or
  // a new run shows its top) is left where it is.
  function follow() {
    const p = parts();
    if (!p) return;
    const r = p.box.getBoundingClientRect();
    if (r.top > window.innerHeight / 2 || r.bottom < below()) return;
    current(p.box)?.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
  }

  // pick shows a pane from the switch: the switch goes just below the
  // controls, the pane under it, with its current cell or line in view.
  function pick(name) {
    pane = name;
    try { localStorage.setItem(store, pane); } catch { /* private mode */ }
    mark();
    const p = parts();
    if (!p) return;
    window.scrollBy({ top: p.sw.getBoundingClientRect().top - below() - 8, behavior: "instant" });
    current(p.box)?.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
  }

  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element ? e.target.closest("[data-testid=pane-switch] button[data-pane]") : null;
    if (b) pick(b.dataset.pane);
  });
  document.addEventListener("tracer:view", () => {
    mark();
    follow();
  });
  mark();
})();
