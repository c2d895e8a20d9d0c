package storetest

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// slotLogDDL is a log of every change to corral_slots, written by a
// trigger in the changing transaction: it commits, and rolls back, with
// the change. Every change to an agent's slots happens under that
// agent's row lock (admission, promotion, release), which orders the
// transactions changing them; so the log's sequence numbers, taken
// under the lock, order an agent's takes and releases as they happened.
const slotLogDDL = `
CREATE TABLE IF NOT EXISTS corral_test_slot_log (
    seq          bigserial PRIMARY KEY,
    op           text NOT NULL,
    agent        text NOT NULL,
    slot_no      integer NOT NULL,
    execution_id text NOT NULL
);
CREATE OR REPLACE FUNCTION corral_test_slot_logged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO corral_test_slot_log (op, agent, slot_no, execution_id) VALUES ('take', NEW.agent, NEW.slot_no, NEW.execution_id);
    ELSE
        INSERT INTO corral_test_slot_log (op, agent, slot_no, execution_id) VALUES ('release', OLD.agent, OLD.slot_no, OLD.execution_id);
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS corral_test_slot_log ON corral_slots;
CREATE TRIGGER corral_test_slot_log AFTER INSERT OR DELETE ON corral_slots
    FOR EACH ROW EXECUTE FUNCTION corral_test_slot_logged();`

// LogSlots has the PostgreSQL database of conn, whose schema a store
// has made, log every slot taken and released from now on, for
// CheckSlots. It is for tests and benchmarks, on their own databases.
func LogSlots(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, slotLogDDL); err != nil {
		return fmt.Errorf("slot log: %w", err)
	}
	return nil
}

// SlotReplay is what the slot log says of a run.
type SlotReplay struct {
	// Takes and Releases count the log's entries.
	Takes, Releases int
	// MostHeld is the most slots one agent held at once, MostAllowed
	// that agent's max_parallel_tasks.
	MostHeld, MostAllowed int
	// Problems are the log's entries that break the rules: a slot taken
	// while held, an agent holding more slots than it has or a slot
	// numbered beyond them, a slot released that was not held, an
	// execution holding two slots (the first 5). Empty when none does.
	Problems []string
	// Bad counts the entries that break a rule.
	Bad int
}

// CheckSlots replays the slot log of LogSlots, agent by agent in the
// order of its changes, against each agent's max_parallel_tasks.
func CheckSlots(ctx context.Context, conn *pgx.Conn) (SlotReplay, error) {
	var r SlotReplay
	caps := map[string]int{}
	rows, err := conn.Query(ctx, `SELECT name, (doc->>'max_parallel_tasks')::int FROM corral_agents`)
	if err != nil {
		return r, err
	}
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return r, err
		}
		caps[name] = n
	}
	if err := rows.Err(); err != nil {
		return r, err
	}
	rows, err = conn.Query(ctx, `SELECT seq, op, agent, slot_no, execution_id FROM corral_test_slot_log ORDER BY agent, seq`)
	if err != nil {
		return r, err
	}
	defer rows.Close()
	type agentSlots struct {
		held map[int]string // slot number → execution
		by   map[string]int // execution → slot number
	}
	agents := map[string]*agentSlots{}
	for rows.Next() {
		var seq int64
		var op, agent, exec string
		var no int
		if err := rows.Scan(&seq, &op, &agent, &no, &exec); err != nil {
			return r, err
		}
		a := agents[agent]
		if a == nil {
			a = &agentSlots{held: map[int]string{}, by: map[string]int{}}
			agents[agent] = a
		}
		r.replay(a.held, a.by, seq, op, agent, no, exec, caps[agent])
	}
	return r, rows.Err()
}

// replay applies one log entry to an agent's held slots.
func (r *SlotReplay) replay(held map[int]string, by map[string]int, seq int64, op, agent string, no int, exec string, allowed int) {
	bad := func(format string, args ...any) {
		r.Bad++
		if len(r.Problems) < 5 {
			r.Problems = append(r.Problems, fmt.Sprintf("#%d %s slot %d of %s by %s: ", seq, op, no, agent, exec)+fmt.Sprintf(format, args...))
		}
	}
	switch op {
	case "take":
		r.Takes++
		if other, ok := held[no]; ok {
			bad("held by %s already", other)
		}
		if other, ok := by[exec]; ok {
			bad("which holds slot %d already", other)
		}
		if no < 1 || no > allowed {
			bad("beyond the agent's %d slots", allowed)
		}
		held[no], by[exec] = exec, no
		if len(held) > allowed {
			bad("%d slots held of %d", len(held), allowed)
		}
		if len(held) > r.MostHeld {
			r.MostHeld, r.MostAllowed = len(held), allowed
		}
	case "release":
		r.Releases++
		if held[no] != exec {
			bad("not held by it (held by %q)", held[no])
			return
		}
		delete(held, no)
		delete(by, exec)
	}
}

// Overbooked says what the replay found wrong, or "".
func (r SlotReplay) Overbooked() string {
	if r.Bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d entries of the slot log break the rules, first: %s", r.Bad, strings.Join(r.Problems, "; "))
}
