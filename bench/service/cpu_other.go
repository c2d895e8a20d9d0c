//go:build !unix

package main

import "time"

// cpu and childCPU are measured on Unix only; elsewhere they read zero.
func cpu() time.Duration { return 0 }

func childCPU() time.Duration { return 0 }
