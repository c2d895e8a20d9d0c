//go:build unix

package proc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/corralrun/corral/proc"
)

// A command that leaves a background job holding its output still returns
// as soon as the drain bound allows, and the job is killed with it.
func ExampleRun() {
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"bash", "-c", "sleep 600 & echo started"},
		Timeout: time.Second,
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s%s, leftovers killed: %d, survivors: %d\n",
		res.Stdout.Text(), res.Status(), res.Killed, res.Survivors)
	// Output:
	// started
	// exit 0, leftovers killed: 1, survivors: 0
}

// On timeout the output printed before the deadline is kept.
func ExampleRun_timeout() {
	res, _ := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"bash", "-c", "echo before; sleep 600"},
		Timeout: 200 * time.Millisecond,
	})
	fmt.Print(res.Stdout.Text())
	fmt.Println(res.Status())
	// Output:
	// before
	// timed out (signal SIGTERM)
}

// Output beyond the cap keeps its head and its tail and says what was
// dropped.
func ExampleRun_truncated() {
	res, _ := proc.Run(context.Background(), &proc.Spec{
		Args:      []string{"seq", "-w", "1", "100000"},
		MaxOutput: 28, // two lines of head, two of tail
	})
	fmt.Print(res.Stdout.Text())
	fmt.Println(res.Stdout.Bytes, "bytes seen")
	// Output:
	// 000001
	// 000002
	// [... 699972 bytes dropped ...]
	// 099999
	// 100000
	// 700000 bytes seen
}
