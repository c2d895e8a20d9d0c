// Command fakemodel serves a scripted model API — Anthropic's Messages API
// and OpenAI's Responses API — on a loopback port, for trying Claude Code
// and Codex under corral with no account and no network:
//
//	go run ./internal/fakemodel/cmd/fakemodel -addr 127.0.0.1:8989 tool
//
//	ANTHROPIC_BASE_URL=http://127.0.0.1:8989 ANTHROPIC_API_KEY=fake \
//	  corral headless -- claude -p --output-format stream-json --verbose "hi"
//
// Its first line is ANTHROPIC_BASE_URL=URL; the next ones give the whole
// environment for Claude Code and the flags for Codex. Run it with -list
// for the scenarios, -v to log each request, -dump DIR to keep their
// bodies (what the agent sent the model).
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/corralrun/corral/internal/fakemodel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	wait := flag.Duration("wait", 0, "duration of a scenario's long step (default 2s)")
	retry := flag.Duration("retry-after", 0, "retry-after of the rate-limit scenarios")
	list := flag.Bool("list", false, "list the scenarios and exit")
	verbose := flag.Bool("v", false, "log each request")
	dump := flag.String("dump", "", "write each request body to `DIR`/NNN-API.json")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: fakemodel [flags] SCENARIO")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *list {
		for _, n := range fakemodel.Names() {
			fmt.Printf("%-14s %s\n", n, fakemodel.About(n))
		}
		return
	}
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	sc, err := fakemodel.Named(flag.Arg(0), fakemodel.Options{Wait: *wait, RetryAfter: *retry})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *verbose || *dump != "" {
		inner := sc
		var n atomic.Int64
		sc = func(r *fakemodel.Request) fakemodel.Reply {
			rep := inner(r)
			i := n.Add(1)
			if *verbose {
				fmt.Fprintf(os.Stderr, "%d %s %s step %d attempt %d: %d tool results\n", i, r.API, r.Model, r.Step, r.Attempt, len(r.ToolResults))
			}
			if *dump != "" {
				os.WriteFile(filepath.Join(*dump, fmt.Sprintf("%03d-%s.json", i, r.API)), r.Body, 0o644)
			}
			return rep
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := fakemodel.Serve(ln, sc)
	fmt.Printf("ANTHROPIC_BASE_URL=%s\n", s.URL)
	fmt.Printf("claude: env %s\n", strings.Join(s.ClaudeEnv(), " "))
	fmt.Printf("codex: env %s; codex exec --json --skip-git-repo-check %s PROMPT\n", strings.Join(s.CodexEnv(), " "), strings.Join(s.CodexArgs(), " "))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	s.Close()
}
