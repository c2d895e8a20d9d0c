package testutil

import (
	"os"
	"strings"
	"testing"
)

// NetnsProbe is a shell script for a sandboxed command under network
// none: it prints the command's network namespace and the interfaces it
// and each thread of its init (pid 1) show. AssertOwnNetns reads its
// output.
const NetnsProbe = `echo "netns $(readlink /proc/self/ns/net)"
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sed 's/^/interface /'
for f in /proc/1/task/*/net/dev; do tail -n +3 "$f" | cut -d: -f1 | tr -d ' ' | sed 's/^/init-thread-interface /'; done
`

// AssertOwnNetns fails t unless out, the output of NetnsProbe (among
// other lines), shows a command in a network namespace other than this
// process's, with lo alone, and every thread of its init showing lo
// alone: none shows the command the host's interfaces through
// /proc/1/task/*/net, which any process that sees pid 1 may read.
func AssertOwnNetns(t testing.TB, out string) {
	t.Helper()
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	var netns string
	var ifaces []string
	threads := 0
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "netns "); ok {
			netns = v
		}
		if v, ok := strings.CutPrefix(line, "interface "); ok {
			ifaces = append(ifaces, v)
		}
		if v, ok := strings.CutPrefix(line, "init-thread-interface "); ok {
			if v != "lo" {
				t.Fatalf("a thread of the sandbox's init shows the host's interface %s:\n%s", v, out)
			}
			threads++
		}
	}
	if !strings.HasPrefix(netns, "net:[") || netns == own {
		t.Fatalf("the command is not in a network namespace of its own (corral's is %s):\n%s", own, out)
	}
	if len(ifaces) != 1 || ifaces[0] != "lo" {
		t.Fatalf("the command's network namespace has other interfaces than lo (%v):\n%s", ifaces, out)
	}
	if threads == 0 {
		t.Fatalf("no thread of the init could be read (the check would prove nothing):\n%s", out)
	}
}
