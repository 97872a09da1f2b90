"""A rank killed mid-run (test_mpi.sh kill2, kill4; docs/mpi.md "When a rank dies").

Usage: mpi_kill.py PBF SOURCE_DIR TMP_DIR RANKS MPIRUN [MPIRUN_ARGS...]

Runs the dam break (1500 particles) split over RANKS ranks with --checkpoint-every 2 and kills
the last rank with SIGKILL in the worst place: while a checkpoint is being saved, after rank 0
has written its piece of the new save and before the manifest names it (the victim is stopped
with SIGSTOP as soon as it creates the temporary file of its next piece (inotify), and killed
once rank 0's piece is whole where its own is not yet, so that no rank can have written the
manifest; at the next save again where its piece was whole already). Then checks:
  - mpirun and every rank are gone within 10 s of the kill, with a non-zero status; mpirun's
    message names the rank, rank 0's names the last complete checkpoint and the command;
  - every file of the folder under its final name is whole: each .vtu and .pvtu reads back with
    all its arrays, stats.csv has whole rows for frames 0, 1, 2, ... with the header's columns,
    frames.pvd and scene.json parse and name files that exist, the manifest names the last
    complete save and its pieces exist (a piece of the interrupted save is there too);
  - `pbf resume` goes on from the manifest's frame on 1 (no mpirun), 2 and 4 ranks for three
    frames: on RANKS ranks the frames bit for bit those of a run that never stopped, on the
    others the same ids every frame and every position within 1e-4 m of it; each resumed folder
    then holds its own new checkpoint only (the killed run's pieces removed).
"""
import ctypes
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtu_read import read_frame, read_pvd, read_pvtu, read_vtu  # noqa: E402

PBF, SRC, TMP, RANKS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
MPIRUN = sys.argv[5:]
EVERY = 2
SCENE = os.path.join(SRC, "scenes", "dam_break.json")
ARGS = ["--set", "fluid.particle_radius=0.02", "--format", "vtu", "--threads", "1", "--quiet",
        "--checkpoint-every", str(EVERY)]


def fail(msg):
    print(f"FAIL [mpi_kill {RANKS}]: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, log, limit=120):
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=limit).returncode
        except subprocess.TimeoutExpired:
            fail(f"'{' '.join(cmd)}' ran past {limit} s")
    if rc != 0:
        sys.stderr.write(open(log).read())
        fail(f"'{' '.join(cmd)}' exited {rc}")


