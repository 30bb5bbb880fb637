"""The quick start as a new user meets it: ``distbench run`` with the bundled local model, off a
terminal, says what it is doing from its first seconds and never shows an ETA that grows while
calls complete; ``distbench report`` then works on its results and says what it is doing too.

Both run the real CLI in a subprocess (real model, real Parquet, real matplotlib) and read its
stderr line by line with the time each line arrived.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from distbench.llm.local import INSTALL_HINT, local_available

pytestmark = pytest.mark.skipif(
    not local_available(), reason=f"the bundled model is not installed: {INSTALL_HINT}")


def _budget(seconds: float) -> float:
    """``seconds`` on an idle machine, scaled by how oversubscribed its CPUs are now (the
    developers of this project share two cores: a load of 10 makes everything 5x slower)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on POSIX
        load = 0.0
    return seconds * max(1.0, load / (os.cpu_count() or 1))


def _timed(args: list[str], cwd: Path, env: dict[str, str],
           timeout: float = 900) -> tuple[int, list[tuple[float, str]], str]:
    """Runs ``distbench <args>``; returns its exit code, its stderr lines with the seconds
    since the start at which each arrived, and its stdout."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "distbench.cli", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        out = proc.stdout.read()
        proc.wait()
    finally:
        timer.cancel()
        proc.kill()
    reader.join(timeout=10)
    return proc.returncode, lines, out


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory):
    """The quick start's run, smaller (5 games x 2 answers), from an empty response cache."""
    folder = tmp_path_factory.mktemp("clone")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1",
           "DISTBENCH_CACHE_DIR": str(folder / "cache")}
    code, lines, out = _timed(["run", "--llm-type", "local", "--num-games", "5", "--num-trials",
                               "2", "--seed", "42", "--run-id", "demo"], folder, env)
    assert code == 0, "\n".join(text for _, text in lines)
    return folder, env, lines, out


@pytest.fixture(scope="module")
def longer_run(tmp_path_factory):
    """The quick start's run at 10 games x 2 answers: the ETA test needs several lines after
    the first answer, and 10 answers of the batched local model can all land within two of
    the half-second lines on a quiet machine (session 15's CI)."""
    folder = tmp_path_factory.mktemp("longer")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1",
           "DISTBENCH_CACHE_DIR": str(folder / "cache")}
    code, lines, out = _timed(["run", "--llm-type", "local", "--num-games", "10",
                               "--num-trials", "2", "--seed", "42", "--run-id", "demo"],
                              folder, env)
    assert code == 0, "\n".join(text for _, text in lines)
    return folder, env, lines, out


def _calls(text: str) -> int:
    return int(text.split("calls ")[1].split()[0].replace(",", ""))


def _eta(text: str) -> int | None:
    found = re.search(r"ETA (?:(\d+):)?(\d+):(\d\d)", text)
    if found is None:
        return None
    hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return 3600 * hours + 60 * minutes + seconds


def test_the_run_says_what_it_is_doing_from_its_first_seconds(quick_start):
    _, _, lines, _ = quick_start
    first_at, first = lines[0]
    assert first.startswith("run demo: ") and first_at < _budget(2.0), lines[:3]
    progress = [(at, text) for at, text in lines if text.startswith("progress: ")]
    answered = next(at for at, text in progress if _calls(text) > 0)
    # Before the first answer, the model's slow start is named, with the calls in flight
    # (loading takes under a second: a reading twice a second may miss it; the cold first
    # call takes seconds).
    before = [text for at, text in progress if at <= answered and _calls(text) == 0]
    assert any("- first call: evaluating the prompt" in text and "(10 in flight)" in text
               for text in before), before
    assert all(text.endswith("failed 0") or " - loading smollm2-135m-instruct" in text
               or " - first call: " in text for text in before), before


def test_off_a_terminal_lines_come_only_when_something_changed(quick_start):
    _, _, lines, _ = quick_start
    progress = [text for _, text in lines if text.startswith("progress: ")]
    assert len(progress) >= 4
    assert all(a != b for a, b in zip(progress, progress[1:], strict=False)), progress


def test_the_eta_is_absent_until_the_pace_is_known_and_never_grows(longer_run):
    _, _, lines, _ = longer_run
    progress = [text for _, text in lines if text.startswith("progress: ")]
    first_answer = next(i for i, text in enumerate(progress) if _calls(text) > 0)
    assert all(_eta(text) is None for text in progress[: first_answer + 1]), progress
    etas = [_eta(text) for text in progress[first_answer + 1:]]
    assert all(e is not None for e in etas) and len(etas) >= 3, progress
    assert etas == sorted(etas, reverse=True), progress
    assert etas[-1] == 0


def test_report_works_right_after_the_quick_start_and_says_what_it_does(quick_start):
    folder, env, _, _ = quick_start
    code, lines, out = _timed(["report", "results/demo"], folder, env)
    text = "\n".join(t for _, t in lines)
    assert code == 0, text
    report = folder / "results" / "demo" / "report"
    assert out.split() == [str(Path("results/demo/report") / name)
                           for name in ("report.html", "report.md", "view.html")]
    steps = [t for _, t in lines if t.startswith("report: ")]
    assert any("matrix section (10 trials)" in t for t in steps), text
    assert sum("drew figure" in t for t in steps) >= 5, text
    stamps = [at for at, _ in lines]
    assert stamps[0] < _budget(3.0), text
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert max(gaps) < _budget(10.0), text  # never minutes of silence
    html = (report / "report.html").read_text(encoding="utf-8")
    headings = re.findall(r"<th>([^<]*)</th>", html.split('id="tab-meta"', 1)[1]
                          .split("</table>", 1)[1])
    assert headings and not [h for h in headings if "_" in h], headings  # no SQL names
    assert "95% CI" in headings and "valid answers" in headings


_MEASURE = """<script>addEventListener('load', () => {
  const wide = [...document.querySelectorAll('div.wrap')]
    .filter(d => d.scrollWidth > d.clientWidth + 1).map(d => d.querySelector('table').id);
  document.body.setAttribute('data-fit',
    document.documentElement.scrollWidth + ' ' + innerWidth + ' ' + wide.join(','));
});</script>"""


def test_the_report_tables_fit_a_1000_pixel_page(quick_start, tmp_path):
    """In headless Chromium (Debian's package), no table of the page is wider than it."""
    folder, env, _, _ = quick_start
    page = folder / "results" / "demo" / "report" / "report.html"
    if not page.exists():
        code, lines, _ = _timed(["report", "results/demo"], folder, env)
        assert code == 0, lines
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"),
                     encoding="utf-8")
    done = subprocess.run(
        ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,900",
         "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=180)
    found = re.search(r'data-fit="(\d+) (\d+) ([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    page_width, window, wide = int(found[1]), int(found[2]), found[3]
    assert page_width <= window and wide == "", found[0]
