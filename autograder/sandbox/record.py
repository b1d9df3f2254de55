"""What isolation a grading had: the record written to results.json (`extra_data.isolation`)."""

from dataclasses import asdict, dataclass, field

# the protections a grading that counts needs (`--require-isolation`), and how to get each
REQUIRED = {
    "hidden_instructor_files": "the worker could read the instructor's files",
    "no_network": "the worker could reach the network",
    "no_process_outlives": "a process the worker starts could outlive the grading",
}
HOW_TO = (
    "run the grader as root (or with sudo), allow unprivileged user namespaces, or use a kernel with "
    "Landlock ABI 6 or later (Linux 6.12+); docs/security.md lists what each environment gives"
)


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
    mechanisms: dict[str, list[str]] = field(default_factory=dict)  # protection -> the layers that give it
    layers: dict[str, str] = field(
        default_factory=dict
    )  # layer -> "abi 7", "uid 61000-64999", "off: why", "failed: ..."
    failures: list[str] = field(default_factory=list)  # layers this machine should allow that did not start

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def missing(self) -> list[str]:
        """The required protections not in force."""
        return [name for name in REQUIRED if not getattr(self, name)]

    def in_force(self) -> list[str]:
        """The layers in force, as results.json names them (`landlock abi 7`, `uid 61000-64999`, ...)."""
        return list(dict.fromkeys(name for names in self.mechanisms.values() for name in names))

    def summary(self) -> str:
        """One line for the terminal: the layers in force, then any that failed."""
        text = ", ".join(self.in_force()) or "interpreter-level only"
        return text + "".join(f"; {failure}" for failure in self.failures)

    def refusal(self) -> str:
        """Why a grading that counts may not run here, and how to get the protection ("" when it may)."""
        missing = self.missing()
        if not missing:
            return ""
        reasons = "; ".join(REQUIRED[name] for name in missing)
        failed = f" (failed: {'; '.join(self.failures)})" if self.failures else ""
        return f"isolation required but not available: {reasons}{failed}. To get it, {HOW_TO}"
