/*
 * corral's native init for plain runs and sandboxes (no guard alone, no
 * enclosure, no other user) on linux/amd64: the program internal/initelf's
 * bytes are made of (gen.sh; TestCodeIsItsSourceCompiled checks them). It
 * keeps the Go init's contract (internal/shim/init_linux.go) and speaks
 * its binary protocol (internal/shim/codec_linux.go) on its control
 * socket, fd 3:
 *
 *   - a sandbox, with its first Run: the configuration carries the plan
 *     corral computed (internal/sandbox.Native); the init, pid 1 of new
 *     namespaces, builds the view as Prepare does (prepare), and confines
 *     the command's process between its fork and its exec as Confine
 *     confines a thread (confine). The gate stays the Go init's: the init
 *     answers itself only a connect() the gate would answer without
 *     connecting anything (gate_answer); at the first other one it
 *     executes the Go init in this process (resume_go), with that call,
 *     and the Go init serves the rest of the run.
 *   - Run, with the command's stdin, stdout, stderr and its configuration
 *     file: the command is started (in a session of its own unless the
 *     run shares corral's group; in its directory; with the signals corral
 *     ignores ignored; every other signal at its default and unblocked),
 *     and Started is sent with its pid, start time and pidfd (and this
 *     init's own pidfd with the first run); Failed when it cannot start.
 *   - every exited child is reaped; the command's end is sent as Exited,
 *     with Alone when no child is left then (every orphan of the tree
 *     comes here: the init is a subreaper).
 *   - Idle: what is left of the tree is killed and counted, Idle is sent
 *     back, and the init waits for the next Run. Exit: the same, then it
 *     exits. End of file (corral gone, or gave up on the run): what is
 *     left is killed, then it exits. Detach: no parent-death signal any
 *     more; it reaps until no child is left, whatever corral does.
 *
 * Killing what is left freezes every descendant with SIGSTOP, round after
 * round until a walk of /proc/PID/task/TID/children finds none not yet
 * stopped, then kills them all, as procfs.FreezeKill does; every signal
 * goes through a pidfd checked against the process's start time.
 *
 * It is deaf: every signal is blocked for its whole life (SIGCHLD is read
 * from a signalfd), so that a command that signals its init gets nowhere;
 * SIGKILL, from corral, is the only way to end it. It starts the command
 * with a clone that shares its memory and waits for the exec (vfork), on a
 * stack of its own: a plain fork made the child wait for a CPU behind the
 * machine's other work.
 *
 * Freestanding: raw system calls, no C library, nothing written but the
 * stack and memory it maps, so that its code is one read-only,
 * position-independent segment.
 */
typedef unsigned long u64;
typedef long i64;
typedef unsigned int u32;
typedef unsigned char u8;

static inline long sc(long n, long a, long b, long c, long d, long e, long f) {
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}
#define S0(n) sc(n, 0, 0, 0, 0, 0, 0)
#define S1(n, a) sc(n, (long)(a), 0, 0, 0, 0, 0)
#define S2(n, a, b) sc(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define S3(n, a, b, c) sc(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define S4(n, a, b, c, d) sc(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define S6(n, a, b, c, d, e, f) sc(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

enum {
	SYS_read = 0, SYS_write = 1, SYS_close = 3, SYS_fstat = 5, SYS_poll = 7, SYS_mmap = 9,
	SYS_rt_sigaction = 13, SYS_rt_sigprocmask = 14, SYS_dup2 = 33, SYS_getpid = 39,
	SYS_sendmsg = 46, SYS_recvmsg = 47, SYS_fork = 57, SYS_execve = 59, SYS_exit = 60,
	SYS_wait4 = 61, SYS_kill = 62, SYS_munmap = 11, SYS_fcntl = 72, SYS_chdir = 80, SYS_setsid = 112, SYS_prctl = 157,
	SYS_exit_group = 231, SYS_openat = 257, SYS_newfstatat = 262, SYS_signalfd4 = 289,
	SYS_pipe2 = 293, SYS_pidfd_open = 434,
};

#define CTL 3
#define ECHILD 10
#define EINTR 4

static void *memcpy_(void *d, const void *s, u64 n) {
	u8 *a = d;
	const u8 *b = s;
	while (n--) *a++ = *b++;
	return d;
}
static u64 strlen_(const char *s) {
	u64 n = 0;
	while (s[n]) n++;
	return n;
}
static int streq(const u8 *a, u64 n, const char *b) {
	u64 m = strlen_(b);
	if (n != m) return 0;
	for (u64 i = 0; i < n; i++)
		if (a[i] != (u8)b[i]) return 0;
	return 1;
}

/* ---- the codec (internal/shim/codec_linux.go) ---- */
typedef struct { const u8 *p, *end; int bad; } dec;
static u64 d_uint(dec *d) {
	u64 v = 0;
	int s = 0;
	while (d->p < d->end && s < 64) {
		u8 c = *d->p++;
		v |= (u64)(c & 0x7f) << s;
		if (!(c & 0x80)) return v;
		s += 7;
	}
	d->bad = 1;
	return 0;
}
static i64 d_int(dec *d) {
	u64 u = d_uint(d);
	return (i64)(u >> 1) ^ -(i64)(u & 1);
}
static int d_bool(dec *d) {
	if (d->p >= d->end || *d->p > 1) { d->bad = 1; return 0; }
	return *d->p++;
}
/* d_str returns the string's bytes and length, in place. */
static const u8 *d_str(dec *d, u64 *n) {
	u64 l = d_uint(d);
	if (d->bad || l > (u64)(d->end - d->p)) { d->bad = 1; *n = 0; return 0; }
	const u8 *s = d->p;
	d->p += l;
	*n = l;
	return s;
}
typedef struct { u8 *p; } enc;
static void e_uint(enc *e, u64 v) {
	while (v >= 0x80) { *e->p++ = (u8)(v | 0x80); v >>= 7; }
	*e->p++ = (u8)v;
}
static void e_int(enc *e, i64 v) { e_uint(e, ((u64)v << 1) ^ (u64)(v >> 63)); }
static void e_str(enc *e, const char *s, u64 n) { e_uint(e, n); memcpy_(e->p, s, n); e->p += n; }

struct iovec { void *base; u64 len; };
struct msghdr { void *name; u32 namelen; struct iovec *iov; u64 iovlen; void *control; u64 controllen; int flags; };
struct cmsghdr { u64 len; int level; int type; };

/* send a message: op, then the fields of Msg in order. */
static long send_msg_m(const char *op, i64 pid, u64 start, i64 code, i64 sig, int alone, i64 killed,
		       const char *stage, i64 err_no, const char *err, u64 errlen, const int *fds, int nfds,
		       const u8 *mechs, u64 mechlen, i64 abi) {
	u8 buf[4096];
	enc e = {buf};
	*e.p++ = 0xC5;
	e_str(&e, op, strlen_(op));
	e_int(&e, pid);
	e_uint(&e, start);
	e_int(&e, code);
	e_int(&e, sig);
	*e.p++ = alone ? 1 : 0;
	e_int(&e, killed);
	e_str(&e, stage, strlen_(stage));
	e_int(&e, err_no);
	if (errlen > 2048) errlen = 2048;
	e_str(&e, err, errlen);
	/* mechanisms: already in the wire's form (a count, then each string), from the plan */
	if (mechs && mechlen < 1024) { memcpy_(e.p, mechs, mechlen); e.p += mechlen; }
	else e_uint(&e, 0);
	e_int(&e, abi);
	struct iovec iov = {buf, (u64)(e.p - buf)};
	u64 cbuf[24]; /* up to 40 descriptors: two pidfds and a sandbox's listeners (MAXLISTEN) */
	struct msghdr m = {0, 0, &iov, 1, 0, 0, 0};
	if (nfds > 40) nfds = 40;
	if (nfds > 0) {
		struct cmsghdr *c = (struct cmsghdr *)cbuf;
		c->len = sizeof(struct cmsghdr) + 4 * (u64)nfds;
		c->level = 1; /* SOL_SOCKET */
		c->type = 1;  /* SCM_RIGHTS */
		memcpy_((u8 *)cbuf + sizeof(struct cmsghdr), fds, 4 * (u64)nfds);
		m.control = cbuf;
		m.controllen = (sizeof(struct cmsghdr) + 4 * (u64)nfds + 7) & ~7UL;
	}
	long r;
	do r = S3(SYS_sendmsg, CTL, &m, 0x4000 /* MSG_NOSIGNAL */); while (r == -EINTR);
	return r;
}

static long send_msg(const char *op, i64 pid, u64 start, i64 code, i64 sig, int alone, i64 killed,
		     const char *stage, i64 err_no, const char *err, u64 errlen, const int *fds, int nfds) {
	return send_msg_m(op, pid, start, code, sig, alone, killed, stage, err_no, err, errlen, fds, nfds, 0, 0, 0);
}

static void fail(const char *stage, i64 err_no, const char *err, u64 n) {
	send_msg("failed", 0, 0, 0, 0, 0, 0, stage, err_no, err, n, 0, 0);
}

/* recv one message: its op in op/opn, its descriptors in fds. Returns -1 at end of file. */
static long recv_msg(u8 *buf, u64 cap, int *fds, int *nfds) {
	u64 cbuf[16];
	struct iovec iov = {buf, cap};
	struct msghdr m = {0, 0, &iov, 1, cbuf, sizeof cbuf, 0};
	long n;
	do n = S3(SYS_recvmsg, CTL, &m, 0x40000000 /* MSG_CMSG_CLOEXEC */); while (n == -EINTR);
	*nfds = 0;
	if (m.controllen >= sizeof(struct cmsghdr)) {
		struct cmsghdr *c = (struct cmsghdr *)cbuf;
		if (c->level == 1 && c->type == 1) {
			int k = (int)((c->len - sizeof(struct cmsghdr)) / 4);
			if (k > 8) k = 8;
			memcpy_(fds, (u8 *)cbuf + sizeof(struct cmsghdr), 4 * (u64)k);
			*nfds = k;
		}
	}
	if (n <= 0 && *nfds == 0) return -1;
	return n;
}

struct stat_ { u64 dev, ino, nlink; u32 mode, uid, gid, pad; u64 rdev; i64 size, blksize, blocks; u64 t[6]; i64 unused[3]; };

