"""The docs site stays true: its generated pages are current, it builds with ``mkdocs build
--strict``, and every command block of its pages runs.

Command blocks (the convention the pages follow):

- A ```` ```bash ```` block is a command block and is run: the whole block as one bash script
  (``set -e``: its first failing line fails the test), pages in ``mkdocs.yml``'s nav order, blocks
  in page order, each page in a fresh empty folder that its blocks share (``examples/`` and ``cluster/``
  there are the repository's). ``distbench`` is this interpreter's ``python -m distbench`` (the
  test session's ``PYTHONPATH``), ``python`` this interpreter, ``ray`` its environment's. ``$DISTBENCH_MOCK_URL`` is the address of
  the project's mock server (``distbench serve mock``), started on a free port for the test:
  a block that needs an API reaches it with ``--base-url "$DISTBENCH_MOCK_URL"``. A process a
  block leaves in the background is stopped when the block ends.
- ```` ```text ```` holds what a command prints or a layout: never run. Other shell fences
  (``console``, ``sh``, ``shell`` or no language) are refused, so every block says which it is.
- A command block that cannot run here is marked on the line right above its fence with
  ``<!-- docs-test: not run: REASON -->`` (an install into a new environment, a real paid API
  with no mock, a file the repository does not ship). The test counts them and prints each with
  its reason.
- A command block that CI runs instead (``.ci/run``: a fresh virtual environment from the
  registries, then the README quick start's test command) is marked ``<!-- docs-test: ci:
  REASON -->``: the test checks that each of its commands (a line, or one ``&&`` step of a line,
  its comment aside) is one of the README quick start's, so the page cannot drift from what CI
  runs (tests/test_readme.py checks that ``.ci/run`` runs the README's test line).
- A command block that runs only with a stated change carries, on the lines right above its
  fence, one marker per change: ``<!-- docs-test: shorten: OLD -> NEW -->`` (a smaller size for
  a long run: ``--num-games 50 -> --num-games 2``) or ``<!-- docs-test: mock: OLD -> NEW -->``
  (a paid API or a reader's server replaced by the mock: ``--llm-model gpt-4o-mini ->
  --llm-model gpt-4o-mini --base-url "$DISTBENCH_MOCK_URL"``) or ``<!-- docs-test: installed:
  pip install -e examples/plugins/beauty -> python -m pip show distbench-beauty -->`` (a package
  the test environment holds already, from the test install command of getting-started.md:
  the test checks it is there instead of installing it into the shared environment, which has
  no build tools offline) or ``<!-- docs-test: fixture: in/instances_semi_en.json ->
  "$DISTBENCH_REPO/tests/games/negotiation/data/instances_tiny.json" -->`` (a small file of the
  tests in the format of one the repository does not ship; ``$DISTBENCH_REPO`` is the
  repository). The test replaces every
  occurrence of OLD by NEW (OLD missing from the block fails it) and prints each change, so the
  command that runs is the page's command with its changes stated, never silently. Besides
  ``$DISTBENCH_MOCK_URL``, a change may use ``$DISTBENCH_FREE_PORT`` (a port nothing listens on,
  for a server the block starts) and ``$DISTBENCH_RAY_PORT`` (another, for a Ray cluster: the
  cluster scripts read ``RAY_PORT``, and ``RAY_TMPDIR`` is a folder of the test's). The API keys
  of the providers are set to a placeholder, so no real key reaches the mock or a file.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from ports import free_port

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RUN = "bash"
NOT_COMMANDS = {"text", "python", "toml", "json", "yaml", "sql"}
NOT_RUN = re.compile(r"^<!-- docs-test: (?P<kind>not run|ci): (?P<reason>\S.*?) -->$")
REWRITE = re.compile(r"^<!-- docs-test: (?P<kind>shorten|mock|installed|fixture): (?P<old>\S.*?) -> (?P<new>\S.*?) -->$")
PLACEHOLDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TOGETHER_API_KEY", "VLLM_API_KEY",
                    "LLAMACPP_API_KEY")
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")
BLOCK_TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    text: str
    not_run: str | None  # the reason, for a block this test does not run
    rewrites: tuple[tuple[str, str, str], ...] = ()  # (kind, old, new), in page order
    ci: bool = False  # not run here because CI runs it (checked against the README quick start)

    def script(self) -> str:
        """The text that runs: the page's, each stated change applied."""
        text = self.text
        for kind, old, new in self.rewrites:
            assert old in text, (f"{self.page}:{self.line}: the {kind} change names {old!r}, "
                                 "which the block does not hold")
            text = text.replace(old, new)
        return text


