"""README's Python section works as written: its command builds the module into the folder
its PYTHONPATH names (this build's, when this is the release preset's build), and then
imports it; its example prints what its comment says. The command's Python part and the
example run with this build's module (the README's folder when this is that build).

    test_readme_python.py SOURCE_DIR BUILD_DIR MODULE_DIR
"""
import os
import pathlib
import re
import shlex
import subprocess
import sys

source, build, module_dir = (pathlib.Path(a).resolve() for a in sys.argv[1:4])
readme = (source / "README.md").read_text()
section = readme.split("\n## Python\n", 1)
if len(section) != 2:
    sys.exit("FAIL: README.md has no '## Python' section")
body = section[1].split("\n## ", 1)[0]
commands = re.findall(r"```sh\n(.*?)\n```", body, re.S)
examples = re.findall(r"```python\n(.*?)\n```", body, re.S)
if len(commands) != 1 or len(examples) != 1:
    sys.exit(f"FAIL: expected one sh and one python block, found {len(commands)}, {len(examples)}")
command = commands[0].strip()
m = re.fullmatch(r"cmake --build --preset (\w+) --target (\w+) && PYTHONPATH=(\S+) (python3 .*)",
                 command)
if not m:
    sys.exit(f"FAIL: the command is not 'cmake --build ... && PYTHONPATH=... python3 ...': {command}")
preset, target, pythonpath, python_part = m.groups()
failures = []
if target != "convlab_python":
    failures.append(f"the command builds {target}, not the module's target convlab_python")
# The README's folder is where the preset's build puts the module: build/<preset>/python.
if pythonpath != f"build/{preset}/python":
    failures.append(f"PYTHONPATH={pythonpath} is not the module's folder build/{preset}/python")
if build == source / "build" / preset and module_dir != source / pythonpath:
    failures.append(f"this {preset} build puts the module in {module_dir}, not {pythonpath}")
if module_dir.relative_to(build) != pathlib.Path("python"):
    failures.append(f"the module is built in {module_dir}, not BUILD_DIR/python")

env = dict(os.environ, PYTHONPATH=str(module_dir))
argv = shlex.split(python_part)
argv[0] = sys.executable  # the interpreter the module was built for (Debian's python3)
run = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=source)
if run.returncode != 0 or "'reference'" not in run.stdout:
    failures.append(f"`{python_part}` failed (exit {run.returncode}): {run.stdout}{run.stderr}")
example = subprocess.run([sys.executable, "-c", examples[0]], env=env, capture_output=True,
                         text=True, cwd=source)
last = example.stdout.strip().splitlines()[-1:] or [""]
if example.returncode != 0 or last[0] != "1296.0":
    failures.append(f"the example failed or did not print 1296.0 last (exit "
                    f"{example.returncode}): {example.stdout}{example.stderr}")
for f in failures:
    print("FAIL:", f)
print(f"README Python section: {len(failures)} failures")
sys.exit(1 if failures else 0)