/* start time of pid: field 22 of /proc/pid/stat */
static u64 start_time(int pid) {
	char path[32] = "/proc/";
	int i = 6;
	char tmp[12];
	int k = 0;
	do { tmp[k++] = (char)('0' + pid % 10); pid /= 10; } while (pid);
	while (k) path[i++] = tmp[--k];
	memcpy_(path + i, "/stat", 6);
	long fd = S4(SYS_openat, -100, path, 0x80000 /* O_CLOEXEC */, 0);
	if (fd < 0) return 0;
	char b[1024];
	long n = S3(SYS_read, fd, b, sizeof b - 1);
	S1(SYS_close, fd);
	if (n <= 0) return 0;
	long p = n - 1;
	while (p > 0 && b[p] != ')') p--;
	int field = 2; /* ')' ends field 2 */
	u64 v = 0;
	for (p++; p < n; p++) {
		if (b[p] == ' ') { field++; continue; }
		if (field == 22) {
			if (b[p] < '0' || b[p] > '9') break;
			v = v * 10 + (u64)(b[p] - '0');
		} else if (field > 22) break;
	}
	return v;
}

static int reap(int cmd, int *status_out, int *got) {
	/* reap every exited child; *got when cmd was among them; returns 1 when no child is left */
	for (;;) {
		int st = 0;
		long pid = S4(SYS_wait4, -1, &st, 1 /* WNOHANG */, 0);
		if (pid == -EINTR) continue;
		if (pid == -ECHILD) return 1;
		if (pid <= 0) return 0;
		if (pid == cmd) { *status_out = st; *got = 1; }
	}
}

struct sigaction_ { void *handler; u64 flags; void *restorer; u64 mask; };

/* ---- killing what is left: the walk and freeze of procfs.FreezeKill ---- */
enum { SYS_getdents64 = 217, SYS_clock_gettime = 228, SYS_nanosleep = 35, SYS_pidfd_send_signal = 424 };
struct pst { int pid, ppid, threads; unsigned flags; char state; u64 start; };

/* utoa64 writes v in decimal at out (no NUL) and returns its length; itoa_ a non-negative int. */
static int utoa64(u64 v, char *out) {
	char t[21];
	int k = 0, n = 0;
	do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v);
	while (k) out[n++] = t[--k];
	return n;
}
static int itoa_(int v, char *out) { return utoa64((u64)(u32)v, out); }

/* read_stat reads /proc/pid/stat: 0 on success. */
static int read_stat(int pid, struct pst *o) {
	char path[40] = "/proc/";
	int i = 6 + itoa_(pid, path + 6);
	memcpy_(path + i, "/stat", 6);
	long fd = S4(SYS_openat, -100, path, 0x80000, 0);
	if (fd < 0) return -1;
	char b[1024];
	long n = S3(SYS_read, fd, b, sizeof b - 1);
	S1(SYS_close, fd);
	if (n <= 0) return -1;
	long p = n - 1;
	while (p > 0 && b[p] != ')') p--;
	if (p <= 0) return -1;
	o->pid = pid;
	o->ppid = 0; o->threads = 0; o->flags = 0; o->start = 0; o->state = 0;
	int field = 2;
	u64 v = 0;
	for (p++; p < n; p++) {
		char c = b[p];
		if (c == ' ' || c == '\n') {
			if (field == 4) o->ppid = (int)v;
			if (field == 9) o->flags = (unsigned)v;
			if (field == 20) o->threads = (int)v;
			if (field == 22) { o->start = v; break; }
			field++;
			v = 0;
			continue;
		}
		if (field == 3) { o->state = c; continue; }
		if (c >= '0' && c <= '9') v = v * 10 + (u64)(c - '0');
	}
	return o->start ? 0 : -1;
}

/* PID_LIMIT is the kernel's ceiling on pids on 64-bit (PID_MAX_LIMIT): every pid is below it. */
#define PID_LIMIT (1 << 22)

/* killmem is what a kill walk keeps, in one mapping made for it (reserved, not committed: a walk touches
 * the pages of the pids it meets). */
struct qent { int pid, parent; };
struct sref { u64 start; int pid, pad; };
struct killmem {
	u64 stopped_at[PID_LIMIT];      /* the start time of the process this walk stopped with this pid, or 0 */
	u8 seen[PID_LIMIT];             /* the pass that last listed this pid */
	struct qent queue[PID_LIMIT];   /* one pass's processes, breadth first */
	struct sref stopped[PID_LIMIT]; /* every process this walk stopped */
};

/* enqueue_children appends to km's queue the children of pid, read from the children file of each of
 * its threads (threads of them, from its stat: 1 reads the main thread's alone). */
static void enqueue_children(struct killmem *km, int pid, int threads, int *nq) {
	char path[64] = "/proc/";
	int base = 6 + itoa_(pid, path + 6);
	memcpy_(path + base, "/task/", 6);
	base += 6;
	long dfd = -1;
	if (threads > 1) {
		path[base] = 0;
		dfd = S4(SYS_openat, -100, path, 0x80000 | 0x10000 /* O_DIRECTORY */, 0);
		if (dfd < 0) return;
	}
	u8 db[4096];
	long dn = 0, off = 0;
	for (;;) {
		int tid = pid;
		if (dfd >= 0) {
			/* The next thread of the directory. */
			if (off >= dn) {
				dn = S3(SYS_getdents64, dfd, db, sizeof db);
				off = 0;
				if (dn <= 0) break;
			}
			unsigned short reclen = *(unsigned short *)(db + off + 16);
			char *name = (char *)db + off + 19;
			off += reclen;
			if (name[0] < '0' || name[0] > '9') continue;
			tid = 0;
			for (char *q = name; *q; q++) tid = tid * 10 + (*q - '0');
		}
		int k = base + itoa_(tid, path + base);
		memcpy_(path + k, "/children", 10);
		long fd = S4(SYS_openat, -100, path, 0x80000, 0);
		if (fd >= 0) {
			char b[4096];
			int v = 0, in = 0;
			for (;;) {
				long n = S3(SYS_read, fd, b, sizeof b);
				if (n <= 0) break;
				for (long j = 0; j < n; j++) {
					if (b[j] >= '0' && b[j] <= '9') { v = v * 10 + (b[j] - '0'); in = 1; }
					else if (in) { if (*nq < PID_LIMIT) km->queue[(*nq)++] = (struct qent){v, pid}; v = 0; in = 0; }
				}
			}
			if (in && *nq < PID_LIMIT) km->queue[(*nq)++] = (struct qent){v, pid};
			S1(SYS_close, fd);
		}
		if (dfd < 0) break;
	}
	if (dfd >= 0) S1(SYS_close, dfd);
}

/* signal_ sends sig to pid through a pidfd, if pid is still the process that started at start. */
static int signal_(int pid, u64 start, int sig) {
	long fd = S2(SYS_pidfd_open, pid, 0);
	if (fd < 0) return -1;
	struct pst st;
	if (read_stat(pid, &st) < 0 || st.start != start) { S1(SYS_close, fd); return -1; }
	long r = S4(SYS_pidfd_send_signal, fd, sig, 0, 0);
	S1(SYS_close, fd);
	return r == 0 ? 0 : -1;
}

/* walk makes one pass over every process below root, breadth first, each pid once (a child whose stat
 * names another parent, reparented since it was listed, is met again under its new parent). A freezing
 * pass stops with SIGSTOP each live process the walk has not stopped yet and records it in km->stopped
 * (ns of them); a killing pass SIGKILLs each live process it has neither stopped nor killed. It returns
 * how many it acted on. Nothing bounds the tree but the kernel's own limit on pids. */
static int walk(struct killmem *km, int root, u8 pass, int kill, int *ns) {
	int nq = 0, qi = 0, acted = 0;
	enqueue_children(km, root, 1, &nq);
	while (qi < nq) {
		struct qent e = km->queue[qi++];
		if (e.pid <= 0 || e.pid >= PID_LIMIT || km->seen[e.pid] == pass) continue;
		struct pst st;
		if (read_stat(e.pid, &st) < 0 || st.ppid != e.parent) continue;
		km->seen[e.pid] = pass;
		if (st.state == 'Z') continue; /* a zombie has no children: they were handed on */
		/* A process of one thread in the kernel's exit (PF_EXITING) goes by itself: neither signalled
		 * nor counted (procfs.Stat.Exiting); its children, not handed on yet, are walked. */
		int exiting = (st.flags & 0x4) && st.threads <= 1;
		if (!exiting && km->stopped_at[e.pid] != st.start) {
			if (kill) {
				if (signal_(e.pid, st.start, 9 /* SIGKILL */) == 0) {
					km->stopped_at[e.pid] = st.start; /* dying: not killed twice */
					acted++;
				}
			} else if (*ns < PID_LIMIT && signal_(e.pid, st.start, 19 /* SIGSTOP */) == 0) {
				km->stopped_at[e.pid] = st.start;
				km->stopped[(*ns)++] = (struct sref){st.start, e.pid, 0};
				acted++;
			}
		}
		enqueue_children(km, e.pid, st.threads, &nq);
	}
	return acted;
}

/* freeze_kill stops the whole tree below root (passes until one stops nothing new: a stopped process
 * forks no more), kills every process it stopped, then kills in passes whatever is still alive below
 * root until a pass finds nothing (what raced the freeze, and what killed parents handed on); it
 * returns how many it killed. */
static int freeze_kill(int root) {
	struct killmem *km = (struct killmem *)S6(SYS_mmap, 0, sizeof(struct killmem), 3, 0x4022 /* MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE */, -1, 0);
	if ((long)km < 0) return 0;
	int ns = 0, killed = 0;
	u8 pass = 0;
	while (pass < 64)
		if (!walk(km, root, ++pass, 0, &ns)) break;
	for (int j = 0; j < ns; j++)
		if (signal_(km->stopped[j].pid, km->stopped[j].start, 9 /* SIGKILL */) == 0) killed++;
	for (u8 end = pass + 64; pass < end;) {
		int n = walk(km, root, ++pass, 1, &ns);
		killed += n;
		if (!n) break;
	}
	S2(SYS_munmap, km, sizeof(struct killmem));
	return killed;
}

static u64 now_ns(void) {
	long ts[2];
	S2(SYS_clock_gettime, 1 /* CLOCK_MONOTONIC */, ts);
	return (u64)ts[0] * 1000000000UL + (u64)ts[1];
}

