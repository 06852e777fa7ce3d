package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPModeRequested reports whether the program was started with a -mcp or
// --mcp argument (also -mcp=true), the usual way an app offers "run as an
// MCP server over stdio instead of the HTTP server". Arguments after "--"
// do not count.
func MCPModeRequested() bool {
	return mcpModeIn(os.Args[1:])
}

func mcpModeIn(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-mcp", "--mcp", "-mcp=true", "--mcp=true", "-mcp=1", "--mcp=1":
			return true
		}
	}
	return false
}

// JSONToolHandler adapts run to a Genkit tool function whose result is run's
// output encoded as JSON, for tools served over MCP: a client receives
// valid JSON text instead of Go's %v rendering of a struct. Define the tool
// with genkit.DefineTool(g, name, description, JSONToolHandler(run)). An
// error from run, or from encoding its output, is the tool's error.
func JSONToolHandler[In, Out any](run func(ctx context.Context, input In) (Out, error)) func(*ai.ToolContext, In) (string, error) {
	return func(tc *ai.ToolContext, input In) (string, error) {
		var ctx context.Context = context.Background()
		if tc != nil && tc.Context != nil {
			ctx = tc
		}
		out, err := run(ctx, input)
		if err != nil {
			return "", err
		}
		data, err := json.Marshal(out)
		if err != nil {
			return "", fmt.Errorf("encode tool result as JSON: %w", err)
		}
		return string(data), nil
	}
}

// MCPToolResult is a tool output that ServeMCPStdio sends as an MCP tool
// result with two faces: Text, readable by a person or an LLM (an answer
// with its citations, say), as the text content, and StructuredContent, a
// JSON object for programs, as the result's structuredContent. Define such
// a tool with StructuredToolHandler.
type MCPToolResult struct {
	Text              string `json:"mcpText"`
	StructuredContent any    `json:"mcpStructuredContent"`
}

// StructuredToolHandler adapts run to a Genkit tool function whose result,
// served over MCP, is text(out) as readable text plus out as structured
// content (see MCPToolResult). out should encode as a JSON object, as MCP
// requires of structured content. An error from run is the tool's error.
func StructuredToolHandler[In, Out any](run func(ctx context.Context, input In) (Out, error), text func(Out) string) func(*ai.ToolContext, In) (MCPToolResult, error) {
	return func(tc *ai.ToolContext, input In) (MCPToolResult, error) {
		var ctx context.Context = context.Background()
		if tc != nil && tc.Context != nil {
			ctx = tc
		}
		out, err := run(ctx, input)
		if err != nil {
			return MCPToolResult{}, err
		}
		return MCPToolResult{Text: text(out), StructuredContent: out}, nil
	}
}

// asMCPToolResult recognises an MCPToolResult in a tool's output after
// Genkit's JSON round trip (a map with exactly its two keys).
func asMCPToolResult(v any) (MCPToolResult, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return MCPToolResult{}, false
	}
	text, ok := m["mcpText"].(string)
	sc, has := m["mcpStructuredContent"]
	if !ok || !has {
		return MCPToolResult{}, false
	}
	return MCPToolResult{Text: text, StructuredContent: sc}, true
}

// ServeMCPStdio serves every tool registered on g as an MCP server over
// stdin and stdout until the client disconnects: ServeMCP with a context
// that never ends.
//
// Deprecated: Use ServeMCP(ctx, g, name, version), the same server, which
// also stops when ctx ends (a signal, say).
func ServeMCPStdio(g *genkit.Genkit, name, version string) error {
	return ServeMCP(context.Background(), g, name, version)
}

