"""The docs site stays true: its generated pages are current, it builds with ``mkdocs build
--strict``, and its command blocks follow the convention of tests/docs_pages.py (which says how
a block is marked and run); the blocks themselves run in tests/docs/test_pages_*.py, in groups
that pytest-xdist's ``--dist loadfile`` spreads over its workers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import docs_pages
import pytest
from docs_pages import (
    AT_REPO,
    DOCS,
    NOT_COMMANDS,
    NOT_RUN,
    PAGE_GROUPS,
    REPO,
    REWRITE,
    RUN,
    all_blocks,
    nav_pages,
    page_blocks,
    runnable_pages,
)


def test_every_block_says_whether_it_is_run_and_markers_sit_on_command_blocks():
    wrong = [f"{b.page}:{b.line} ```{b.lang}" for b in all_blocks()
             if b.lang != RUN and b.lang not in NOT_COMMANDS]
    assert not wrong, f"mark these blocks ```bash (run by this test) or ```text (not run): {wrong}"
    misplaced = [f"{b.page}:{b.line}" for b in all_blocks() if b.not_run and b.lang != RUN]
    assert not misplaced, f"a not-run marker belongs above a ```bash block: {misplaced}"
    stray = [f"{page}:{n}" for page in nav_pages()
             for n, line in enumerate((DOCS / page).read_text(encoding="utf-8").splitlines(), 1)
             if line.strip().startswith("<!-- docs-test")
             and not (NOT_RUN.match(line.strip()) or REWRITE.match(line.strip())
                      or AT_REPO.match(line.strip()))]
    assert not stray, ("a docs-test marker is <!-- docs-test: not run|ci|repo: REASON --> or "
                       f"<!-- docs-test: shorten|mock|installed|fixture: OLD -> NEW -->: {stray}")
    changed = [f"{b.page}:{b.line}" for b in all_blocks() if b.rewrites and (b.lang != RUN or b.not_run)]
    assert not changed, f"a shorten, mock, installed or fixture change belongs above a ```bash block that runs: {changed}"
    elsewhere = [f"{b.page}:{b.line}" for b in all_blocks() if b.at_repo and (b.lang != RUN or b.not_run)]
    assert not elsewhere, f"a repo marker belongs above a ```bash block that runs: {elsewhere}"


def test_not_run_blocks_are_counted():
    marked = [b for b in all_blocks() if b.lang == RUN and b.not_run]
    run = [b for b in all_blocks() if b.lang == RUN and not b.not_run]
    by_ci = [b for b in marked if b.ci]
    print(f"\ndocs command blocks: {len(run)} run, {len(by_ci)} run by CI (.ci/run), "
          f"{len(marked) - len(by_ci)} not run")
    for b in marked:
        print(f"  {'ci' if b.ci else 'not run'}: {b.page}:{b.line}: {b.not_run}")
    for b in run:
        if b.at_repo:
            print(f"  repo: {b.page}:{b.line}: runs at the repository's root: {b.at_repo}")
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


def test_every_page_that_runs_is_in_one_group_and_each_group_has_its_file():
    grouped = [page for pages in PAGE_GROUPS.values() for page in pages]
    assert sorted(grouped) == sorted(runnable_pages()), (
        "tests/docs_pages.py's PAGE_GROUPS must name each page with a command block that runs "
        f"exactly once: missing {sorted(set(runnable_pages()) - set(grouped))}, extra or twice "
        f"{sorted(p for p in set(grouped) if grouped.count(p) > 1 or p not in runnable_pages())}")
    files = {p.stem.removeprefix("test_pages_") for p in (REPO / "tests" / "docs").glob("test_pages_*.py")}
    assert files == set(PAGE_GROUPS)


def _blocks_of(text: str, folder, monkeypatch) -> list[docs_pages.Block]:
    """The blocks of a page of ``text`` in ``folder`` (the docs folder while the test lasts)."""
    (folder / "p.md").write_text(text, encoding="utf-8")
    monkeypatch.setattr(docs_pages, "DOCS", folder)
    return page_blocks("p.md")


def test_a_repo_block_runs_at_the_repository_and_must_leave_it_as_it_was(tmp_path, monkeypatch, capsys):
    clone = tmp_path / "clone"  # a repository of the test's own: the real one is never written
    clone.mkdir()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(clone)], check=True, timeout=60)
    (clone / "mkdocs.yml").write_text("", encoding="utf-8")
    monkeypatch.setattr(docs_pages, "REPO", clone)
    (tmp_path / "docs").mkdir()
    reads, writes = _blocks_of(
        "<!-- docs-test: repo: reads the clone -->\n"
        "<!-- docs-test: installed: .venv/bin/python -> python -->\n"
        "```bash\ntest -f mkdocs.yml && .venv/bin/python -c 'print(1)'\n```\n"
        "<!-- docs-test: repo: writes into the clone -->\n"
        "```bash\ntouch stray-file\n```\n", tmp_path / "docs", monkeypatch)
    assert reads.at_repo == "reads the clone" and reads.rewrites == (
        ("installed", ".venv/bin/python", "python"),)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    docs_pages._run_block(reads, tmp_path, env)
    assert f"repo: runs in {clone}" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="leave the repository as it was"):
        docs_pages._run_block(writes, tmp_path, env)
    assert (clone / "stray-file").is_file() and not (tmp_path / "stray-file").exists()


def test_a_stated_change_is_applied_and_must_name_what_the_block_holds(tmp_path, monkeypatch):
    changed, wrong = _blocks_of(
        "<!-- docs-test: shorten: --num-games 50 -> --num-games 1 -->\n"
        "<!-- docs-test: mock: --base-url URL -> --base-url \"$DISTBENCH_MOCK_URL\" -->\n"
        "```bash\ndistbench run --num-games 50 --base-url URL\n```\n"
        "<!-- docs-test: shorten: --num-games 9 -> --num-games 1 -->\n"
        "```bash\ndistbench run --num-games 50\n```\n", tmp_path, monkeypatch)
    assert [kind for kind, _, _ in changed.rewrites] == ["shorten", "mock"]
    assert changed.script() == 'distbench run --num-games 1 --base-url "$DISTBENCH_MOCK_URL"\n'
    with pytest.raises(AssertionError, match="--num-games 9"):
        wrong.script()
