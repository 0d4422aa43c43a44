"""The package as users get it: the wheel and sdist `python -m build` makes, checked by `twine`,
the wheel installed into a fresh venv outside the repository, and the commands a newcomer runs
first — `run`, `report --format html`, `selfcheck` — run there. Package data, the console entry
point and the extras are proven this way, not by the editable install the other tests use.

One test, not several: building and installing is most of its wall time, and a module-scoped
fixture would be paid once per xdist worker that picks up one of its tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tests.conftest import ROOT, out_values
from tests.doc_pages import free_port

PACKAGE = ROOT / "traceladder"


def shipped_data_files() -> set[str]:
    """Every file of the source package that is not Python: each must reach the user."""
    return {
        path.relative_to(ROOT).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".py", ".pyc")
    }


def sh(
    *args: str | Path, cwd: Path, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def pip_into(venv: Path, *args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`pip ARGS` acting on `venv`'s interpreter, run by this interpreter's pip (`--python`): what
    lands in the venv is what `pip` inside it would install."""
    return sh(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", *args, cwd=cwd, env=env)


def user_env(venv: Path) -> dict[str, str]:
    """A user's shell with the venv activated: no key, nothing of this checkout on any path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "OPENROUTER", "TRACELADDER"))}
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"):
        env.pop(name, None)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


def clean_source(target: Path) -> Path:
    """What a build of a fresh clone reads, copied: the editable install leaves an egg-info in the
    checkout, and setuptools carries its old file list into the package, which would hide a file
    that no package-data pattern names."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    shutil.copytree(PACKAGE, target / "traceladder", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def test_the_wheel_installed_outside_the_repository_runs_reports_and_selfchecks(tmp_path):
    build_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    dist, source = tmp_path / "dist", clean_source(tmp_path / "source")
    built = sh(sys.executable, "-m", "build", "--outdir", dist, source, cwd=tmp_path, env=build_env)
    assert built.returncode == 0, built.stderr[-3000:]
    # The deprecated `license` table made setuptools print pages of warnings on every install.
    assert "deprecated" not in built.stdout + built.stderr, built.stderr[-3000:]
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in dist.iterdir())
    wheel = wheels[0]

    checked = sh(
        sys.executable, "-m", "twine", "check", "--strict", wheel, sdists[0], cwd=tmp_path, env=build_env
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # Every data file of the source package is in both (the case suite once was in neither).
    data = shipped_data_files()
    assert "traceladder/suite/domain/retail/data/retail_fc.jsonl" in data
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert data - in_wheel == set(), "package data missing from the wheel"
    with tarfile.open(sdists[0]) as sdist:
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert data - in_sdist == set(), "package data missing from the sdist"
    metadata = zipfile.ZipFile(wheel).read(next(n for n in in_wheel if n.endswith(".dist-info/METADATA")))
    text = metadata.decode()
    assert "License-Expression: Apache-2.0" in text
    assert {"dask", "clickhouse", "chdb"} <= set(re.findall(r"^Provides-Extra: (\S+)$", text, re.M))

    # A fresh venv (no system site-packages) outside the repository, the wheel and its dependencies
    # installed into it by pip as a user would. The venv is made without a pip of its own and this
    # interpreter's pip installs into it (`pip --python`, decision 683): seeding a pip into every
    # venv (ensurepip) cost about as much CPU as building the wheel, and proves nothing here.
    venv, home = tmp_path / "venv", tmp_path / "work"
    home.mkdir()
    assert (
        sh(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=build_env).returncode == 0
    )
    env = user_env(venv)
    installed = pip_into(venv, "install", "-q", "--no-compile", wheel, cwd=home, env=env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    where = sh("python", "-c", "import traceladder; print(traceladder.__file__)", cwd=home, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr

    version = sh("traceladder", "--version", cwd=home, env=env)
    assert version.returncode == 0 and version.stdout.startswith("traceladder "), version.stderr

    run = sh("traceladder", "run", "--model", "sim:faulty", cwd=home, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    out = out_values(run)
    assert out["status"] == "complete cases=72/72 agent_errors=3", run.stdout[-2000:]
    assert Path(out["report_path"]).is_file() and (home / "traceladder.duckdb").is_file()

    report = sh("traceladder", "report", "--format", "html", cwd=home, env=env)
    assert report.returncode == 0, report.stderr
    html = Path(out_values(report)["html_path"]).read_text(encoding="utf-8")
    assert out["run_id"] in html
    # the inline styles and script are package data too
    css = (PACKAGE / "report" / "html_assets" / "report.css").read_text(encoding="utf-8")
    assert css.strip().splitlines()[0] in html

    selfcheck = sh("traceladder", "selfcheck", "--seeds", "1", cwd=home, env=env)
    assert selfcheck.returncode == 0, selfcheck.stdout[-2000:] + selfcheck.stderr
    assert "misjudgment_rate=0.0000 (0/72)" in selfcheck.stdout
    # the shipped labelled set, rubric and prices
    judge = sh("traceladder", "selfcheck", "--judge", "--rounds", "1", cwd=home, env=env)
    assert judge.returncode == 0, judge.stdout[-2000:] + judge.stderr
    assert "48 labelled trajectories" in judge.stdout and "judge_errors=0" in judge.stdout

    # An extra: without it, the feature names the extra to install; with it, the feature runs
    # (here it reaches the connection, refused: nothing listens on that port).
    source = f"clickhouse://reader@127.0.0.1:{free_port()}/otel?table=otel_traces"
    bare = sh("traceladder", "evaluate", "--source", source, cwd=home, env=env)
    assert bare.returncode == 2 and "pip install 'traceladder[clickhouse]'" in bare.stderr, bare.stderr
    extra = pip_into(venv, "install", "-q", "--no-compile", f"{wheel}[clickhouse]", cwd=home, env=env)
    assert extra.returncode == 0, extra.stderr[-3000:]
    with_extra = sh("traceladder", "evaluate", "--source", source, cwd=home, env=env)
    assert with_extra.returncode == 2, with_extra.stderr
    assert "cannot connect to clickhouse://" in with_extra.stderr, with_extra.stderr
