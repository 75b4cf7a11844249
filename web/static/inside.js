// tracer's attention panel: draws the head picked from the grid on the
// context's tokens (tint by weight, lines from the newest token to its
// strongest earlier keys) and the grid's small multiples. The server sends
// every head's weights with the panel (data-attn, built by web/inside.go);
// the pick lives here and is kept as the page steps (a new fragment holds a
// fresh panel, drawn with the same pick).
(() => {
  "use strict";
  let pick = null; // {layer, head}: the learner's pick; null until one is made
  const svgNS = "http://www.w3.org/2000/svg";

  const fill = (text, pairs) => text.replace(/\{(\w+)\}/g, (m, k) => (k in pairs ? pairs[k] : m));

  // draw shows one cell (layer, head; head === heads for all heads) of a panel.
  function draw(panel, data, layer, head) {
    layer = Math.min(Math.max(layer, 0), data.layers - 1);
    head = Math.min(Math.max(head, 0), data.heads);
    const cell = data.cells[layer][head];
    const most = Math.max(0, ...cell.w);
    panel.dataset.layer = String(layer);
    panel.dataset.head = String(head);
    const keys = panel.querySelectorAll(".attn-key");
    keys.forEach((el, k) => {
      const w = cell.w[k] ?? 0;
      el.dataset.w = String(w);
      el.title = String(w);
      el.style.setProperty("--tint", most > 0 ? (w / most).toFixed(2) : "0");
      el.classList.toggle("link", cell.top.includes(k));
    });
    for (const b of panel.querySelectorAll(".attn-cell")) {
      const on = Number(b.dataset.layer) === layer && Number(b.dataset.head) === head;
      b.classList.toggle("on", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
    const sel = panel.querySelector("[data-testid=attn-selected]");
    if (sel) {
      const h = head === data.heads ? panel.dataset.wordAll : fill(panel.dataset.wordHead, { n: head + 1 });
      sel.textContent = fill(panel.dataset.wordLayer, { n: layer + 1 }) + " · " + h;
    }
    links(panel, cell, keys, data.query);
  }

  // links draws an arc from the query's token to each of the cell's
  // strongest keys, as wide as its weight.
  function links(panel, cell, keys, query) {
    const svg = panel.querySelector(".attn-links");
    const box = panel.querySelector(".attn-text");
    if (!svg || !box || !keys[query]) return;
    svg.replaceChildren();
    const b = box.getBoundingClientRect();
    svg.setAttribute("width", String(box.scrollWidth));
    svg.setAttribute("height", String(box.scrollHeight));
    const at = (el) => {
      const r = el.getBoundingClientRect();
      return { x: r.left - b.left + r.width / 2, y: r.top - b.top + 2 };
    };
    const q = at(keys[query]);
    for (const k of cell.top) {
      if (!keys[k]) continue;
      const p = at(keys[k]);
      const lift = 10 + Math.min(40, Math.abs(q.x - p.x) / 6);
      const path = document.createElementNS(svgNS, "path");
      path.setAttribute("d", `M ${q.x} ${q.y} C ${q.x} ${q.y - lift}, ${p.x} ${p.y - lift}, ${p.x} ${p.y}`);
      path.setAttribute("stroke-width", String(1 + 5 * (cell.w[k] ?? 0)));
      path.setAttribute("data-testid", "attn-link");
      path.setAttribute("data-k", String(k));
      svg.append(path);
    }
  }

  // multiples draws each grid cell's weights as a strip, one bar per key.
  function multiples(panel, data) {
    const ink = getComputedStyle(panel).getPropertyValue("--accent").trim() || "#2456c7";
    for (const b of panel.querySelectorAll(".attn-cell")) {
      const c = b.querySelector("canvas");
      const cell = data.cells[Number(b.dataset.layer)]?.[Number(b.dataset.head)];
      if (!c || !cell) continue;
      const g = c.getContext("2d");
      if (!g) continue;
      g.clearRect(0, 0, c.width, c.height);
      g.fillStyle = ink;
      const most = Math.max(0, ...cell.w);
      const n = cell.w.length;
      cell.w.forEach((w, k) => {
        if (most <= 0 || w <= 0) return;
        const x0 = Math.floor((k * c.width) / n);
        const x1 = Math.max(x0 + 1, Math.floor(((k + 1) * c.width) / n));
        const h = Math.max(1, Math.round((w / most) * c.height));
        g.fillRect(x0, c.height - h, x1 - x0, h);
      });
    }
  }

  // setup draws a new panel once, with the kept pick or its own default.
  function setup(panel) {
    panel.dataset.drawn = "1";
    let data;
    try {
      data = JSON.parse(panel.dataset.attn);
    } catch {
      return;
    }
    if (!data || !data.cells || !data.layers) return;
    multiples(panel, data);
    const layer = pick ? pick.layer : Number(panel.dataset.layer);
    const head = pick ? Math.min(pick.head, data.heads) : Number(panel.dataset.head);
    draw(panel, data, layer, head);
    panel.addEventListener("click", (e) => {
      const b = e.target instanceof Element ? e.target.closest(".attn-cell") : null;
      if (!b) return;
      pick = { layer: Number(b.dataset.layer), head: Number(b.dataset.head) };
      draw(panel, data, pick.layer, pick.head);
    });
  }

  // A layer of the forward-pass panel opens that layer's attention, all
  // heads, in the attention panel, and marks its row of the lens (whose
  // rows count layers from 1).
  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element ? e.target.closest("[data-testid=forward-layer-open]") : null;
    if (!b) return;
    const layer = Number(b.dataset.layer);
    for (const l of document.querySelectorAll("[data-testid=forward-layer]")) l.classList.toggle("open", Number(l.dataset.layer) === layer);
    const cell = document.querySelector(`[data-testid=attention-panel] .attn-cell.all[data-layer="${layer}"]`);
    if (cell) {
      cell.click();
      cell.closest("[data-testid=attention-panel]").scrollIntoView({ block: "nearest" });
    }
    for (const r of document.querySelectorAll("[data-testid=lens-row]")) r.classList.toggle("picked", Number(r.dataset.layer) === layer + 1);
  });

  const scan = () => {
    for (const p of document.querySelectorAll("[data-testid=attention-panel]:not([data-drawn])")) setup(p);
  };
  new MutationObserver(scan).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", () => {
    for (const p of document.querySelectorAll("[data-testid=attention-panel][data-drawn]")) {
      try {
        const data = JSON.parse(p.dataset.attn);
        draw(p, data, Number(p.dataset.layer), Number(p.dataset.head));
      } catch {
        // a panel without data has nothing to redraw
      }
    }
  });
  scan();
})();
