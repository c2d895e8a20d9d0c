package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

func med(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func main() {
	for _, c := range []corral.Containment{corral.ContainmentCgroup, corral.ContainmentSubreaper} {
		for _, sb := range []corral.Sandbox{{}, {Mode: corral.SandboxWorkspace}, {Mode: corral.SandboxWorkspace, Network: corral.NetworkHost}} {
			var st, wt []time.Duration
			for i := 0; i < 40; i++ {
				t := time.Now()
				p, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"/bin/true"}, Sandbox: sb, Dir: "/tmp/sbx", Containment: c})
				if err != nil {
					panic(err)
				}
				st = append(st, time.Since(t))
				t = time.Now()
				p.Wait()
				wt = append(wt, time.Since(t))
			}
			fmt.Println(c, sb.Mode, sb.Network, "start", med(st), "wait", med(wt))
		}
	}
}
