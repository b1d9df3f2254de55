"""A workflow's jobs run here, step by step, the way GitHub's runner runs them.

`run` steps go to bash (`--noprofile --norc -eo pipefail`, as on a runner) with the job's and the
step's environment, their outputs read from $GITHUB_OUTPUT; steps are skipped after a failure
unless their `if` says otherwise. The artifact actions copy folders into and out of a store kept
per run (so one run can download another's). `actions/checkout` links the grader's package into
the workspace, with the files the caller says this repository holds (a rubric file); setup-python
and the named install steps are left out: the caller provides the tools on PATH, and the roster
job's venv is the deployed grader's (tests/helpers/deployed.py runs that job's own install step,
once for every test process). Expressions are evaluated for the forms the workflows use; any other
expression fails the test, so a workflow cannot change under the tests unseen.
"""

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Context:
    inputs: dict
    github: dict
    secrets: dict = field(default_factory=dict)
    matrix: dict = field(default_factory=dict)
    needs: dict = field(default_factory=dict)
    steps: dict = field(default_factory=dict)


def _lookup(path: str, context: Context) -> object:
    head, _, rest = path.partition(".")
    if head == "secrets":
        return context.secrets.get(rest, "")  # GitHub gives '' for a secret that is not set
    value: object = getattr(context, head)
    for key in rest.split(".") if rest else []:
        if not isinstance(value, dict) or key not in value:
            raise KeyError(f"the tests do not know the expression {path!r}")
        value = value[key]
    return value


def evaluate(expression: str, context: Context) -> object:
    expression = expression.strip()
    if "&&" in expression:
        return all(evaluate(part, context) for part in expression.split("&&"))
    if expression == "!cancelled()":
        return True
    compared = re.fullmatch(r"(.+?)\s*(==|!=)\s*'(.*)'", expression)
    if compared:
        left = text(evaluate(compared[1], context))
        return (left == compared[3]) == (compared[2] == "==")
    function = re.fullmatch(r"toJSON\((.+)\)", expression)
    if function:
        return json.dumps(evaluate(function[1], context))
    if not re.fullmatch(r"[A-Za-z_][\w.-]*", expression):
        raise KeyError(f"the tests do not know the expression {expression!r}")
    return _lookup(expression, context)


def text(value: object) -> str:
    """A value as GitHub writes it into a string."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def interpolate(template: object, context: Context) -> object:
    """A string with its expressions replaced; YAML's booleans and numbers as they are."""
    if not isinstance(template, str):
        return template
    return EXPRESSION.sub(lambda match: text(evaluate(match[1], context)), template)


def condition(step: dict, context: Context, failed: bool) -> bool:
    if "if" not in step:
        return not failed
    return bool(evaluate(EXPRESSION.sub(lambda match: match[1], str(step["if"])), context))


@dataclass
class Artifacts:
    """Artifacts by run: root/<run>/<name>/..."""

    root: Path

    def upload(self, run: int, options: dict) -> str:
        source, target = Path(options["path"]), self.root / str(run) / options["name"]
        if not source.is_dir() or not any(source.iterdir()):
            return f"no files found at {source}" if options.get("if-no-files-found") == "error" else ""
        if target.exists() and options.get("overwrite") is not True:
            return f"an artifact named {options['name']} already exists"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
        return ""

    def download(self, run: int, options: dict, workspace: Path) -> str:
        store = self.root / str(options.get("run-id") or run)
        names = sorted(path.name for path in store.iterdir()) if store.is_dir() else []
        if "name" in options:
            if options["name"] not in names:
                return f"artifact {options['name']} not found in run {store.name}"
            names = [options["name"]]
        else:
            names = fnmatch.filter(names, options["pattern"])
        target = workspace / options.get("path", ".")
        for name in names:
            merged = options.get("merge-multiple") is True or "name" in options
            shutil.copytree(store / name, target if merged else target / name, dirs_exist_ok=True)
        return ""


@dataclass
class StepResult:
    name: str
    ran: bool
    status: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict = field(default_factory=dict)


@dataclass
class JobResult:
    steps: list[StepResult]
    outputs: dict
    summary: str

    @property
    def result(self) -> str:
        return "failure" if any(step.status for step in self.steps) else "success"

    def step(self, name: str) -> StepResult:
        return next(step for step in self.steps if step.name == name)


