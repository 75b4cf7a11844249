// tracer's page script: sends navigation messages over the WebSocket and
// swaps in the HTML fragments the server renders. The server owns the
// position; this script only asks it to move.
(() => {
  "use strict";
  const body = document.body;
  const stepper = document.getElementById("stepper");
  const errorBox = document.getElementById("error");
  const form = document.getElementById("import-form");
  const fileInput = form.querySelector("input[type=file]");
  const play = document.getElementById("play");
  const playEvery = 900; // ms between steps while playing

  let ws = null;
  let queue = [];
  let timer = null;

  function connect() {
    if (ws && ws.readyState <= WebSocket.OPEN) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    ws = new WebSocket(scheme + location.host + body.dataset.ws);
    ws.onopen = () => {
      const pending = queue;
      queue = [];
      if (pending.length === 0) pending.push({ type: "view" });
      for (const m of pending) ws.send(JSON.stringify(m));
    };
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      handle(m);
    };
    ws.onclose = () => { stopPlay(); };
  }

  function send(m) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(m));
      return;
    }
    queue.push(m);
    connect();
  }

  function handle(m) {
    if (!m || typeof m !== "object") return;
    if (m.type === "view" && typeof m.html === "string") {
      stepper.innerHTML = m.html;
      showError("");
      sync();
    } else if (m.type === "error") {
      showError(String(m.message || "Something went wrong."));
      stopPlay();
    }
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = text === "";
  }

  // sync enables the buttons for the position the fragment shows.
  function sync() {
    const pos = stepper.querySelector("[data-testid=step-index]");
    if (!pos) return;
    const i = Number(pos.dataset.index), n = Number(pos.dataset.count);
    for (const b of document.querySelectorAll("[data-move=first], [data-move=prev]")) b.disabled = i <= 0;
    for (const b of document.querySelectorAll("[data-move=next], [data-move=last]")) b.disabled = i >= n - 1;
    if (i >= n - 1) stopPlay();
    play.disabled = i >= n - 1 && timer === null;
  }

  function startPlay() {
    if (timer !== null) return;
    timer = setInterval(() => send({ type: "next" }), playEvery);
    play.setAttribute("aria-pressed", "true");
    play.firstChild.textContent = "⏸";
    send({ type: "next" });
  }

  function stopPlay() {
    if (timer === null) return;
    clearInterval(timer);
    timer = null;
    play.setAttribute("aria-pressed", "false");
    play.firstChild.textContent = "▶";
    sync();
  }

  function togglePlay() {
    if (timer === null) startPlay(); else stopPlay();
  }

  for (const b of document.querySelectorAll("[data-move]")) {
    b.addEventListener("click", () => send({ type: b.dataset.move }));
  }
  play.addEventListener("click", togglePlay);

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target instanceof HTMLElement && e.target.closest("input, textarea, select")) return;
    const moves = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
    if (moves[e.key]) {
      e.preventDefault();
      send({ type: moves[e.key] });
    } else if (e.key === " ") {
      e.preventDefault();
      togglePlay();
    }
  });

  fileInput.addEventListener("change", async () => {
    if (!fileInput.files || fileInput.files.length === 0) return;
    stopPlay();
    const data = new FormData(form);
    fileInput.value = "";
    let m = null;
    try {
      const r = await fetch(form.action, { method: "POST", body: data, headers: { Accept: "application/json" } });
      m = await r.json().catch(() => ({ type: "error", message: "The server answered " + r.status + " " + r.statusText + "." }));
    } catch (err) {
      m = { type: "error", message: "Could not reach the server: " + err.message };
    }
    handle(m);
  });

  connect();
})();
