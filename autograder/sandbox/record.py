"""What isolation a grading had: the record written to results.json (`extra_data.isolation`).

Typed throughout: each layer's state is a `state.Layer`, each layer that did not start a
`Failure`, each instructor's file the probe could read an `Exposure` naming the grant that let
it. results.json holds them as data (`as_dict`) beside a `summary` line for people; code reads
the data, never the text.
"""

from dataclasses import dataclass, field
from typing import Any

from autograder.sandbox import disk as disk_bound
from autograder.sandbox.state import Layer, State

LAYERS = ("namespaces", "uid", "landlock", "seccomp", "cgroup")
# the protections a grading that counts needs (`--require-isolation`), and what their absence means
REQUIRED = {
    "hidden_instructor_files": "the worker could read the instructor's files",
    "no_network": "the worker could reach the network",
    "no_process_outlives": "a process the worker starts could outlive the grading",
    "others_out_of_reach": "the worker could change another process's limits or scheduling (the grader's, "
    "another student's worker's)",
}
ROOT_OR_NAMESPACES = ("run the grader as root (or with sudo)", "allow unprivileged user namespaces")
WHERE = "docs/security.md lists what each environment gives"


@dataclass(frozen=True)
class Failure:
    """A layer this machine should allow that did not start (or broke): what was tried, the step that failed."""

    layer: str  # "root namespaces", "user namespace", "uid", "landlock", "seccomp", "cgroup" or "worker"
    step: str  # what failed, e.g. "unshare: unshare failed: Operation not permitted"
    hint: str = ""  # what may stand in the way

    def __str__(self) -> str:
        return f"{self.layer}: {self.step}" + (f"; {self.hint}" if self.hint else "")


@dataclass(frozen=True)
class Exposure:
    """An instructor's file the probe read from inside the layers, and the grant that let it ("" for none)."""

    path: str
    grant: str = ""

    def __str__(self) -> str:
        return f"{self.path} ({self.grant})" if self.grant else self.path


@dataclass(frozen=True)
class Isolation:
    """Which protections the worker runs under, what gives each, and the layers that failed to start."""

    interpreter: str = "python -I -S, clean environment"
    separate_user: bool = False
    no_network: bool = False
    hidden_instructor_files: bool = False
    private_tmp: bool = False
    own_pid_namespace: bool = False
    no_process_outlives: bool = False
    fair_cpu: bool = False  # a cgroup of its own: the same CPU weight as every worker, its tasks and memory bounded
    others_out_of_reach: bool = False  # no call on another process by its id passes: prlimit64, setpriority...
    mechanisms: dict[str, list[str]] = field(default_factory=dict)  # protection -> the layers (LAYERS) giving it
    layers: dict[str, Layer] = field(default_factory=dict)  # layer (LAYERS) -> its state
    failures: list[Failure] = field(default_factory=list)  # layers this machine should allow that did not start
    exposed: list[Exposure] = field(default_factory=list)  # what the probe read of the instructor's files
    disk: disk_bound.Bound | None = None  # how what the worker writes is bounded (None: not recorded)

    def as_dict(self) -> dict[str, object]:
        record: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__}
        record["mechanisms"] = {name: list(found) for name, found in self.mechanisms.items()}
        record["layers"] = {name: layer.as_dict() for name, layer in self.layers.items()}
        record["failures"] = [vars(failure) for failure in self.failures]
        record["exposed"] = [vars(exposure) for exposure in self.exposed]
        record["disk"] = self.disk.as_dict() if self.disk else None
        record["summary"] = self.summary()  # for people
        return record

    def layer(self, name: str) -> Layer:
        return self.layers.get(name, Layer.off("not tried"))

    def missing(self) -> list[str]:
        """The required protections not in force."""
        return [name for name in REQUIRED if not getattr(self, name)]

    def in_force(self) -> list[str]:
        """The layers in force, as people read them (`uid 61000-64999`, `landlock abi 7`, ...)."""
        keys = dict.fromkeys(name for names in self.mechanisms.values() for name in names)
        return [self.layer(name).detail for name in LAYERS if name in keys]

    def summary(self) -> str:
        """One line for the terminal: the layers in force, then any that failed."""
        text = ", ".join(self.in_force()) or "interpreter-level only"
        text += f", {self.disk}" if self.disk else ""
        if "cgroup" in self.layers and not self.fair_cpu:  # recorded, and not in force: say what bounds the worker
            text += f", per-uid limits (cgroup {self.layer('cgroup')})"
        return text + "".join(f"; {failure}" for failure in self.failures)

    def refusal(self) -> str:
        """Why a grading that counts may not run here, and how to get the protection ("" when it may)."""
        missing = self.missing()
        if not missing:
            return ""
        reasons = "; ".join(self._reason(name) for name in missing)
        failed = f" (failed: {'; '.join(map(str, self.failures))})" if self.failures else ""
        return f"isolation required but not available: {reasons}{failed}. {self.advice(missing)}"

    def _reason(self, name: str) -> str:
        if name == "hidden_instructor_files" and self.exposed:
            return f"{REQUIRED[name]}: the probe read {', '.join(map(str, self.exposed))}"
        return REQUIRED[name]

    def advice(self, missing: list[str]) -> str:
        """What would give the missing protections here, by this machine's facts (its Landlock ABI)."""
        landlock, meanwhile = self.layer("landlock"), " or ".join(ROOT_OR_NAMESPACES)
        if missing == ["others_out_of_reach"]:  # the seccomp filter alone gives it without a uid or namespaces
            return f"The seccomp filter is not in force here ({self.layer('seccomp')}); {meanwhile}; {WHERE}"
        if "hidden_instructor_files" in missing and landlock.in_force:  # in force, and a file was read all the same
            return (
                f"Landlock (ABI {landlock.abi}) is in force here, but a grant let the probe through: a defect of "
                f"the grader (please report it). Meanwhile, {meanwhile}; {WHERE}"
            )
        needed = 6 if "no_process_outlives" in missing else 1  # ABI 6 scopes signals; any ABI hides files
        if landlock.abi >= needed:  # the kernel has what it takes: Landlock itself did not start
            return f"Landlock (ABI {landlock.abi}) did not start here ({landlock}); {meanwhile}; {WHERE}"
        kernel = f"use a kernel with Landlock ABI {needed} or later (Linux {'6.12' if needed == 6 else '5.13'}+)"
        return f"To get it, {', '.join(ROOT_OR_NAMESPACES)} or {kernel}; {WHERE}"


def from_dict(data: Any) -> Isolation:
    """An Isolation record read back from results.json (its typed parts; the summary is for people)."""
    if not isinstance(data, dict):
        return Isolation()
    named = ("separate_user", *REQUIRED, "private_tmp", "own_pid_namespace", "fair_cpu")
    flags = {name: bool(data.get(name)) for name in named}
    return Isolation(
        **flags,
        mechanisms={name: list(found) for name, found in dict(data.get("mechanisms") or {}).items()},
        layers={name: Layer.from_dict(state) for name, state in dict(data.get("layers") or {}).items()},
        failures=[Failure(**failure) for failure in data.get("failures") or []],
        exposed=[Exposure(**exposure) for exposure in data.get("exposed") or []],
        disk=disk_bound.from_dict(data.get("disk")),
    )


__all__ = ["LAYERS", "REQUIRED", "Exposure", "Failure", "Isolation", "Layer", "State", "from_dict"]
