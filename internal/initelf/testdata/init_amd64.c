/*
 * corral's native init for plain runs (no sandbox, no enclosure, no other
 * user, no ack) on linux/amd64: the program internal/initelf's bytes are
 * made of (gen.sh; TestCodeIsItsSourceCompiled checks them). It keeps the
 * Go init's contract (internal/shim/init_linux.go) and speaks its binary
 * protocol (internal/shim/codec_linux.go) on its control socket, fd 3:
 *
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
static long send_msg(const char *op, i64 pid, u64 start, i64 code, i64 sig, int alone, i64 killed,
		     const char *stage, i64 err_no, const char *err, u64 errlen, const int *fds, int nfds) {
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
	e_uint(&e, 0); /* mechanisms */
	e_int(&e, 0);  /* landlock ABI */
	struct iovec iov = {buf, (u64)(e.p - buf)};
	u64 cbuf[8];
	struct msghdr m = {0, 0, &iov, 1, 0, 0, 0};
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

static int itoa_(int v, char *out) {
	char t[12];
	int k = 0, n = 0;
	do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v);
	while (k) out[n++] = t[--k];
	return n;
}

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
static int kill_tree(void) {
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

struct child_args { int *fds; int share; char *dir, *path; char **argv, **envp; int *ign; u64 nign; u64 *orig; volatile int err; };

static void child_main(struct child_args *a) {
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

__attribute__((used)) void cmain(long *sp) {
	(void)sp;
	u64 all = ~0UL, orig = 0;
	S4(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, &all, &orig, 8);
	S2(SYS_prctl, 15 /* PR_SET_NAME */, "corral-shim");
	S2(SYS_prctl, 4 /* PR_SET_DUMPABLE */, 0);
	S3(SYS_fcntl, CTL, 2 /* F_SETFD */, 1);
	u64 chld = 1UL << (17 - 1);
	long sfd = S4(SYS_signalfd4, -1, &chld, 8, 0x80000 | 0x800 /* SFD_CLOEXEC|SFD_NONBLOCK */);
	int sent_self = 0, subreaper = 0;
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
		S1(SYS_close, fds[3]);
		if ((long)cfg < 0) { fail("config", 0, "mmap", 4); quit(125); }
		/* strings laid out NUL-terminated with their pointer arrays */
		u64 area = size * 12 + 65536;
		u8 *mem = (u8 *)S6(SYS_mmap, 0, area, 3, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0);
		dec d = {cfg, cfg + size, 0};
		if (*d.p++ != 0xC6) d.bad = 1;
		if (d_bool(&d)) { fail("config", 0, "native init: a sandbox", 22); quit(125); }
		d_bool(&d); /* confined */
		if (d_bool(&d)) { fail("config", 0, "native init: ack", 16); quit(125); }
		u64 l;
		char *out = (char *)mem + 8 * ((size / 2) + 16) * 2; /* after the pointer arrays */
		char **ptrs = (char **)mem;
		const u8 *s = d_str(&d, &l);
		char *path = out; memcpy_(out, s, l); out[l] = 0; out += l + 1;
		u64 nargs = d_uint(&d);
		char **argv = ptrs;
		for (u64 i = 0; i < nargs && !d.bad; i++) { s = d_str(&d, &l); argv[i] = out; memcpy_(out, s, l); out[l] = 0; out += l + 1; }
		argv[nargs] = 0;
		char **envp = argv + nargs + 1;
		u64 nenv = d_uint(&d);
		for (u64 i = 0; i < nenv && !d.bad; i++) { s = d_str(&d, &l); envp[i] = out; memcpy_(out, s, l); out[l] = 0; out += l + 1; }
		envp[nenv] = 0;
		s = d_str(&d, &l);
		char *dir = out; memcpy_(out, s, l); out[l] = 0; out += l + 1;
		int share = d_bool(&d);
		u64 nign = d_uint(&d);
		int ign[64];
		for (u64 i = 0; i < nign && i < 64; i++) ign[i] = (int)d_int(&d);
		if (d.bad) { fail("config", 0, "bad configuration", 17); quit(125); }
		if (dir[0]) {
			struct stat_ ds;
			if (S4(SYS_newfstatat, -100, dir, &ds, 0) < 0 || (ds.mode & 0170000) != 0040000) {
				char msg[4200] = "working directory ";
				u64 k = 18, dl = strlen_(dir);
				if (dl > 4000) dl = 4000;
				memcpy_(msg + k, dir, dl); k += dl;
				memcpy_(msg + k, " is not a directory", 19); k += 19;
				fail("start", 0, msg, k);
				for (int i = 0; i < 3; i++) S1(SYS_close, fds[i]);
				quit(0);
			}
		}
		if (!subreaper) {
			S2(SYS_prctl, 36 /* PR_SET_CHILD_SUBREAPER */, 1);
			subreaper = 1;
		}
		struct child_args ca;
		ca.fds = fds; ca.share = share; ca.dir = dir; ca.path = path; ca.argv = argv; ca.envp = envp;
		ca.ign = ign; ca.nign = nign; ca.orig = &orig; ca.err = 0;
		if (!cstack) cstack = (u8 *)S6(SYS_mmap, 0, 65536, 3, 0x22, -1, 0);
		long pid = vfork_run(&ca, cstack + 65536);
		for (int i = 0; i < 3; i++) S1(SYS_close, fds[i]);
		/* The child has exec'd or exited: its configuration is done with. */
		S2(SYS_munmap, cfg, size);
		S2(SYS_munmap, mem, area);
		if (pid < 0 || ca.err) {
			int st2;
			if (pid > 0) S4(SYS_wait4, pid, &st2, 0, 0);
			fail("start", pid < 0 ? -pid : ca.err, path, strlen_(path));
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
		u64 start = start_time((int)pid);
		long sr = send_msg("started", pid, start, 0, 0, 0, 0, "", 0, "", 0, out_fds, k);
		sent_self = 1;
		for (int i = 0; i < k; i++) S1(SYS_close, out_fds[i]);
		if (sr < 0) quit(0);
		/* serve: reap, report, until exit/idle/detach or end of file */
		int detached = 0, reported = 0, ctl_open = 1;
		for (;;) {
			int status = 0, got = 0;
			int empty = reap((int)pid, &status, &got);
			if (got && !reported) {
				i64 code = 0, sig = 0;
				if ((status & 0x7f) == 0) code = (status >> 8) & 0xff;
				else sig = status & 0x7f;
				send_msg("exited", 0, 0, code, sig, empty, 0, "", 0, "", 0, 0, 0);
				reported = 1;
			}
			if (detached && empty) quit(0);
			struct { int fd; short ev, rev; } p[2] = {{(int)sfd, 1, 0}, {ctl_open ? CTL : -1, 1, 0}};
			long pr = S3(SYS_poll, p, 2, -1);
			if (pr < 0) continue;
			if (p[0].rev) { u8 si[128 * 4]; S3(SYS_read, sfd, si, sizeof si); }
			if (ctl_open && p[1].rev) {
				int f2[8], n2;
				long mn = recv_msg(buf, sizeof buf, f2, &n2);
				for (int i = 0; i < n2; i++) S1(SYS_close, f2[i]);
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
