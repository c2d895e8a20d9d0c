//go:build !linux

package main

const isLinux = false
