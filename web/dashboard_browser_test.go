package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserInstructorPreviewAndProjector (issue 37, point 13): the
// instructor's page links a student's view that opens as a student in the
// instructor's own browser (not as the instructor), and its projector
// button sets large type for the room, remembered across a reload.
func TestBrowserInstructorPreviewAndProjector(t *testing.T) {
	skipShort(t)
	url, s := serve(t, Config{Classroom: true}, nil)
	ctx := browser(t)
	base := strings.TrimSuffix(url, "/")
	do(t, ctx, "the instructor's page", chromedp.Navigate(base+"/?teach="+s.TeachToken()), chromedp.WaitReady(css("[data-testid=class-preview]")))
	if role := evalJS[string](t, ctx, `document.body.dataset.role`); role != "instructor" {
		t.Fatalf("role %q, want instructor", role)
	}
	before := evalJS[float64](t, ctx, `parseFloat(getComputedStyle(document.documentElement).fontSize)`)
	do(t, ctx, "projector", chromedp.Click(css("[data-testid=projector]")))
	after := evalJS[float64](t, ctx, `parseFloat(getComputedStyle(document.documentElement).fontSize)`)
	if after < 1.3*before || evalJS[string](t, ctx, `document.querySelector("[data-testid=projector]").getAttribute("aria-pressed")`) != "true" {
		t.Errorf("projector mode: root type %v px, %v before; want it a third larger and the button pressed", after, before)
	}
	do(t, ctx, "reload", chromedp.Reload(), chromedp.WaitReady(css("[data-testid=projector]")))
	if !evalJS[bool](t, ctx, `document.body.classList.contains("projector")`) {
		t.Error("projector mode was forgotten on reload")
	}
	do(t, ctx, "projector off", chromedp.Click(css("[data-testid=projector]")))

	href := evalJS[string](t, ctx, `document.querySelector("[data-testid=class-preview]").getAttribute("href")`)
	do(t, ctx, "the student's view", chromedp.Navigate(base+href), chromedp.WaitReady(css("[data-testid=classroom-banner]")))
	got := evalJS[map[string]string](t, ctx, `({role: document.body.dataset.role, following: document.querySelector("[data-testid=classroom-banner]")?.dataset.following ?? ""})`)
	if got["role"] != "student" || got["following"] != "true" {
		t.Errorf("the preview opens as %v, want a student following the instructor", got)
	}
}