/* kill_tree kills every descendant and reaps them (two seconds at most); returns how many it killed. */
__attribute__((noinline)) static int kill_tree(void) {
	/* The init of a pid namespace of its own: the kernel kills the rest when it exits (as the Go init does). */
	if (S0(SYS_getpid) == 1) return 0;
	if (S4(SYS_wait4, -1, 0, 1, 0) == -ECHILD) return 0;
	int killed = freeze_kill((int)S0(SYS_getpid));
	u64 deadline = now_ns() + 2000000000UL;
	while (now_ns() < deadline) {
		long r = S4(SYS_wait4, -1, 0, 1, 0);
		if (r == -ECHILD) break;
		if (r <= 0) { long ts[2] = {0, 1000000}; S2(SYS_nanosleep, ts, 0); }
	}
	return killed;
}

/* ---- the sandbox (internal/sandbox's Prepare and Confine, for the plan corral computed) ---- */
enum {
	SYS_ioctl = 16, SYS_socket = 41, SYS_socketpair = 53, SYS_mkdir = 83, SYS_symlink = 88, SYS_unlink = 87,
	SYS_capset = 126, SYS_mount = 165, SYS_seccomp = 317, SYS_execveat = 322, SYS_open_tree = 428,
	SYS_move_mount = 429, SYS_fsopen = 430, SYS_fsconfig = 431, SYS_fsmount = 432, SYS_mount_setattr = 442,
	SYS_landlock_create_ruleset = 444, SYS_landlock_add_rule = 445, SYS_landlock_restrict_self = 446,
	SYS_bind = 49, SYS_listen = 50, SYS_setsockopt = 54,
};
enum { ENOENT = 2, EINVAL_ = 22, EAGAIN = 11 };
enum { A_RDONLY = 1, A_NOSUID = 2, A_NODEV = 4, A_NOEXEC = 8 };
#define O_CLOEXEC 0x80000
#define O_PATH 0x200000
#define AT_FDCWD (-100)
#define AT_EMPTY_PATH 0x1000
#define AT_RECURSIVE 0x8000
#define S_IFMT 0170000
#define S_IFDIR 0040000

/* plan is what corral computed for this sandbox (internal/sandbox.NativePlan), its strings NUL-terminated. */
struct plan {
	int on;
	char *goinit, *tmpdir;
	char **roots, **keep, **deny, **rules;
	u64 nroots, nkeep, ndeny, nrules;
	u64 *rights;
	u8 *optional;
	int netnone, gate, proxy;
	u64 handled, scoped, file_rights;
	const u8 *filter;
	u64 nfilter; /* instructions */
	const u8 *mechs;
	u64 mechlen;
	i64 abi;
	int ruleset, gofd, notify, cfgfd;
	/* the listeners to make inside the sandbox's network (the proxy's, then the host loopback ports'),
	 * each a family, an address, a port, and whether a missing address skips it; then their descriptors */
	u64 nlisten;
	struct listen_ { int family, port, optional, fd; u8 addr[16]; } *listen;
	/* the sockets commands may connect to outside the writable roots (AllowUnixSockets) */
	char **sockets;
	u64 nsockets;
};
#define MAXLISTEN 38

/* the reason a set-up step failed, for corral */
struct why { const char *stage; char msg[1024]; u64 n; i64 err_no; };

static void why_add(struct why *w, const char *s) {
	u64 l = strlen_(s);
	if (w->n + l >= sizeof w->msg) l = sizeof w->msg - 1 - w->n;
	memcpy_(w->msg + w->n, s, l);
	w->n += l;
}
/* set records a failure: "sandbox: what path", with the errno (corral adds its text); returns -1. */
static int set_why(struct why *w, const char *stage, const char *what, const char *path, long err) {
	w->stage = stage;
	w->n = 0;
	why_add(w, "sandbox: ");
	why_add(w, what);
	if (path) { why_add(w, " "); why_add(w, path); }
	w->err_no = err < 0 ? -err : err;
	return -1;
}

static long stat_(const char *path, struct stat_ *st, int follow) {
	return S4(SYS_newfstatat, AT_FDCWD, path, st, follow ? 0 : 0x100 /* AT_SYMLINK_NOFOLLOW */);
}

static int depth(const char *p) {
	if (p[0] == '/' && !p[1]) return 0;
	int n = 0;
	for (; *p; p++) n += *p == '/';
	return n;
}