def nav_pages() -> list[str]:
    """The pages in the order of mkdocs.yml's nav."""
    def walk(items):
        for item in items:
            for value in (item.values() if isinstance(item, dict) else [item]):
                yield from (walk(value) if isinstance(value, list) else [value])
    return list(walk(yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]))


def page_blocks(page: str) -> list[Block]:
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i].strip())
        if not fence:
            i += 1
            continue
        start, lang = i, fence.group("lang")
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        marker = NOT_RUN.match(lines[start - 1].strip()) if start else None
        rewrites, above = [], start - 1
        while above >= 0 and (change := REWRITE.match(lines[above].strip())):
            rewrites.insert(0, (change["kind"], change["old"], change["new"]))
            above -= 1
        blocks.append(Block(page, start + 1, lang, "\n".join(body) + "\n",
                            marker.group("reason") if marker else None, tuple(rewrites),
                            bool(marker) and marker.group("kind") == "ci"))
        i += 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for page in nav_pages() for block in page_blocks(page)]


def test_every_block_says_whether_it_is_run_and_markers_sit_on_command_blocks():
    wrong = [f"{b.page}:{b.line} ```{b.lang}" for b in all_blocks()
             if b.lang != RUN and b.lang not in NOT_COMMANDS]
    assert not wrong, f"mark these blocks ```bash (run by this test) or ```text (not run): {wrong}"
    misplaced = [f"{b.page}:{b.line}" for b in all_blocks() if b.not_run and b.lang != RUN]
    assert not misplaced, f"a not-run marker belongs above a ```bash block: {misplaced}"
    stray = [f"{page}:{n}" for page in nav_pages()
             for n, line in enumerate((DOCS / page).read_text(encoding="utf-8").splitlines(), 1)
             if line.strip().startswith("<!-- docs-test")
             and not (NOT_RUN.match(line.strip()) or REWRITE.match(line.strip()))]
    assert not stray, ("a docs-test marker is <!-- docs-test: not run|ci: REASON --> or "
                       f"<!-- docs-test: shorten|mock|installed|fixture: OLD -> NEW -->: {stray}")
    changed = [f"{b.page}:{b.line}" for b in all_blocks() if b.rewrites and (b.lang != RUN or b.not_run)]
    assert not changed, f"a shorten, mock, installed or fixture change belongs above a ```bash block that runs: {changed}"


def test_not_run_blocks_are_counted():
    marked = [b for b in all_blocks() if b.lang == RUN and b.not_run]
    run = [b for b in all_blocks() if b.lang == RUN and not b.not_run]
    by_ci = [b for b in marked if b.ci]
    print(f"\ndocs command blocks: {len(run)} run, {len(by_ci)} run by CI (.ci/run), "
          f"{len(marked) - len(by_ci)} not run")
    for b in marked:
        print(f"  {'ci' if b.ci else 'not run'}: {b.page}:{b.line}: {b.not_run}")
    for b in run:
        for kind, old, new in b.rewrites:
            print(f"  {kind}: {b.page}:{b.line}: {old} -> {new}")
    assert run


def _steps(line: str) -> list[str]:
    """A command line's ``&&`` steps, its trailing comment aside."""
    return [step.strip() for step in re.sub(r"\s+#\s.*$", "", line).split(" && ") if step.strip()]


def _readme_quick_start() -> list[str]:
    section = (REPO / "README.md").read_text(encoding="utf-8").split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_blocks_marked_ci_are_commands_of_the_readme_quick_start():
    """What a ci block shows is what CI runs: each step is a step of the README quick start."""
    readme_steps = {step for line in _readme_quick_start() for step in _steps(line)}
    ci = [b for b in all_blocks() if b.ci]
    assert ci
    for block in ci:
        steps = [step for line in block.text.splitlines() for step in _steps(line)]
        assert steps and not set(steps) - readme_steps, (
            f"{block.page}:{block.line}: a ci block holds only steps of the README quick start's "
            f"commands (which .ci/run runs); these are not: {sorted(set(steps) - readme_steps)}")


def test_the_getting_started_quick_start_is_the_readmes():
    """The page's first two command blocks (the install-and-run, the test command) are the README's."""
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8").split("## Quick start", 1)[1]
    lines = [line for block in re.findall(r"```bash\n(.*?)```", page, re.S)[:2]
             for line in block.splitlines() if line.strip()]
    assert lines == _readme_quick_start()


