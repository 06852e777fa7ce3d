package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "TestServeBrowser: write the answer page's screenshot to docs/serve.png")

// envRequireBrowser makes TestServeBrowser fail instead of skipping when
// no Chromium is installed (CI sets it).
const envRequireBrowser = "ASKYOURDOCS_REQUIRE_BROWSER"

// findChromium returns the Chromium binary, skipping (or failing with
// ASKYOURDOCS_REQUIRE_BROWSER=1) when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(envRequireBrowser) == "1" {
		t.Fatalf("no Chromium found and %s=1: install it (apt-get install -y chromium)", envRequireBrowser)
	}
	t.Skipf("no Chromium installed (apt-get install -y chromium; %s=1 makes this a failure)", envRequireBrowser)
	return ""
}

// TestServeBrowser drives the app in headless Chromium: log in, upload a
// PDF and a .docx, watch the index job reach done, ask, see the answer
// while it streams and then its citation to the PDF's page, click
// thumbs-up and find the rating in the feedback log. Screenshots go to the
// test's temp dir (and the answer page to docs/serve.png with
// -update-screenshot).
func TestServeBrowser(t *testing.T) {
	chromium := findChromium(t)
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	model := newServeFakeModel(t)
	model.gate = make(chan struct{})
	const password = "browser-pw"
	ts := newTestServe(t, map[string]string{"LLM_MODEL": "ollama/fake-llm", "OLLAMA_HOST": model.URL}, password, 0)

	shots := t.TempDir()
	bctx := newBrowser(t, chromium)

	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(shots, name), buf, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	docs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "cli", "docs"))
	if err != nil {
		t.Fatal(err)
	}

	// Log in (the Index page asks for it) and upload.
	err = doSteps(t, bctx,
		chromedp.Navigate(ts.URL+"/index"),
		chromedp.WaitVisible(css(`#username`)),
		chromedp.SendKeys(css(`#username`), "admin"),
		chromedp.SendKeys(css(`#password`), password),
		chromedp.Click(css(`form[action="/login"] button`)),
		chromedp.WaitVisible(css(`#files`)),
		chromedp.SetUploadFiles(css(`#files`), []string{filepath.Join(docs, "handbook.pdf"), filepath.Join(docs, "faq.docx")}),
		chromedp.Click(css(`form[action^="/index/upload"] button`)),
		// The job's live progress, then done (the page reloads once all
		// jobs are finished and lists the sources).
		waitVisibleAcrossReloads(`li.job[data-status="done"]`),
		waitVisibleAcrossReloads(`#sources table`),
	)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	shot("index.png")
	if s := text(`#sources table`); !strings.Contains(s, "handbook.pdf") || !strings.Contains(s, "faq.docx") {
		t.Fatalf("sources after the upload: %q", s)
	}
	progress, _ := chromedp.Run(bctx, chromedp.TextContent(css(`li.job .progress`)))
	if !strings.Contains(progress, "handbook.pdf") || !strings.Contains(progress, "faq.docx") {
		t.Errorf("job progress %q", progress)
	}

	// Ask: the answer is visible while the model is still writing it.
	const question = "How long before the start can I cancel a booking and still get a full refund?"
	err = chromedp.Do(bctx,
		chromedp.Navigate(ts.URL+"/ask"),
		chromedp.WaitVisible(css(`#q`)),
		chromedp.SendKeys(css(`#q`), question),
		chromedp.Click(css(`#ask-form button[type="submit"]`)),
	)
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`(() => { const s = document.querySelector('.streaming'); return s !== null && s.textContent.length > 0; })()`)); err != nil {
		t.Fatalf("waiting for streamed text: %v", err)
	}
	partial := text(`.streaming`)
	confidenceWhileStreaming, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector('.turn .confidence') !== null`))
	if err != nil || partial == "" || confidenceWhileStreaming {
		t.Errorf("while streaming: text %q, confidence shown %v (%v)", partial, confidenceWhileStreaming, err)
	}
	shot("streaming.png")
	close(model.gate)

	if err := chromedp.Do(bctx, chromedp.WaitVisible(css(`.turn .confidence`))); err != nil {
		t.Fatalf("answer: %v", err)
	}
	answer, confidence := text(`.turn .a`), text(`.turn .confidence strong`)
	href, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('.citations a.orig').getAttribute('href')`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "48 hours") || strings.Contains(answer, "evil.example") || confidence == "" {
		t.Errorf("answer %q, confidence %q", answer, confidence)
	}
	if !strings.Contains(href, "handbook.pdf") || !strings.HasSuffix(href, "#page=1") {
		t.Errorf("first citation links to %q, want handbook.pdf#page=1", href)
	}
	resp, body := ts.request(t, nil, "GET", strings.TrimSuffix(href, "#page=1"), "", nil, map[string]string{"Authorization": basicAuth("admin", password)})
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "%PDF-") {
		t.Errorf("citation link: %s", resp.Status)
	}

	// Thumbs-up, then find it in the feedback log.
	if err := chromedp.Do(bctx, chromedp.Click(css(`button[data-rating="up"]`)), chromedp.WaitVisible(css(`.feedback .rated`))); err != nil {
		t.Fatalf("thumbs-up: %v", err)
	}
	shot("answer.png")
	resp, body = ts.request(t, nil, "GET", "/api/feedback", "", nil, map[string]string{"Authorization": basicAuth("admin", password)})
	var entries []feedbackEntry
	json.Unmarshal([]byte(body), &entries)
	found := false
	for _, e := range entries {
		found = found || (e.Question == question && e.Rating == ratingUp)
	}
	if resp.StatusCode != http.StatusOK || !found {
		t.Errorf("feedback log (%s) has no thumbs-up for the question: %s", resp.Status, body)
	}

	// Phone width: the same page stays readable.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Errorf("phone viewport: %v", err)
	}
	shot("answer-phone.png")
	checkNoSideways(t, bctx)
	t.Logf("screenshots in %s", shots)
	if *updateScreenshot {
		b, err := os.ReadFile(filepath.Join(shots, "answer.png"))
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "docs", "serve.png"), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// newBrowser starts headless Chromium for the test (stopped at its end)
// and returns the context of its tab.
func newBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// checkNoSideways fails the test when the page is wider than the
// viewport (a phone would have to scroll sideways).
func checkNoSideways(t *testing.T, bctx context.Context) {
	t.Helper()
	wide, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil || wide {
		loc, _ := chromedp.Run(bctx, chromedp.Location())
		t.Errorf("%s is wider than the phone's viewport (%v)", loc, err)
	}
}

