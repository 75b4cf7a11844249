// export.js steps through a file written by tracer export --html: it
// unpacks the positions the page's components rendered (one gzip stream of
// deduplicated fragments) and swaps them into #stepper, with the page's
// buttons and keys. It never fetches anything.
(() => {
  "use strict";
  const stepper = document.getElementById("stepper");
  const packed = document.getElementById("tracer-views");
  const state = { key: packed.dataset.first, pos: 0, row: 0, branch: 0 };
  let data = null; // {frags: [...], seqs: {"branch.row": [[delta, ...], ...]}}
  let playing = null;

  const bytes = (b64) => {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  };

  const ready = (async () => {
    const stream = new Blob([bytes(packed.textContent.trim())]).stream().pipeThrough(new DecompressionStream("gzip"));
    data = JSON.parse(await new Response(stream).text());
    document.body.dataset.ready = "true";
  })().catch((err) => {
    document.body.dataset.ready = "failed";
    const box = document.getElementById("error");
    box.textContent = "This browser cannot unpack the file's other steps (" + err + "): open it in a current Chromium, Firefox or Safari.";
    box.hidden = false;
  });

  const seq = () => data.seqs[state.key] || [];

  function render() {
    const list = seq();
    state.pos = Math.min(Math.max(state.pos, 0), list.length - 1);
    let id = -1;
    const parts = [];
    for (const d of list[state.pos]) {
      id += d;
      parts.push(data.frags[id]);
    }
    const next = document.createElement("template");
    next.innerHTML = parts.join("");
    morphChildren(stepper, next.content);
    const atStart = state.pos === 0;
    const atEnd = state.pos === list.length - 1;
    for (const b of document.querySelectorAll("[data-move=first], [data-move=prev]")) b.disabled = atStart;
    for (const b of document.querySelectorAll("[data-move=next], [data-move=last], #play")) b.disabled = atEnd;
    const counter = document.querySelector("[data-testid=step-counter]");
    if (counter) counter.textContent = (state.pos + 1) + " / " + list.length; // view.counterText
    if (atEnd) stop();
    document.dispatchEvent(new CustomEvent("tracer:view")); // panes.js
  }

  // morphChildren makes old's children like neu's, keeping the nodes that
  // do not change: a chart whose axes and curve stay put is not laid out
  // and painted again, only its step marker moves.
  function morphChildren(old, neu) {
    const was = old.childNodes;
    const now = [...neu.childNodes];
    now.forEach((b, i) => {
      const a = was[i];
      if (!a) {
        old.appendChild(b);
      } else if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName || fresh(a, b)) {
        old.replaceChild(b, a);
      } else if (a.nodeType === Node.ELEMENT_NODE) {
        if (!a.isEqualNode(b)) morph(a, b);
      } else if (a.nodeValue !== b.nodeValue) {
        a.nodeValue = b.nodeValue;
      }
    });
    while (was.length > now.length) old.removeChild(old.lastChild);
  }

  // fresh says whether an attention panel must give way to the new
  // position's rather than be morphed: inside.js draws a panel once, when
  // it enters the page (its grid, its links, the reader's pick of head),
  // so a changed panel comes in whole and is drawn again.
  function fresh(a, b) {
    return a.nodeType === Node.ELEMENT_NODE && a.hasAttribute("data-attn") && !a.isEqualNode(b);
  }

  function morph(a, b) {
    for (const at of [...a.attributes]) if (!b.hasAttribute(at.name)) a.removeAttribute(at.name);
    for (const at of b.attributes) if (a.getAttribute(at.name) !== at.value) a.setAttribute(at.name, at.value);
    morphChildren(a, b);
  }

  async function go(change) {
    await ready;
    if (!data) return;
    change();
    render();
  }

  const move = (how) => go(() => {
    const n = seq().length;
    state.pos = { first: 0, prev: state.pos - 1, next: state.pos + 1, last: n - 1 }[how];
  });

  function stop() {
    if (playing === null) return;
    clearInterval(playing);
    playing = null;
    document.getElementById("play")?.setAttribute("aria-pressed", "false");
  }

  function play() {
    if (playing !== null) return stop();
    document.getElementById("play")?.setAttribute("aria-pressed", "true");
    playing = setInterval(() => move("next"), 700);
  }

  document.addEventListener("click", (e) => {
    const t = e.target instanceof Element && e.target.closest("button");
    if (!t) return;
    if (t.dataset.move) {
      stop();
      move(t.dataset.move);
    } else if (t.id === "play") {
      play();
    } else if (t.dataset.branch !== undefined) {
      go(() => { state.branch = Number(t.dataset.branch); state.row = 0; state.key = state.branch + ".0"; });
    } else if (t.dataset.row !== undefined) {
      go(() => { state.row = Number(t.dataset.row); state.key = state.branch + "." + state.row; });
    }
  });

  document.addEventListener("submit", (e) => e.preventDefault());

  document.addEventListener("keydown", (e) => {
    const field = e.target instanceof Element && e.target.closest("input, textarea, select, summary");
    if (e.altKey || e.ctrlKey || e.metaKey || field) return;
    const how = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" }[e.key];
    if (how) {
      e.preventDefault();
      stop();
      move(how);
    } else if (e.key === " ") {
      e.preventDefault();
      play();
    }
  });
})();
