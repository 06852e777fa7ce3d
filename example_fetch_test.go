package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Fetch a page with a deadline of your own, and branch on the HTTP status
// of a failed fetch with errors.As instead of matching the message.
func ExampleFetcher_FetchWebPage() {
	// The example site runs on 127.0.0.1, which the address guard refuses:
	// this Fetcher (and only this one) may reach private targets.
	fetcher := askyourdocs.NewFetcher(&askyourdocs.FetcherOptions{AllowPrivateTargets: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<h1>Welcome</h1>")
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	page, err := fetcher.FetchWebPage(ctx, srv.URL+"/")
	fmt.Println(page, err)

	_, err = fetcher.FetchWebPage(ctx, srv.URL+"/old-page")
	var status *askyourdocs.HTTPStatusError
	if errors.As(err, &status) && status.StatusCode == http.StatusNotFound {
		fmt.Println("gone:", status.StatusCode, status.URL == srv.URL+"/old-page")
	}
	// Output:
	// <h1>Welcome</h1> <nil>
	// gone: 404 true
}
