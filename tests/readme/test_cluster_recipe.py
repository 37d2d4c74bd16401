#!/usr/bin/env python3
"""docs/cluster.md's Slurm recipe, taken from the page (the ```sh block after the marker
comment that names this file) and run on a real one-node Slurm that this test starts on
localhost: Debian's munge and slurm-wlm daemons with their own key, socket, config and free
ports, as root; stopped again at the end. The recipe shards a small sweep over a three-task
array and merges it; the test checks that the merge job completed and that the merged file
holds every case of the same sweep run in one piece exactly once.

    test_cluster_recipe.py SOURCE_DIR CONVBENCH

Exits 77 ("skipped: ...") without the Slurm packages (scripts/setup --tests) or root.
"""
import collections
import contextlib
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

source, convbench = pathlib.Path(sys.argv[1]), sys.argv[2]
sys.path.insert(0, str(source / "tests" / "cli"))
sys.path.insert(0, str(source / ".ci"))
from test_convbench_cli import parse_csv  # noqa: E402
from readme_command import quick_start_commands  # noqa: E402

MARKER = "<!-- docs.cluster_recipe: tests/readme/test_cluster_recipe.py runs this block -->"
SWEEP = "--suite alexnet --mb 1 --algos cpu.im2col,reference --passes fwd,bwd_data " \
        "--reps 1 --warmup 0"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")


def recipe():
    page = (source / "docs" / "cluster.md").read_text()
    if MARKER not in page:
        sys.exit(f"docs/cluster.md: no recipe marker {MARKER!r}")
    m = re.match(r"\s*```sh\n(.*?)\n```", page.split(MARKER, 1)[1], re.S)
    if not m:
        sys.exit("docs/cluster.md: no ```sh block right after the recipe marker")
    return m.group(1)


def free_ports(count):
    ports = []
    for _ in range(count):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    return ports


@contextlib.contextmanager
def one_node_slurm(d):
    """munged, slurmctld and slurmd on this host, everything under d; yields sbatch's env."""
    host = socket.gethostname().split(".")[0]
    ctld_port, slurmd_port = free_ports(2)
    (d / "munge").mkdir(mode=0o711)
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    key = d / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    sock = d / "munge" / "munge.sock"
    pid_files = []
    try:
        subprocess.run(["munged", f"--socket={sock}", f"--key-file={key}",
                        f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log",
                        f"--seed-file={d}/munged.seed", "--force"], check=True)
        pid_files.append(d / "munged.pid")
        conf = d / "slurm.conf"
        conf.write_text("\n".join([
            "ClusterName=convlabtest", f"SlurmctldHost={host}(127.0.0.1)", "SlurmUser=root",
            f"SlurmctldPort={ctld_port}", f"SlurmdPort={slurmd_port}", "AuthType=auth/munge",
            f"AuthInfo=socket={sock}", "CredType=cred/munge", f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool", f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.pid", f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd.log", "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
            "SwitchType=switch/none", "MpiDefault=none", "ReturnToService=2",
            "SchedulerType=sched/builtin", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN",
            f"PartitionName=cpu Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""]))
        env = dict(os.environ, SLURM_CONF=str(conf))
        for daemon, pid in ((["slurmctld", "-i"], "slurmctld.pid"), (["slurmd"], "slurmd.pid")):
            subprocess.run(daemon, check=True, env=env)
            pid_files.append(d / pid)
        deadline, state = time.time() + 60, ""
        while time.time() < deadline and state != "idle":
            time.sleep(0.5)
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                                   env=env).stdout.strip()
        if state != "idle":
            raise RuntimeError(f"the node did not come up ({state!r}); see {d}/slurmd.log, "
                               f"{d}/slurmctld.log")
        yield env
    finally:
        if pid_files[1:]:
            subprocess.run(["scancel", "--full", "--user", "root"], capture_output=True,
                           env=dict(os.environ, SLURM_CONF=str(d / "slurm.conf")))
        for pid_file in reversed(pid_files):  # only the daemons started here
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                pid = int(pid_file.read_text().split()[0])
                os.kill(pid, signal.SIGTERM)
                for _ in range(100):
                    os.kill(pid, 0)
                    time.sleep(0.05)


def main():
    script = recipe()
    # The recipe runs the binary the README's first command builds.
    built = re.search(r"(\S+/convbench) run", quick_start_commands(
        (source / "README.md").read_text())["first"]).group(1)
    if f"$PWD/{built}" not in script:
        print(f"the recipe does not run the README's build, $PWD/{built}:\n{script}")
        return 1
    missing = [b for b in DAEMONS
               if not shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin")]
    if missing:
        print(f"skipped: no {', '.join(missing)} here (scripts/setup --tests installs Slurm)")
        return 77
    if os.geteuid() != 0:
        print("skipped: the one-node Slurm runs its daemons as root")
        return 77
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin"
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        # The recipe runs from a checkout: bench/slurm/ from the source, build/ as the README's.
        work = d / "checkout"
        (work / "bench").mkdir(parents=True)
        (work / "bench" / "slurm").symlink_to(source / "bench" / "slurm")
        results = d / "results"
        with one_node_slurm(d) as env:
            env.update(CONVBENCH=convbench, SWEEP=SWEEP, RESULTS=str(results), SHARDS="3",
                       CPUS="1")
            run = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                                 text=True, timeout=60)
            print(run.stdout, run.stderr, sep="\n")
            if run.returncode != 0:
                print(f"the recipe exited {run.returncode}")
                return 1
            job = re.search(r"array job (\d+)", run.stdout)
            if not job:
                print("the recipe did not print 'array job JOBID'")
                return 1
            job = job.group(1)
            deadline = time.time() + 400
            while time.time() < deadline and subprocess.run(
                    ["squeue", "-h"], capture_output=True, text=True, env=env).stdout.strip():
                time.sleep(1)
        logs = sorted(work.glob("convbench-*.log"))
        for log in logs:
            print(f"--- {log.name}\n{log.read_text()[-1500:]}")
        merged_file = results / f"sweep-{job}.csv"
        if not merged_file.exists():
            print(f"no {merged_file}: the merge did not complete ({sorted(os.listdir(results))})")
            return 1
        shards = sorted(parse_csv(s.read_text())[0].get("shard")
                        for s in results.glob(f"shard-{job}-*.csv"))
        if shards != ["1/3", "2/3", "3/3"]:
            print(f"shards {shards}, expected 1/3, 2/3, 3/3")
            return 1
        whole = subprocess.run([convbench, "run", *SWEEP.split(), "--out", str(d / "whole.csv")],
                               capture_output=True, text=True)
        if whole.returncode != 0:
            print(whole.stderr)
            return 1

        def cases(path):
            rows = parse_csv(path.read_text())[2]
            return collections.Counter((r["suite"], r["layer"], r["descriptor"], r["pass"],
                                        r["algorithm"], r["device"]) for r in rows)
        merged, expected = cases(merged_file), cases(d / "whole.csv")
        twice = [c for c, n in merged.items() if n > 1]
        if twice or set(merged) != set(expected):
            print(f"merged cases differ: {len(twice)} twice, "
                  f"{len(set(expected) - set(merged))} missing, "
                  f"{len(set(merged) - set(expected))} unexpected")
            return 1
        print(f"cluster recipe: {len(merged)} cases over 3 shards, each once: 1 passed, 0 failed")
        return 0


if __name__ == "__main__":
    sys.exit(main())
