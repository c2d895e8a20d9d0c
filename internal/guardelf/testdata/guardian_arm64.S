// corral's cgroup guardian, for linux/arm64 (see package guardelf).
//
// fd 0: the read end of a pipe whose write end only the supervisor holds.
// fd 1: cgroup.kill of the supervisor's cgroup directory, open for writing.
// argv[1]: that directory.
//
// It names itself corral-shim, blocks every signal it can, and reads fd 0
// until end of file or an error: the supervisor is gone. Then it writes
// "1" to fd 1, which kills every process of every leaf below the
// directory, removes the directory (which succeeds only when the
// supervisor left no leaf) and exits 0.
//
// Assembled with GNU as: aarch64-linux-gnu-as -o g.o guardian_arm64.S
	.text
	.globl	_start
_start:
	mov	x19, sp			// argc, argv[0], argv[1], ...
	mov	x0, #15			// prctl(PR_SET_NAME, name)
	adr	x1, name
	mov	x8, #167
	svc	#0
	mov	x0, #0			// rt_sigprocmask(SIG_BLOCK, &mask, NULL, 8)
	adr	x1, mask
	mov	x2, #0
	mov	x3, #8
	mov	x8, #135
	svc	#0
	sub	sp, sp, #64
1:	mov	x0, #0			// read(0, buf, 64)
	mov	x1, sp
	mov	x2, #64
	mov	x8, #63
	svc	#0
	cmn	x0, #4			// EINTR: again
	b.eq	1b
	cmp	x0, #0			// bytes: again (nothing is ever sent)
	b.gt	1b
	mov	x0, #1			// write(1, "1", 1)
	adr	x1, one
	mov	x2, #1
	mov	x8, #64
	svc	#0
	ldr	x0, [x19]		// unlinkat(AT_FDCWD, argv[1], AT_REMOVEDIR) when there is one
	cmp	x0, #1
	b.le	2f
	mov	x0, #-100
	ldr	x1, [x19, #16]
	mov	x2, #0x200
	mov	x8, #35
	svc	#0
2:	mov	x0, #0			// exit_group(0)
	mov	x8, #94
	svc	#0
	brk	#0
	.balign	8
mask:	.quad	-1
name:	.asciz	"corral-shim"
one:	.byte	'1'
