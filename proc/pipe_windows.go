package proc

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/windows"
)

var pipeSeq atomic.Uint64

// outputPipe returns a pipe for one of the command's output streams whose
// read end honours read deadlines on Windows.
//
// The ends of os.Pipe are synchronous handles on Windows: the runtime
// poller cannot manage them, SetReadDeadline fails with
// os.ErrNoDeadline, and a read returns only at EOF, which never comes
// while a leftover process holds the write end. The drain after the main
// process exits is then unbounded. Here the read end, the supervisor's, is
// a named pipe server opened for overlapped I/O, which os.NewFile hands to
// the poller, so deadlines bound reads as they do on Unix. The write end,
// the command's, is a synchronous client handle, as programs expect of their
// standard handles. Neither handle is inheritable (spawn duplicates the one
// it passes), and the pipe has one instance, connected to the write end
// before it is returned, checked to be this process, and no remote clients:
// no other process can connect to it.
//
// It is meant to replace os.Pipe in newStream on Windows.
func outputPipe() (r, w *os.File, err error) {
	var nonce [8]byte
	rand.Read(nonce[:])
	name := fmt.Sprintf(`\\.\pipe\corral-%d-%d-%s`, os.Getpid(), pipeSeq.Add(1), hex.EncodeToString(nonce[:]))
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	rh, err := windows.CreateNamedPipe(name16,
		windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 0, 64<<10, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a pipe: %w", err)
	}
	wh, err := windows.CreateFile(name16, windows.GENERIC_WRITE|windows.FILE_READ_ATTRIBUTES, 0, nil,
		windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		windows.CloseHandle(rh)
		return nil, nil, fmt.Errorf("opening a pipe: %w", err)
	}
	var client uint32
	if err := windows.GetNamedPipeClientProcessId(rh, &client); err != nil || client != windows.GetCurrentProcessId() {
		windows.CloseHandle(wh)
		windows.CloseHandle(rh)
		return nil, nil, fmt.Errorf("opening a pipe: another process connected to %s first", name)
	}
	return os.NewFile(uintptr(rh), "|0"), os.NewFile(uintptr(wh), "|1"), nil
}