static long clone_tree(const char *path, int recursive) {
	return S3(SYS_open_tree, AT_FDCWD, path, 1 /* OPEN_TREE_CLONE */ | O_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
}

struct mount_attr_ { u64 set, clr, propagation, userns; };
static long set_attr(long fd, u64 attrs, int recursive) {
	struct mount_attr_ a = {attrs, 0, 0, 0};
	return S6(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof a, 0);
}
static long attach(long fd, const char *path) {
	return S6(SYS_move_mount, fd, "", AT_FDCWD, path, 4 /* MOVE_MOUNT_F_EMPTY_PATH */, 0);
}

/* new_mount makes a detached mount of fstype with options ("key=value" or a flag), each NUL-terminated, ended by an empty one. */
static long new_mount(const char *fstype, u64 attrs, const char *opts) {
	long fs = S2(SYS_fsopen, fstype, 1 /* FSOPEN_CLOEXEC */);
	if (fs < 0) return fs;
	char kv[64];
	for (const char *o = opts; *o; o += strlen_(o) + 1) {
		u64 l = strlen_(o), i = 0;
		while (i < l && o[i] != '=') i++;
		if (l >= sizeof kv) { S1(SYS_close, fs); return -EINVAL_; }
		memcpy_(kv, o, l + 1);
		long r;
		if (i < l) {
			kv[i] = 0;
			r = S6(SYS_fsconfig, fs, 1 /* FSCONFIG_SET_STRING */, kv, kv + i + 1, 0, 0);
		} else {
			r = S6(SYS_fsconfig, fs, 0 /* FSCONFIG_SET_FLAG */, kv, 0, 0, 0);
		}
		if (r < 0) { S1(SYS_close, fs); return r; }
	}
	long r = S6(SYS_fsconfig, fs, 6 /* FSCONFIG_CMD_CREATE */, 0, 0, 0, 0);
	if (r >= 0) r = S3(SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, attrs);
	S1(SYS_close, fs);
	return r;
}

/* mkdir_all makes the parents of path (not path itself) where missing. */
static long mkdir_parents(const char *path) {
	char b[4096];
	u64 l = strlen_(path);
	if (l >= sizeof b) return -EINVAL_;
	memcpy_(b, path, l + 1);
	for (u64 i = 1; i < l; i++) {
		if (b[i] != '/') continue;
		b[i] = 0;
		long r = S2(SYS_mkdir, b, 0755);
		b[i] = '/';
		if (r < 0 && r != -17 /* EEXIST */) return r;
	}
	return 0;
}

/* mountpoint makes sure path exists as a directory (dir) or a file, creating it and its parents where missing. */
static int mountpoint(struct why *w, const char *path, int dir) {
	struct stat_ st;
	long r = stat_(path, &st, 0);
	if (r == 0) {
		if (((st.mode & S_IFMT) == S_IFDIR) != dir) return set_why(w, "prepare", "file-system view: mount point has the wrong type:", path, 20 /* ENOTDIR */);
		return 0;
	}
	if (r != -ENOENT) return set_why(w, "prepare", "file-system view: mount point", path, r);
	if ((r = mkdir_parents(path)) < 0) return set_why(w, "prepare", "file-system view: create the parents of mount point", path, r);
	if (dir) r = S2(SYS_mkdir, path, 0755);
	else if ((r = S4(SYS_openat, AT_FDCWD, path, 0x41 | 0x80 | O_CLOEXEC /* O_WRONLY|O_CREAT|O_EXCL */, 0644)) >= 0) r = S1(SYS_close, r);
	if (r < 0) return set_why(w, "prepare", "file-system view: create mount point", path, r);
	return 0;
}

enum { L_TMP, L_VARTMP, L_DEV, L_PROC, L_ROOT, L_KEEP, L_DENY };
struct layer { const char *path; int kind; long fd; };

/* MAXFD bounds the descriptors a view holds while it is built: corral gives the native init no plan of more
 * than 200 paths (internal/sandbox.Native), which needs at most 200 + 16. */
#define MAXFD 256
struct view { long fds[MAXFD]; int nfds; long ro[MAXFD]; int nro; long dev[6]; const char *empty; };
static long hold(struct view *v, long fd) {
	if (fd < 0) return fd;
	if (v->nfds >= MAXFD) {
		S1(SYS_close, fd);
		return -24; /* EMFILE */
	}
	v->fds[v->nfds++] = fd;
	return fd;
}

/* the harmless devices, one after the other (no array of pointers: the code has no relocations) */
static const char devblob[] = "/dev/null\0/dev/zero\0/dev/full\0/dev/random\0/dev/urandom\0/dev/tty";
static const char *nth(const char *blob, int i) {
	while (i--) blob += strlen_(blob) + 1;
	return blob;
}

static int build_dev(struct why *w, struct view *v) {
	long fd = hold(v, new_mount("tmpfs", A_NOSUID | A_NOEXEC, "mode=0755\0size=64k\0"));
	if (fd < 0) return set_why(w, "prepare", "file-system view: mount tmpfs at", "/dev", fd);
	v->ro[v->nro++] = fd;
	long r = attach(fd, "/dev");
	if (r < 0) return set_why(w, "prepare", "file-system view: move_mount", "/dev", r);
	for (int i = 0; i < 6; i++) {
		if (v->dev[i] < 0) continue;
		if (mountpoint(w, nth(devblob, i), 0) < 0) return -1;
		if ((r = attach(v->dev[i], nth(devblob, i))) < 0) return set_why(w, "prepare", "file-system view: move_mount", nth(devblob, i), r);
	}
	if ((r = S2(SYS_mkdir, "/dev/pts", 0755)) < 0) return set_why(w, "prepare", "file-system view: mkdir", "/dev/pts", r);
	fd = hold(v, new_mount("devpts", A_NOSUID | A_NOEXEC, "newinstance\0ptmxmode=0666\0mode=0620\0"));
	if (fd < 0) return set_why(w, "prepare", "file-system view: mount devpts at", "/dev/pts", fd);
	if ((r = attach(fd, "/dev/pts")) < 0) return set_why(w, "prepare", "file-system view: move_mount", "/dev/pts", r);
	if ((r = S2(SYS_mkdir, "/dev/shm", 0755)) < 0) return set_why(w, "prepare", "file-system view: mkdir", "/dev/shm", r);
	fd = hold(v, new_mount("tmpfs", A_NOSUID | A_NODEV, "mode=1777\0"));
	if (fd < 0) return set_why(w, "prepare", "file-system view: mount tmpfs at", "/dev/shm", fd);
	if ((r = attach(fd, "/dev/shm")) < 0) return set_why(w, "prepare", "file-system view: move_mount", "/dev/shm", r);
	/* target, then link, five times */
	static const char links[] = "pts/ptmx\0/dev/ptmx\0/proc/self/fd\0/dev/fd\0/proc/self/fd/0\0/dev/stdin\0"
				    "/proc/self/fd/1\0/dev/stdout\0/proc/self/fd/2\0/dev/stderr";
	for (int i = 0; i < 5; i++)
		if ((r = S2(SYS_symlink, nth(links, 2 * i), nth(links, 2 * i + 1))) < 0) return set_why(w, "prepare", "file-system view: symlink", nth(links, 2 * i + 1), r);
	/* The source of the empty files bound over denied files; removed once they are bound. */
	v->empty = "/dev/.corral-empty";
	if ((r = S4(SYS_openat, AT_FDCWD, v->empty, 0x41 | 0x200 | O_CLOEXEC /* O_WRONLY|O_CREAT|O_TRUNC */, 0444)) < 0)
		return set_why(w, "prepare", "file-system view: create", v->empty, r);
	S1(SYS_close, r);
	return 0;
}

/* deny hides path: an empty tmpfs over a directory, the empty file over anything else, both read-only. */
static int deny(struct why *w, struct view *v, const char *path) {
	struct stat_ st;
	long r = stat_(path, &st, 1), fd;
	if (r == -ENOENT) return 0;
	if (r < 0) return set_why(w, "prepare", "file-system view: denied path", path, r);
	if ((st.mode & S_IFMT) == S_IFDIR) {
		/* Read-only only at the end: writable roots below it need their mount points created in it first. */
		fd = hold(v, new_mount("tmpfs", A_NOSUID | A_NODEV | A_NOEXEC, "mode=0755\0size=64k\0"));
		if (fd < 0) return set_why(w, "prepare", "file-system view: mount tmpfs over", path, fd);
		v->ro[v->nro++] = fd; /* hold kept it: nro <= nfds < MAXFD */
	} else {
		if (!v->empty) return set_why(w, "prepare", "file-system view: no empty file to hide", path, EINVAL_);
		fd = hold(v, clone_tree(v->empty, 0));
		if (fd < 0) return set_why(w, "prepare", "file-system view: open_tree", v->empty, fd);
		if ((r = set_attr(fd, A_RDONLY | A_NOSUID | A_NODEV | A_NOEXEC, 0)) < 0) return set_why(w, "prepare", "file-system view: denied path", path, r);
	}
	r = S6(SYS_move_mount, fd, "", AT_FDCWD, path, 4 | 0x10 /* MOVE_MOUNT_F_EMPTY_PATH|MOVE_MOUNT_T_SYMLINKS */, 0);
	if (r < 0) return set_why(w, "prepare", "file-system view: hide", path, r);
	return 0;
}

static int within(const char *path, const char *dir) {
	u64 n = strlen_(dir);
	for (u64 i = 0; i < n; i++)
		if (path[i] != dir[i]) return 0;
	return path[n] == 0 || path[n] == '/';
}

/* build_view is internal/sandbox's buildView: every mount private, then read-only, nosuid and nodev; the
 * writable roots bound back read-write, the private /tmp, a fresh /var/tmp, /dev and /proc, the kept paths
 * under /tmp and /var/tmp, the denied paths hidden; attached parents first. */
static int build_view(struct why *w, struct plan *p, struct layer *ls) {
	struct view v;
	v.nfds = 0; v.nro = 0; v.empty = 0;
	int n = 0, rc = -1;
	long r = S6(SYS_mount, "none", "/", 0, 0x4000 | 0x40000 /* MS_REC|MS_PRIVATE */, 0, 0);
	if (r < 0) { set_why(w, "prepare", "file-system view: make mounts private (the init needs CAP_SYS_ADMIN in its user namespace)", 0, r); goto out; }
	/* the handles, before anything is covered */
	for (u64 i = 0; i < p->nroots; i++) {
		long fd = hold(&v, clone_tree(p->roots[i], 1));
		if (fd < 0) { set_why(w, "prepare", "file-system view: open_tree", p->roots[i], fd); goto out; }
		ls[n++] = (struct layer){p->roots[i], L_ROOT, fd};
	}
	long fd = hold(&v, clone_tree(p->tmpdir, 0));
	if (fd < 0) { set_why(w, "prepare", "file-system view: the private /tmp: open_tree", p->tmpdir, fd); goto out; }
	ls[n++] = (struct layer){"/tmp", L_TMP, fd};
	struct stat_ st;
	if (stat_("/var/tmp", &st, 0) == 0 && (st.mode & S_IFMT) == S_IFDIR) ls[n++] = (struct layer){"/var/tmp", L_VARTMP, -1};
	ls[n++] = (struct layer){"/dev", L_DEV, -1};
	ls[n++] = (struct layer){"/proc", L_PROC, -1};
	for (int i = 0; i < 6; i++) {
		v.dev[i] = hold(&v, clone_tree(nth(devblob, i), 0));
		if (v.dev[i] < 0 && i < 5) { set_why(w, "prepare", "file-system view: open_tree", nth(devblob, i), v.dev[i]); goto out; }
	}
	for (u64 i = 0; i < p->nkeep; i++) {
		if (!within(p->keep[i], "/tmp") && !within(p->keep[i], "/var/tmp")) continue;
		fd = hold(&v, clone_tree(p->keep[i], 1));
		if (fd < 0) { set_why(w, "prepare", "file-system view: open_tree", p->keep[i], fd); goto out; }
		ls[n++] = (struct layer){p->keep[i], L_KEEP, fd};
	}
	for (u64 i = 0; i < p->ndeny; i++) ls[n++] = (struct layer){p->deny[i], L_DENY, -1};
	/* One call makes every mount read-only; the handles taken above are copies outside the tree and keep their flags. */
	struct mount_attr_ ro = {A_RDONLY | A_NOSUID | A_NODEV, 0, 0, 0};
	if ((r = S6(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro, 0)) < 0) { set_why(w, "prepare", "file-system view: make the file system read-only", 0, r); goto out; }
	/* parents first; at one depth a denial after the rest (a stable insertion sort) */
	for (int i = 1; i < n; i++) {
		struct layer k = ls[i];
		int kd = depth(k.path) * 2 + (k.kind == L_DENY);
		int j = i - 1;
		while (j >= 0 && depth(ls[j].path) * 2 + (ls[j].kind == L_DENY) > kd) { ls[j + 1] = ls[j]; j--; }
		ls[j + 1] = k;
	}
	for (int i = 0; i < n; i++) {
		struct layer *l = &ls[i];
		switch (l->kind) {
		case L_TMP:
			if ((r = set_attr(l->fd, A_NOSUID | A_NODEV, 0)) < 0) { set_why(w, "prepare", "file-system view: the private /tmp", 0, r); goto out; }
			if ((r = attach(l->fd, "/tmp")) < 0) { set_why(w, "prepare", "file-system view: move_mount", "/tmp", r); goto out; }
			break;
		case L_VARTMP:
			fd = hold(&v, new_mount("tmpfs", A_NOSUID | A_NODEV, "mode=1777\0"));
			if (fd < 0) { set_why(w, "prepare", "file-system view: mount tmpfs at", "/var/tmp", fd); goto out; }
			if ((r = attach(fd, "/var/tmp")) < 0) { set_why(w, "prepare", "file-system view: move_mount", "/var/tmp", r); goto out; }
			break;
		case L_DEV:
			if (build_dev(w, &v) < 0) goto out;
			break;
		case L_PROC:
			fd = hold(&v, new_mount("proc", A_RDONLY | A_NOSUID | A_NODEV | A_NOEXEC, ""));
			if (fd < 0) { set_why(w, "prepare", "file-system view: mount proc at", "/proc", fd); goto out; }
			if ((r = attach(fd, "/proc")) < 0) { set_why(w, "prepare", "file-system view: move_mount", "/proc", r); goto out; }
			break;
		case L_ROOT:
			if (mountpoint(w, l->path, 1) < 0) goto out;
			if ((r = set_attr(l->fd, A_NOSUID | A_NODEV, 1)) < 0) { set_why(w, "prepare", "file-system view: writable root", l->path, r); goto out; }
			if ((r = attach(l->fd, l->path)) < 0) { set_why(w, "prepare", "file-system view: move_mount", l->path, r); goto out; }
			break;
		case L_KEEP: {
			struct stat_ have, shown;
			if ((r = S2(SYS_fstat, l->fd, &have)) < 0) { set_why(w, "prepare", "file-system view:", l->path, r); goto out; }
			if (stat_(l->path, &shown, 0) == 0 && shown.dev == have.dev && shown.ino == have.ino) break; /* in view already, under a writable root */
			if (mountpoint(w, l->path, (have.mode & S_IFMT) == S_IFDIR) < 0) goto out;
			if ((r = set_attr(l->fd, A_RDONLY | A_NOSUID | A_NODEV, 1)) < 0) { set_why(w, "prepare", "file-system view:", l->path, r); goto out; }
			if ((r = attach(l->fd, l->path)) < 0) { set_why(w, "prepare", "file-system view: move_mount", l->path, r); goto out; }
			break;
		}
		case L_DENY:
			if (deny(w, &v, l->path) < 0) goto out;
			break;
		}
	}
	if (v.empty && (r = S1(SYS_unlink, v.empty)) < 0) { set_why(w, "prepare", "file-system view: remove", v.empty, r); goto out; }
	for (int i = 0; i < v.nro; i++)
		if ((r = set_attr(v.ro[i], A_RDONLY, 0)) < 0) { set_why(w, "prepare", "file-system view: make a mount read-only", 0, r); goto out; }
	if ((r = S1(SYS_chdir, "/")) < 0) { set_why(w, "prepare", "file-system view: chdir", "/", r); goto out; }
	rc = 0;
out:
	for (int i = 0; i < v.nfds; i++) S1(SYS_close, v.fds[i]);
	return rc;
}

/* read_file reads up to cap-1 bytes of path, NUL-terminated; returns the length or a negative errno. */
static long read_file(const char *path, char *b, u64 cap) {
	long fd = S4(SYS_openat, AT_FDCWD, path, O_CLOEXEC, 0);
	if (fd < 0) return fd;
	u64 n = 0;
	for (;;) {
		long r = S3(SYS_read, fd, b + n, cap - 1 - n);
		if (r == -EINTR) continue;
		if (r <= 0) break;
		n += (u64)r;
		if (n >= cap - 1) break;
	}
	S1(SYS_close, fd);
	b[n] = 0;
	return (long)n;
}

struct ifreq_ { char name[16]; unsigned short flags; char pad[22]; };

/* up_loopback brings lo up, after checking that no other interface is (proof of a network namespace of its own). */
static int up_loopback(struct why *w) {
	char b[8192];
	long n = read_file("/proc/self/net/dev", b, sizeof b);
	if (n < 0) return set_why(w, "prepare", "network: read", "/proc/self/net/dev", n);
	long s = S3(SYS_socket, 2 /* AF_INET */, 2 /* SOCK_DGRAM */ | O_CLOEXEC, 0);
	if (s < 0) return set_why(w, "prepare", "network: socket", 0, s);
	int line = 0, rc = 0;
	for (long i = 0; i < n && rc == 0;) {
		long e = i;
		while (e < n && b[e] != '\n') e++;
		if (line++ >= 2) {
			long a = i;
			while (a < e && b[a] == ' ') a++;
			long c = a;
			while (c < e && b[c] != ':') c++;
			if (c < e && c - a < 16 && !(c - a == 2 && b[a] == 'l' && b[a + 1] == 'o')) {
				struct ifreq_ q;
				for (int k = 0; k < 16; k++) q.name[k] = 0;
				memcpy_(q.name, b + a, (u64)(c - a));
				long r = S3(SYS_ioctl, s, 0x8913 /* SIOCGIFFLAGS */, &q);
				if (r < 0) rc = set_why(w, "prepare", "network: interface", q.name, r);
				else if (q.flags & 1 /* IFF_UP */) rc = set_why(w, "prepare", "network: an interface is up (network none needs the init cloned with CLONE_NEWNET):", q.name, EINVAL_);
			}
		}
		i = e + 1;
	}
	if (rc == 0) {
		struct ifreq_ q;
		for (int k = 0; k < 16; k++) q.name[k] = 0;
		q.name[0] = 'l'; q.name[1] = 'o';
		long r = S3(SYS_ioctl, s, 0x8913, &q);
		if (r >= 0) { q.flags |= 1; r = S3(SYS_ioctl, s, 0x8914 /* SIOCSIFFLAGS */, &q); }
		if (r < 0) rc = set_why(w, "prepare", "network: bring lo up (the init needs CAP_NET_ADMIN in its user namespace)", 0, r);
	}
	S1(SYS_close, s);
	return rc;
}

/* listen_all makes the plan's listeners inside the sandbox's network, as internal/sandbox's listenAll does:
 * an optional address this network lacks (no IPv6) is skipped. */
static int listen_all(struct why *w, struct plan *p) {
	for (u64 i = 0; i < p->nlisten; i++) {
		struct listen_ *l = &p->listen[i];
		l->fd = -1;
		long fd = S3(SYS_socket, l->family, 1 /* SOCK_STREAM */ | O_CLOEXEC, 0);
		long r = fd;
		if (fd >= 0) {
			int one = 1;
			r = S6(SYS_setsockopt, fd, 1 /* SOL_SOCKET */, 2 /* SO_REUSEADDR */, &one, 4, 0);
		}
		if (r >= 0) {
			u8 sa[28];
			for (int k = 0; k < 28; k++) sa[k] = 0;
			sa[0] = (u8)l->family;
			sa[2] = (u8)(l->port >> 8);
			sa[3] = (u8)l->port;
			if (l->family == 2 /* AF_INET */) {
				memcpy_(sa + 4, l->addr, 4);
				r = S3(SYS_bind, fd, sa, 16);
			} else {
				memcpy_(sa + 8, l->addr, 16);
				r = S3(SYS_bind, fd, sa, 28);
			}
		}
		if (r >= 0) r = S2(SYS_listen, fd, 128);
		if (r < 0) {
			if (fd >= 0) S1(SYS_close, fd);
			if (l->optional && (r == -99 /* EADDRNOTAVAIL */ || r == -97 /* EAFNOSUPPORT */)) continue;
			return set_why(w, "prepare", i == 0 && p->proxy ? "proxy listener" : "host loopback port listener", 0, r);
		}
		l->fd = (int)fd;
	}
	return 0;
}

/* landlock_ruleset builds the plan's ruleset (not yet enforced), once the view is built. */
static int landlock_ruleset(struct why *w, struct plan *p) {
	u64 attr[3] = {p->handled, 0, p->scoped};
	long rs = S3(SYS_landlock_create_ruleset, attr, sizeof attr, 0);
	if (rs < 0) return set_why(w, "confine", "landlock ruleset", 0, rs);
	for (u64 i = 0; i < p->nrules; i++) {
		long fd = S4(SYS_openat, AT_FDCWD, p->rules[i], O_PATH | O_CLOEXEC, 0);
		if (fd == -ENOENT && p->optional[i]) continue;
		if (fd < 0) { S1(SYS_close, rs); return set_why(w, "confine", "landlock rule", p->rules[i], fd); }
		struct stat_ st;
		long r = S2(SYS_fstat, fd, &st);
		u64 rights = p->rights[i];
		if (r == 0 && (st.mode & S_IFMT) != S_IFDIR) rights &= p->file_rights;
		struct __attribute__((packed)) { u64 allowed; int fd; } pb = {rights, (int)fd};
		if (r == 0) r = S4(SYS_landlock_add_rule, rs, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0);
		S1(SYS_close, fd);
		if (r < 0) { S1(SYS_close, rs); return set_why(w, "confine", "landlock rule", p->rules[i], r); }
	}
	p->ruleset = (int)rs;
	return 0;
}

/* initial_userns reports whether this process is in the machine's initial user namespace (uid_map "0 0 4294967295"). */
static int initial_userns(void) {
	char b[256];
	long n = read_file("/proc/self/uid_map", b, sizeof b);
	if (n < 0) return 1; /* cannot tell: refuse */
	/* the numbers of the map, in order: the initial one is "0 0 4294967295" alone */
	u64 v[4] = {0, 0, 0, 0};
	int k = 0, in = 0;
	for (long i = 0; i <= n; i++) {
		char c = i < n ? b[i] : ' ';
		if (c >= '0' && c <= '9') {
			if (k > 3) return 0;
			v[k] = v[k] * 10 + (u64)(c - '0');
			in = 1;
		} else if (in) {
			in = 0;
			k++;
		}
	}
	return k == 3 && v[0] == 0 && v[1] == 0 && v[2] == 4294967295UL;
}

/* dir_empty reports whether path is a directory with nothing in it. */
static int dir_empty(const char *path) {
	long fd = S4(SYS_openat, AT_FDCWD, path, O_CLOEXEC | 0x10000 /* O_DIRECTORY */ | 0x20000 /* O_NOFOLLOW */, 0);
	if (fd < 0) return 0;
	u8 db[1024];
	int empty = 1;
	for (;;) {
		long n = S3(SYS_getdents64, fd, db, sizeof db);
		if (n <= 0) break;
		for (long off = 0; off < n;) {
			unsigned short reclen = *(unsigned short *)(db + off + 16);
			char *name = (char *)db + off + 19;
			if (!(name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))) empty = 0;
			off += reclen;
		}
	}
	S1(SYS_close, fd);
	return empty;
}

