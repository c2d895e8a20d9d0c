# corral's cgroup guardian, for linux/amd64 (see package guardelf).
#
# fd 0: the read end of a pipe whose write end only the supervisor holds.
# fd 1: cgroup.kill of the supervisor's cgroup directory, open for writing.
# argv[1]: that directory.
#
# It names itself corral-shim, blocks every signal it can, and reads fd 0
# until end of file or an error: the supervisor is gone. Then it writes
# "1" to fd 1, which kills every process of every leaf below the
# directory, removes the directory (which succeeds only when the
# supervisor left no leaf) and exits 0.
#
# Assembled with GNU as: as --64 -o g.o guardian_amd64.S
	.text
	.globl	_start
_start:
	mov	%rsp, %r12		# argc, argv[0], argv[1], ...
	mov	$15, %edi		# prctl(PR_SET_NAME, name)
	lea	name(%rip), %rsi
	mov	$157, %eax
	syscall
	xor	%edi, %edi		# rt_sigprocmask(SIG_BLOCK, &mask, NULL, 8)
	lea	mask(%rip), %rsi
	xor	%edx, %edx
	mov	$8, %r10d
	mov	$14, %eax
	syscall
	sub	$64, %rsp
1:	xor	%edi, %edi		# read(0, buf, 64)
	mov	%rsp, %rsi
	mov	$64, %edx
	xor	%eax, %eax
	syscall
	cmp	$-4, %rax		# EINTR: again
	je	1b
	test	%rax, %rax		# bytes: again (nothing is ever sent)
	jg	1b
	mov	$1, %edi		# write(1, "1", 1)
	lea	one(%rip), %rsi
	mov	$1, %edx
	mov	$1, %eax
	syscall
	cmpq	$1, (%r12)		# rmdir(argv[1]) when there is one
	jle	2f
	mov	16(%r12), %rdi
	mov	$84, %eax
	syscall
2:	xor	%edi, %edi		# exit_group(0)
	mov	$231, %eax
	syscall
	hlt
	.balign	8
mask:	.quad	-1
name:	.asciz	"corral-shim"
one:	.byte	'1'
