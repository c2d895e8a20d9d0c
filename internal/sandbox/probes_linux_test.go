package sandbox_test

// The probes run inside the sandbox: the test binary is started there with
// probeEnv naming one, tries what the test asks, prints one line per check
// and exits 1 if any check did not hold.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

type checker struct{ failed bool }

func (c *checker) report(ok bool, what string, detail any) {
	if ok {
		fmt.Printf("ok    %s (%v)\n", what, detail)
		return
	}
	c.failed = true
	fmt.Printf("FAIL  %s (%v)\n", what, detail)
}

// ok checks that err is nil.
func (c *checker) ok(what string, err error) { c.report(err == nil, what, err) }

// fails checks that err is one of want (or any error, when want is empty).
func (c *checker) fails(what string, err error, want ...error) {
	if err == nil {
		c.report(false, what, "succeeded")
		return
	}
	good := len(want) == 0
	for _, w := range want {
		good = good || errors.Is(err, w)
	}
	c.report(good, what, err)
}

// that checks a condition.
func (c *checker) that(what string, cond bool, detail any) { c.report(cond, what, detail) }

var probes = map[string]func(c *checker, args []string){
	"writes":  probeWrites,
	"tmp":     probeTmp,
	"deny":    probeDeny,
	"net":     probeNet,
	"unix":    probeUnix,
	"procs":   probeProcs,
	"proxy":   probeProxy,
	"block":   probeBlock,
	"hostnet": probeHostNet,
}

func runProbe(name string, args []string) int {
	f := probes[name]
	if f == nil {
		fmt.Printf("FAIL  no probe %q\n", name)
		return 1
	}
	var c checker
	f(&c, args)
	if c.failed {
		return 1
	}
	return 0
}

// denied are the errors of a write the sandbox refuses: a read-only mount
// or Landlock.
var denied = []error{unix.EROFS, unix.EACCES, unix.EPERM}

func openWrite(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		f.Close()
	}
	return err
}

func probeWrites(c *checker, args []string) {
	ws, extra, outDir, outFile := args[0], args[1], args[2], args[3]
	c.ok("create a file in the workspace", os.WriteFile(ws+"/ok", []byte("ok"), 0o644))
	c.ok("create a file in a second writable root", os.WriteFile(extra+"/ok", []byte("ok"), 0o644))
	c.ok("mkdir in the workspace", os.Mkdir(ws+"/d", 0o755))
	c.ok("rename within the workspace", os.Rename(ws+"/ok", ws+"/d/ok"))
	c.ok("mkfifo in the workspace", unix.Mkfifo(ws+"/fifo", 0o644))
	c.ok("write /dev/null (with O_TRUNC)", os.WriteFile("/dev/null", []byte("x"), 0o644))

	c.fails("create a file outside the roots", os.WriteFile(outDir+"/new", nil, 0o644), denied...)
	c.fails("open a file outside for writing", openWrite(outFile), denied...)
	c.fails("truncate a file outside", os.Truncate(outFile, 0), denied...)
	c.fails("chmod a file outside", os.Chmod(outFile, 0o777), denied...)
	c.fails("remove a file outside", os.Remove(outFile), denied...)
	c.fails("rename a file outside", os.Rename(outFile, outDir+"/renamed"), denied...)
	c.ok("symlink in the workspace to a file outside", os.Symlink(outFile, ws+"/link-file"))
	c.fails("write through the symlink", openWrite(ws+"/link-file"), denied...)
	c.ok("symlink in the workspace to a directory outside", os.Symlink(outDir, ws+"/link-dir"))
	c.fails("create through the symlinked directory", os.WriteFile(ws+"/link-dir/new", nil, 0o644), denied...)
	c.fails("hard link from outside into the workspace", os.Link(outFile, ws+"/hard"), append(denied, unix.EXDEV)...)
	c.fails("rename from outside into the workspace", os.Rename(outFile, ws+"/moved"), append(denied, unix.EXDEV)...)
	c.fails("write through /proc/self/root", openWrite("/proc/self/root"+outFile), denied...)
	c.fails("write through the init's /proc/1/root", openWrite("/proc/1/root"+outFile), append(denied, unix.ENOENT)...)
	c.fails("create a file in /etc", os.WriteFile("/etc/corral-sandbox-test", nil, 0o644), denied...)
	c.fails("create a file in /", os.WriteFile("/corral-sandbox-test", nil, 0o644), denied...)
	c.fails("create a file in /dev", os.WriteFile("/dev/corral-sandbox-test", nil, 0o644), denied...)
	c.fails("open /proc/sysrq-trigger for writing", openWrite("/proc/sysrq-trigger"), append(denied, unix.ENOENT)...)
	c.fails("write the own /proc/self/comm", os.WriteFile("/proc/self/comm", []byte("x"), 0), denied...)
	c.fails("open /proc/sys/kernel/hostname for writing", openWrite("/proc/sys/kernel/hostname"), denied...)
}

