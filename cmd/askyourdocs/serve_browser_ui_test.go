package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The web UI's browser tests: the passage view of an HTML, a .docx and a
// PDF citation, same-named files told apart, the no-match message,
// refused uploads shown in the form and keyboard-only asking and rating,
// with JavaScript (also Stop, no double submit, upload progress and the
// 390 px layout) and without.

// uiBrowser is one test's browser tab with small helpers.
type uiBrowser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// newUIBrowser starts headless Chromium (JavaScript off when noJS) for a
// test of at most two minutes.
func newUIBrowser(t *testing.T, base string, noJS bool) *uiBrowser {
	t.Helper()
	chromium := findChromium(t)
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if noJS {
		if _, err := chromedp.Call(bctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("disabling JavaScript: %v", err)
		}
	}
	return &uiBrowser{t: t, ctx: bctx, base: base}
}

func (b *uiBrowser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := doSteps(b.t, b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *uiBrowser) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return s
}

// text returns the text of sel, looked up again when a reload took the
// node away mid-read (the Index page reloads once its jobs finish, and
// may do so again right after a poll saw the new page).
func (b *uiBrowser) text(sel string) string {
	b.t.Helper()
	for {
		s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
		if err == nil {
			return s
		}
		if b.ctx.Err() != nil || !lostToReload(err) {
			b.t.Fatalf("text of %s: %v", sel, err)
		}
	}
}

func (b *uiBrowser) shot(path string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(path, buf, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", path, err)
	}
}

// ask asks question on a fresh Ask page (the form's button, or with
// JavaScript Enter in the question) and waits for the answer.
func (b *uiBrowser) ask(question string, enter bool) {
	b.t.Helper()
	submit := chromedp.Click(chromedp.CSS(`#ask-form button[type="submit"]`))
	if enter {
		submit = chromedp.SendKeys(chromedp.CSS(`#q`), "\r")
	}
	b.do("asking "+question,
		chromedp.Navigate(b.base+"/ask"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), question),
		submit,
		chromedp.WaitVisible(chromedp.CSS(`.turn .confidence`)),
	)
}

// checkPassage asks question, follows the citation labelled label to the
// passage view and checks that it shows the label, the highlighted
// passage containing mark, scrolled into view, and the original's link.
func (b *uiBrowser) checkPassage(question, label, mark string, enter bool) {
	b.t.Helper()
	b.ask(question, enter)
	js := `[...document.querySelectorAll('.citations li > a:first-child')].map(a => [a.textContent, a.getAttribute('href')])`
	cites, err := chromedp.Run(b.ctx, chromedp.Evaluate[[][]string](js))
	if err != nil {
		b.t.Fatal(err)
	}
	href, n := "", 0
	for i, c := range cites {
		if strings.HasPrefix(c[0], label+" ") || c[0] == label {
			href, n = c[1], i
			break
		}
	}
	// The citation's excerpt is what the answer quotes (an extractive
	// answer, "[1] ..."), and what the passage view highlights.
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	excerpt := norm(b.eval(fmt.Sprintf(`document.querySelectorAll('.citations li blockquote')[%d].textContent`, n)))
	answer := norm(b.text(`.turn .a`))
	extractive := strings.HasPrefix(answer, "[1]")
	if extractive && !strings.Contains(answer, excerpt) {
		b.t.Errorf("%q: citation excerpt %q is not the answer's quote %q", question, excerpt, answer)
	}
	if !strings.HasPrefix(href, "/view?") {
		b.t.Fatalf("%q: no passage-view citation labelled %q in %q", question, label, cites)
	}
	b.do("passage view of "+label,
		chromedp.Navigate(b.base+href),
		chromedp.WaitVisible(chromedp.CSS(`#passage mark`)),
	)
	if h := b.text(`h1`); h != label {
		b.t.Errorf("passage view title %q, want %q", h, label)
	}
	// An extractive answer quotes (and the view highlights) the sentence
	// that answers; a generated one's citation highlights the sentence most
	// like the model's text, in the section that answers.
	shown := `.doc .hit`
	if !extractive {
		shown = `.doc > *`
	}
	if got := b.eval(`[...document.querySelectorAll('` + shown + `')].map(e => e.textContent).join('\n')`); !strings.Contains(got, mark) {
		b.t.Errorf("%s: passage %q lacks %q", label, got, mark)
	}
	if got := norm(b.eval(`[...document.querySelectorAll('.doc mark')].map(e => e.textContent).join(' ')`)); got != strings.TrimSuffix(excerpt, "…") {
		b.t.Errorf("%s: the view highlights %q, the citation quotes %q", label, got, excerpt)
	}
	if in := b.eval(`(() => { const r = document.getElementById('passage').getBoundingClientRect(); return String(r.top >= 0 && r.top < innerHeight); })()`); in != "true" {
		b.t.Errorf("%s: the passage is not scrolled into view", label)
	}
	orig := b.eval(`document.querySelector('.view-meta a').getAttribute('href')`)
	if !strings.HasPrefix(orig, "/files?url=") || (strings.HasSuffix(label, ".pdf") && !strings.Contains(orig, "#page=")) {
		b.t.Errorf("%s: original link %q", label, orig)
	}
}