/* prepare is internal/sandbox's Prepare for the plan: it runs once, before the first command. */
static int prepare(struct why *w, struct plan *p, struct layer *ls) {
	if (S0(SYS_getpid) != 1) return set_why(w, "prepare", "Prepare runs in the init, pid 1 of a new pid namespace (clone with CLONE_NEWPID)", 0, EINVAL_);
	if (initial_userns()) return set_why(w, "prepare", "Prepare runs in a new user namespace (clone with CLONE_NEWUSER); refusing to change the mounts of this one", 0, EINVAL_);
	if (!dir_empty(p->tmpdir)) return set_why(w, "prepare", "the private /tmp must be a new, empty directory:", p->tmpdir, EINVAL_);
	/* The Go init, for the gate: reached by a descriptor taken before the view may hide its path. */
	long g = S4(SYS_openat, AT_FDCWD, p->goinit, O_PATH | O_CLOEXEC, 0);
	if (g < 0) return set_why(w, "prepare", "open the Go init", p->goinit, g);
	p->gofd = (int)g;
	if (build_view(w, p, ls) < 0) return -1;
	if (p->netnone && up_loopback(w) < 0) return -1;
	if (listen_all(w, p) < 0) return -1;
	return landlock_ruleset(w, p);
}

/* confine is internal/sandbox's Confine, in the command's own process before its exec: no_new_privs, no
 * capability in any set, Landlock, the seccomp filter (its notification descriptor sent back on sock when
 * the gate is on), then a check of what the kernel reports. It returns 0, or -1 with w set. */
