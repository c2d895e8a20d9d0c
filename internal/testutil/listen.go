package testutil

import (
	"bufio"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// ListenCounting listens on network/addr (a TCP address, a Unix socket's
// path), counts in n the connections it accepts and answers each with
// its first line; it returns the address. The listener closes when the
// test ends.
func ListenCounting(t testing.TB, network, addr string, n *atomic.Int32) string {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, line)
			}()
		}
	}()
	return l.Addr().String()
}
