package fakemodel

import "fmt"

// openai writes a streamed Responses API reply.
func (st *stream) openai() {
	rep, req := st.rep, st.req
	if rep.Garbage {
		st.garbage()
		return
	}
	u := rep.Usage.orDefault()
	model := req.Model
	if model == "" {
		model = "gpt-fake"
	}
	id := fmt.Sprintf("resp_fake_%02d_%d", req.Step, req.Attempt)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		st.event(typ, fields)
	}
	response := func(status string, output []any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": req.Time.Unix(), "status": status,
			"model": model, "output": output}
	}
	st.start()
	ev("response.created", map[string]any{"response": response("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": response("in_progress", []any{})})
	var output []any
	idx := 0
	if rep.Text != "" {
		mid := fmt.Sprintf("msg_fake_%02d", req.Step)
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{
			"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": mid, "output_index": idx, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"item_id": mid, "output_index": idx, "content_index": 0, "delta": rep.Text})
		if rep.Hang {
			st.hang()
			return
		}
		part := map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}
		ev("response.output_text.done", map[string]any{"item_id": mid, "output_index": idx, "content_index": 0, "text": rep.Text})
		ev("response.content_part.done", map[string]any{"item_id": mid, "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"id": mid, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	if rep.Hang {
		st.hang()
		return
	}
	if rep.Fail != "" {
		e := failureOf(OpenAI, rep.Fail, req.Model)
		r := response("failed", output)
		code := e.code
		if code == "" {
			code = e.typ
		}
		r["error"] = map[string]any{"code": code, "message": e.message}
		ev("response.failed", map[string]any{"response": r})
		return
	}
	for n, c := range rep.Calls {
		item := map[string]any{"id": fmt.Sprintf("fc_fake_%02d_%d", req.Step, n), "type": "function_call", "status": "completed",
			"call_id": callID(OpenAI, req.Step, n), "name": c.Name, "arguments": inputJSON(c.Input)}
		if c.Namespace != "" {
			item["namespace"] = c.Namespace
		}
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"], added["arguments"] = "in_progress", ""
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": idx, "delta": item["arguments"]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": idx, "arguments": item["arguments"]})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	done := response("completed", output)
	done["usage"] = map[string]any{
		"input_tokens":          u.Input + u.CacheRead,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead, "cache_write_tokens": u.CacheWrite},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.Input + u.CacheRead + u.Output,
	}
	ev("response.completed", map[string]any{"response": done})
}
