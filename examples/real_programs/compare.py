"""Run one runner under torch and under ember with shared weights, and compare the first losses.

    python examples/real_programs/compare.py NAME PROGRAM_DIR [args...]

Prints each backend's exit status, the tail of its output on failure, and the first losses side
by side with their relative difference.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    name, program_dir, *extra = sys.argv[1:]
    sync = tempfile.mkdtemp(prefix=f"sync_{name}_")
    results = {}
    for backend in ("torch", "ember"):
        cmd = [sys.executable, os.path.join(HERE, name, "run.py"), "--backend", backend,
               "--sync", sync, program_dir, *extra]
        # a fixed string hash: programs that number classes by iterating a set (pygcn) then
        # number them alike in both runs
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=int(os.environ.get("RP_TIMEOUT", 900)))
        results[backend] = p
        print(f"== {backend}: exit {p.returncode}")
        if p.returncode != 0:
            print("\n".join((p.stdout + p.stderr).splitlines()[-25:]))
    losses = {}
    for backend in ("torch", "ember"):
        path = os.path.join(sync, f"losses_{backend}.json")
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            losses[backend] = data["losses"]
            for note in data["notes"]:
                print(f"   [{backend}] {note}")
    t, e = losses.get("torch", []), losses.get("ember", [])
    print(f"first losses ({len(t)} torch, {len(e)} ember):")
    for i in range(max(len(t), len(e))):
        a = t[i] if i < len(t) else None
        b = e[i] if i < len(e) else None
        rel = abs(a - b) / max(abs(a), 1e-12) if a is not None and b is not None else None
        print(f"  {i:2d} torch={a!s:>24} ember={b!s:>24} rel={rel if rel is None else f'{rel:.2e}'}")


if __name__ == "__main__":
    main()