def test_generated_pages_are_current():
    out = subprocess.run([sys.executable, str(REPO / "tools" / "gen_docs.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, ("docs/commands.md or docs/tables.md is out of date: run "
                                 f"python tools/gen_docs.py\n{out.stdout}{out.stderr}")


def test_the_site_builds_strictly(tmp_path):
    """mkdocs build --strict: a broken link, a missing anchor or a page left out of the nav fails."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                          str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                         capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "WARNING" not in out.stderr, out.stderr
    assert (tmp_path / "site" / "index.html").is_file()


@pytest.fixture(scope="module")
def mock_url():
    from distbench.mockserver import ServerConfig, start_server

    with start_server(ServerConfig()) as server:
        yield server.url


@pytest.fixture(scope="module")
def shims(tmp_path_factory) -> Path:
    """A bin folder whose ``distbench`` and ``python`` are this interpreter, and ``ray`` its
    environment's (the cluster script calls it, as with the environment's ``bin`` on PATH)."""
    bin_dir = tmp_path_factory.mktemp("docs-bin")
    ray = Path(sys.executable).parent / "ray"
    for name, command in (("distbench", f'"{sys.executable}" -m distbench'),
                          ("python", f'"{sys.executable}"'), ("ray", f'"{ray}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        shim.chmod(0o755)
    return bin_dir


def _run_block(block: Block, cwd: Path, env: dict[str, str]) -> None:
    for kind, old, new in block.rewrites:
        print(f"{block.page}:{block.line}: {kind}: {old} -> {new}")
    script = "set -e -o pipefail\n" + block.script()
    with tempfile.TemporaryFile("w+") as log:  # a file: a background process may hold it open
        proc = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, text=True,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=BLOCK_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            try:  # whatever the block left in the background (a server) ends with it
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            proc.wait()
        log.seek(0)
        output = log.read()
    assert proc.returncode == 0, (f"{block.page}:{block.line}: the block failed "
                                  f"(exit {proc.returncode}):\n{block.script()}\n--- output ---\n"
                                  f"{output[-6000:]}")


@pytest.mark.parametrize("page", [p for p in nav_pages()
                                  if any(b.lang == RUN and not b.not_run for b in page_blocks(p))])
def test_the_page_commands_run(page, tmp_path, mock_url, shims):
    for folder in ("examples", "cluster"):
        (tmp_path / folder).symlink_to(REPO / folder)
    ray_port = str(free_port())
    # Ray's folder is the page's own (short: Ray's socket paths have a length limit), so the
    # cluster script's `stop`, which ends the processes naming it, ends this page's nodes only.
    ray_tmp = tempfile.mkdtemp(prefix="dray-")
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ.get('PATH', '')}",
           "DISTBENCH_MOCK_URL": mock_url, "DISTBENCH_FREE_PORT": str(free_port()),
           "DISTBENCH_RAY_PORT": ray_port, "RAY_PORT": ray_port, "RAY_TMPDIR": ray_tmp,
           "DISTBENCH_REPO": str(REPO),
           **{key: "docs-test-placeholder" for key in PLACEHOLDER_KEYS}}
    started = time.monotonic()
    try:
        for block in page_blocks(page):
            if block.lang == RUN and not block.not_run:
                _run_block(block, tmp_path, env)
    finally:  # a block that failed between the cluster's start and stop leaves no node behind
        subprocess.run(["bash", str(REPO / "cluster" / "local.sh"), "stop"], env=env,
                       capture_output=True, timeout=120)
        shutil.rmtree(ray_tmp, ignore_errors=True)
    print(f"\n{page}: {time.monotonic() - started:.1f} s")


def test_a_stated_change_is_applied_and_must_name_what_the_block_holds(tmp_path, monkeypatch):
    (tmp_path / "p.md").write_text(
        "<!-- docs-test: shorten: --num-games 50 -> --num-games 1 -->\n"
        "<!-- docs-test: mock: --base-url URL -> --base-url \"$DISTBENCH_MOCK_URL\" -->\n"
        "```bash\ndistbench run --num-games 50 --base-url URL\n```\n"
        "<!-- docs-test: shorten: --num-games 9 -> --num-games 1 -->\n"
        "```bash\ndistbench run --num-games 50\n```\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "DOCS", tmp_path)
    changed, wrong = page_blocks("p.md")
    assert [kind for kind, _, _ in changed.rewrites] == ["shorten", "mock"]
    assert changed.script() == 'distbench run --num-games 1 --base-url "$DISTBENCH_MOCK_URL"\n'
    with pytest.raises(AssertionError, match="--num-games 9"):
        wrong.script()
