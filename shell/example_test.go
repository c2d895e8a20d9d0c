package shell_test

import (
	"context"
	"fmt"
	"time"

	"github.com/corralrun/corral/shell"
)

// A session keeps cd, variables and functions from one command to the
// next, and a timeout does not lose them.
func ExampleSession() {
	tool := &shell.Tool{Dir: "/"}
	defer tool.Close()
	s, err := tool.NewSession(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	s.Run(context.Background(), shell.Request{Command: `cd /tmp; export GREETING=hello; greet() { echo "$GREETING, $1"; }`})
	res, _ := s.Run(context.Background(), shell.Request{Command: "sleep 60", Timeout: 200 * time.Millisecond})
	fmt.Println("timed out:", res.TimedOut)
	res, _ = s.Run(context.Background(), shell.Request{Command: "greet world; pwd"})
	fmt.Print(res.Stdout)
	// Output:
	// timed out: true
	// hello, world
	// /tmp
}

// A policy is checked line by line and segment by segment.
func ExamplePolicy() {
	tool := &shell.Tool{Policy: shell.Policy{Allow: []string{`^ls( |$)`, `^git (status|diff|log)( |$)`}}}
	defer tool.Close()
	res, _ := tool.Run(context.Background(), shell.Request{Command: "ls\nrm -rf /tmp/x"})
	fmt.Println(res.Denied)
	fmt.Println(res.Reason)
	// Output:
	// true
	// denied by policy: command "rm -rf /tmp/x" (line 2) matches no allow pattern (allowed: "^ls( |$)", "^git (status|diff|log)( |$)"). The command did not run.
}

// A background job's output is read incrementally.
func ExampleSession_Start() {
	tool := &shell.Tool{}
	defer tool.Close()
	s, _ := tool.NewSession(context.Background())
	defer s.Close()
	res, _ := s.Start(context.Background(), shell.Request{Command: "echo ready; sleep 300"})
	job, _ := s.Job(res.JobID)
	out := job.Output(context.Background(), 0, 5*time.Second, 0) // wait up to 5 s for output
	fmt.Print(out.Output)
	fmt.Println(job.Kill().Status)
	// Output:
	// ready
	// killed
}
