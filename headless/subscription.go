package headless

import "sync/atomic"

// Subscription delivers a turn's events on a channel.
type Subscription struct {
	// C receives the events published after Subscribe, in order. It is
	// closed at the end of the turn or by Close.
	C <-chan Event

	c       chan Event
	t       *Turn
	dropped atomic.Int64
	closed  bool // guarded by t.pubMu
}

// Subscribe returns a subscription to the turn's events with a channel of
// the given buffer (at least 1). Publishing never blocks the stream: an
// event that finds the buffer full is dropped and counted in Dropped and
// in Result.EventsDropped. Events before the call are not replayed (use
// Spec.OnEvent to see every event).
func (t *Turn) Subscribe(buffer int) *Subscription {
	c := make(chan Event, max(buffer, 1))
	s := &Subscription{C: c, c: c, t: t}
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if t.pubClosed {
		close(c)
		s.closed = true
		return s
	}
	t.subs = append(t.subs, s)
	return s
}

// Dropped returns how many events did not fit in the buffer.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close ends the subscription and closes C.
func (s *Subscription) Close() {
	t := s.t
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.c)
	for i, x := range t.subs {
		if x == s {
			t.subs = append(t.subs[:i], t.subs[i+1:]...)
			break
		}
	}
}

// publish hands events to OnEvent and the subscribers, unless the turn has
// ended.
func (t *Turn) publish(evs []Event) {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if t.pubClosed {
		return
	}
	var dropped int64
	for i := range evs {
		e := &evs[i]
		if t.spec.OnEvent != nil {
			t.spec.OnEvent(*e)
		}
		for _, s := range t.subs {
			select {
			case s.c <- *e:
			default:
				s.dropped.Add(1)
				dropped++
			}
		}
	}
	t.dropped.Add(dropped)
}

func (t *Turn) closePublishing() {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	t.pubClosed = true
	for _, s := range t.subs {
		if !s.closed {
			s.closed = true
			close(s.c)
		}
	}
	t.subs = nil
}
