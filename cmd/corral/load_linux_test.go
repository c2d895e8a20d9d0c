package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
)

// memoryBound is the most the service may hold resident with 100 event
// streams and 10 listings whose clients stopped reading (docs/service.md).
const memoryBound = 128 << 20

// stuckGET sends a GET to the service over a connection with a tiny
// receive buffer and never reads the answer, as a frozen client would.
func stuckGET(t *testing.T, s *served, path string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, s.addr, s.token)
	return conn
}

// writeLog writes a finished run's log of n output records of size bytes
// each, between its start and its end.
func writeLog(t *testing.T, path string, n, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	now := time.Now().UTC()
	rec := func(seq int, stream, text string) {
		b, _ := json.Marshal(runlogRecord{Seq: seq, Time: now, Stream: stream, Text: text})
		w.Write(append(b, '\n'))
	}
	rec(1, "system", "started")
	line := strings.Repeat("x", size)
	for i := range n {
		rec(i+2, "stdout", line)
	}
	rec(n+2, "system", "ended: succeeded")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// runlogRecord is a record of a run's log (service.LogRecord).
type runlogRecord struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

func openFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}

// TestServeMemoryStaysBoundedWithStuckReaders follows a 65 MB log with
// 100 event streams and lists 100 executions of 64 KiB records with 10
// listings, none of whose clients reads: the service stays under
// memoryBound, keeps answering others, and drops the stuck clients after
// its write timeout.
func TestServeMemoryStaysBoundedWithStuckReaders(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	createAgent(t, s.c, &client.Agent{Name: "big"})
	createAgent(t, s.c, &client.Agent{Name: "many", MaxParallelTasks: 8, Overflow: corral.OverflowQueue, MaxBacklog: 500})
	big, err := s.c.Submit(bg, "big", "echo small", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Records each with 64 KiB of output: 100 would make a 13 MB listing
	// of whole records.
	var ids []string
	for range 100 {
		e, err := s.c.Submit(bg, "many", `head -c 70000 /dev/zero | tr '\0' y`, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if e := waitTerminal(t, s.c, big.ID, time.Minute); e.Status != corral.StatusSucceeded {
		t.Fatalf("the run: %s", e.Status)
	}
	// Its log as a run printing 65 MB leaves it (printing it for real
	// spends minutes redacting it on a loaded machine).
	writeLog(t, filepath.Join(s.data, "logs", big.ID+".jsonl"), 6500, 10000)
	// Every one of them, not only the last submitted: eight run at once,
	// and a run still ending holds descriptors that would be counted below
	// as the service's own, and then go.
	for _, id := range ids {
		waitTerminal(t, s.c, id, 5*time.Minute)
	}
	before := openFDs(s.pid())
	rss, _ := procfs.Memory(s.pid(), "VmRSS")
	hwm0, _ := procfs.Memory(s.pid(), "VmHWM")
	t.Logf("service resident memory before: %d MiB (peak so far %d MiB)", rss>>20, hwm0>>20)
	for range 100 {
		stuckGET(t, s, "/v1/executions/"+big.ID+"/events")
	}
	for range 10 {
		stuckGET(t, s, "/v1/executions?limit=1000")
	}
	// Let the service write until every socket is full, and more.
	testutil.WaitFor(t, 60*time.Second, "the stuck clients connected", func() bool { return openFDs(s.pid()) >= before+110 })
	time.Sleep(5 * time.Second)
	if err := s.c.Health(bg); err != nil {
		t.Fatalf("the service stopped answering: %v", err)
	}
	if list, _, err := s.c.Executions(bg, client.ListOptions{Agent: "many", Limit: 1000}); err != nil || len(list) != 100 || list[0].Stdout != "" || !list[0].Summary {
		t.Fatalf("a reading client's listing: %d summaries, %v", len(list), err)
	}
	hwm, err := procfs.Memory(s.pid(), "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("service peak resident memory with 100 stuck event streams and 10 stuck listings: %d MiB (bound %d MiB)", hwm>>20, memoryBound>>20)
	if hwm > memoryBound {
		t.Fatalf("peak resident memory %d MiB, over %d MiB", hwm>>20, memoryBound>>20)
	}
	// Past the write timeout, the service has dropped the event streams.
	// (The listings fit in the kernel's socket buffers: their requests
	// are done, their idle connections closed after the idle timeout; so
	// are this test's own client's.)
	n := 0
	testutil.WaitFor(t, 90*time.Second, "the stuck event streams dropped", func() bool {
		n = openFDs(s.pid())
		return n <= before+15
	})
	t.Logf("descriptors: %d before the stuck clients, %d with them, %d once the streams were dropped", before, before+110, n)
}
