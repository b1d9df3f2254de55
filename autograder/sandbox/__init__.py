"""The worker's isolation, in layers, each used wherever the machine allows it.

    supervisor   always: the process between grader and worker; it kills all the worker started
    uid          a user of the worker's own, when the grader is root          (uid.py)
    namespaces   mount, IPC, network and PID namespaces and a chroot, as root or
                 through an unprivileged user namespace                      (namespaces.py)
    landlock     applied by the worker to itself: files, TCP, signals        (landlock.py)
    seccomp      applied by the worker to itself: no sockets, no namespaces  (seccomp.py)
    cgroup       a cgroup of its own below the grader's: a fair CPU share,
                 bounded tasks and memory, when the grader is root            (cgroup.py)
    fallback     python -I -S, a clean environment, resource limits          (worker.py, runtime/serve.py)

`probe.available()` finds which layers start here and what they protect; `layers`
stacks them into one command; `worker.Worker` runs the student's code inside them,
in workers forked from a warm parent that `zygote` forks into the chain's namespaces
where there are some; `record.Isolation` is what results.json says of it.
"""

from autograder.sandbox.probe import available
from autograder.sandbox.record import Isolation
from autograder.sandbox.worker import IsolationRefused, Worker, WorkerDied, WorkerLimits

__all__ = ["Isolation", "IsolationRefused", "Worker", "WorkerDied", "WorkerLimits", "available"]
