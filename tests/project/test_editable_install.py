"""`make eval` on a fresh clone installs the checkout editable (`pip install -q -e .`, after
upgrading pip) and must print nothing but its own output: no setuptools "Editable installation"
warning, which a flat layout's default import finder printed, a page long, even under `-q`.

The Makefile's install steps, in a fresh venv on a clean copy of the sources (`--no-deps`: the
dependencies are not what prints; the editable build is)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.project.test_package import clean_source, sh, user_env


def test_the_editable_install_of_a_fresh_clone_prints_no_setuptools_warning(tmp_path: Path) -> None:
    source, venv = clean_source(tmp_path / "clone"), tmp_path / "clone" / ".venv"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    assert sh(sys.executable, "-m", "venv", venv, cwd=source, env=env).returncode == 0
    env = user_env(venv)
    upgraded = sh(
        venv / "bin" / "python", "-m", "pip", "install", "-q", "--upgrade", "pip", cwd=source, env=env
    )
    assert upgraded.returncode == 0, upgraded.stderr[-3000:]
    installed = sh(
        venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "-e", ".", cwd=source, env=env
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    said = [
        line
        for line in (installed.stdout + installed.stderr).splitlines()
        if not line.startswith("WARNING: Location ")
    ]  # fmt: skip  (this machine's pip index config)
    assert said == [], "\n".join(said)
    # and the install is the checkout, importable from anywhere
    where = subprocess.run([venv / "bin" / "python", "-c", "import traceladder; print(traceladder.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert Path(where.stdout.strip()) == source / "traceladder" / "__init__.py", where.stderr
