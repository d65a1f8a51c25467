"""The wheels the Docker image installs (not editable: no source tree in the image)
hold what the server reads at run time besides its modules: the dealer bot's strategy
files and the browser page."""

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def wheel_names(package: str, folder: Path) -> set[str]:
    uv = shutil.which("uv")
    assert uv is not None, "the tests run under uv (README: uv run pytest)"
    subprocess.run(
        [uv, "build", "--package", package, "--wheel", "--out-dir", str(folder), "--quiet"],
        cwd=ROOT,
        check=True,
        timeout=300,
    )
    (wheel,) = folder.glob("*.whl")
    with zipfile.ZipFile(wheel) as opened:
        return set(opened.namelist())


@pytest.mark.parametrize(
    ("package", "source", "files"),
    [
        ("qiuqiu-server", "server/src", "qiuqiu/server/house/strategies/*.qqs"),
        ("qiuqiu-web", "clients/web/src", "qiuqiu/web/static/*"),
    ],
    ids=["strategies", "page"],
)
def test_a_wheel_holds_the_files_its_package_reads(
    tmp_path: Path, package: str, source: str, files: str
) -> None:
    wanted = {p.relative_to(ROOT / source).as_posix() for p in (ROOT / source).glob(files)}
    assert wanted
    assert wanted <= wheel_names(package, tmp_path)