__attribute__((noinline)) static int confine(struct why *w, struct plan *p, int sock) {
	long r = S6(SYS_prctl, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0);
	if (r < 0) return set_why(w, "confine", "no_new_privs", 0, r);
	for (int c = 0; c < 64; c++) {
		r = S6(SYS_prctl, 24 /* PR_CAPBSET_DROP */, c, 0, 0, 0, 0);
		if (r == -EINVAL_) break; /* beyond what this kernel knows */
		if (r < 0) return set_why(w, "confine", "drop a capability from the bounding set (the init needs CAP_SETPCAP)", 0, r);
	}
	if ((r = S6(SYS_prctl, 47 /* PR_CAP_AMBIENT */, 4 /* PR_CAP_AMBIENT_CLEAR_ALL */, 0, 0, 0, 0)) < 0) return set_why(w, "confine", "clear ambient capabilities", 0, r);
	u32 hdr[2] = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
	u32 data[6] = {0, 0, 0, 0, 0, 0};
	if ((r = S2(SYS_capset, hdr, data)) < 0) return set_why(w, "confine", "clear capabilities", 0, r);
	if ((r = S2(SYS_landlock_restrict_self, p->ruleset, 0)) < 0) return set_why(w, "confine", "landlock: restrict", 0, r);
	struct { unsigned short len; const u8 *filter; } prog = {(unsigned short)p->nfilter, p->filter};
	long flags = p->gate ? 8 /* SECCOMP_FILTER_FLAG_NEW_LISTENER */ | 32 /* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV */ : 0;
	r = S3(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, flags, &prog);
	if (r == -EINVAL_ && (flags & 32)) r = S3(SYS_seccomp, 1, flags & ~32L, &prog);
	if (r < 0) return set_why(w, "confine", "seccomp filter", 0, r);
	if (p->gate) {
		int nfd = (int)r;
		u64 cbuf[3];
		struct cmsghdr *c = (struct cmsghdr *)cbuf;
		c->len = sizeof(struct cmsghdr) + 4;
		c->level = 1;
		c->type = 1;
		memcpy_((u8 *)cbuf + sizeof(struct cmsghdr), &nfd, 4);
		u8 one = 1;
		struct iovec iov = {&one, 1};
		struct msghdr m = {0, 0, &iov, 1, cbuf, sizeof(struct cmsghdr) + 8, 0};
		r = S3(SYS_sendmsg, sock, &m, 0x4000);
		S1(SYS_close, nfd);
		if (r < 0) return set_why(w, "confine", "hand the gate's descriptor to the init", 0, r);
	}
	/* what the kernel holds for this process */
	char b[4096];
	long n = read_file("/proc/thread-self/status", b, sizeof b);
	if (n < 0) return set_why(w, "confine", "check the confinement: read", "/proc/thread-self/status", n);
	/* each field, then the value it must have, seven times */
	static const char want[] = "NoNewPrivs\0" "1\0" "Seccomp\0" "2\0" "CapInh\0" "0000000000000000\0" "CapPrm\0" "0000000000000000\0"
				   "CapEff\0" "0000000000000000\0" "CapBnd\0" "0000000000000000\0" "CapAmb\0" "0000000000000000";
	int seen = 0;
	for (long i = 0; i < n;) {
		long e = i;
		while (e < n && b[e] != '\n') e++;
		long colon = i;
		while (colon < e && b[colon] != ':') colon++;
		for (int k = 0; k < 7 && colon < e; k++) {
			if (!streq((const u8 *)b + i, (u64)(colon - i), nth(want, 2 * k))) continue;
			long v = colon + 1;
			while (v < e && (b[v] == ' ' || b[v] == '\t')) v++;
			if (!streq((const u8 *)b + v, (u64)(e - v), nth(want, 2 * k + 1))) return set_why(w, "confine", "check the confinement: the kernel reports another", nth(want, 2 * k), EINVAL_);
			seen |= 1 << k;
		}
		i = e + 1;
	}
	if (seen != 0x7f) return set_why(w, "confine", "check the confinement: the kernel does not report every field", 0, EINVAL_);
	return 0;
}

struct child_args {
	int *fds; int share; char *dir, *path; char **argv, **envp; int *ign; u64 nign; u64 *orig; volatile int err;
	struct plan *plan; int sock; struct why why; volatile int confine_failed;
};

static void child_main(struct child_args *a) {
	if (a->plan && confine(&a->why, a->plan, a->sock) < 0) {
		a->confine_failed = 1;
		return;
	}
	if (!a->share) S0(SYS_setsid);
	if (a->dir[0]) {
		long r = S1(SYS_chdir, a->dir);
		if (r < 0) { a->err = (int)-r; return; }
	}
	for (int i = 0; i < 3; i++) S2(SYS_dup2, a->fds[i], i);
	for (u64 i = 0; i < a->nign && i < 64; i++) {
		struct sigaction_ sa = {(void *)1 /* SIG_IGN */, 0, 0, 0};
		S4(SYS_rt_sigaction, a->ign[i], &sa, 0, 8);
	}
	S4(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, a->orig, 0, 8);
	long r = S3(SYS_execve, a->path, a->argv, a->envp);
	a->err = (int)-r;
}

/* vfork_run starts child_main(a) on stack top in a child that shares this memory; returns its pid once it has exec'd or exited. */
static long vfork_run(struct child_args *a, void *top) {
	long ret;
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	register void *fn __asm__("rbx") = (void *)child_main;
	register void *arg __asm__("r12") = a;
	__asm__ volatile(
		"syscall\n\t"
		"test %%rax, %%rax\n\t"
		"jnz 1f\n\t"
		"mov %%r12, %%rdi\n\t"
		"call *%%rbx\n\t"
		"mov $60, %%eax\n\t"
		"mov $127, %%edi\n\t"
		"syscall\n\t"
		"hlt\n\t"
		"1:\n\t"
		: "=a"(ret)
		: "a"(56), "D"(0x4000 | 0x100 | 17 /* CLONE_VFORK|CLONE_VM|SIGCHLD */), "S"(top), "d"(0), "r"(r10), "r"(r8), "r"(fn), "r"(arg)
		: "rcx", "r11", "memory");
	return ret;
}

__attribute__((noreturn)) static void quit(int code) {
	S1(SYS_exit_group, code);
	__builtin_unreachable();
}

/* ---- the configuration's sandbox parts (internal/shim/codec_linux.go) ---- */
static void skip_strs(dec *d) {
	u64 n = d_uint(d), l;
	for (u64 i = 0; i < n && !d->bad; i++) d_str(d, &l);
}

/* skip_policy reads past a sandbox's policy: the plan that follows says what the native init does with it.
 * It returns -1 for a policy only the Go init serves (a guard). */
static int skip_policy(dec *d) {
	u64 l;
	d_str(d, &l); d_str(d, &l); /* mode, workdir */
	skip_strs(d); skip_strs(d); /* writable, deny_read */
	d_str(d, &l);               /* network */
	skip_strs(d); skip_strs(d); /* private, allow_unix_sockets */
	d_str(d, &l);               /* tmpdir */
	d_int(d); /* proxy port */
	u64 nloop = d_uint(d);
	for (u64 i = 0; i < nloop && !d->bad; i++) {
		d_int(d);
		d_str(d, &l);
		d_bool(d);
	}
	return d_bool(d) ? -1 : 0; /* a guard */
}

/* area hands out memory from the run's scratch mapping. */
struct area { u8 *p, *end; int bad; };
static void *take(struct area *a, u64 n) {
	n = (n + 7) & ~7UL;
	if (a->bad || n > (u64)(a->end - a->p)) { a->bad = 1; return 0; }
	void *r = a->p;
	a->p += n;
	return r;
}
static char *cstr(dec *d, struct area *a) {
	u64 l;
	const u8 *s = d_str(d, &l);
	char *c = take(a, l + 1);
	if (!c) return 0;
	memcpy_(c, s, l);
	c[l] = 0;
	return c;
}
static char **cstrs(dec *d, struct area *a, u64 *n) {
	*n = d_uint(d);
	if (d->bad || *n > (u64)(d->end - d->p)) { d->bad = 1; *n = 0; return 0; }
	char **v = take(a, 8 * (*n + 1));
	for (u64 i = 0; v && i < *n && !d->bad; i++) v[i] = cstr(d, a);
	if (v) v[*n] = 0;
	return v;
}

/* read_plan reads internal/sandbox.NativePlan as the codec wrote it. */
static void read_plan(dec *d, struct area *a, struct plan *p) {
	p->goinit = cstr(d, a);
	p->roots = cstrs(d, a, &p->nroots);
	p->tmpdir = cstr(d, a);
	p->keep = cstrs(d, a, &p->nkeep);
	p->deny = cstrs(d, a, &p->ndeny);
	p->netnone = d_bool(d);
	p->handled = d_uint(d);
	p->scoped = d_uint(d);
	p->file_rights = d_uint(d);
	p->nrules = d_uint(d);
	if (d->bad || p->nrules > (u64)(d->end - d->p)) { d->bad = 1; return; }
	p->rules = take(a, 8 * (p->nrules + 1));
	p->rights = take(a, 8 * (p->nrules + 1));
	p->optional = take(a, p->nrules + 1);
	if (!p->rules || !p->rights || !p->optional) { d->bad = 1; return; }
	for (u64 i = 0; i < p->nrules && !d->bad; i++) {
		p->rules[i] = cstr(d, a);
		p->rights[i] = d_uint(d);
		p->optional[i] = (u8)d_bool(d);
	}
	u64 l;
	p->filter = d_str(d, &l);
	if (l % 8 || l == 0 || l / 8 > 4096) d->bad = 1;
	p->nfilter = l / 8;
	p->gate = d_bool(d);
	const u8 *m = d->p;
	skip_strs(d);
	p->mechs = m;
	p->mechlen = (u64)(d->p - m);
	p->abi = d_int(d);
	p->proxy = d_bool(d);
	p->nlisten = d_uint(d);
	if (d->bad || p->nlisten > MAXLISTEN) { d->bad = 1; return; }
	p->listen = take(a, sizeof(struct listen_) * (p->nlisten + 1));
	for (u64 i = 0; p->listen && i < p->nlisten && !d->bad; i++) {
		struct listen_ *l = &p->listen[i];
		l->fd = -1;
		u64 n;
		const u8 *ad = d_str(d, &n);
		l->port = (int)d_uint(d);
		l->optional = d_bool(d);
		if (n == 4) l->family = 2;
		else if (n == 16) l->family = 10 /* AF_INET6 */;
		else d->bad = 1;
		if (!d->bad) memcpy_(l->addr, ad, n);
	}
	p->sockets = cstrs(d, a, &p->nsockets);
	if (a->bad) d->bad = 1;
}

/* ---- the gate's answers that need no connect ---- */
enum { SYS_connect = 42, SYS_fstatfs = 138, SYS_process_vm_readv = 310, SYS_pidfd_getfd = 438 };
enum { EACCES_ = 13, ECONNREFUSED = 111 };
#define S_IFSOCK 0140000
#define PIDFD_THREAD 0x80 /* O_EXCL */
/* struct seccomp_notif and seccomp_notif_resp, and their ioctls */
struct notif { u64 id; u32 pid, flags; int nr; u32 arch; u64 ip, args[6]; };
struct notif_resp { u64 id; i64 val; int error; u32 flags; };
#define NOTIF_RECV 0xc0502100UL
#define NOTIF_SEND 0xc0182101UL
#define NOTIF_ID_VALID 0x40082102UL
#define NOTIF_ID_VALID_OLD 0x80082102UL

static int has_prefix(const char *s, const char *p) {
	while (*p) if (*s++ != *p++) return 0;
	return 1;
}

