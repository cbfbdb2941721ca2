#!/usr/bin/env python3
"""The driver of benches/paper/run.sh: times vkad (whole `vkad run` processes on each backend,
and `vkad bench` in-process on Vulkan) and the peers (JAX, PyTorch) on data sets already
written by gen_data.py, and writes the paper section of benches/RESULTS.md. See run.sh."""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
ENTRIES = {"kmeans": ("cost", "newton"), "gmm": ("objective", "grad"), "lstm": ("objective", "grad")}
BEGIN, END = "<!-- paper-benchmarks:begin -->", "<!-- paper-benchmarks:end -->"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def strip_tests(src):
    """The program without its test blocks (`-- ==` and the comment lines after it)."""
    out, in_block = [], False
    for line in src.splitlines():
        if line.strip() == "-- ==":
            in_block = True
            continue
        if in_block and line.startswith("--"):
            continue
        in_block = False
        out.append(line)
    return "\n".join(out) + "\n"


def run_process(vkad, fut, entry, backend, data, timeout):
    """Seconds of one whole `vkad run` process, or a string saying why there is none."""
    with open(data, "rb") as fin:
        t0 = time.perf_counter()
        try:
            r = subprocess.run([vkad, "run", fut, "-e", entry, "-b", backend], stdin=fin,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"over {timeout:.0f} s"
        dt = time.perf_counter() - t0
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        msg = err[-1] if err else f"exit status {r.returncode}"
        return "not supported" if "not supported" in msg else f"error: {msg}"
    return dt


def run_vkad_bench(vkad, bench, entry, data, reps, timeout):
    """`vkad bench -e ENTRY` (Vulkan, in process) on a copy of the program whose only test block
    is DATA: (wall mean s, kernel mean s), or a string saying why not."""
    src = strip_tests(open(os.path.join(here, f"{bench}.fut")).read())
    # Outside benches/paper, so that `vkad test benches/paper` never meets it.
    wrapper = os.path.join(tempfile.mkdtemp(prefix="vkad-paper-"), f"{bench}.fut")
    with open(wrapper, "w") as f:
        f.write(src + "\n-- ==\n-- entry: " + " ".join(ENTRIES[bench]) + f"\n-- input @ {os.path.abspath(data)}\n")
    try:
        r = subprocess.run([vkad, "bench", wrapper, "-e", entry, "--reps", str(reps)], capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    # The table's columns are found by its header (`wall mean`, `kernels mean`, ...).
    lines = out.splitlines()
    head = next((ln for ln in lines if ln.startswith("entry") and "wall mean" in ln), None)
    row = next((ln for ln in lines if ln.split()[:1] == [entry]), None)
    if head and row:
        cols = re.split(r"\s{2,}", head.strip())
        cells = re.split(r"\s{2,}", row.strip())
        if len(cells) == len(cols):
            return (float(cells[cols.index("wall mean")]) / 1e6, float(cells[cols.index("kernels mean")]) / 1e6)
    if f"`{entry}`: skipped" in err:
        return "not supported"
    return "error: " + (err.strip().splitlines() or ["?"])[-1]


def run_peer(py, system, bench, data, runs, timeout):
    try:
        r = subprocess.run([py, os.path.join(root, "benches", "peers", "peers.py"), system, bench, data,
                            "--runs", str(runs), "--warmup", "1", "--max-seconds", "20"],
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    if r.returncode != 0:
        return "error: " + (r.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def fmt_ms(v):
    if isinstance(v, str):
        return v
    ms = v * 1000
    return f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}" if ms >= 0.1 else f"{ms:.3f}"


def overhead(p, g):
    if isinstance(p, str) or isinstance(g, str) or p <= 0:
        return "–"
    return f"{g / p:.1f}×"


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(open("/proc/meminfo").readline().split()[1])
        mem = f", {kb / 2**20:.0f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} logical CPUs{mem}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vkad", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--backends", default="interp,vulkan")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of `vkad bench`")
    ap.add_argument("--peer-runs", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--results", default=os.path.join(root, "benches", "RESULTS.md"))
    ap.add_argument("--note", default="")
    ap.add_argument("data", nargs="+")
    args = ap.parse_args()
    started = time.time()
    rows = []
    for data in args.data:
        name = os.path.basename(data)[:-3]
        bench = name.split("_")[0]
        fut = os.path.join(here, f"{bench}.fut")
        p_e, g_e = ENTRIES[bench]
        for be in args.backends.split(","):
            log(f"{name}: vkad -b {be} (whole process)")
            p = run_process(args.vkad, fut, p_e, be, data, args.timeout)
            g = run_process(args.vkad, fut, g_e, be, data, args.timeout)
            rows.append((name, f"vkad `-b {be}`", p, g, "one whole `vkad run` process (compile, read input, run, print)"))
            if be == "vulkan":
                log(f"{name}: vkad bench (Vulkan, in process)")
                b = {}
                for e, proc in ((p_e, p), (g_e, g)):
                    # An entry whose process did not finish in time is not run again here.
                    b[e] = proc if isinstance(proc, str) else \
                        run_vkad_bench(args.vkad, bench, e, data, args.reps, 2 * args.timeout)
                wall = {e: (v if isinstance(v, str) else v[0]) for e, v in b.items()}
                kern = {e: (v if isinstance(v, str) else v[1]) for e, v in b.items()}
                rows.append((name, "vkad `bench` (Vulkan) wall", wall[p_e], wall[g_e],
                             f"`vkad bench`: mean wall time of {args.reps} run(s) after a warm-up, in process"))
                rows.append((name, "vkad `bench` (Vulkan) kernels", kern[p_e], kern[g_e],
                             "`vkad bench`: mean of the summed kernel timestamps of the same runs"))
        for system in ("jax", "torch"):
            log(f"{name}: {system}")
            r = run_peer(args.python, system, bench, data, args.peer_runs, 2 * args.timeout)
            if isinstance(r, str):
                rows.append((name, system, r, r, ""))
            else:
                rows.append((name, f"{system} {r['version']}", r["primal_ms"] / 1000, r["grad_ms"] / 1000,
                             f"median of {r['primal_runs']} / {r['grad_runs']} runs after a warm-up, in process"))
    elapsed = time.time() - started
    devs = subprocess.run([args.vkad, "devices"], capture_output=True).stdout.decode(errors="replace")
    vk_dev = next((ln.split(":", 1)[1].strip() for ln in devs.splitlines() if re.match(r"^\d+:", ln)), "none")
    vk_info = next((ln.strip() for ln in devs.splitlines() if ln.strip().startswith("type:")), "")
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True).stdout.decode().strip()
    lines = [BEGIN, "", "## The SC22 paper's benchmarks on this machine (benches/paper)", "",
             f"Measured {datetime.date.today().isoformat()} by `benches/paper/run.sh` (vkad at commit {commit}, "
             f"{elapsed / 60:.1f} minutes in all).", "",
             f"- CPU: {machine()}.",
             f"- Vulkan device (vkad's `-b vulkan`): {vk_dev} ({vk_info}).",
             f"- vkad binary: `{os.path.relpath(args.vkad, root) if args.vkad.startswith(root) else args.vkad}` "
             f"(built {datetime.datetime.fromtimestamp(os.path.getmtime(args.vkad)).isoformat(timespec='minutes')}).",
             "- JAX and PyTorch run on the same CPU (64-bit floats; JAX jitted, PyTorch eager).",
             "- Programs: benches/paper/{kmeans,gmm,lstm}.fut; peers: benches/peers/{jax,torch}_peer.py; "
             "data: `benches/paper/gen_data.py NAME` (seeded, see its header).", ""]
    if args.note:
        lines += [args.note, ""]
    lines += ["Primal: k-means `cost`, GMM and LSTM `objective`. Gradient: k-means `newton` (gradient and Hessian "
              "diagonal by `jvp` of `vjp`, one Newton step), GMM and LSTM `grad` (`vjp`). Overhead = gradient / "
              "primal time of the same system and timing method. Times in milliseconds.", "",
              "| data set | system | primal (ms) | gradient (ms) | overhead | how timed |",
              "|---|---|---:|---:|---:|---|"]
    for name, system, p, g, how in rows:
        lines.append(f"| {name} | {system} | {fmt_ms(p)} | {fmt_ms(g)} | {overhead(p, g)} | {how} |")
    lines += ["", END]
    section = "\n".join(lines) + "\n"
    old = open(args.results).read() if os.path.exists(args.results) else "# Benchmark results\n"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + section + old[old.index(END) + len(END) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + section
    with open(args.results, "w") as f:
        f.write(new)
    print(section)


if __name__ == "__main__":
    main()
