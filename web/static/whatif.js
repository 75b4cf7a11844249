// tracer's what-if panel: sliders for temperature, top-k, top-p and min-p
// at the current step. Each move sends {"type": "whatif", "whatif": {...}}
// through the page's socket (app.js's tracer.send); the server re-applies
// the engine's processors to the step's raw logits and answers with the
// candidates, the funnel and the draw rendered as the step renders them.
// At most one request is in flight: moves made meanwhile merge into the
// next one. Timings from the input event to the painted answer are kept in
// window.tracerWhatIfTimings (milliseconds) for the browser test.
(() => {
  "use strict";
  const panel = document.getElementById("whatif-panel");
  const form = document.getElementById("whatif-form");
  const out = document.getElementById("whatif-out");
  if (!panel || !form || !out) return;
  const names = ["temperature", "top_k", "top_p", "min_p"];
  const timings = [];
  window.tracerWhatIfTimings = timings;
  let inflight = null; // {t0}: the input time of the request in flight
  let pending = null; // {t0, body}: the newest request waiting for it
  let touched = false; // the learner moved a slider since the step changed

  const send = (m) => window.tracer && window.tracer.send(m);

  function showValues() {
    for (const n of names) {
      const o = form.elements[n + "-out"];
      if (o) o.value = form.elements[n].value;
    }
  }

  function settings() {
    const s = {};
    for (const n of names) s[n] = Number(form.elements[n].value);
    return s;
  }

  function request(body, t0) {
    if (inflight) {
      pending = { body, t0 };
      return;
    }
    inflight = { t0 };
    send(body);
  }

  form.addEventListener("input", (e) => {
    const t0 = e.timeStamp || performance.now();
    touched = true;
    showValues();
    request({ type: "whatif", whatif: settings() }, t0);
  });

  document.getElementById("whatif-reset").addEventListener("click", () => {
    touched = false;
    request({ type: "whatif" }, performance.now());
  });

  document.getElementById("whatif-branch").addEventListener("click", () => {
    const r = out.querySelector("[data-testid=whatif-result]");
    if (!r) return;
    send({ type: "branch", id: Number(r.dataset.chosen), whatif: settings() });
  });

  document.addEventListener("tracer:whatif", (ev) => {
    const m = ev.detail;
    const t0 = inflight ? inflight.t0 : null;
    inflight = null;
    out.innerHTML = String(m.html || "");
    if (!touched && m.settings) {
      for (const n of names) if (n in m.settings) form.elements[n].value = m.settings[n];
      showValues();
    }
    if (t0 !== null) {
      // Painted: a task queued from the next frame's animation callback
      // runs once that frame, the new HTML laid out, has been painted.
      requestAnimationFrame(() => setTimeout(() => {
        timings.push(performance.now() - t0);
        out.dataset.answers = String(Number(out.dataset.answers || 0) + 1);
      }, 0));
    }
    if (pending) {
      const p = pending;
      pending = null;
      request(p.body, p.t0);
    }
  });

  // An error answers the request too (the page shows it): free the slot.
  document.addEventListener("tracer:error", () => { inflight = null; });

  // Opening the panel, or a new step while it is open, redraws the outcome.
  const refresh = () => {
    if (!panel.open) return;
    request(touched ? { type: "whatif", whatif: settings() } : { type: "whatif" }, performance.now());
  };
  panel.addEventListener("toggle", refresh);
  let lastStep = "";
  document.addEventListener("tracer:view", () => {
    const pos = document.querySelector("[data-testid=step-index]");
    const key = pos ? pos.dataset.index + "/" + pos.dataset.count : "";
    if (key === lastStep) return;
    lastStep = key;
    refresh();
  });
  showValues();
})();