/* gate_answer takes the connect() a command has just made (the gate's notification) and answers it here
 * where the Go init's gate (internal/sandbox's Gate) would answer it without a wait: the
 * lookup of a pathname socket that fails (its errno, ENOENT for a service that is not there, such as the
 * C library's name service cache at a user or host lookup) or finds no socket (ECONNREFUSED), and a socket
 * the gate would not connect (EACCES: more than one link, or on a read-only mount, which no mount of the
 * writable areas is, and not one of AllowUnixSockets; a host's D-Bus or user database). It connects a
 * non-blocking IPv4 or IPv6 socket itself, as the gate does, to the address given (the egress proxy's
 * listener, a host loopback port's), and answers with the connect's result. It reads
 * the address as the gate does (once, then checks that the call still waits) and takes the command's
 * socket as it does, so that an answer given here is the gate's. A Unix socket the gate would connect,
 * a blocking socket, and anything it is unsure of go to the Go init with the notification (it returns
 * 0, *n holding it). It returns 1 when it answered (or the call is gone), -1 when there was nothing to take. */
__attribute__((noinline)) static int gate_answer(struct plan *p, struct notif *n) {
	int notify = p->notify;
	u64 *z = (u64 *)n;
	for (u64 i = 0; i < sizeof *n / 8; i++) z[i] = 0;
	if (S3(SYS_ioctl, notify, NOTIF_RECV, n) < 0) return -1; /* interrupted, or the caller left */
	if (n->nr != SYS_connect) return 0;
	i64 len = (int)(u32)n->args[2];
	if (len <= 2 || len > 128) return 0;
	u8 addr[132];
	struct { void *base; u64 len; } local = {addr, (u64)len}, remote = {(void *)n->args[1], (u64)len};
	long k = S6(SYS_process_vm_readv, n->pid, &local, 1, &remote, 1, 0);
	long pidfd = S2(SYS_pidfd_open, n->pid, PIDFD_THREAD);
	u64 id = n->id;
	int valid = S3(SYS_ioctl, notify, NOTIF_ID_VALID, &id) == 0 ||
		S3(SYS_ioctl, notify, NOTIF_ID_VALID_OLD, &id) == 0;
	if (!valid) {
		if (pidfd >= 0) S1(SYS_close, pidfd);
		return 1; /* nobody waits for an answer */
	}
	if (k != len || pidfd < 0) {
		if (pidfd >= 0) S1(SYS_close, pidfd);
		return 0;
	}
	long sock = S3(SYS_pidfd_getfd, pidfd, (int)n->args[0], 0);
	S1(SYS_close, pidfd);
	if (sock < 0) return 0;
	unsigned short family = *(unsigned short *)addr;
	if (family == 2 /* AF_INET */ || family == 10 /* AF_INET6 */) {
		/* Connected as given, on the socket taken (the command's own may have been replaced since). A
		 * non-blocking one answers at once; a blocking one would hold this loop: the Go init's gate waits
		 * for it in slices. */
		long fl = S3(SYS_fcntl, sock, 3 /* F_GETFL */, 0);
		int answered = fl >= 0 && (fl & 04000 /* O_NONBLOCK */);
		if (answered) {
			long r = S3(SYS_connect, sock, addr, len);
			struct notif_resp rs = {n->id, 0, (int)(r < 0 ? r : 0), 0};
			S3(SYS_ioctl, notify, NOTIF_SEND, &rs);
		}
		S1(SYS_close, sock);
		return answered;
	}
	S1(SYS_close, sock);
	addr[len] = 0;
	const char *path = (const char *)addr + 2;
	if (*(unsigned short *)addr != 1 /* AF_UNIX */ || !path[0] || has_prefix(path, "/proc/self/") ||
		has_prefix(path, "/proc/thread-self/") || has_prefix(path, "/dev/fd/"))
		return 0;
	long dir = AT_FDCWD;
	if (path[0] != '/') {
		char cwd[32] = "/proc/";
		int c = 6 + itoa_((int)n->pid, cwd + 6);
		memcpy_(cwd + c, "/cwd", 5);
		dir = S4(SYS_openat, AT_FDCWD, cwd, O_PATH | O_CLOEXEC | 0x10000 /* O_DIRECTORY */, 0);
		if (dir < 0) return 0;
	}
	long pin = S4(SYS_openat, dir, path, O_PATH | O_CLOEXEC, 0);
	if (dir >= 0) S1(SYS_close, dir);
	long err = pin;
	if (pin >= 0) {
		struct stat_ st;
		struct { long type, bsize; u64 blocks[5]; int fsid[2]; long namelen, frsize, flags, spare[4]; } fs;
		err = 0;
		if (S2(SYS_fstat, pin, &st) < 0 || (st.mode & S_IFMT) != S_IFSOCK) {
			err = -ECONNREFUSED;
		} else if (st.nlink != 1 || (S2(SYS_fstatfs, pin, &fs) == 0 && (fs.flags & 1 /* ST_RDONLY */))) {
			/* The gate connects a socket with one link on a read-write mount of the writable areas, or one
			 * of AllowUnixSockets: no other. */
			err = -EACCES_;
			for (u64 i = 0; i < p->nsockets; i++) {
				struct stat_ a;
				if (stat_(p->sockets[i], &a, 1) == 0 && a.dev == st.dev && a.ino == st.ino) err = 0;
			}
		}
		S1(SYS_close, pin);
	}
	if (err == 0) return 0; /* a socket the gate may connect: the Go init decides, and connects */
	struct notif_resp r = {n->id, 0, (int)err, 0};
	S3(SYS_ioctl, notify, NOTIF_SEND, &r);
	return 1;
}

/* resume_go hands the run to the Go init (corral-shim), which serves the sandbox's gate: the command has just
 * connected a Unix socket. It executes it in this process, pid 1 still, with the control socket, the gate's
 * descriptor and the configuration, and says in its environment what it takes over (internal/shim's
 * ResumeEnv: the command's pid, 0 once its end is reported; detached; acked; the gate's descriptor; the
 * configuration's). It returns
 * only if the exec failed. */
static void resume_go(struct plan *p, long cmd, int detached, int acked, const struct notif *pend, long *sp, u64 *orig) {
	long argc = sp[0];
	char **env = (char **)(sp + argc + 2);
	u64 nenv = 0;
	while (env[nenv]) nenv++;
	if (nenv > 64) nenv = 64;
	char *envp[66];
	for (u64 i = 0; i < nenv; i++) envp[i] = env[i];
	char var[256] = "CORRAL_SHIM_RESUME=";
	int k = 19;
	k += itoa_((int)cmd, var + k); var[k++] = ' ';
	var[k++] = (char)('0' + detached); var[k++] = ' ';
	var[k++] = (char)('0' + acked); var[k++] = ' ';
	k += itoa_(p->notify, var + k); var[k++] = ' ';
	k += itoa_(p->cfgfd, var + k);
	if (pend) {
		u64 f[6] = {pend->id, pend->pid, (u64)(u32)pend->nr, pend->args[0], pend->args[1], pend->args[2]};
		for (int i = 0; i < 6; i++) { var[k++] = ' '; k += utoa64(f[i], var + k); }
	}
	var[k] = 0;
	envp[nenv] = var;
	envp[nenv + 1] = 0;
	char name[] = "corral-shim";
	char *argv[2] = {name, 0};
	S3(SYS_fcntl, CTL, 2 /* F_SETFD */, 0);
	S3(SYS_fcntl, p->notify, 2, 0);
	S3(SYS_fcntl, p->cfgfd, 2, 0);
	S4(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, orig, 0, 8);
	S6(SYS_execveat, p->gofd, "", argv, envp, AT_EMPTY_PATH, 0);
	u64 all = ~0UL;
	S4(SYS_rt_sigprocmask, 2, &all, 0, 8);
	S3(SYS_fcntl, CTL, 2, 1);
	S3(SYS_fcntl, p->cfgfd, 2, 1);
}

