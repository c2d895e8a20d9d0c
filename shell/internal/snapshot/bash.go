// Package snapshot runs each command of a persistent bash session in a
// fresh bash that first restores the session's state and, however the
// command ends short of SIGKILL or exec, saves the new state to files named
// for the call. The state is the working directory, every variable (exported
// ones through the environment, the rest as declare statements), functions
// (with their export flag), aliases, the umask, shopt options and set -o
// options.
//
// Nothing here forks: the wrapper uses bash builtins only, so a step costs
// one bash start-up and a few small file writes.
package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode says what a step does with the state.
type Mode string

const (
	// Init starts a session: no state to restore, aliases expanded.
	Init Mode = "init"
	// Step restores the state, runs the command and saves the new state.
	Step Mode = "step"
	// Job restores the state and runs the command without saving: a
	// background job never changes its session.
	Job Mode = "job"
)

// skip lists the variables bash manages itself, which a snapshot leaves
// out.
var skip = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`BASH BASHOPTS BASHPID BASH_ALIASES BASH_ARGC BASH_ARGV BASH_ARGV0
		BASH_CMDS BASH_COMMAND BASH_EXECUTION_STRING BASH_LINENO BASH_LOADABLES_PATH BASH_MONOSECONDS
		BASH_REMATCH BASH_SOURCE BASH_SUBSHELL BASH_TRAPSIG BASH_VERSINFO BASH_VERSION COLUMNS
		COMP_WORDBREAKS DIRSTACK EPOCHREALTIME EPOCHSECONDS EUID FUNCNAME GROUPS HISTCMD HOSTNAME
		HOSTTYPE LINENO LINES MACHTYPE OPTARG OPTERR OPTIND OSTYPE PIPESTATUS PPID PWD RANDOM
		SECONDS SHELLOPTS SHLVL SRANDOM UID _`) {
		m[n] = true
	}
	return m
}()

// maxArg is the longest command passed as an argument; longer ones go
// through a file (Linux caps one argument at 128 KiB).
const maxArg = 96 << 10

// complete ends an env file whose step saved everything.
const complete = "corral-snapshot-complete"

// script is the -c program of a step: it evaluates the wrapper, then the
// command, on line 1, so that bash reports the command's errors with the
// command's own line numbers.
const script = `builtin eval "$1"; builtin eval "$__corral_pre$__corral_cmd"`

// wrapper prepares a step. Arguments: $1 the wrapper itself, $2 the session
// directory, $3 this call's id, $4 the previous state's prefix (empty for
// none), $5 the mode, $6 "arg" or "file", $7 the command or the file
// holding it.
var wrapper = `__corral_d=$2 __corral_id=$3 __corral_prev=$4 __corral_mode=$5
if [[ $6 == file ]]; then __corral_cmd=$(<"$7"); else __corral_cmd=$7; fi
builtin shift 7
__corral_pre= __corral_saved=
__corral_save() {
	[[ -n $__corral_saved || $__corral_mode == job ]] && return
	__corral_saved=1
	local __corral_fl=$- __corral_f=$__corral_d/$__corral_id __corral_n __corral_a __corral_l __corral_pre=
	local -a __corral_fx __corral_fn
	builtin set +xv
	builtin set +o >"$__corral_f.o"
	builtin set +eu +o pipefail
	[[ $__corral_fl == *x* ]] && __corral_pre+=$'builtin set -x\n'
	[[ $__corral_fl == *v* ]] && __corral_pre+=$'builtin set -v\n'
	builtin declare -F >"$__corral_f.n"
	builtin mapfile -t __corral_fn <"$__corral_f.n"
	for __corral_l in "${__corral_fn[@]}"; do
		[[ $__corral_l == "declare -fx "* ]] && __corral_fx+=("${__corral_l##* }")
	done
	{
		builtin declare -f
		((${#__corral_fx[@]})) && builtin printf 'builtin export -f -- %q\n' "${__corral_fx[@]}"
		builtin alias -p
		builtin umask -p
		builtin shopt -p
		builtin printf '__corral_pre=%q\n' "$__corral_pre"
	} >"$__corral_f.sh" 2>/dev/null
	{
		builtin printf '%s\0' "$PWD"
		builtin declare -p
		builtin printf '\0%s\0' ` + complete + `
	} >"$__corral_f.env"
}
builtin trap '{ __corral_save; } 2>/dev/null' EXIT
builtin trap '{ __corral_save; } 2>/dev/null; builtin exit 143' TERM
if [[ $__corral_mode == init ]]; then
	builtin shopt -s expand_aliases
elif [[ -n $__corral_prev ]]; then
	builtin . "$__corral_prev.v" 2>/dev/null
	builtin . "$__corral_prev.sh" 2>/dev/null
	builtin . "$__corral_prev.o" 2>/dev/null
fi
builtin unset __corral_prev
`

