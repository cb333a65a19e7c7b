"""Runs every shell example of the README and the docs as written, in order, against `make run`
(``examples_run``: tests/test_make_run_smoke.py calls it on the service it started, once its own
checks have passed, so one start serves both; tests/test_readme_examples.py checks which blocks
are marked runnable).

Which blocks run: a fenced block tagged ``sh`` or ``bash`` whose text holds ``curl`` and
``127.0.0.1:8000`` or ``$BASE``. Output samples and other snippets are fenced ``text``,
``json``, ``console`` or ``python``, or call no service.

The files run in the order of ``EXAMPLE_FILES`` (the README's tour, then ``docs/api.md``, then
``docs/sandbox.md``, whose examples use the ids ``docs/api.md`` sets), each top to bottom, all in
one ``bash`` session (``set -Eeuo pipefail``) whose working directory holds the service's
``var/``, as a reader's shell in the repository root does, with ``127.0.0.1:8000`` replaced by
the service's port. A docs file with runnable blocks that is not in ``EXAMPLE_FILES`` fails the
check. A ``curl`` function defined first keeps every answer's headers and body. Every call must
answer 2xx, and a JSON answer must say ``"status": true``; every call of a block whose fence has
``<!-- expect: NNN -->`` on the line above must answer NNN with ``"status": false``. A failure
names the file and line of the call or command that failed.

The service is started as ``make run`` starts it (``tests/service_process.py``), on the embedded
defaults whatever database the suite runs on. The smoke test before the examples makes one
payout with its own idempotency key; no example depends on a count or a balance it changes.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.service_process import ROOT, RunningService, wait_for

# The files whose examples run, in the order they run: later ones use variables set by earlier ones.
EXAMPLE_FILES = ("README.md", "docs/api.md", "docs/sandbox.md")
DOCS = ROOT / "docs"
FENCE = re.compile(r"^ {0,3}```(?P<language>[\w-]*)\s*$")
FENCE_END = re.compile(r"^ {0,3}```\s*$")
EXPECT = re.compile(r"^<!--\s*expect:\s*(?P<status>[1-5]\d\d)\s*-->$")
RUNNABLE_LANGUAGES = ("sh", "bash")
README_PORT = "127.0.0.1:8000"
BUDGET_SECONDS = 120  # every example, on the running service: about 25 s on an idle machine
START_SECONDS = 60

# Each call appends "<script line> <record>" to $CALLS/log and keeps <record>.headers and
# <record>.body (the body also goes on to stdout, where the example pipes or prints it). The
# ERR trap keeps the script line and the text of a command that failed.
PRELUDE = r"""set -Eeuo pipefail
curl() {
  local record
  record=$(mktemp "$CALLS/call.XXXXXX")
  printf '%s %s\n' "${BASH_LINENO[0]}" "$record" >> "$CALLS/log"
  command curl --dump-header "$record.headers" "$@" | tee "$record.body"
}
trap 'printf "%s\n%s\n" "$LINENO" "$BASH_COMMAND" > "$CALLS/failed"' ERR
"""


# A line of an example file: its path relative to the repository root and its line number.
Source = tuple[str, int]
NOWHERE: Source = ("", 0)


@dataclass(frozen=True)
class Block:
    path: str  # the file, relative to the repository root
    first_line: int  # line number of the block's first line of code
    lines: list[str]
    expected_status: int | None  # None: every call 2xx

    def holds(self, source: Source) -> bool:
        path, line = source
        return path == self.path and self.first_line <= line < self.first_line + len(self.lines)

    def line_above(self, line: int, starts: Callable[[str], bool]) -> int:
        """The nearest line at or above ``line`` in this block where ``starts``: bash reports a
        command spread over several lines by its last line."""
        for number in range(line, self.first_line - 1, -1):
            if starts(self.lines[number - self.first_line].strip()):
                return number
        return line


def example_blocks() -> list[Block]:
    """The runnable blocks of every file of ``EXAMPLE_FILES``, in the order they run."""
    blocks: list[Block] = []
    for path in EXAMPLE_FILES:
        blocks += runnable_blocks((ROOT / path).read_text(), path)
    return blocks


def runnable_blocks(text: str, path: str) -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and FENCE_END.match(lines[end]) is None:
            end += 1
        code = lines[index + 1 : end]
        body = "\n".join(code)
        runnable = (
            fence["language"] in RUNNABLE_LANGUAGES
            and "curl" in body
            and (README_PORT in body or "$BASE" in body)
        )
        if runnable:
            expect = EXPECT.match(lines[index - 1].strip()) if index else None
            blocks.append(
                Block(
                    path=path,
                    first_line=index + 2,
                    lines=code,
                    expected_status=int(expect["status"]) if expect else None,
                )
            )
        index = end + 1
    return blocks


def script_build(blocks: list[Block], *, port: int) -> tuple[str, dict[int, Source]]:
    """The session's text and, for each script line from a block, its file and line."""
    script_lines = PRELUDE.splitlines()
    source_of: dict[int, Source] = {}
    for block in blocks:
        for offset, line in enumerate(block.lines):
            script_lines.append(line.replace(README_PORT, f"127.0.0.1:{port}"))
            source_of[len(script_lines)] = (block.path, block.first_line + offset)
    return "\n".join(script_lines) + "\n", source_of