func probeTmp(c *checker, args []string) {
	marker := args[0]
	_, err := os.Stat(marker)
	c.fails("see a file of the host's /tmp", err, unix.ENOENT)
	entries, err := os.ReadDir("/tmp")
	c.ok("list /tmp", err)
	c.that("the host's /tmp files are not listed", !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == filepath.Base(marker) }), len(entries))
	c.ok("write /tmp", os.WriteFile("/tmp/run-file", []byte("from the run"), 0o644))
	c.ok("write /var/tmp", os.WriteFile("/var/tmp/run-file", []byte("from the run"), 0o644))
	c.ok("write /dev/shm", os.WriteFile("/dev/shm/run-file", []byte("from the run"), 0o644))
}

func probeDeny(c *checker, args []string) {
	files, dirs := args[:2], args[2:4]
	for _, f := range files {
		b, err := os.ReadFile(f)
		c.ok("read the denied file "+f, err)
		c.that("it is empty", len(b) == 0, fmt.Sprintf("%q", b))
		c.fails("write it", openWrite(f), denied...)
	}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		c.ok("list the denied directory "+d, err)
		c.that("it is empty", len(entries) == 0, len(entries))
		c.fails("create in it", os.WriteFile(d+"/new", nil, 0o644), denied...)
	}
	_, err := os.ReadFile(dirs[0] + "/key")
	c.fails("read a file inside a denied directory", err, unix.ENOENT)
}

func probeNet(c *checker, args []string) {
	tcpAddr, udpAddr, abstract := args[0], args[1], args[2]
	_, err := net.DialTimeout("tcp", tcpAddr, 5*time.Second)
	c.fails("TCP to the host's loopback listener", err, unix.ECONNREFUSED)
	if u, err := net.Dial("udp", udpAddr); err == nil {
		u.Write([]byte("leak"))
		u.Close()
	}
	_, err = net.Dial("unix", "@"+abstract)
	c.fails("connect to the host's abstract Unix socket", err, unix.ECONNREFUSED)
	_, err = net.DialTimeout("tcp", "192.0.2.1:80", 5*time.Second)
	c.fails("TCP to another host", err, unix.ENETUNREACH)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	c.ok("listen on the sandbox's own loopback", err)
	if err == nil {
		defer l.Close()
		go func() {
			if s, err := l.Accept(); err == nil {
				s.Write([]byte("local"))
				s.Close()
			}
		}()
		conn, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
		c.ok("connect to it", err)
		if err == nil {
			b, _ := io.ReadAll(conn)
			conn.Close()
			c.that("and talk", string(b) == "local", string(b))
		}
	}
}

func probeHostNet(c *checker, args []string) {
	tcpAddr, outside := args[0], args[1]
	conn, err := net.DialTimeout("tcp", tcpAddr, 5*time.Second)
	c.ok("TCP to the host's loopback listener (network host)", err)
	if err == nil {
		conn.Close()
	}
	c.fails("a pathname socket outside the roots, still", echo("unix", outside), unix.EACCES)
	_, err = unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	c.fails("a Unix datagram socket, still", err, unix.EPERM)
}

// echo connects to the Unix socket at path, sends a line and expects it
// back.
func echo(network, path string) error {
	conn, err := net.DialTimeout(network, path, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(conn, "ping")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "ping\n" {
		return fmt.Errorf("echo: got %q", line)
	}
	return nil
}

// serveEcho answers each connection of l with the line it sent.
func serveEcho(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			line, _ := bufio.NewReader(conn).ReadString('\n')
			io.WriteString(conn, line)
		}()
	}
}