// ServeMCP serves every tool registered on g with genkit.DefineTool
// as an MCP server named name and version over stdin and stdout, and
// blocks until the client disconnects (closes stdin) and every request
// read before has been answered; that ends it with a nil error. When ctx
// ends first, it closes the session and returns an error wrapping ctx's
// error. Nothing else may write to stdout meanwhile: log to stderr.
//
// Each tool keeps its name, description and complete JSON input schema. A
// tool whose input is not a JSON object (a string, say) is offered with an
// object schema holding the input as its one property "input". A call with
// arguments that do not match the schema is answered with a JSON-RPC
// "invalid params" error; an error from the tool itself becomes a tool
// result with isError set, as MCP asks, and the server keeps serving.
// Results that are not strings are encoded as JSON, except an
// MCPToolResult (see StructuredToolHandler), which becomes readable text
// plus structured content.
func ServeMCP(ctx context.Context, g *genkit.Genkit, name, version string) error {
	err := serveMCP(ctx, g, name, version, &drainingTransport{r: os.Stdin, w: os.Stdout})
	if err != nil {
		return fmt.Errorf("serve MCP over stdio: %w", err)
	}
	return nil
}

// serveMCP serves g's tools over transport until the client disconnects or
// ctx ends.
func serveMCP(ctx context.Context, g *genkit.Genkit, name, version string, transport mcp.Transport) error {
	server, err := newMCPServer(g, name, version)
	if err != nil {
		return err
	}
	return server.Run(ctx, transport)
}

// newMCPServer builds an MCP server offering g's tools.
func newMCPServer(g *genkit.Genkit, name, version string) (*mcp.Server, error) {
	if g == nil {
		return nil, errors.New("nil *genkit.Genkit")
	}
	if name == "" {
		name = "askyourdocs"
	}
	if version == "" {
		version = "1.0.0"
	}
	server := mcp.NewServer(&mcp.Implementation{Name: name, Version: version}, nil)
	for _, tool := range genkit.ListTools(g) {
		def := tool.Definition()
		if def == nil {
			continue
		}
		schema, wrapped := mcpInputSchema(def.InputSchema)
		server.AddTool(&mcp.Tool{
			Name:        def.Name,
			Description: def.Description,
			InputSchema: schema,
		}, mcpToolHandler(tool, wrapped))
	}
	slog.Debug("MCP server ready", "name", name, "version", version)
	return server, nil
}

// mcpInputSchema returns the MCP input schema for a Genkit tool input
// schema, and whether the input is wrapped in an "input" property because
// MCP requires an object schema.
func mcpInputSchema(s map[string]any) (map[string]any, bool) {
	if len(s) == 0 {
		return map[string]any{"type": "object"}, false
	}
	if t, _ := s["type"].(string); t == "object" {
		return s, false
	}
	inner := make(map[string]any, len(s))
	var defs any
	for k, v := range s {
		if k == "$defs" || k == "definitions" || k == "$schema" {
			if k != "$schema" {
				defs = v
			}
			continue
		}
		inner[k] = v
	}
	wrapped := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"input": inner},
		"required":             []any{"input"},
		"additionalProperties": false,
	}
	if defs != nil {
		wrapped["$defs"] = defs
	}
	return wrapped, true
}

// mcpToolHandler runs a Genkit tool for an MCP tools/call request.
func mcpToolHandler(tool ai.Tool, wrapped bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := json.RawMessage(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		var input any = args
		if wrapped {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(args, &obj); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %s: arguments are not a JSON object: %v", tool.Name(), err)}
			}
			in, ok := obj["input"]
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %s: missing argument \"input\"", tool.Name())}
			}
			input = in
		}
		out, err := tool.RunRaw(ctx, input)
		if err != nil {
			var gerr *core.GenkitError
			if errors.As(err, &gerr) && gerr.Status == core.INVALID_ARGUMENT {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %s: invalid arguments: %s", tool.Name(), gerr.Message)}
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		if r, ok := asMCPToolResult(out); ok {
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}}
			if _, isObj := r.StructuredContent.(map[string]any); isObj {
				res.StructuredContent = r.StructuredContent
			}
			return res, nil
		}
		var text string
		switch v := out.(type) {
		case nil:
		case string:
			text = v
		default:
			data, err := json.Marshal(v)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("encode result of tool %s: %v", tool.Name(), err)}}}, nil
			}
			text = string(data)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}
