"""Running the real dbt CLI of this environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def dbt_executable() -> str:
    here = Path(sys.executable).with_name("dbt")
    if here.exists():
        return str(here)
    found = shutil.which("dbt")
    if not found:
        raise FileNotFoundError("dbt is not installed in this environment; install assay with the dbt extra: pip install 'assay[dbt]'")
    return found


def run_dbt(project_dir: Path, *args: str, capture: bool = True) -> subprocess.CompletedProcess:
    """`dbt <args>` in a project whose profiles.yml sits beside dbt_project.yml."""
    env = dict(os.environ)
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    cmd = [dbt_executable(), *args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    return subprocess.run(cmd, cwd=project_dir, env=env, capture_output=capture, text=True)
