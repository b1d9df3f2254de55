"""A stand-in for the GitHub CLI's issue commands, put on PATH as `gh` by the tests.

    python fake_gh.py STATE.json issue list|create|edit ...

It records every call (arguments, the body it was given, whether GH_TOKEN was set) in
STATE.calls.jsonl and keeps the issues of each repository in STATE.json. STATE.json may also name
repositories whose issues are turned off (`disabled`), that the token cannot see (`missing`), whose
next write GitHub asks to slow down (`slow_down_once`), and a token GitHub refuses (`refused_token`).
"""

import json
import os
import sys
from pathlib import Path


def option(arguments: list[str], name: str) -> str:
    return arguments[arguments.index(name) + 1]


def fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 1


def main(state_path: Path, arguments: list[str]) -> int:
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    body = sys.stdin.read() if "--body-file" in arguments and option(arguments, "--body-file") == "-" else None
    call = {"args": arguments, "body": body, "token": os.environ.get("GH_TOKEN", "")}
    with state_path.with_suffix(".calls.jsonl").open("a") as log:
        log.write(json.dumps(call) + "\n")
    if call["token"] in ("", state.get("refused_token")):
        return fail(
            "HTTP 401: Bad credentials (https://api.github.com/graphql)\nTry authenticating with:  gh auth login"
        )
    if arguments[:1] != ["issue"] or len(arguments) < 2:
        return fail(f"unknown command {arguments}")
    repository = option(arguments, "--repo")
    if repository in state.get("missing", []):
        return fail(f"GraphQL: Could not resolve to a Repository with the name '{repository}'. (repository)")
    if repository in state.get("disabled", []):
        return fail(f"the '{repository}' repository has disabled issues")
    issues = state.setdefault("issues", {}).setdefault(repository, [])
    verb = arguments[1]
    if verb != "list" and repository in state.get("slow_down_once", []):
        state["slow_down_once"].remove(repository)
        state_path.write_text(json.dumps(state))
        return fail(
            "HTTP 403: You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
        )
    if verb == "list":
        fields = option(arguments, "--json").split(",")
        print(json.dumps([{name: issue[name] for name in fields} for issue in issues]))
    elif verb == "create":
        number = len(issues) + 1
        issues.append({"number": number, "title": option(arguments, "--title"), "body": body})
        print(f"https://github.com/{repository}/issues/{number}")
    elif verb == "edit":
        issue = next(issue for issue in issues if issue["number"] == int(arguments[2]))
        issue["body"] = body
        print(f"https://github.com/{repository}/issues/{issue['number']}")
    else:
        return fail(f"unknown issue command {verb}")
    state_path.write_text(json.dumps(state))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
