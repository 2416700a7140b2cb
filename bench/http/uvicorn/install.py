"""Makes the venv the uvicorn server runs from: `install.py VENV`.

Creates VENV with this interpreter and installs requirements.txt into it with
`--require-hashes`, so only the pinned bytes of uvicorn, h11 and click are installed.
Quiet unless pip fails (its output is then on stderr).
"""

import pathlib
import subprocess
import sys
import venv


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: install.py VENV", file=sys.stderr)
        return 2
    target = pathlib.Path(sys.argv[1])
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    requirements = pathlib.Path(__file__).with_name("requirements.txt")
    pip = [
        str(target / "bin" / "python3"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        "--require-hashes",
        "--only-binary=:all:",
        "-r",
        str(requirements),
    ]
    done = subprocess.run(pip, check=False)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
