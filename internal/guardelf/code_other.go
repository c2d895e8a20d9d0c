//go:build !amd64 && !arm64

package guardelf

// No native guardian for this architecture: the Go one serves.
const machine = 0

var code []byte
