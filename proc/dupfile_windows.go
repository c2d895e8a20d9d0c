package proc

import (
	"os"

	"golang.org/x/sys/windows"
)

// dupFile returns a duplicate of f's handle, not inheritable.
func dupFile(f *os.File) (*os.File, error) {
	p := windows.CurrentProcess()
	var h windows.Handle
	if err := windows.DuplicateHandle(p, windows.Handle(f.Fd()), p, &h, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(h), f.Name()), nil
}