func probeUnix(c *checker, args []string) {
	outside, allowed, allowedTmp, wsHost, ws := args[0], args[1], args[2], args[3], args[4]
	c.fails("connect to a socket outside the writable roots", echo("unix", outside), unix.EACCES)
	c.ok("symlink in the workspace to it", os.Symlink(outside, ws+"/link.sock"))
	c.fails("connect through the symlink", echo("unix", ws+"/link.sock"), unix.EACCES)
	if fd, err := unix.Open(outside, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
		c.fails("connect through /proc/self/fd", echo("unix", "/proc/self/fd/"+strconv.Itoa(fd)), unix.EACCES)
		c.fails("connect through /dev/fd", echo("unix", "/dev/fd/"+strconv.Itoa(fd)), unix.EACCES)
		unix.Close(fd)
	}
	c.ok("connect to an allowed socket", echo("unix", allowed))
	c.ok("connect to an allowed socket under the host's /tmp", echo("unix", allowedTmp))
	c.ok("connect to a host's socket in the workspace", echo("unix", wsHost))

	l, err := net.Listen("unix", ws+"/own.sock")
	c.ok("listen in the workspace", err)
	if err != nil {
		return
	}
	defer l.Close()
	go serveEcho(l)
	c.ok("connect to it", echo("unix", ws+"/own.sock"))
	c.ok("chdir to the workspace", os.Chdir(ws))
	c.ok("connect to it by a relative path", echo("unix", "own.sock"))
	if fd, err := unix.Open(ws+"/own.sock", unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
		c.ok("connect to it through /proc/self/fd", echo("unix", "/proc/self/fd/"+strconv.Itoa(fd)))
		unix.Close(fd)
	}
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	c.ok("a blocking stream socket", err)
	if err == nil {
		c.ok("connects (blocking) to it", unix.Connect(s, &unix.SockaddrUnix{Name: ws + "/own.sock"}))
		unix.Close(s)
	}
	if tl, err := net.Listen("unix", "/tmp/own.sock"); err == nil {
		go serveEcho(tl)
		c.ok("connect to a socket in /tmp", echo("unix", "/tmp/own.sock"))
		tl.Close()
	} else {
		c.ok("listen in /tmp", err)
	}
	if pl, err := net.Listen("unixpacket", ws+"/packet.sock"); err == nil {
		go serveEcho(pl)
		c.ok("connect a SOCK_SEQPACKET socket", echo("unixpacket", ws+"/packet.sock"))
		pl.Close()
	} else {
		c.ok("listen with SOCK_SEQPACKET", err)
	}
	os.WriteFile(ws+"/plain", nil, 0o644)
	c.fails("connect to a file that is no socket", echo("unix", ws+"/plain"), unix.ECONNREFUSED)
	c.fails("connect to a missing path", echo("unix", ws+"/missing.sock"), unix.ENOENT)

	_, err = unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	c.fails("a Unix datagram socket", err, unix.EPERM)
	_, err = unix.Socket(unix.AF_UNIX, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	c.fails("a Unix SOCK_RAW socket (a datagram socket to the kernel)", err, unix.EPERM)
	_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	c.fails("a Unix datagram socket pair", err, unix.EPERM)
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	c.ok("a Unix stream socket pair", err)
	if err == nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
	}
	raceAddress(c, ws+"/own.sock", outside)
	fullBacklog(c, ws)
}

// listenFull returns a Unix listener at path whose backlog is full: one
// connection is queued and never accepted, so the next blocking connect
// waits.
func listenFull(path string) (listener, queued int, err error) {
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, err
	}
	if err := unix.Bind(l, &unix.SockaddrUnix{Name: path}); err != nil {
		return -1, -1, err
	}
	if err := unix.Listen(l, 0); err != nil {
		return -1, -1, err
	}
	q, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err := unix.Connect(q, &unix.SockaddrUnix{Name: path}); err != nil {
		return -1, -1, err
	}
	return l, q, nil
}

// fullBacklog makes the gate wait in a blocking connect: once until the
// listener accepts, once until the caller is killed.
func fullBacklog(c *checker, ws string) {
	l, q, err := listenFull(ws + "/full.sock")
	c.ok("a listener with a full backlog", err)
	if err != nil {
		return
	}
	defer unix.Close(l)
	defer unix.Close(q)
	go func() {
		time.Sleep(700 * time.Millisecond)
		if a, _, err := unix.Accept(l); err == nil {
			unix.Close(a)
		}
	}()
	s, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	start := time.Now()
	err = unix.Connect(s, &unix.SockaddrUnix{Name: ws + "/full.sock"})
	unix.Close(s)
	c.ok("a blocking connect waits until the listener accepts", err)
	c.that("over several of the gate's slices", time.Since(start) > 500*time.Millisecond, time.Since(start).Round(time.Millisecond))

	// A caller killed while the gate connects for it: the gate notices
	// and lets go (the init checks that nothing of it is left).
	exe, _ := os.Executable()
	cmd := exec.Command(exe, ws+"/full.sock")
	cmd.Env = append(os.Environ(), "CORRAL_SANDBOX_PROBE=block")
	c.ok("start a caller that blocks in connect", cmd.Start())
	time.Sleep(600 * time.Millisecond)
	cmd.Process.Kill()
	c.that("the killed caller is gone", cmd.Wait() != nil, "")
}

