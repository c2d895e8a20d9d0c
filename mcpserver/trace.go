package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
)

// tracer starts the MCP server's spans, from the provider
// proc.SetTracerProvider describes.
var tracer = tracing.Tracer{Scope: "github.com/corralrun/corral/mcpserver"}

// traceCalls is the outermost receiving middleware: each tool call is a
// server span "tools/call TOOL", following the OpenTelemetry semantic
// conventions for MCP, under the trace context the client sent (the
// request's _meta traceparent, or the HTTP request's traceparent header)
// or else under the span of the server's context. The shell command the
// call runs is its child. Arguments and results are recorded only when
// content was asked for (tracing.WithContent), redacted.
func traceCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		ctx = callParent(ctx, call)
		ctx, span := tracer.Start(ctx, "tools/call "+call.Params.Name, trace.WithSpanKind(trace.SpanKindServer))
		if !span.IsRecording() {
			return next(ctx, method, req)
		}
		attrs := []attribute.KeyValue{
			attribute.String("mcp.method.name", method),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", call.Params.Name),
		}
		if call.Session != nil && call.Session.ID() != "" {
			attrs = append(attrs, attribute.String("mcp.session.id", call.Session.ID()))
		}
		if a, ok := tracing.Content(ctx, string(call.Params.Arguments)); ok {
			attrs = append(attrs, attribute.String("gen_ai.tool.call.arguments", a))
		}
		span.SetAttributes(attrs...)
		res, err := next(ctx, method, req)
		endCall(ctx, span, res, err)
		return res, err
	}
}

// callParent is ctx under the trace context the client sent with the
// call, if any.
func callParent(ctx context.Context, call *mcp.CallToolRequest) context.Context {
	meta := call.Params.GetMeta()
	if tp, _ := meta["traceparent"].(string); tp != "" {
		ts, _ := meta["tracestate"].(string)
		return tracing.FromHeader(ctx, tp, ts)
	}
	if ex := call.GetExtra(); ex != nil && ex.Header != nil {
		if tp := ex.Header.Get("traceparent"); tp != "" {
			return tracing.FromHeader(ctx, tp, ex.Header.Get("tracestate"))
		}
	}
	return ctx
}

func endCall(ctx context.Context, span trace.Span, res mcp.Result, err error) {
	defer span.End()
	if err != nil {
		span.RecordError(err)
		span.SetAttributes(attribute.String("error.type", "jsonrpc_error"))
		span.SetStatus(codes.Error, err.Error())
		return
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil {
		return
	}
	if tracing.Recording(ctx) {
		if b, err := json.Marshal(r.StructuredContent); err == nil && r.StructuredContent != nil {
			c, _ := tracing.Content(ctx, string(b))
			span.SetAttributes(attribute.String("gen_ai.tool.call.result", c))
		}
	}
	if r.IsError {
		span.SetAttributes(attribute.String("error.type", "tool_error"))
		span.SetStatus(codes.Error, "the tool call's result is an error")
	}
}
