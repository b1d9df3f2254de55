"""Answers as a changed worker runtime may write them: tensors saved as they are (views and all), archives made
by hand (a deflated entry, a pickle of any opcodes), for the tests of how the grader reads an answer."""

import io
import zipfile
from typing import Any

import torch

from autograder import rubric
from autograder.runtime import codec
from autograder.student import Runner

BOUNDS = rubric.load().limits.text  # the grader's own, from rubric.toml


def saved(plain: Any) -> bytes:
    """`plain` (the codec's plain form: lists, tagged dicts, tensors) saved as it is: no tensor cloned."""
    buffer = io.BytesIO()
    torch.save(plain, buffer)
    return buffer.getvalue()


def response(**parts: Any) -> dict[str, Any]:
    """A call's answer in the codec's plain form, its parts (`result`, `grads`...) as given: ok, no effects."""
    return {"__dict__": {"ok": True, "effects": {"__dict__": {}}, **parts}}


def answering(result: Any, **parts: Any) -> bytes:
    """The bytes of an answer whose result is `result`, its tensors saved as they are."""
    return saved(response(result=result, **parts))


def deflated(data: bytes) -> bytes:
    """The archive `data` with every entry compressed: what torch.load would inflate."""
    source, buffer = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as written:
        for entry in source.infolist():
            written.writestr(entry.filename, source.read(entry))
    return buffer.getvalue()


def edited(data: bytes, old: bytes, new: bytes) -> bytes:
    """The archive `data` with `old` replaced by `new` in its pickle (written again: its checksums hold)."""
    source, buffer = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as written:
        for entry in source.infolist():
            content = source.read(entry)
            written.writestr(entry.filename, content.replace(old, new) if entry.filename.endswith(".pkl") else content)
    return buffer.getvalue()


def archive(pickle: bytes, storages: dict[str, bytes] | None = None) -> bytes:
    """An archive made by hand: `pickle` as its data.pkl, `storages` as its data/<key> entries."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as written:
        written.writestr("archive/data.pkl", pickle)
        written.writestr("archive/byteorder", "little")
        for key, data in (storages or {}).items():
            written.writestr(f"archive/data/{key}", data)
        written.writestr("archive/version", "3\n")
    return buffer.getvalue()


def honest(value: Any) -> bytes:
    """What the worker's own runtime writes for `value`."""
    return codec.dumps(value)


class Answering(Runner):
    """A submission whose every call answers `data` (bytes a changed runtime wrote), read as the grader reads an
    answer: codec.loads within the bounds (Remote turns its Unreadable into the item's crash), then Runner.run."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _answer(self, request: dict[str, Any], timeout: float | None) -> tuple[dict[str, Any], str]:
        return codec.loads(self.data, BOUNDS), ""
