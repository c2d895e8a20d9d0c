// Package winjob holds a process tree in a Windows Job Object, the
// containment corral uses on Windows.
//
// A [Job] is created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and
// JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, and never allows breakaway.
// A process assigned to it is a member, and so is every process a member
// creates afterwards: the job gives them no way out. When the last handle
// to the job is closed, by [Job.Close] or by the system when the process
// holding it dies, every member is terminated, unless [Job.Detach] cleared
// kill-on-close first. The handle is not inheritable, so no other process
// holds it by accident.
//
// What a job does not hold: processes that some process outside the job
// starts on a member's behalf (a service, the task scheduler, WMI, an
// out-of-process COM server) are not members.
//
// Jobs nest (Windows 8 and later), so a supervisor that itself runs inside
// a job, as CI runners and some terminals arrange, can still create one per
// run.
//
// The package is Windows only; on other systems it is empty.
package winjob
