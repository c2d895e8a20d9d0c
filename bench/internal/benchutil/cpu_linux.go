package benchutil

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral/internal/procfs"
)

// CPUOf returns the CPU time, user and system, that process pid has used
// itself, not counting its children, as /proc/PID/stat gives it (utime
// and stime, counted in clock ticks of 10 ms). It returns 0 if the
// process cannot be read, for example because it has gone.
func CPUOf(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// CPUWithExporter returns CPUOf(pid) plus CPUOf of each of its children
// still running whose command name is corral-otlp or cat: corral's own
// CPU and its telemetry exporter's (the real one, or the cat that
// discards the spans). Children already reaped, such as the commands and
// tasks corral ran, are not counted.
func CPUWithExporter(pid int) time.Duration {
	d := CPUOf(pid)
	kids, _ := procfs.Children(pid)
	for _, k := range kids {
		if st, err := procfs.ReadStat(k); err == nil && (st.Comm == "corral-otlp" || st.Comm == "cat") {
			d += CPUOf(k)
		}
	}
	return d
}
