package shim

import (
	"errors"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestConnCarriesMessagesAndDescriptors: a message arrives whole with its
// descriptors, working ones; closing one end reads as end of file on the
// other, and a blocked Recv returns when its own end is closed.
func TestConnCarriesMessagesAndDescriptors(t *testing.T) {
	c, f, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewConn(f)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := c.Send(Msg{Op: OpExited, Code: 3, Mechanisms: []string{"x"}}, w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	m, files, err := other.Recv()
	if err != nil || m.Op != OpExited || m.Code != 3 || len(m.Mechanisms) != 1 || len(files) != 1 {
		t.Fatalf("got %+v %v %v", m, files, err)
	}
	if _, err := files[0].WriteString("through the passed pipe"); err != nil {
		t.Fatal(err)
	}
	files[0].Close()
	if b, _ := io.ReadAll(r); string(b) != "through the passed pipe" {
		t.Fatalf("pipe carried %q", b)
	}
	if flags, err := unix.FcntlInt(files[0].Fd(), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
		t.Error("a received descriptor is inherited across exec")
	}
	c.Close()
	if _, _, err := other.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the other end closed: %v", err)
	}
	done := make(chan error, 1)
	c2, f2, _ := Pair()
	defer f2.Close()
	go func() { _, _, err := c2.Recv(); done <- err }()
	c2.Close()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("a Recv blocked on a closed end: %v", err)
	}
	other.Close()
}

// TestFailedMessageKeepsItsErrno: a Failed message's error can be tested
// for what the init met, as the errno it carried.
func TestFailedMessageKeepsItsErrno(t *testing.T) {
	m := Msg{Op: OpFailed, Stage: "start", Errno: int(unix.ENOENT), Err: "no such file"}
	if !errors.Is(m.Error(), os.ErrNotExist) {
		t.Fatalf("%v is not ErrNotExist", m.Error())
	}
	if (Msg{Err: "plain"}).Error().Error() != "plain" {
		t.Fatal("a message without errno lost its text")
	}
}