__attribute__((used)) void cmain(long *sp) {
	u64 all = ~0UL, orig = 0;
	S4(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, &all, &orig, 8);
	S2(SYS_prctl, 15 /* PR_SET_NAME */, "corral-shim");
	S2(SYS_prctl, 4 /* PR_SET_DUMPABLE */, 0);
	S3(SYS_fcntl, CTL, 2 /* F_SETFD */, 1);
	u64 chld = 1UL << (17 - 1);
	long sfd = S4(SYS_signalfd4, -1, &chld, 8, 0x80000 | 0x800 /* SFD_CLOEXEC|SFD_NONBLOCK */);
	int sent_self = 0, subreaper = 0, prepared = 0;
	u8 *cstack = 0;
	u8 buf[16384];
	for (;;) {
		int fds[8], nfds;
		long n = recv_msg(buf, sizeof buf, fds, &nfds);
		if (n < 0) quit(0);
		dec m = {buf, buf + n, 0};
		u64 opn;
		if (n < 1 || buf[0] != 0xC5) quit(125);
		m.p++;
		const u8 *op = d_str(&m, &opn);
		if (streq(op, opn, "exit")) quit(0);
		if (!streq(op, opn, "run") || nfds != 4) {
			for (int i = 0; i < nfds; i++) S1(SYS_close, fds[i]);
			if (streq(op, opn, "idle")) { send_msg("idle", 0, 0, 0, 0, 0, 0, "", 0, "", 0, 0, 0); continue; }
			continue;
		}
		/* the configuration */
		struct stat_ st;
		if (S2(SYS_fstat, fds[3], &st) < 0 || st.size <= 0) { fail("config", 0, "config", 6); quit(125); }
		u64 size = (u64)st.size;
		u8 *cfg = (u8 *)S6(SYS_mmap, 0, size, 3, 2 /* MAP_PRIVATE */, fds[3], 0);
		if ((long)cfg < 0) { fail("config", 0, "mmap", 4); quit(125); }
		/* strings laid out NUL-terminated with their pointer arrays */
		u64 areasize = size * 12 + 65536;
		u8 *mem = (u8 *)S6(SYS_mmap, 0, areasize, 3, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0);
		if ((long)mem < 0) { fail("config", 0, "mmap", 4); quit(125); }
		struct area ar = {mem, mem + areasize, 0};
		dec d = {cfg, cfg + size, 0};
		if (*d.p++ != 0xC6) d.bad = 1;
		int sandboxed = d_bool(&d);
		if (sandboxed && skip_policy(&d) < 0) { fail("config", 0, "native init: a guard's sandbox", 25); quit(125); }
		d_bool(&d); /* confined */
		int ack = d_bool(&d);
		if (ack && !sandboxed) { fail("config", 0, "native init: ack", 16); quit(125); }
		char *path = cstr(&d, &ar);
		u64 nargs, nenv;
		char **argv = cstrs(&d, &ar, &nargs);
		char **envp = cstrs(&d, &ar, &nenv);
		char *dir = cstr(&d, &ar);
		int share = d_bool(&d);
		u64 nign = d_uint(&d);
		int ign[64];
		for (u64 i = 0; i < nign && !d.bad; i++) {
			i64 sg = d_int(&d);
			if (i < 64) ign[i] = (int)sg;
		}
		int oneshot = d_bool(&d);
		struct plan plan;
		plan.on = 0; plan.notify = -1; plan.gofd = -1; plan.ruleset = -1; plan.cfgfd = -1;
		if (d_bool(&d)) { plan.on = 1; read_plan(&d, &ar, &plan); }
		if (d.bad || ar.bad || !path || !argv || !envp || !dir || sandboxed != plan.on) { fail("config", 0, "bad configuration", 17); quit(125); }
		if (plan.on) plan.cfgfd = fds[3];
		else S1(SYS_close, fds[3]);
		if (plan.on && !prepared) {
			/* the layers of the view: at most one per root, kept and denied path, and five more */
			struct layer *ls = take(&ar, sizeof(struct layer) * (plan.nroots + plan.nkeep + plan.ndeny + 8));
			struct why w;
			w.stage = "prepare"; w.n = 0; w.err_no = 0;
			if (!ls || prepare(&w, &plan, ls) < 0) {
				if (!ls) set_why(&w, "prepare", "no memory for the view", 0, 12);
				fail(w.stage, w.err_no, w.msg, w.n);
				quit(125);
			}
			prepared = 1;
		}
		if (dir[0]) {
			struct stat_ ds;
			if (S4(SYS_newfstatat, -100, dir, &ds, 0) < 0 || (ds.mode & 0170000) != 0040000) {
				char msg[4300] = "working directory ";
				u64 k = 18, dl = strlen_(dir);
				if (dl > 4000) dl = 4000;
				memcpy_(msg + k, dir, dl); k += dl;
				memcpy_(msg + k, " is not a directory", 19); k += 19;
				if (plan.on) {
					static const char where[] = " inside the sandbox (is it under a path the sandbox hides, such as /tmp?)";
					memcpy_(msg + k, where, sizeof where - 1); k += sizeof where - 1;
				}
				fail("start", 0, msg, k);
				for (int i = 0; i < 3; i++) S1(SYS_close, fds[i]);
				quit(0);
			}
		}
		if (!subreaper) {
			S2(SYS_prctl, 36 /* PR_SET_CHILD_SUBREAPER */, 1);
			subreaper = 1;
		}
		int sp2[2] = {-1, -1};
		if (plan.on && plan.gate && S4(SYS_socketpair, 1 /* AF_UNIX */, 2 /* SOCK_DGRAM */ | O_CLOEXEC, 0, sp2) < 0) {
			fail("confine", 0, "socketpair", 10);
			quit(125);
		}
		struct child_args ca;
		ca.fds = fds; ca.share = share; ca.dir = dir; ca.path = path; ca.argv = argv; ca.envp = envp;
		ca.ign = ign; ca.nign = nign; ca.orig = &orig; ca.err = 0;
		ca.plan = plan.on ? &plan : 0; ca.sock = sp2[1]; ca.confine_failed = 0; ca.why.n = 0; ca.why.err_no = 0; ca.why.stage = "confine";
		if (!cstack) cstack = (u8 *)S6(SYS_mmap, 0, 65536, 3, 0x22, -1, 0);
		long pid = vfork_run(&ca, cstack + 65536);
		for (int i = 0; i < 3; i++) S1(SYS_close, fds[i]);
		if (plan.on) {
			S1(SYS_close, plan.ruleset);
			plan.ruleset = -1;
			if (sp2[0] >= 0) {
				/* the gate's descriptor, which the command's process sent before its exec */
				u64 cbuf[4];
				u8 one;
				struct iovec iov = {&one, 1};
				struct msghdr mh = {0, 0, &iov, 1, cbuf, sizeof cbuf, 0};
				long r = S3(SYS_recvmsg, sp2[0], &mh, 0x40 /* MSG_DONTWAIT */ | 0x40000000 /* MSG_CMSG_CLOEXEC */);
				struct cmsghdr *c = (struct cmsghdr *)cbuf;
				if (r > 0 && mh.controllen >= sizeof(struct cmsghdr) + 4 && c->level == 1 && c->type == 1)
					memcpy_(&plan.notify, (u8 *)cbuf + sizeof(struct cmsghdr), 4);
				S1(SYS_close, sp2[0]);
				S1(SYS_close, sp2[1]);
			}
		} else {
			/* The child has exec'd or exited: its configuration is done with. */
			S2(SYS_munmap, cfg, size);
			S2(SYS_munmap, mem, areasize);
		}
		if (pid < 0 || ca.err || ca.confine_failed) {
			int st2;
			if (pid > 0) S4(SYS_wait4, pid, &st2, 0, 0);
			if (ca.confine_failed) fail("confine", ca.why.err_no, ca.why.msg, ca.why.n);
			else fail("start", pid < 0 ? -pid : ca.err, path, strlen_(path));
			quit(0);
		}
		if (plan.on && plan.gate && plan.notify < 0) {
			S2(SYS_kill, pid, 9);
			fail("confine", 0, "the gate's descriptor did not arrive", 36);
			quit(0);
		}
		int cfd = (int)S2(SYS_pidfd_open, pid, 0x800 /* PIDFD_NONBLOCK */);
		if (cfd < 0) {
			S2(SYS_kill, pid, 9);
			fail("start", -cfd, "pidfd of the command", 20);
			quit(0);
		}
		int out_fds[2] = {cfd, -1};
		int k = 1;
		if (!sent_self) {
			out_fds[1] = (int)S2(SYS_pidfd_open, S0(SYS_getpid), 0x800);
			if (out_fds[1] < 0) {
				S2(SYS_kill, pid, 9);
				fail("start", -out_fds[1], "pidfd of the init", 17);
				quit(0);
			}
			k = 2;
		}
		/* with a new sandbox's first run, its listeners after the pidfds */
		int all_fds[2 + MAXLISTEN];
		int nall = 0;
		for (int i = 0; i < k; i++) all_fds[nall++] = out_fds[i];
		for (u64 i = 0; plan.on && i < plan.nlisten; i++)
			if (plan.listen[i].fd >= 0) all_fds[nall++] = plan.listen[i].fd;
		u64 start = start_time((int)pid);
		long sr = send_msg_m("started", pid, start, 0, 0, 0, 0, "", 0, "", 0, all_fds, nall,
				     plan.on ? plan.mechs : 0, plan.mechlen, plan.on ? plan.abi : 0);
		sent_self = 1;
		for (int i = 0; i < nall; i++) S1(SYS_close, all_fds[i]);
		plan.nlisten = 0;
		if (sr < 0) { kill_tree(); quit(0); }
		/* serve: reap, report, until exit/idle/detach or end of file. Corral in another pid namespace reads
		 * the command's pid from its pidfd, which says nothing once the command is reaped: with ack, nothing
		 * is reaped before its first word. */
		int detached = 0, reported = 0, ctl_open = 1, acked = !ack;
		for (;;) {
			int status = 0, got = 0, empty = 0;
			if (acked) empty = reap((int)pid, &status, &got);
			if (got && !reported) {
				i64 code = 0, sig = 0;
				if ((status & 0x7f) == 0) code = (status >> 8) & 0xff;
				else sig = status & 0x7f;
				send_msg("exited", 0, 0, code, sig, empty, 0, "", 0, "", 0, 0, 0);
				reported = 1;
			}
			/* Nothing left to hold; or, for a one-shot sandbox, the command's end is reported and nothing of
			 * its tree is left: the init goes, its namespaces with it. */
			if (empty && (detached || (plan.on && oneshot))) quit(0);
			struct { int fd; short ev, rev; } p[3] = {{(int)sfd, 1, 0}, {ctl_open ? CTL : -1, 1, 0}, {plan.notify, 1, 0}};
			long pr = S3(SYS_poll, p, 3, -1);
			if (pr < 0) continue;
			if (p[0].rev) { u8 si[128 * 4]; S3(SYS_read, sfd, si, sizeof si); }
			if (p[2].rev && !(p[2].rev & 1 /* POLLIN */)) {
				/* No process holds the filter any more: no command will connect again. */
				S1(SYS_close, plan.notify);
				plan.notify = -1;
			} else if (p[2].rev) {
				/* A command connects a Unix socket: answered here if that needs no connect; else the Go
				 * init serves the gate from here on, this call first. */
				struct notif n;
				int a = gate_answer(&plan, &n);
				if (a == 1) continue;
				resume_go(&plan, reported ? 0 : pid, detached, acked, a == 0 ? &n : 0, sp, &orig);
				/* It could not start: without a gate a connect would wait for ever; with the descriptor
				 * closed, it fails. */
				S1(SYS_close, plan.notify);
				plan.notify = -1;
			}
			if (ctl_open && p[1].rev) {
				int f2[8], n2;
				long mn = recv_msg(buf, sizeof buf, f2, &n2);
				for (int i = 0; i < n2; i++) S1(SYS_close, f2[i]);
				acked = 1;
				if (mn < 0) {
					if (detached) { ctl_open = 0; continue; }
					kill_tree();
					quit(0);
				}
				dec mm = {buf + 1, buf + mn, 0};
				const u8 *o = d_str(&mm, &opn);
				if (streq(o, opn, "exit")) { kill_tree(); quit(0); }
				if (streq(o, opn, "detach")) { S2(SYS_prctl, 1 /* PR_SET_PDEATHSIG */, 0); detached = 1; continue; }
				if (streq(o, opn, "idle")) {
					send_msg("idle", 0, 0, 0, 0, 0, kill_tree(), "", 0, "", 0, 0, 0);
					break; /* wait for the next run */
				}
			}
		}
	}
}

__attribute__((naked, noreturn, section(".text.entry"))) void _start(void) {
	__asm__ volatile("mov %rsp, %rdi\n\tand $-16, %rsp\n\tcall cmain\n\thlt");
}