// probeBlock connects to a listener whose backlog is full, and blocks.
func probeBlock(c *checker, args []string) {
	s, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	c.ok("connect", unix.Connect(s, &unix.SockaddrUnix{Name: args[0]}))
}

// raceAddress connects while another thread keeps rewriting the address
// between an allowed socket and the outside one: the gate copies the
// address once, so each connect reaches the socket it checked, and the
// outside listener (which counts on the host side) is never reached.
func raceAddress(c *checker, allowed, outside string) {
	size := max(len(allowed), len(outside)) + 3
	a, b := make([]byte, size), make([]byte, size)
	for _, x := range []struct {
		buf  []byte
		path string
	}{{a, allowed}, {b, outside}} {
		*(*uint16)(unsafe.Pointer(&x.buf[0])) = unix.AF_UNIX
		copy(x.buf[2:], x.path)
	}
	buf := make([]byte, size)
	copy(buf, a)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				copy(buf, b)
			} else {
				copy(buf, a)
			}
		}
	}()
	var allowedOK, refused, torn, other int
	for i := 0; i < 300; i++ {
		s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			other++
			continue
		}
		_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(s), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		switch errno {
		case 0:
			allowedOK++
		case unix.EACCES:
			refused++
		case unix.ENOENT, unix.ENOTDIR, unix.ECONNREFUSED: // a path copied half-rewritten
			torn++
		default:
			other++
			fmt.Printf("      connect: %v\n", errno)
		}
		unix.Close(s)
	}
	close(stop)
	<-done
	c.that("racing connects: each either refused or to the allowed socket", other == 0, fmt.Sprintf("%d connected, %d refused, %d torn, %d other", allowedOK, refused, torn, other))
}

func probeProcs(c *checker, args []string) {
	tag, hostPid := args[0], args[1]
	var visible []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		if d.Name() == strconv.Itoa(os.Getpid()) {
			continue // this probe, whose arguments name the tag
		}
		if b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline"); err == nil && strings.Contains(string(b), tag) {
			visible = append(visible, d.Name())
		}
	}
	c.that("no host process in /proc", len(visible) == 0, fmt.Sprintf("%d sandbox processes, tagged host ones: %v", len(dirs), visible))
	pid, _ := strconv.Atoi(hostPid)
	if err := unix.Kill(pid, 0); err == nil {
		b, _ := os.ReadFile("/proc/" + hostPid + "/cmdline")
		c.that("the host process's pid is a sandbox process, if anything", !strings.Contains(string(b), tag), "signal 0 succeeded")
	} else {
		c.fails("signal the host process", err, unix.ESRCH)
	}
	if env, err := os.ReadFile("/proc/" + hostPid + "/environ"); err == nil {
		c.that("the host process's environment is unreadable", !strings.Contains(string(env), tag), "read a sandbox process of that pid")
	} else {
		c.fails("read the host process's environment", err, unix.ENOENT)
	}
	_, err := os.ReadFile("/proc/1/environ")
	c.fails("read the init's environment", err, unix.EACCES, unix.EPERM)
	c.fails("signal the init", unix.Kill(1, unix.SIGTERM), unix.EPERM)
	c.fails("ptrace the init", unix.PtraceAttach(1), unix.EPERM)

	status, _ := os.ReadFile("/proc/self/status")
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		c.that("status has "+strings.ReplaceAll(want, "\t", " "), strings.Contains(string(status), want+"\n"), "")
	}

	var cgroupFiles int
	filepath.WalkDir("/sys/fs/cgroup", func(path string, d fs.DirEntry, err error) error {
		if err != nil || strings.Count(path, "/") > 6 {
			return fs.SkipDir
		}
		if d.Name() == "cgroup.procs" || d.Name() == "cgroup.subtree_control" {
			cgroupFiles++
			if err := openWrite(path); err == nil || !slices.ContainsFunc(denied, func(e error) bool { return errors.Is(err, e) }) {
				c.report(false, "open "+path+" for writing", err)
			}
		}
		return nil
	})
	c.that("no cgroup file is writable", cgroupFiles > 0, fmt.Sprintf("%d tried", cgroupFiles))

	c.fails("unshare a user namespace", unix.Unshare(unix.CLONE_NEWUSER), unix.EPERM)
	if path, err := exec.LookPath("unshare"); err == nil {
		out, err := exec.Command(path, "-U", "true").CombinedOutput()
		c.fails("unshare -U true", err)
		_ = out
	}
	c.fails("clone3 (its flags are out of the filter's sight)", rawErr(unix.SYS_CLONE3, 0, 0, 0), unix.ENOSYS)
	c.fails("mount a tmpfs", unix.Mount("none", "/tmp", "tmpfs", 0, ""), unix.EPERM)
	c.fails("bpf", rawErr(unix.SYS_BPF, ^uintptr(0), 0, 0), unix.EPERM)
	c.fails("keyctl", rawErr(unix.SYS_KEYCTL, 0, 0, 0), unix.EPERM)
	c.fails("add_key", rawErr(unix.SYS_ADD_KEY, 0, 0, 0), unix.EPERM)
	c.fails("perf_event_open", rawErr(unix.SYS_PERF_EVENT_OPEN, 0, 0, 0), unix.EPERM)
	c.fails("io_uring_setup", rawErr(unix.SYS_IO_URING_SETUP, 0, 0, 0), unix.ENOSYS)
	c.fails("ioctl TIOCSTI", rawErr(unix.SYS_IOCTL, 0, unix.TIOCSTI, 0), unix.EPERM)

	devs, _ := os.ReadDir("/dev")
	var names []string
	for _, d := range devs {
		names = append(names, d.Name())
	}
	want := []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
	extra := slices.DeleteFunc(names, func(n string) bool { return slices.Contains(want, n) })
	c.that("/dev holds only the harmless devices", len(extra) == 0, extra)
}