// Args returns the bash arguments (after the program name) of one step.
// dir is the session directory, id names this call's state files, prev is
// the prefix of the state to restore (empty for none). For a step that
// saves, it creates the state files empty and private to the user (0600):
// the save truncates and fills them, keeping that mode whatever the
// session's umask.
func Args(dir, id, prev string, mode Mode, command string) ([]string, error) {
	if mode != Job {
		if err := createPrivate(filepath.Join(dir, id)); err != nil {
			return nil, err
		}
	}
	how := "arg"
	if len(command) > maxArg || strings.IndexByte(command, 0) >= 0 {
		if strings.IndexByte(command, 0) >= 0 {
			return nil, errors.New("command contains a NUL byte, which no shell can run: remove it")
		}
		f := filepath.Join(dir, id+".cmd")
		if err := os.WriteFile(f, []byte(command), 0o600); err != nil {
			return nil, fmt.Errorf("writing the command to the session directory: %w", err)
		}
		how, command = "file", f
	}
	return []string{"-c", script, "bash", wrapper, dir, id, prev, string(mode), how, command}, nil
}

// saved are the extensions of the files the wrapper's save writes.
var saved = []string{".env", ".sh", ".o", ".n"}

// createPrivate creates the files a step's save writes, empty, mode 0600.
func createPrivate(prefix string) error {
	for _, ext := range saved {
		f, err := os.OpenFile(prefix+ext, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("creating the session's state files: %w", err)
		}
		f.Close()
	}
	return nil
}

// State is a saved snapshot: the working directory, the exported
// environment, and the prefix of the files holding the rest.
type State struct {
	Dir    string
	Env    []string
	Prefix string
}

// Load reads the state a step saved under dir with id and writes the
// variables to restore. It reports false when the step did not save a
// complete state (it was killed, exec'd another program, or replaced the
// EXIT trap and exited).
func Load(dir, id string) (State, bool) {
	prefix := filepath.Join(dir, id)
	b, err := os.ReadFile(prefix + ".env")
	if err != nil {
		return State{}, false
	}
	// "cwd\0" + declare -p output + "\0marker\0"
	cwd, rest, ok := bytes.Cut(b, []byte{0})
	body, ok2 := bytes.CutSuffix(rest, []byte("\x00"+complete+"\x00"))
	if !ok || !ok2 {
		return State{}, false
	}
	decls, err := parseDeclarations(string(body))
	if err != nil {
		return State{}, false
	}
	st := State{Dir: string(cwd), Prefix: prefix}
	var vars strings.Builder
	for _, d := range decls {
		if skip[d.name] || strings.HasPrefix(d.name, "__corral_") {
			continue
		}
		exported := strings.Contains(d.flags, "x")
		array := strings.ContainsAny(d.flags, "aA")
		if exported && !array && d.hasValue {
			st.Env = append(st.Env, d.name+"="+d.value)
			if d.flags == "x" {
				continue // the environment restores it
			}
		}
		vars.WriteString(d.raw)
		vars.WriteByte('\n')
	}
	if err := os.WriteFile(prefix+".v", []byte(vars.String()), 0o600); err != nil {
		return State{}, false
	}
	return st, true
}

// Exts are the extensions of a step's files.
var Exts = []string{".env", ".v", ".sh", ".o", ".n", ".cmd"}

// Remove deletes the files of the step id, saved or partial.
func Remove(dir, id string) {
	for _, ext := range Exts {
		os.Remove(filepath.Join(dir, id+ext))
	}
}

// TempDir returns a directory for session state: a memory file system,
// where the small files a step writes cost a tenth of what a disk file
// system's journal makes them cost. The user's runtime directory
// ($XDG_RUNTIME_DIR) comes first when it is one: it is private to the
// user, and the system removes it when the user's last session ends; then
// /dev/shm when it is writable; otherwise the system's temporary
// directory.
func TempDir() string {
	if run := os.Getenv("XDG_RUNTIME_DIR"); run != "" && inMemory(run) && writable(run) {
		return run
	}
	if writable("/dev/shm") {
		return "/dev/shm"
	}
	return os.TempDir()
}

// ShmDir returns /dev/shm when it is a memory file system this process
// can create files in, and "" otherwise.
func ShmDir() string {
	if inMemory("/dev/shm") && writable("/dev/shm") {
		return "/dev/shm"
	}
	return ""
}

// writable reports whether dir is a directory this process can create
// files in.
func writable(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	f, err := os.CreateTemp(dir, "corral-probe-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
