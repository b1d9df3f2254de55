"""A layer's state, as data the probe, the worker and the record share: on, off or failed, and why.

    Layer.on("landlock abi 7", abi=7)       in force: what it is, as people read it
    Layer.off("the grader is not root")     not tried: why this machine does not allow it
    Layer.failed("unshare: ...")            tried, and it did not start: the step that failed

The worker builds these for the layers it applies to itself and sends them as plain data
(`as_dict`); the grader reads them back with `from_dict`: no state is ever read back from its
text. Standard library only: copied into each sandbox with the in-worker layers.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class State(StrEnum):
    ON = "on"
    OFF = "off"
    FAILED = "failed"


@dataclass(frozen=True)
class Layer:
    """One layer's state: `detail` is its name in force ("landlock abi 7") or why it is not."""

    state: State
    detail: str = ""
    abi: int = 0  # Landlock's layer: the kernel's ABI, in force or not (0: none; every other layer: 0)

    @classmethod
    def on(cls, detail: str, abi: int = 0) -> "Layer":
        return cls(State.ON, detail, abi)

    @classmethod
    def off(cls, why: str, abi: int = 0) -> "Layer":
        return cls(State.OFF, why, abi)

    @classmethod
    def failed(cls, why: str, abi: int = 0) -> "Layer":
        return cls(State.FAILED, why, abi)

    @property
    def in_force(self) -> bool:
        return self.state is State.ON

    @property
    def broke(self) -> bool:
        """Tried, and it did not start."""
        return self.state is State.FAILED

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state.value, "detail": self.detail, "abi": self.abi}

    @classmethod
    def from_dict(cls, data: Any) -> "Layer":
        """A state sent as data; anything malformed is a layer that failed to say it started."""
        try:
            return cls(State(data["state"]), str(data.get("detail", "")), int(data.get("abi", 0)))
        except (TypeError, KeyError, ValueError, AttributeError):
            return cls.failed(f"no state reported ({str(data)[:80]})")

    def __str__(self) -> str:
        return self.detail if self.in_force else f"{self.state.value}: {self.detail}"
