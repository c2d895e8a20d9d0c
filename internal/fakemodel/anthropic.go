package fakemodel

import (
	"encoding/json"
	"fmt"
)

// anthropic writes a streamed Messages API reply.
func (st *stream) anthropic() {
	rep, req := st.rep, st.req
	if rep.Garbage {
		st.garbage()
		return
	}
	u := rep.Usage.orDefault()
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	st.start()
	st.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_fake_%02d_%d", req.Step, req.Attempt), "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "output_tokens": 1,
			"cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead},
	}})
	st.event("ping", `{"type": "ping"}`)
	i := 0
	if rep.Text != "" {
		st.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "text", "text": ""}})
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "text_delta", "text": rep.Text}})
		if rep.Hang {
			st.hang()
			return
		}
		st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	if rep.Hang {
		st.hang()
		return
	}
	if rep.Fail != "" {
		e := failureOf(Anthropic, rep.Fail, req.Model)
		st.event("error", e.body(Anthropic))
		return
	}
	for n, c := range rep.Calls {
		st.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": callID(Anthropic, req.Step, n), "name": c.Name, "input": map[string]any{}}})
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": inputJSON(c.Input)}})
		st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	st.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	st.event("message_stop", `{"type":"message_stop"}`)
}

// anthropicMessage writes a Messages API reply that was asked for
// without streaming: one JSON message.
func (st *stream) anthropicMessage() {
	rep, req := st.rep, st.req
	if rep.Garbage {
		st.garbage()
		return
	}
	if rep.Hang {
		st.hang()
		return
	}
	u := rep.Usage.orDefault()
	var content []any
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	for n, c := range rep.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": callID(Anthropic, req.Step, n), "name": c.Name, "input": json.RawMessage(inputJSON(c.Input))})
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	st.w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(st.w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_fake_%02d_%d", req.Step, req.Attempt), "type": "message", "role": "assistant",
		"model": req.Model, "content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "output_tokens": u.Output,
			"cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead},
	})
}
