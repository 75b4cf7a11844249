// The lesson pages' script: progress and the chosen language kept in
// localStorage, and the quiz's feedback. The pages work without it, less
// the progress and the quiz.
"use strict";

(() => {
	const store = "tracer.lessons";

	// load returns the saved state: {lang, visited, completed, quiz}.
	const load = () => {
		let s = {};
		try { s = JSON.parse(localStorage.getItem(store) || "{}") || {}; } catch { s = {}; }
		return { lang: s.lang || "", visited: s.visited || {}, completed: s.completed || {}, quiz: s.quiz || {} };
	};
	const save = (s) => { try { localStorage.setItem(store, JSON.stringify(s)); } catch { /* private mode: no progress */ } };

	const body = document.body;
	const lang = body.dataset.lang;
	const state = load();

	// The language: ?lang= wins and is remembered; without one, a remembered
	// language other than the page's reloads the page in it.
	const asked = new URLSearchParams(location.search).get("lang");
	if (asked) {
		state.lang = asked;
		save(state);
	} else if (state.lang && state.lang !== lang) {
		const u = new URL(location.href);
		u.searchParams.set("lang", state.lang);
		location.replace(u.toString());
		return;
	}
	document.querySelectorAll("[data-testid=lang-switch] a").forEach((a) => {
		a.addEventListener("click", () => { state.lang = a.dataset.lang; save(state); });
	});

	// A step: visited on load, completed on Next or at the lesson's end.
	const step = document.querySelector("[data-testid=lesson-step]");
	if (step) {
		const key = step.dataset.lesson + "/" + step.dataset.step;
		state.visited[key] = true;
		if (Number(step.dataset.index) + 1 === Number(step.dataset.count)) {
			state.completed[key] = true;
		}
		save(state);
		const next = document.querySelector("[data-testid=lesson-next]");
		if (next) {
			next.addEventListener("click", () => { state.completed[key] = true; save(state); });
		}
		setUpQuiz(key);
	}

	// The list: each lesson's progress.
	document.querySelectorAll("[data-testid=lesson-progress]").forEach((p) => {
		const keys = p.dataset.steps.split(" ");
		const done = keys.filter((k) => state.completed[k]).length;
		p.textContent = p.dataset.template.replace("{done}", String(done)).replace("{total}", String(keys.length));
		p.dataset.done = String(done);
	});

	// setUpQuiz shows an option's feedback when it is chosen, and records
	// the answer.
	function setUpQuiz(key) {
		const quiz = document.querySelector("[data-testid=quiz]");
		if (!quiz) return;
		quiz.querySelectorAll(".question").forEach((q) => {
			const feedback = q.querySelector("[data-testid=quiz-feedback]");
			q.querySelectorAll("[data-testid=quiz-option]").forEach((o) => {
				o.addEventListener("click", () => {
					const right = o.dataset.correct === "true";
					const tpl = q.querySelector(`template[data-feedback="${CSS.escape(o.dataset.option)}"]`);
					const verdict = document.createElement("strong");
					verdict.textContent = (right ? quiz.dataset.correct : quiz.dataset.notQuite) + " ";
					feedback.replaceChildren(verdict, tpl.content.cloneNode(true));
					feedback.className = "feedback " + (right ? "right" : "wrong");
					feedback.dataset.right = String(right);
					feedback.hidden = false;
					q.querySelectorAll("[data-testid=quiz-option]").forEach((x) => x.classList.toggle("chosen", x === o));
					const s = load();
					const qk = key + "/" + q.dataset.question;
					s.quiz[qk] = right || s.quiz[qk] === true ? true : false;
					save(s);
				});
			});
		});
	}
})();