def rank_pids(out):
    """{rank: pid} of the pbf processes writing to the folder out (their command line names it,
    Open MPI's environment their rank)."""
    pids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
            env = open(f"/proc/{d}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if os.fsencode(out) not in cmd or os.path.basename(os.fsencode(PBF)) not in \
                os.path.basename(cmd[0]):
            continue
        for e in env:
            if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                pids[int(e.split(b"=")[1])] = int(d)
    return pids


def running(pid):
    """Whether the process is there and not a zombie."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def manifest_frame(out):
    try:
        return json.load(open(os.path.join(out, "checkpoint_mpi.json")))["frame"]
    except (OSError, ValueError):
        return -1  # none yet (or being replaced: rename is atomic, so not half a file)


def newer_piece(out, rank):
    """The name of a checkpoint piece of `rank` in out written after the manifest (a save in
    progress), or None. By its name's end and its time, whatever the pieces' naming scheme."""
    try:
        since = os.stat(os.path.join(out, "checkpoint_mpi.json")).st_mtime_ns
        for name in os.listdir(out):
            if name.endswith(f"{rank:04d}.pbfck") and \
                    os.stat(os.path.join(out, name)).st_mtime_ns > since:
                return name
    except OSError:
        pass  # a file renamed or removed while looking
    return None


class Watch:
    """Files created in a folder, through Linux's inotify: the watcher sleeps until the kernel
    wakes it, instead of polling against the ranks (which spin on the same cores) for the few
    milliseconds a piece takes to write."""

    IN_CREATE = 0x100

    def __init__(self, folder):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0 or self.libc.inotify_add_watch(self.fd, os.fsencode(folder),
                                                      self.IN_CREATE) < 0:
            fail(f"inotify: {os.strerror(ctypes.get_errno())}")

    def wait_for(self, part, deadline, proc):
        """Waits until a file whose name holds `part` is created; False at the deadline or when
        proc ended."""
        while time.time() < deadline and proc.poll() is None:
            if not select.select([self.fd], [], [], 0.2)[0]:
                continue
            data = os.read(self.fd, 65536)
            at = 0
            while at < len(data):
                _, _, _, n = struct.unpack_from("iIII", data, at)
                name = data[at + 16:at + 16 + n].rstrip(b"\0").decode()
                at += 16 + n
                if part in name:
                    return True
        return False


def kill_mid_save(out, log):
    """Starts the run, kills the last rank mid-save; returns (the manifest's frame, seconds from
    the kill to mpirun's exit, mpirun's status)."""
    cmd = MPIRUN + ["-np", str(RANKS), PBF, "run", SCENE] + ARGS + ["--frames", "400",
                                                                    "--out", out]
    proc = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    try:
        pids = {}
        while len(pids) < RANKS:
            if time.time() > deadline or proc.poll() is not None:
                fail("the ranks did not start")
            pids = rank_pids(out)
            time.sleep(0.01)
        victim = pids[RANKS - 1]
        while manifest_frame(out) < 0:
            if time.time() > deadline or proc.poll() is not None:
                fail("no checkpoint saved")
            time.sleep(0.005)
        watch = Watch(out)
        # saves: the victim must be caught inside its write, a race that a loaded machine loses
        # more often (10 tries all missed once under load); the run has 200 saves
        for tries in range(1, 41):
            frame = manifest_frame(out)
            # the victim's temporary file of its next piece: it is writing it
            if not watch.wait_for(f"{RANKS - 1:04d}.pbfck.tmp.", deadline, proc):
                fail(f"no save after frame {frame}")
            os.kill(victim, signal.SIGSTOP)
            # every rank passed the save's first collective: rank 0 writes its piece, but none
            # the manifest while the victim's piece is not whole
            while newer_piece(out, 0) is None and manifest_frame(out) == frame:
                if time.time() > deadline or proc.poll() is not None:
                    fail(f"no piece of frame {frame + EVERY} from rank 0")
                time.sleep(0.005)
            if newer_piece(out, RANKS - 1) is None and manifest_frame(out) == frame:
                break  # stopped before its piece is whole: no rank can write the manifest
            os.kill(victim, signal.SIGCONT)  # its piece was whole already: the next save
        else:
            fail("40 saves went by without stopping the last rank in one")
        os.kill(victim, signal.SIGKILL)
        start = time.time()
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            fail("mpirun still runs 10 s after a rank was killed")
        while any(running(p) for p in pids.values()):  # the ranks' exit may lag mpirun's
            if time.time() > start + 10:
                fail(f"ranks {[p for p in pids.values() if running(p)]} still run 10 s after "
                     f"the kill")
            time.sleep(0.01)
        print(f"mpi_kill: the last rank stopped mid-save at the {tries}. save tried")
        return frame, time.time() - start, rc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def check_whole(out, frame):
    """Every file under its final name is whole (see the module's docstring)."""
    names = sorted(os.listdir(out))
    for name in names:
        path = os.path.join(out, name)
        if ".tmp." in name:
            continue  # a file the kill interrupted: never under its final name
        if name.endswith(".pvtu"):
            for p in read_pvtu(path):
                read_vtu(p)
        elif name.endswith(".vtu"):
            read_vtu(path)
    with open(os.path.join(out, "stats.csv"), "rb") as f:
        text = f.read().decode()
    if not text.endswith("\n"):
        fail("stats.csv: the last row is cut")
    rows = text.split("\n")[:-1]
    columns = rows[0].count(",")
    for k, row in enumerate(rows[1:]):
        if row.count(",") != columns or int(row.split(",")[0]) != k:
            fail(f"stats.csv: row {k + 1} is not the whole row of frame {k}: {row!r}")
    ET.parse(os.path.join(out, "frames.pvd"))
    for _, p in read_pvd(os.path.join(out, "frames.pvd")):
        if not os.path.exists(p):
            fail(f"frames.pvd names {p}, which is not there")
    json.load(open(os.path.join(out, "scene.json")))
    manifest = json.load(open(os.path.join(out, "checkpoint_mpi.json")))
    if manifest["frame"] != frame or manifest["ranks"] != RANKS:
        fail(f"the manifest is at frame {manifest['frame']}, the last complete save {frame}")
    for p in manifest["files"]:
        if not os.path.exists(os.path.join(out, p)):
            fail(f"the manifest names {p}, which is not there")
    if newer_piece(out, 0) is None:
        fail("no piece of the interrupted save: the kill did not come mid-save")
    frames = len(read_pvd(os.path.join(out, "frames.pvd")))
    print(f"mpi_kill: the folder whole: {frames} frames, {len(rows) - 1} stats rows, the "
          f"manifest at frame {frame} with its {RANKS} pieces, rank 0's piece of frame "
          f"{frame + EVERY} beside it")


def main():
    out = os.path.join(TMP, "killed")
    frame, stop, rc = kill_mid_save(out, out + ".log")
    log = open(out + ".log").read()
    print(f"mpi_kill: rank {RANKS - 1} of {RANKS} killed while saving frame {frame + EVERY}: "
          f"mpirun and every rank gone {stop:.2f} s later (status {rc})")
    if rc == 0:
        fail("mpirun exited 0")
    if f"rank {RANKS - 1}" not in log:
        sys.stderr.write(log)
        fail(f"no message names rank {RANKS - 1}")
    said = f"the last complete checkpoint is frame {frame} in '{out}'"
    if log.count(said) != 1 or f"mpirun -np N pbf resume {out}" not in log:
        sys.stderr.write(log)
        fail(f"rank 0 did not say once: {said} ...")
    check_whole(out, frame)

    last = frame + 3
    whole = os.path.join(TMP, "whole")  # the run that never stopped
    run(MPIRUN + ["-np", str(RANKS), PBF, "run", SCENE] + ARGS +
        ["--frames", str(last), "--out", whole], whole + ".log")
    for ranks in (1, 2, 4):
        d = os.path.join(TMP, f"resumed{ranks}")
        shutil.copytree(out, d)
        cmd = ([PBF] if ranks == 1 else MPIRUN + ["-np", str(ranks), PBF])
        run(cmd + ["resume", d, "--frames", str(last), "--quiet"], d + ".log")
        mode = "identical" if ranks == RANKS else "physics"
        check = subprocess.run([sys.executable, os.path.join(SRC, "tests", "cli", "check_mpi.py"),
                                whole, d, mode])
        if check.returncode != 0:
            fail(f"resumed on {ranks} ranks: check_mpi.py {mode}")
        worst = 0.0
        for (_, a), (_, b) in zip(read_pvd(os.path.join(whole, "frames.pvd")),
                                  read_pvd(os.path.join(d, "frames.pvd"))):
            fa, fb = read_frame(a), read_frame(b)
            worst = max([worst] + [abs(x - y) for p, q in zip(fa["Points"], fb["Points"])
                                   for x, y in zip(p, q)])
        if worst > 1e-4:
            fail(f"resumed on {ranks} ranks: a position {worst:.3g} m from the run that never "
                 f"stopped")
        kept = sorted(n for n in os.listdir(d) if n.startswith("checkpoint"))
        new = frame + EVERY
        expect = (["checkpoint.pbfck"] if ranks == 1 else
                  [f"checkpoint_{new:05d}_{r:04d}.pbfck" for r in range(ranks)] +
                  ["checkpoint_mpi.json"])
        if kept != expect:
            fail(f"resumed on {ranks} ranks: the folder's checkpoint files are {kept}, not "
                 f"{expect}")
        print(f"mpi_kill: resumed on {ranks} rank{'s' if ranks > 1 else ''} from frame {frame} "
              f"to {last}: positions at most {worst:.3g} m from the run that never stopped; "
              f"its checkpoint of frame {new} alone in the folder")


main()