// pressTabUntil presses Tab until the focused element matches sel.
func (b *uiBrowser) pressTabUntil(sel string) {
	b.t.Helper()
	for range 60 {
		if b.eval(`String(document.activeElement !== null && document.activeElement.matches(`+jsString(sel)+`))`) == "true" {
			return
		}
		if err := chromedp.Do(b.ctx, chromedp.KeyEvent("\t")); err != nil {
			b.t.Fatal(err)
		}
	}
	b.t.Fatalf("Tab never reached %s", sel)
}

// waitTrue polls js until it is true, also while the page reloads (when
// the evaluation fails), for at most 30 seconds.
func (b *uiBrowser) waitTrue(js string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err == nil && v {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never became true (%v)", js, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// poll waits until the JavaScript expression js is true.
func poll(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](js)(ctx, t)
		return chromedp.Void{}, err
	}
}

func jsString(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}

// uiTestFiles writes a file the server refuses (a .pdf that is not one)
// and one larger than the 1 MiB limit of the tests' server.
func uiTestFiles(t *testing.T) (notPDF, tooBig string) {
	dir := t.TempDir()
	notPDF = filepath.Join(dir, "notes.pdf")
	tooBig = filepath.Join(dir, "big.txt")
	if err := os.WriteFile(notPDF, []byte("just some text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tooBig, []byte(strings.Repeat("big text ", 1<<18)), 0o644); err != nil {
		t.Fatal(err)
	}
	return notPDF, tooBig
}

// TestServeBrowserUI drives the web UI with JavaScript and a streaming
// model: refused uploads (in the browser: too large; by the server: not
// a PDF) shown in the upload form, an upload with its progress bar, Stop
// and no double submit while an answer streams, the passage views of an
// HTML, a .docx and a PDF citation, two same-named files told apart, the
// no-match message, keyboard-only ask and feedback, and the 390 px layout.
func TestServeBrowserUI(t *testing.T) {
	model := newServeFakeModel(t)
	model.gate = make(chan struct{})
	ts := newTestServe(t, map[string]string{"LLM_MODEL": "ollama/fake-llm", "OLLAMA_HOST": model.URL}, "", 1<<20)
	ts.indexFixtures(t)
	b := newUIBrowser(t, ts.URL, false)
	shots := t.TempDir()
	if d := os.Getenv("ASKYOURDOCS_TEST_SHOTS"); d != "" {
		shots = d // to look at them after the run
	}
	docs, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "cli", "docs"))
	notPDF, tooBig := uiTestFiles(t)

	// Refused uploads stay on the Index page, the reason in the form.
	b.do("too large upload",
		chromedp.Navigate(ts.URL+"/index"),
		chromedp.WaitVisible(chromedp.CSS(`#files`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#files`), []string{tooBig}),
		chromedp.Click(chromedp.CSS(`#upload-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#upload-form .upload-error`)),
	)
	if e := b.text(`#upload-form .upload-error`); !strings.Contains(e, "at most 1 MiB") {
		t.Errorf("browser-side size check: %q", e)
	}
	b.do("refused upload",
		chromedp.SetUploadFiles(chromedp.CSS(`#files`), []string{notPDF}),
		chromedp.Click(chromedp.CSS(`#upload-form button[type="submit"]`)),
		poll(`document.querySelector('#upload-form .upload-error')?.textContent.includes('not a PDF')`),
	)
	if loc, _ := chromedp.Run(b.ctx, chromedp.Location()); !strings.HasSuffix(loc, "/index") {
		t.Errorf("after a refused upload the page is %s", loc)
	}

	// An upload with progress, its job held until the page showed it.
	release := make(chan struct{})
	ts.s.jobs.HandleKind("hold", func(context.Context, json.RawMessage, func(string)) (any, error) {
		<-release
		return nil, nil
	})
	if _, err := ts.s.jobs.EnqueueInput(context.Background(), "hold", nil); err != nil {
		t.Fatal(err)
	}
	b.do("upload",
		chromedp.SetUploadFiles(chromedp.CSS(`#files`), []string{filepath.Join(docs, "handbook.pdf"), filepath.Join(docs, "faq.docx")}),
		chromedp.Click(chromedp.CSS(`#upload-form button[type="submit"]`)),
		poll(`document.querySelector('.upload-status').textContent.startsWith('Uploaded 2 files')`),
	)
	if p := b.eval(`(() => { const p = document.querySelector('#upload-form progress'); return [p.hidden, p.max, p.value].join(' '); })()`); !strings.HasPrefix(p, "false ") || strings.HasPrefix(p, "false 1 ") {
		t.Errorf("progress bar (hidden max value) %q: no progress event reached it", p)
	}
	if e := b.eval(`String(document.querySelector('#upload-form .upload-error') === null)`); e != "true" {
		t.Errorf("an earlier upload error is still shown")
	}
	close(release)
	// The page reloads when the job is done: poll across the reload.
	b.waitTrue(`document.querySelector('#sources table')?.textContent.includes('faq.docx') === true`)
	if s := b.text(`#sources table`); !strings.Contains(s, "tutorial/venv.html") || !strings.Contains(s, "library/venv.html") {
		t.Errorf("the Index page does not tell the same-named files apart: %q", s)
	}

	// Streaming: Enter again sends nothing; Stop ends the answer.
	b.do("streaming",
		chromedp.Navigate(ts.URL+"/ask"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), "How long before the start can I cancel a booking?"),
		chromedp.SendKeys(chromedp.CSS(`#q`), "\r"),
		poll(`document.querySelector('.streaming')?.textContent.length > 0`),
		chromedp.SendKeys(chromedp.CSS(`#q`), "\r"),
		chromedp.Click(chromedp.CSS(`#ask-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#stop`)),
	)
	model.mu.Lock()
	streams := model.streams
	model.mu.Unlock()
	if n := b.eval(`String(document.querySelectorAll('.turn').length)`); n != "1" || streams != 1 {
		t.Errorf("double submit: %s turns on the page, %d answers streamed", n, streams)
	}
	b.do("stop", chromedp.Click(chromedp.CSS(`#stop`)), chromedp.WaitVisible(chromedp.CSS(`.stopped`)))
	if st := b.eval(`[document.getElementById('stop').hidden, document.getElementById('ask-button').disabled].join(' ')`); st != "true false" {
		t.Errorf("after Stop (stop hidden, ask disabled): %s", st)
	}
	close(model.gate)

	// Passage views and same-named files.
	b.checkPassage("How do I create a virtual environment?", "tutorial/venv.html", "tern env create ./harbor-env", true)
	b.shot(filepath.Join(shots, "view.png"))
	b.checkPassage("What does the symlinks switch of the Builder do?", "library/venv.html", "symlinks switch", true)
	b.checkPassage("Do you rent wetsuits?", "faq.docx", "Wetsuits can be rented", true)
	b.checkPassage("How long before the start can I cancel a booking and still get a full refund?", "handbook.pdf", "48 hours", true)

	// No match.
	b.ask("How do I tune the autovacuum daemon thresholds?", true)
	if s := b.text(`.a.nomatch p`); !strings.HasPrefix(s, `Nothing in the index matches "autovacuum"`) {
		t.Errorf("no-match message %q", s)
	}

	// Keyboard only: Tab to the question, type, Enter; Tab to Helpful,
	// Enter.
	const kq = "How do I activate the environment on Windows?"
	b.do("keyboard: open", chromedp.Navigate(ts.URL+"/ask"), chromedp.WaitVisible(chromedp.CSS(`#q`)))
	b.pressTabUntil(`#q`)
	b.do("keyboard: ask", chromedp.KeyEvent(kq), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`.turn .confidence`)))
	b.pressTabUntil(`button[data-rating="up"]`)
	b.do("keyboard: rate", chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`.feedback .rated`)))
	rated := false
	for _, e := range readFeedbackLog(t, ts) {
		rated = rated || (e.Question == kq && e.Rating == ratingUp)
	}
	if !rated {
		t.Errorf("keyboard rating of %q not in the feedback log", kq)
	}
	if a := b.text(`.turn .a`); !strings.Contains(a, "Windows") {
		t.Errorf("keyboard answer %q", a)
	}

	// Phone width.
	b.ask("How do I create a virtual environment?", true)
	b.do("phone", chromedp.EmulateViewport(390, 844))
	checkNoSideways(t, b.ctx)
	b.shot(filepath.Join(shots, "answer-390.png"))
	if *updateScreenshot {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "serve-phone.png"), mustRead(t, filepath.Join(shots, "answer-390.png")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", shots)
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServeBrowserUIWithoutJavaScript: the same pages with JavaScript
// off: a refused upload shows the Index page with the reason in the form,
// questions go by POST (not in the URL), the passage views of an HTML, a
// .docx and a PDF citation, same-named files told apart, the no-match
// message, and keyboard-only ask and feedback.
func TestServeBrowserUIWithoutJavaScript(t *testing.T) {
	ts := newTestServe(t, nil, "", 1<<20)
	ts.indexFixtures(t)
	b := newUIBrowser(t, ts.URL, true)
	docs, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "cli", "docs"))
	notPDF, _ := uiTestFiles(t)

	b.do("refused upload",
		chromedp.Navigate(ts.URL+"/index"),
		chromedp.WaitVisible(chromedp.CSS(`#files`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#files`), []string{notPDF}),
		chromedp.Click(chromedp.CSS(`#upload-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#upload-form .upload-error`)),
	)
	if e := b.text(`#upload-form .upload-error`); !strings.Contains(e, "not a PDF") {
		t.Errorf("refused upload message %q", e)
	}
	b.do("upload",
		chromedp.SetUploadFiles(chromedp.CSS(`#files`), []string{filepath.Join(docs, "handbook.pdf"), filepath.Join(docs, "faq.docx")}),
		chromedp.Click(chromedp.CSS(`#upload-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`li.job[data-status="done"]`)),
		chromedp.Navigate(ts.URL+"/index"),
		chromedp.WaitVisible(chromedp.CSS(`#sources table`)),
	)
	if s := b.text(`#sources table`); !strings.Contains(s, "tutorial/venv.html") || !strings.Contains(s, "library/venv.html") || !strings.Contains(s, "faq.docx") {
		t.Errorf("sources %q", s)
	}

	b.checkPassage("How do I create a virtual environment?", "tutorial/venv.html", "tern env create ./harbor-env", false)
	b.checkPassage("What does the symlinks switch of the Builder do?", "library/venv.html", "symlinks switch", false)
	b.checkPassage("Do you rent wetsuits?", "faq.docx", "Wetsuits can be rented", false)
	b.checkPassage("How long before the start can I cancel a booking and still get a full refund?", "handbook.pdf", "48 hours", false)

	b.ask("How do I tune the autovacuum daemon thresholds?", false)
	if s := b.text(`.a.nomatch p`); !strings.HasPrefix(s, `Nothing in the index matches "autovacuum"`) {
		t.Errorf("no-match message %q", s)
	}
	if loc, _ := chromedp.Run(b.ctx, chromedp.Location()); strings.Contains(loc, "autovacuum") {
		t.Errorf("the question is in the URL: %s", loc)
	}

	// Keyboard only: Tab to the question, type, Tab to Ask, Enter; Tab to
	// Helpful, Enter.
	const kq = "How do I activate the environment on Windows?"
	b.do("keyboard: open", chromedp.Navigate(ts.URL+"/ask"), chromedp.WaitVisible(chromedp.CSS(`#q`)))
	b.pressTabUntil(`#q`)
	b.do("keyboard: type", chromedp.KeyEvent(kq))
	b.pressTabUntil(`#ask-button`)
	b.do("keyboard: ask", chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`.turn .confidence`)))
	b.pressTabUntil(`button[data-rating="up"]`)
	b.do("keyboard: rate", chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	rated := false
	for _, e := range readFeedbackLog(t, ts) {
		rated = rated || (e.Question == kq && e.Rating == ratingUp)
	}
	if !rated {
		t.Errorf("keyboard rating of %q not in the feedback log", kq)
	}
}
