"""How the command blocks of the docs pages are marked and run: tests/test_docs.py checks the
marks (and that the site builds), tests/docs/test_pages_*.py run every command block.

Command blocks (the convention the pages follow):

- A ```` ```bash ```` block is a command block and is run: the whole block as one bash script
  (``set -e``: its first failing line fails the test), blocks in page order, each page in a
  fresh empty folder that its blocks share (``examples/`` and ``cluster/``
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
- A command block of developer commands that read a clone (its tests, its sources, a benchmark
  script) carries ``<!-- docs-test: repo: REASON -->`` among those lines: it runs with the
  repository (``$DISTBENCH_REPO``) as its working folder instead of the page's, with
  ``PYTEST_ADDOPTS=-p no:cacheprovider`` (a pytest it starts leaves the repository's
  ``.pytest_cache`` to the outer session), and must leave the repository as it found it (``git
  status`` the same before and after); the test prints that too.

The pages run in groups (:data:`PAGE_GROUPS`), one test file each under ``tests/docs/``, so that
pytest-xdist's ``--dist loadfile`` spreads them over its workers; every page is in one group,
and the groups are balanced by the pages' measured times (``pytest --durations=0 tests/docs``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
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
AT_REPO = re.compile(r"^<!-- docs-test: repo: (?P<reason>\S.*?) -->$")
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
    at_repo: str | None = None  # the reason, for a block run at the repository's root

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
        rewrites, at_repo, above = [], None, start - 1
        while above >= 0 and ((change := REWRITE.match(lines[above].strip()))
                              or (repo := AT_REPO.match(lines[above].strip()))):
            if change:
                rewrites.insert(0, (change["kind"], change["old"], change["new"]))
            else:
                at_repo = repo["reason"]
            above -= 1
        blocks.append(Block(page, start + 1, lang, "\n".join(body) + "\n",
                            marker.group("reason") if marker else None, tuple(rewrites),
                            bool(marker) and marker.group("kind") == "ci", at_repo))
        i += 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for page in nav_pages() for block in page_blocks(page)]


def runnable_pages() -> list[str]:
    """The pages with a command block that runs here, in nav order."""
    return [p for p in nav_pages() if any(b.lang == RUN and not b.not_run for b in page_blocks(p))]


PAGE_GROUPS: dict[str, tuple[str, ...]] = {
    "gama": ("families/bimatrix.md", "families/repeated.md", "families/openspiel.md",
             "families/gama.md"),
    "providers": ("families/negotiation.md", "providers.md"),
    "running": ("tournaments.md", "running.md"),
    "fog": ("families/fog.md", "recipes.md"),
    "start": ("getting-started.md", "results.md", "extending.md"),
}
"""The pages of each ``tests/docs/test_pages_<group>.py``, balanced by their times (seconds,
``-n 2 --dist loadfile`` at load 2 on 2026-11-28: bimatrix 12, repeated 8, openspiel 19, gama
195 (33 since 2026-11-29: its mock suite no longer keeps to OpenAI's request rate); negotiation
57, providers 111; tournaments 98, running 99; fog 83, recipes 85; getting-started 66, results
46, extending 60): 72 to 234 s a file. pytest-xdist hands out the files with the most tests
first, so the longest file holds the most pages. Each block prints its time (``-s``)."""


def _git_status() -> str | None:
    """The repository's ``git status`` (None when it is not a git checkout)."""
    out = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True,
                         text=True, timeout=60)
    return out.stdout if out.returncode == 0 else None


def _run_block(block: Block, cwd: Path, env: dict[str, str]) -> None:
    for kind, old, new in block.rewrites:
        print(f"{block.page}:{block.line}: {kind}: {old} -> {new}")
    before = None
    if block.at_repo:
        cwd = REPO
        addopts = f"{env.get('PYTEST_ADDOPTS', '')} -p no:cacheprovider".strip()
        env = {**env, "PYTEST_ADDOPTS": addopts}
        before = _git_status()
        print(f"{block.page}:{block.line}: repo: runs in {REPO} with PYTEST_ADDOPTS="
              f"{env['PYTEST_ADDOPTS']!r}, leaving it as it was ({block.at_repo})")
    script = "set -e -o pipefail\n" + block.script()
    started = time.monotonic()
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
    print(f"{block.page}:{block.line}: {time.monotonic() - started:.1f} s")
    assert proc.returncode == 0, (f"{block.page}:{block.line}: the block failed "
                                  f"(exit {proc.returncode}):\n{block.script()}\n--- output ---\n"
                                  f"{output[-6000:]}")
    if block.at_repo:
        assert _git_status() == before, (f"{block.page}:{block.line}: a repo block must leave "
                                         f"the repository as it was; git status before:\n"
                                         f"{before}\nafter:\n{_git_status()}")


def run_page(page: str, tmp_path: Path, mock_url: str, shims: Path) -> None:
    """Runs the command blocks of ``page`` in page order, in ``tmp_path`` (see the module's
    docstring)."""
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


def page_test(group: str):
    """The test of one group's file, ``tests/docs/test_pages_<group>.py``: each of the group's
    pages runs in its own fresh folder (fixtures ``mock_url`` and ``shims``: tests/docs/conftest.py)."""
    @pytest.mark.parametrize("page", PAGE_GROUPS[group])
    def test_the_page_commands_run(page, tmp_path, mock_url, shims):
        run_page(page, tmp_path, mock_url, shims)

    return test_the_page_commands_run
