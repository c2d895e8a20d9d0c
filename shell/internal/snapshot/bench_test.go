package snapshot

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

func BenchmarkStepOSExec(b *testing.B) {
	dir, err := os.MkdirTemp(TempDir(), "bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	prev := ""
	env := os.Environ()
	args, _ := Args(dir, "c0", "", Init, ":")
	cmd := exec.Command("bash", args...)
	cmd.Run()
	st, _ := Load(dir, "c0")
	prev, env = st.Prefix, st.Env
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := "c" + strconv.Itoa(i+1)
		args, _ := Args(dir, id, prev, Step, "true")
		cmd := exec.Command("bash", args...)
		cmd.Env = env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		st, ok := Load(dir, id)
		if !ok {
			b.Fatal("not saved")
		}
		Remove(dir, "c"+strconv.Itoa(i))
		prev, env = st.Prefix, st.Env
	}
}

func BenchmarkBashTrueOSExec(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
