package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPInspector checks 'askyourdocs mcp' with the official MCP
// inspector CLI (npm package @modelcontextprotocol/inspector-cli), the
// client MCP users debug their servers with. It needs no network once the
// package is installed, and runs when ASKYOURDOCS_MCP_INSPECTOR names the
// installed package's folder:
//
//	npm install --prefix /tmp/insp @modelcontextprotocol/inspector-cli@1.0.3
//	ASKYOURDOCS_MCP_INSPECTOR=/tmp/insp/node_modules/@modelcontextprotocol/inspector-cli \
//	  go test -run TestMCPInspector ./cmd/askyourdocs
func TestMCPInspector(t *testing.T) {
	pkg := os.Getenv("ASKYOURDOCS_MCP_INSPECTOR")
	if pkg == "" {
		t.Skip("ASKYOURDOCS_MCP_INSPECTOR is not set (the folder of an installed @modelcontextprotocol/inspector-cli)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	bin := buildCLI(t)
	work := t.TempDir()
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, absPath(t, "../../testdata/cli/docs")); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	inspect := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(pkg, "build", "index.js"), bin, "mcp", "--data", data}, args...)...)
		// The inspector reads its own package.json relative to the working
		// directory.
		cmd.Dir = filepath.Join(pkg, "build")
		cmd.Env = cliEnv()
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %q: %v\n%s\n%s", args, err, so.String(), se.String())
		}
		var out map[string]any
		if err := json.Unmarshal(so.Bytes(), &out); err != nil {
			t.Fatalf("inspector %q: %v\n%s", args, err, so.String())
		}
		return out
	}

	// Every tool and every input field is described; search_docs' mode
	// lists its values.
	list := inspect("--method", "tools/list")
	tools, _ := list["tools"].([]any)
	if len(tools) != 3 {
		t.Fatalf("tools/list: %v", list)
	}
	for _, tl := range tools {
		tool := tl.(map[string]any)
		if desc, _ := tool["description"].(string); len(desc) < 60 {
			t.Errorf("tool %v: description %q", tool["name"], desc)
		}
		schema, _ := tool["inputSchema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if desc, _ := p.(map[string]any)["description"].(string); len(desc) < 30 {
				t.Errorf("%v.%s: description %q", tool["name"], name, desc)
			}
		}
		if tool["name"] == "search_docs" {
			mode, _ := props["mode"].(map[string]any)
			if b, _ := json.Marshal(mode["enum"]); string(b) != `["fusion","vector","keyword"]` {
				t.Errorf("search_docs mode enum %s", b)
			}
		}
	}

	// A call: readable text plus structured content.
	res := inspect("--method", "tools/call", "--tool-name", "search_docs", "--tool-arg", "query=wetsuit rental", "--tool-arg", "k=2")
	content, _ := res["content"].([]any)
	structured, _ := res["structuredContent"].(map[string]any)
	results, _ := structured["results"].([]any)
	if len(content) != 1 || len(results) != 2 {
		t.Fatalf("search_docs: %v", res)
	}
	if text, _ := content[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, "2 passages for \"wetsuit rental\":") ||
		!strings.Contains(text, "[1] docs/faq.docx, p. 1") {
		t.Errorf("search_docs text: %q", text)
	}
	res = inspect("--method", "tools/call", "--tool-name", "ask_docs", "--tool-arg", "question=What is the minimum age for a single kayak?")
	content, _ = res["content"].([]any)
	structured, _ = res["structuredContent"].(map[string]any)
	if text, _ := content[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, "[1] ") || !strings.Contains(text, "12 years") ||
		structured["mode"] != answerExtractive || structured["confidence"] == "" {
		t.Errorf("ask_docs: %v", res)
	}
}