func rawErr(nr, a, b, c uintptr) error {
	_, _, errno := unix.Syscall(nr, a, b, c)
	if errno != 0 {
		return errno
	}
	return nil
}

func probeProxy(c *checker, args []string) {
	proxy, allowed, direct := args[0], args[1], args[2]
	_, err := net.DialTimeout("tcp", direct, 5*time.Second)
	c.fails("connect to the allowed host directly", err, unix.ECONNREFUSED)
	body, code, err := proxyGet(proxy, "http://"+allowed+"/plain")
	c.ok("plain HTTP through the proxy", err)
	c.that("to the allowed host", code == 200 && body == "hello /plain", fmt.Sprint(code, " ", body))
	body, code, err = proxyConnect(proxy, allowed)
	c.ok("CONNECT through the proxy", err)
	c.that("to the allowed host", code == 200 && body == "hello /tunnel", fmt.Sprint(code, " ", body))
	_, code, err = proxyGet(proxy, "http://denied.example/")
	c.that("plain HTTP to another host is refused", err == nil && code == 403, fmt.Sprint(code, " ", err))
	_, code, err = proxyConnect(proxy, "denied.example:443")
	c.that("CONNECT to another host is refused", err == nil && code == 403, fmt.Sprint(code, " ", err))
	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command(curl, "-sS", "--max-time", "20", "http://"+allowed+"/curl").CombinedOutput()
		c.ok("curl through HTTP_PROXY", err)
		c.that("reaches the allowed host", string(out) == "hello /curl", string(out))
	}
}

func proxyGet(proxy, url string) (string, int, error) {
	conn, err := net.DialTimeout("tcp", proxy, 5*time.Second)
	if err != nil {
		return "", 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", url)
	return readResponse(bufio.NewReader(conn))
}

func proxyConnect(proxy, target string) (string, int, error) {
	conn, err := net.DialTimeout("tcp", proxy, 5*time.Second)
	if err != nil {
		return "", 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil {
		return "", 0, err
	}
	code, _ := strconv.Atoi(strings.Fields(status + " 0 0")[1])
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", code, err
		}
		if line == "\r\n" {
			break
		}
	}
	if code != 200 {
		return "", code, nil
	}
	fmt.Fprintf(conn, "GET /tunnel HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	body, _, err := readResponse(br)
	return body, code, err
}

// readResponse reads a response with Content-Length or to EOF.
func readResponse(br *bufio.Reader) (string, int, error) {
	status, err := br.ReadString('\n')
	if err != nil {
		return "", 0, err
	}
	code, _ := strconv.Atoi(strings.Fields(status + " 0 0")[1])
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", code, err
		}
		if line == "\r\n" {
			break
		}
	}
	b, err := io.ReadAll(br)
	return string(b), code, err
}
