//go:build !amd64

package initelf

// No native init on this architecture: its runs use the Go init.
var code []byte

const compiler = ""