@dataclass
class Runner:
    """Runs the jobs of one workflow for one run id, with `env` as the runner's environment."""

    workflow: dict
    artifacts: Artifacts
    env: dict
    left_out: tuple[str, ...] = ()  # names of steps the caller stands in for (installs)
    edits: dict = field(default_factory=dict)  # step name -> function(script) -> script
    files: dict = field(default_factory=dict)  # path in the repository -> the file it is, linked by checkout

    def run_job(self, name: str, run: int, context: Context, workspace: Path) -> JobResult:
        job = self.workflow["jobs"][name]
        workspace.mkdir(parents=True, exist_ok=True)
        context.github = {**context.github, "workspace": str(workspace)}
        context.steps = {}
        summary = workspace / ".step-summary.md"
        base = {**self.env, **{key: str(interpolate(value, context)) for key, value in job.get("env", {}).items()}}
        base.update(GITHUB_WORKSPACE=str(workspace), GITHUB_RUN_ID=str(run), GITHUB_STEP_SUMMARY=str(summary))
        results: list[StepResult] = []
        for index, step in enumerate(job["steps"]):
            label = step.get("name") or step.get("uses", f"step {index}").split("@")[0]
            failed = any(result.status for result in results)
            if not condition(step, context, failed):
                results.append(StepResult(label, ran=False))
                continue
            result = self._step(step, label, run, context, workspace, base)
            results.append(result)
            if "id" in step:
                context.steps[step["id"]] = {"outputs": result.outputs}
        outputs = {key: str(interpolate(value, context)) for key, value in job.get("outputs", {}).items()}
        return JobResult(results, outputs, summary.read_text() if summary.exists() else "")

    def _step(self, step: dict, label: str, run: int, context: Context, workspace: Path, base: dict) -> StepResult:
        options = {key: interpolate(value, context) for key, value in step.get("with", {}).items()}
        uses = step.get("uses", "").split("@")[0]
        if label in self.left_out or uses == "actions/setup-python":
            return StepResult(label, ran=False)
        if uses == "actions/checkout":
            checkout = workspace / options.get("path", ".")
            for relative, source in {"autograder": ROOT / "autograder", **self.files}.items():
                (checkout / relative).parent.mkdir(parents=True, exist_ok=True)
                (checkout / relative).symlink_to(source)
            return StepResult(label, ran=True)
        if uses in ("actions/upload-artifact", "actions/download-artifact"):
            if uses.endswith("upload-artifact"):
                options["path"] = str(workspace / options["path"])
                problem = self.artifacts.upload(run, options)
            else:
                problem = self.artifacts.download(run, options, workspace)
            return StepResult(label, ran=True, status=1 if problem else 0, stderr=problem)
        assert "run" in step, f"the tests cannot run the step {label!r} ({uses})"
        script = self.edits.get(label, lambda source: source)(step["run"])
        env = {**base, **{key: str(interpolate(value, context)) for key, value in step.get("env", {}).items()}}
        with tempfile.TemporaryDirectory() as scratch:
            output, source = Path(scratch) / "output", Path(scratch) / "step.sh"
            output.touch()
            source.write_text(script)
            env["GITHUB_OUTPUT"] = str(output)
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(source)],
                cwd=workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        return StepResult(label, True, done.returncode, done.stdout, done.stderr, outputs)


def tools(folder: Path, python: str) -> Path:
    """A folder for PATH: python, python3 and autograde as this interpreter (by its absolute path)."""
    folder.mkdir(parents=True, exist_ok=True)
    scripts = {
        "python": f'exec "{python}" "$@"',
        "python3": f'exec "{python}" "$@"',
        "autograde": f'exec "{python}" -m autograder.cli "$@"',
    }
    for name, line in scripts.items():
        write_script(folder / name, line)
    return folder


def stand_in_sudo(folder: Path, log: Path) -> Path:
    """`sudo` as a runner has it, for a process that is root already: it logs the command, then runs
    it with sudo's reset environment (its secure PATH, root's HOME, nothing of the caller's)."""
    folder.mkdir(parents=True, exist_ok=True)
    secure_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return write_script(
        folder / "sudo", f'printf \'%s\\n\' "$*" >> "{log}"\nexec env -i PATH={secure_path} HOME=/root "$@"'
    )


def stand_in_gh(folder: Path, state: Path) -> Path:
    """`gh` answered by tests/helpers/fake_gh.py, which records every call beside `state`."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = Path(__file__).resolve().parent / "fake_gh.py"
    return write_script(folder / "gh", f'exec "{sys.executable}" "{fake}" "{state}" "$@"')


def write_script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def environment(path: str, **extra: str) -> dict:
    """A runner's environment: little of this process's, PATH as given."""
    keep = {key: os.environ[key] for key in ("HOME", "LANG", "TMPDIR") if key in os.environ}
    return {**keep, "PATH": path, "CI": "true", "GITHUB_ACTIONS": "true", **extra}
