package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/sqlite"
)

// A service embedded in a Go program: an agent with two slots and a
// queue, one task, its output and its log.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "corral-example-")
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	svc, err := service.New(service.Config{Store: st, DataDir: dir})
	if err != nil {
		panic(err)
	}
	if err := svc.Start(ctx); err != nil {
		panic(err)
	}
	defer svc.Close(ctx)

	svc.CreateAgent(ctx, &corral.Agent{Name: "build", Kind: corral.KindShell, MaxParallelTasks: 2, Overflow: corral.OverflowQueue})
	e, err := svc.Submit(ctx, service.Task{Agent: "build", Input: "echo compiling; echo done"})
	if err != nil {
		panic(err)
	}
	// Follow replays the run's log and returns once it has ended.
	end, err := svc.Follow(ctx, e.ID, 0, func(seq int, rec []byte) error { return nil })
	if err != nil {
		panic(err)
	}
	fmt.Println(end.Status)
	fmt.Print(end.Stdout)
	// Output:
	// succeeded
	// compiling
	// done
}