@dataclass(frozen=True)
class Call:
    source: Source
    status: int | None
    content_type: str
    body: str


def calls_read(calls_dir: Path, source_of: dict[int, Source]) -> list[Call]:
    log = calls_dir / "log"
    calls = []
    for entry in log.read_text().splitlines() if log.exists() else []:
        script_line, record = entry.split(" ", 1)
        headers = Path(f"{record}.headers")
        head = headers.read_text(errors="replace") if headers.exists() else ""
        statuses = re.findall(r"^HTTP/[\d.]+ (\d{3})", head, flags=re.MULTILINE)
        content_types = re.findall(r"^content-type:\s*(\S+)", head, flags=re.I | re.M)
        body = Path(f"{record}.body")
        calls.append(
            Call(
                source=source_of.get(int(script_line), NOWHERE),
                status=int(statuses[-1]) if statuses else None,
                content_type=content_types[-1].rstrip(";").lower() if content_types else "",
                body=body.read_text(errors="replace") if body.exists() else "",
            )
        )
    return calls


def call_problem(call: Call, block: Block) -> str | None:
    expected = block.expected_status
    if call.status is None:
        return "got no HTTP answer"
    if expected is None and not 200 <= call.status < 300:
        return f"answered {call.status}, expected 2xx"
    if expected is not None and call.status != expected:
        return f"answered {call.status}, expected {expected} (<!-- expect -->)"
    if call.content_type == "application/json" and call.body.strip():
        try:
            envelope_status = json.loads(call.body).get("status")
        except (ValueError, AttributeError):
            return "answered JSON that is not an envelope"
        if envelope_status is not (expected is None):
            return f'answered "status": {json.dumps(envelope_status)}'
    return None


def examples_run(service: RunningService, tmp_path: Path) -> list[str]:
    """Runs every example against ``service`` (a running `make run`) in one bash session, and
    returns what went wrong, each naming its file and line (empty when all ran as written)."""
    started = time.monotonic()
    sources = {path: (ROOT / path).read_text().splitlines() for path in EXAMPLE_FILES}
    blocks = example_blocks()
    calls_dir = tmp_path / "calls"
    calls_dir.mkdir()
    health = wait_for(f"{service.base_url}/healthz", timeout=START_SECONDS)
    assert health.status_code == 200, service.log.read_text()[-3000:]
    script, source_of = script_build(blocks, port=service.port)
    (tmp_path / "examples_session.sh").write_text(script)
    remaining = BUDGET_SECONDS - (time.monotonic() - started)
    try:
        result = subprocess.run(
            ["bash", str(tmp_path / "examples_session.sh")],
            cwd=service.var.parent,
            env={**service.env, "CALLS": str(calls_dir)},
            capture_output=True,
            text=True,
            timeout=remaining,
            check=False,
        )
    except subprocess.TimeoutExpired:
        calls = calls_read(calls_dir, source_of)
        path, line = calls[-1].source if calls else NOWHERE
        text = sources[path][line - 1].strip() if line else ""
        raise AssertionError(
            f"the examples did not finish within {BUDGET_SECONDS}s; last call: "
            f"{path}:{line}: {text}"
        ) from None
    return _problems(result, service, sources, blocks, calls_dir, source_of)


def _problems(
    result: subprocess.CompletedProcess[str],
    service: RunningService,
    sources: dict[str, list[str]],
    blocks: list[Block],
    calls_dir: Path,
    source_of: dict[int, Source],
) -> list[str]:
    def block_of(source: Source) -> Block | None:
        return next((block for block in blocks if block.holds(source)), None)

    def where(source: Source, starts: Callable[[str], bool] = bool) -> str:
        block = block_of(source)
        if block is None:
            return "(the session's prelude)"
        path, line = source
        start = block.line_above(line, starts)
        lines = f"{start}-{line}" if start != line else f"{start}"
        return f"{path}:{lines}: {sources[path][start - 1].strip()}"

    def calls_curl(line: str) -> bool:
        return "curl" in line

    problems = []
    calls = calls_read(calls_dir, source_of)
    for call in calls:
        block = block_of(call.source)
        problem = call_problem(call, block) if block else "was not made by an example block"
        if problem:
            body = call.body[:500]
            problems.append(f"{where(call.source, calls_curl)}\n  {problem}: {body}")
    if result.returncode != 0:
        failed = calls_dir / "failed"
        script_line, command = failed.read_text().split("\n", 1) if failed.exists() else ("0", "")
        if not failed.exists():
            # an error that stops bash without the ERR trap (an unbound variable) names its line
            stopped = re.search(r"\.sh: line (\d+): ", result.stderr)
            script_line = stopped[1] if stopped else script_line
        # bash gives the command with its line continuations joined
        command = command.replace(f"127.0.0.1:{service.port}", README_PORT).strip()

        def starts_command(line: str) -> bool:
            return bool(line) and command.startswith(line.rstrip("\\").strip())

        problems.append(
            f"{where(source_of.get(int(script_line), NOWHERE), starts_command)}\n"
            f"  exited {result.returncode} in: {command}\nstderr:\n"
            f"{result.stderr[-2000:]}\nservice log:\n{service.log.read_text()[-1500:]}"
        )
    for block in blocks:
        if not any(block.holds(call.source) for call in calls) and result.returncode == 0:
            problems.append(f"{where((block.path, block.first_line))}\n  the block made no call")
    return problems