// TestServeBrowserWithoutJavaScript uses the app with JavaScript switched
// off, as the issue requires for ask and upload: log in, upload a PDF and
// a .docx through the plain form, see the job done and the sources listed,
// ask through the GET form, follow the citation to the PDF's page, ask a
// follow-up (the conversation travels in the form), rate the answer with
// the thumbs form and find the rating in the feedback log; the Index page
// at phone width has no sideways scrolling.
func TestServeBrowserWithoutJavaScript(t *testing.T) {
	chromium := findChromium(t)
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	const password = "nojs-pw"
	ts := newTestServe(t, nil, password, 0)
	bctx := newBrowser(t, chromium)
	if _, err := chromedp.Call(bctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disabling JavaScript: %v", err)
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	docs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "cli", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	// A job ahead of the upload's, held until the page has shown the
	// upload pending: the page must then refresh itself to show it done.
	release := make(chan struct{})
	ts.s.jobs.HandleKind("hold", func(_ context.Context, _ json.RawMessage, progress func(string)) (any, error) {
		progress("held by the test")
		<-release
		return nil, nil
	})
	if _, err := ts.s.jobs.EnqueueInput(context.Background(), "hold", nil); err != nil {
		t.Fatal(err)
	}
	err = doSteps(t, bctx,
		chromedp.Navigate(ts.URL+"/index"),
		chromedp.WaitVisible(css(`#username`)),
		chromedp.SendKeys(css(`#username`), "admin"),
		chromedp.SendKeys(css(`#password`), password),
		chromedp.Click(css(`form[action="/login"] button`)),
		chromedp.WaitVisible(css(`#files`)),
		chromedp.SetUploadFiles(css(`#files`), []string{filepath.Join(docs, "handbook.pdf"), filepath.Join(docs, "faq.docx")}),
		chromedp.Click(css(`form[action^="/index/upload"] button`)),
		// The form's answer is a redirect to the Index page showing the
		// upload's job.
		chromedp.WaitVisible(css(`li.job[data-status="pending"]`)),
	)
	if err != nil {
		t.Fatalf("upload without JavaScript: %v", err)
	}
	loc, err := chromedp.Run(bctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil || u.Query().Get("job") == "" {
		t.Fatalf("the upload redirected to %q, want /index?job=ID", loc)
	}
	close(release)
	// No navigation from here: the page's noscript refresh shows the job
	// done and the sources.
	err = doSteps(t, bctx,
		chromedp.WaitVisible(css(`li.job[data-job="`+u.Query().Get("job")+`"][data-status="done"]`)),
		chromedp.WaitVisible(css(`#sources table`)),
	)
	if err != nil {
		t.Fatalf("upload job without JavaScript: %v", err)
	}
	if s := text(`#sources table`); !strings.Contains(s, "handbook.pdf") || !strings.Contains(s, "faq.docx") {
		t.Fatalf("sources after the upload: %q", s)
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatalf("phone viewport: %v", err)
	}
	checkNoSideways(t, bctx)

	const question = "How long before the start can I cancel a booking and still get a full refund?"
	err = doSteps(t, bctx,
		chromedp.Navigate(ts.URL+"/ask"),
		chromedp.WaitVisible(css(`#q`)),
		chromedp.SendKeys(css(`#q`), question),
		chromedp.Click(css(`#ask-form button[type="submit"]`)),
		chromedp.WaitVisible(css(`.turn .confidence`)),
	)
	if err != nil {
		t.Fatalf("ask without JavaScript: %v", err)
	}
	if answer := text(`.turn .a`); !strings.Contains(answer, "48 hours") {
		t.Errorf("answer %q", answer)
	}
	hrefs, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.citations a')].map(a => a.getAttribute('href'))`))
	if err != nil {
		t.Fatal(err)
	}
	cited := false
	for _, h := range hrefs {
		cited = cited || (strings.Contains(h, "handbook.pdf") && strings.HasSuffix(h, "#page=1"))
	}
	if !cited {
		t.Errorf("no citation links to handbook.pdf#page=1: %q", hrefs)
	}
	checkNoSideways(t, bctx)

	const followUp = "And how much does renting a wetsuit cost?"
	err = doSteps(t, bctx,
		chromedp.SendKeys(css(`#q`), followUp),
		chromedp.Click(css(`#ask-form button[type="submit"]`)),
		// The answer page of the follow-up: the earlier turn, then it.
		chromedp.WaitVisible(css(`.turn + .turn[data-id] .confidence`)),
	)
	if err != nil {
		t.Fatalf("follow-up without JavaScript: %v", err)
	}
	turns, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.turn .q')].map(q => q.textContent)`))
	if err != nil || len(turns) != 2 || turns[0] != question || turns[1] != followUp {
		t.Errorf("conversation after the follow-up: %q (%v)", turns, err)
	}
	err = doSteps(t, bctx,
		chromedp.Click(css(`.turn[data-id] button[data-rating="up"]`)),
		chromedp.WaitVisible(css(`p[role="status"]`)),
	)
	if err != nil {
		t.Fatalf("thumbs-up without JavaScript: %v", err)
	}
	found := false
	for _, e := range readFeedbackLog(t, ts) {
		found = found || (e.Question == followUp && e.Rating == ratingUp)
	}
	if !found {
		t.Errorf("the feedback log has no thumbs-up for %q", followUp)
	}
}

// waitVisibleAcrossReloads waits until sel is visible on a page that may
// reload while it waits (the Index page reloads once its jobs finish): a
// node that a reload took away mid-wait is looked up again in the new
// document, until ctx ends.
func waitVisibleAcrossReloads(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		for {
			v, err := chromedp.WaitVisible(chromedp.CSS(sel))(ctx, tg)
			if err == nil || ctx.Err() != nil || !lostToReload(err) {
				return v, err
			}
		}
	}
}

// lostToReload reports whether err is the DevTools protocol's answer for a
// node or execution context that a navigation replaced.
func lostToReload(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Could not find node with given id") ||
		strings.Contains(s, "No node with given id") ||
		strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "Cannot find context with specified id")
}

// doSteps runs the steps one by one, naming the step that failed.
func doSteps(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	t.Helper()
	for i, st := range steps {
		if err := chromedp.Do(ctx, st); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			return fmt.Errorf("step %d (at %s): %w", i+1, loc, err)
		}
	}
	return nil
}
