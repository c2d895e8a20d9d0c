package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/shell"
)

// LogsResult is execution_logs' output.
type LogsResult struct {
	ID       string          `json:"id"`
	Status   string          `json:"status"`
	Finished bool            `json:"finished" jsonschema:"the run is over: nothing more will be logged here"`
	Records  []LogRecordView `json:"records"`
	Omitted  int             `json:"omitted,omitempty" jsonschema:"earlier records (after the after asked for) that are not shown"`
	LastSeq  int             `json:"last_seq,omitempty" jsonschema:"the seq of the last record: pass it as after to read on"`
	Notes    []string        `json:"notes,omitempty"`
}

// LogRecordView is one record of an execution's log.
type LogRecordView struct {
	Seq    int    `json:"seq"`
	Stream string `json:"stream" jsonschema:"stdout, stderr, event (a line of a headless agent's stream) or system (corral's notes)"`
	Text   string `json:"text"`
}

// Bounds of execution_logs' tail.
const (
	defaultTail = 50
	maxTail     = 1000
)

func (s *Server) executionLogs(ctx context.Context, _ *mcp.CallToolRequest, in LogsInput) (*mcp.CallToolResult, *LogsResult, error) {
	if in.Tail < 0 || in.After < 0 || in.MaxOutputChars < 0 {
		return nil, nil, errors.New("tail, after and max_output_chars must not be negative")
	}
	if err := checkID(in.ID); err != nil {
		return nil, nil, err
	}
	budget, notes := s.svc.chars(in.MaxOutputChars)
	tail := defaultTail
	if in.Tail > 0 {
		tail = int(min(in.Tail, maxTail))
	}
	if in.Tail > maxTail {
		notes = append(notes, fmt.Sprintf("tail %d is above the maximum; %d was used", in.Tail, maxTail))
	}
	t := newTailer(tail, budget)
	// The replay reads the whole log after `after`; the call's deadline
	// bounds it, the tailer what is kept of it.
	cctx, cancel := s.svc.call(ctx)
	defer cancel()
	e, err := s.svc.Client.Follow(cctx, in.ID, int(min(in.After, pastTheLog)), false, func(ev client.Event) error {
		if ev.Record != nil {
			t.add(ev.Record)
		}
		return nil
	})
	if err != nil {
		return nil, nil, serviceError("execution_logs", in.ID, err)
	}
	r := &LogsResult{ID: e.ID, Status: string(e.Status), Finished: runFinished(e), Records: t.records(), Omitted: t.dropped, LastSeq: t.lastSeq}
	if r.LastSeq == 0 {
		r.LastSeq = int(in.After)
	}
	if t.dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d earlier records are not shown (tail %d, %d characters): pass a larger tail or max_output_chars, or an after to read from", t.dropped, tail, budget))
	}
	r.Notes = append(notes, stateNotes(e)...)
	return nil, r, nil
}

// tailer keeps the last records of a log within a count and a character
// budget, as they stream by; what it holds never exceeds either bound by
// more than the record that arrived last.
type tailer struct {
	max, budget int
	ring        []LogRecordView // oldest first
	chars       int
	dropped     int
	lastSeq     int
}

func newTailer(max, budget int) *tailer { return &tailer{max: max, budget: budget} }

func (t *tailer) add(r *client.LogRecord) {
	text := shell.CleanForModel(r.Text)
	if n := utf8.RuneCountInString(text); n > t.budget {
		text, _ = shell.ClipForModel(text, t.budget)
	}
	t.ring = append(t.ring, LogRecordView{Seq: r.Seq, Stream: r.Stream, Text: text})
	t.chars += utf8.RuneCountInString(text)
	t.lastSeq = r.Seq
	for len(t.ring) > 1 && (len(t.ring) > t.max || t.chars > t.budget) {
		t.chars -= utf8.RuneCountInString(t.ring[0].Text)
		t.ring[0] = LogRecordView{}
		t.ring = t.ring[1:]
		t.dropped++
	}
}

func (t *tailer) records() []LogRecordView {
	if t.ring == nil {
		return []LogRecordView{}
	}
	return t.ring
}
