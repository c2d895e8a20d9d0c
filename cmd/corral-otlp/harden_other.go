//go:build !linux

package main

func harden() {}
