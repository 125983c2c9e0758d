"""The wheel, installed non-editable into a fresh venv: `mentor diagnose` and `mentor demo --quick` run there with
the shipped graphs and prompts, and site-packages gains no top-level `graphs` or `prompts`.

The fresh venv takes its dependencies (torch, trl, langgraph, ...) from this one through a .pth file, so the test
stays offline and fast; `mentor` itself must come from the installed wheel, which the test checks."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import mentor
from failed_groups import ARITHMETIC
from mentor.dependencies import version_range

pytestmark = pytest.mark.slow  # builds the wheel, and runs the quick demo from it
REPO = Path(__file__).resolve().parent.parent
IN_WHEEL = {"mentor": "mentor", "graphs": "mentor/graphs", "prompts": "mentor/prompts"}  # source folder: wheel's


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`python -m build` on a copy of what the wheel is made of, so the checkout gets no build/ or egg-info."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, source / name)
    for folder in IN_WHEEL:
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # --no-isolation: build with this venv's setuptools, offline.
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"),
                    str(source)], check=True, capture_output=True, text=True)
    [built] = (tmp_path / "dist").glob("*.whl")
    return built


def bare_venv(tmp_path: Path) -> Path:
    """A venv without mentor that sees this one's packages (torch, trl, ...) through a .pth file."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # Only the path: the .pth files of this venv (its editable install of mentor) are not run there.
    (Path(purelib) / "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def pip_in(venv: Path, args: list[str], cwd: Path) -> None:
    """pip, offline, installing into `venv`."""
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), *args, "-q",
                           "--no-index"], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    venv = bare_venv(tmp_path)
    pip_in(venv, ["install", "--no-deps", str(wheel)], tmp_path)
    return venv


def run_in(venv: Path, args: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no checkout on the path
    done = subprocess.run(args, cwd=cwd, env={**env, "OMP_NUM_THREADS": "1", "PATH": f"{venv / 'bin'}:{env['PATH']}"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def test_the_wheel_ships_every_source_file_inside_the_mentor_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in IN_WHEEL:
        files = [p.relative_to(REPO / folder) for p in (REPO / folder).rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts]
        missing = [str(f) for f in files if f"{IN_WHEEL[folder]}/{f.as_posix()}" not in names]
        assert files and not missing, f"{folder}/ files the wheel lacks (list their package in pyproject): {missing}"
    assert not {n.split("/")[0] for n in names} - {"mentor", f"mentor_rl-{mentor.__version__}.dist-info"}


def test_diagnose_and_the_quick_demo_run_from_the_installed_wheel(tmp_path, wheel):
    venv = fresh_venv(tmp_path, wheel)
    work = tmp_path / "work"  # no graphs/ or prompts/ here: the shipped ones must be found in the package
    work.mkdir()
    where = json.loads(run_in(venv, ["python", "-c", """if True:
        import importlib.util, json, mentor
        from mentor.config import MentorConfig
        from mentor.dependencies import version_range
        from mentor.llm.client import load_prompt
        prompt = load_prompt(MentorConfig().prompts_dir, "code", "hint_composer").messages[0].prompt.template
        print(json.dumps({"mentor": mentor.__file__, "prompts_dir": MentorConfig().prompts_dir, "prompt": prompt,
                          "trl": version_range("trl"),
                          "top_level": [n for n in ("graphs", "prompts") if importlib.util.find_spec(n)]}))"""],
                              work))
    site = venv / "lib"
    assert Path(where["mentor"]).is_relative_to(site) and Path(where["prompts_dir"]).is_relative_to(site)
    assert where["top_level"] == []
    assert where["trl"] == list(version_range("trl"))  # the installed metadata's range is pyproject's
    assert where["prompt"] == (REPO / "prompts" / "code" / "hint_composer.md").read_text()[:len(where["prompt"])]

    (work / "failures.jsonl").write_text(json.dumps(ARITHMETIC) + "\n")
    run_in(venv, ["mentor", "diagnose", "failures.jsonl", "-o", "out.jsonl"], work)
    [intervention] = [json.loads(line) for line in (work / "out.jsonl").read_text().splitlines()]
    assert intervention["problem_id"] == ARITHMETIC["problem_id"] and intervention["hint"]

    run_in(venv, ["mentor", "demo", "--quick", "--arms", "static_hints,mentor", "--steps", "4", "--eval-every", "2",
                  "--heldout-problems", "20", "--jobs", "1", "--out", "demo"], work)
    results = json.loads((work / "demo" / "results.json").read_text())
    assert list(results["arms"]) == ["static_hints", "mentor"]
    assert all(arm["interventions"] > 0 for arm in results["arms"].values())


def test_the_readmes_pip_install_from_a_clone_gives_a_working_mentor(tmp_path, wheel):
    """README's "Without `make`" lines, run offline in a venv whose dependencies come from this one: pip resolves
    every requirement of pyproject.toml there, and the editable install is the clone's."""
    block = re.search(r"<!-- pip-install: .*?-->\n```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S)[1]
    commands = [shlex.split(line.split("#")[0])[1:] for line in block.splitlines() if line.startswith("pip ")]
    pin = re.search(r"pip install -q (torch==\S+)", (REPO / "Makefile").read_text())[1]
    assert commands == [["install", pin], ["install", "-e", "."]]  # torch first, at the Makefile's pin
    clone = wheel.parent.parent / "source"  # the wheel's sources: pyproject.toml, README.md and the packages
    venv = bare_venv(tmp_path)
    for command in commands:
        pip_in(venv, [*command, "--no-build-isolation"], clone)
    where = json.loads(run_in(venv, ["python", "-c", "import json, mentor, torch; print(json.dumps("
                                      "[mentor.__file__, torch.__version__]))"], tmp_path))
    assert Path(where[0]).is_relative_to(clone) and where[1].startswith(pin.split("==")[1])
    assert "mentor" in run_in(venv, ["mentor", "--help"], tmp_path)
