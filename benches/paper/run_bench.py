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

import benchmarks

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))


def markers(section):
    """The begin and end markers of a results section in RESULTS.md: the paper section, or a
    named one (`--section gpu`: the same table measured on another machine)."""
    name = "paper-benchmarks" + (f"-{section}" if section else "")
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


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


def run_vkad_bench(vkad, bench, entries, data, reps, timeout):
    """`vkad bench -e E...` (Vulkan, in process, the entries' timed runs interleaved) on a copy of
    the program whose only test block is DATA: for each entry, (wall mean s, kernel mean s,
    launches, submissions), or a string saying why not."""
    src = strip_tests(open(os.path.join(here, f"{bench}.fut")).read())
    # Outside benches/paper, so that `vkad test benches/paper` never meets it.
    wrapper = os.path.join(tempfile.mkdtemp(prefix="vkad-paper-"), f"{bench}.fut")
    with open(wrapper, "w") as f:
        f.write(src + "\n-- ==\n-- entry: " + " ".join(benchmarks.entries(bench)) + f"\n-- input @ {os.path.abspath(data)}\n")
    cmd = [vkad, "bench", wrapper, "--reps", str(reps)]
    for e in entries:
        cmd += ["-e", e]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {e: f"over {timeout:.0f} s" for e in entries}
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    # The table's columns are found by its header (`wall mean`, `kernels mean`, ...).
    lines = out.splitlines()
    head = next((ln for ln in lines if ln.startswith("entry") and "wall mean" in ln), None)
    result = {}
    for entry in entries:
        row = next((ln for ln in lines if ln.split()[:1] == [entry]), None)
        if head and row:
            cols = re.split(r"\s{2,}", head.strip())
            cells = re.split(r"\s{2,}", row.strip())
            if len(cells) == len(cols):
                # (`transfers`: copies and fills that ran as transfer commands; older vkad
                # binaries print no such column.)
                transfers = int(cells[cols.index("transfers")]) if "transfers" in cols else 0
                result[entry] = (float(cells[cols.index("wall mean")]) / 1e6,
                                 float(cells[cols.index("kernels mean")]) / 1e6,
                                 int(cells[cols.index("launches")]), int(cells[cols.index("submissions")]),
                                 transfers)
                continue
        if f"`{entry}`: skipped" in err:
            result[entry] = "not supported"
        else:
            result[entry] = "error: " + (err.strip().splitlines() or ["?"])[-1]
    return result


def run_peer(py, system, bench, data, runs, timeout, device):
    try:
        r = subprocess.run([py, os.path.join(root, "benches", "peers", "peers.py"), system, bench, data,
                            "--runs", str(runs), "--warmup", "1", "--max-seconds", "20", "--device", device],
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


def counts(b, p_e, g_e):
    """'launches(+transfers)/submissions' of the primal and the gradient from run_vkad_bench
    results."""
    def one(v):
        if isinstance(v, str):
            return "–"
        return f"{v[2]}+{v[4]}/{v[3]}" if v[4] else f"{v[2]}/{v[3]}"
    return f"{one(b[p_e])} · {one(b[g_e])}"


def write_plots(rows, out_dir, prefix):
    """Two PNGs (matplotlib, if the peers' environment has it): AD overhead per data set and
    system, and gradient time against problem size (input bytes). Returns the files written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        log(f"no plots: {e}")
        return []
    systems = ["vkad kernels", "vkad wall", "jax", "torch"]
    labels = {"vkad kernels": "vkad (Vulkan, kernel time)", "vkad wall": "vkad (Vulkan, wall)",
              "jax": "JAX", "torch": "PyTorch"}
    sets = list(dict.fromkeys(r["data"] for r in rows))

    def value(data, system, key):
        for r in rows:
            if r["data"] == data and r["plot"] == system and not isinstance(r[key], str):
                return r[key]
        return None

    files = []
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(sets)), 4))
    width = 0.8 / len(systems)
    for i, system in enumerate(systems):
        ys = []
        for d in sets:
            p, g = value(d, system, "primal"), value(d, system, "grad")
            ys.append(g / p if p and g else 0)
        ax.bar([x + i * width for x in range(len(sets))], ys, width, label=labels[system])
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(sets))])
    ax.set_xticklabels(sets, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("AD overhead (gradient / primal time)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("AD overhead per data set (0 = not measured)")
    fig.tight_layout()
    path = os.path.join(out_dir, f"{prefix}_overhead.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    files.append(path)

    # One panel per benchmark: its data sets in the order of their input size (each
    # benchmark's sizes grow in different parameters), gradient time per system.
    benches = list(dict.fromkeys(r["bench"] for r in rows))
    cols = min(4, len(benches))
    nrows = (len(benches) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(3.4 * cols, 3.0 * nrows), squeeze=False)
    for ax, bench in zip([a for row in axes for a in row], benches):
        bench_sets = sorted({r["data"]: r["size"] for r in rows if r["bench"] == bench}.items(),
                            key=lambda kv: kv[1])
        names = [d for d, _ in bench_sets]
        for system, style in zip(systems, ("o-", "s--", "^-.", "v:")):
            ys = [value(d, system, "grad") for d in names]
            pts = [(i, y * 1000) for i, y in enumerate(ys) if y]
            if pts:
                ax.plot(*zip(*pts), style, label=labels[system], markersize=4)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([d[len(bench) + 1:] for d in names], rotation=20, ha="right", fontsize=6)
        ax.set_title(bench, fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    for ax in [a for row in axes for a in row][len(benches):]:
        ax.axis("off")
    axes[0][0].set_ylabel("gradient time (ms)")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower right", fontsize=7)
    fig.suptitle("Gradient time against problem size (data sets in order of input size)", fontsize=10)
    fig.tight_layout()
    path = os.path.join(out_dir, f"{prefix}_time.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    files.append(path)
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vkad")
    ap.add_argument("--python")
    ap.add_argument("--backends", default="interp,vulkan")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of `vkad bench`")
    ap.add_argument("--peer-runs", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--results", default=os.path.join(root, "benches", "RESULTS.md"))
    ap.add_argument("--note", default="")
    ap.add_argument("--peers", default="jax,torch", help="the peers to time (comma-separated; empty: none)")
    ap.add_argument("--peer-device", choices=["cpu", "gpu"], default="cpu",
                    help="where JAX and PyTorch run (gpu: CUDA's first device)")
    ap.add_argument("--section", default="",
                    help="write a section of its own (its own markers, plots and JSON) named this, "
                         "e.g. `gpu` for the table measured on a GPU, instead of the paper section")
    ap.add_argument("--json", help="where the results JSON goes (default: data/results[-SECTION].json)")
    ap.add_argument("--commit", help="the commit measured, where the checkout has no git history "
                    "(default: git rev-parse)")
    ap.add_argument("--from-json", help="write the section again (with plots) from a results JSON of "
                    "an earlier run (e.g. one measured on another machine), measuring nothing")
    ap.add_argument("data", nargs="*")
    args = ap.parse_args()
    if args.from_json:
        saved = json.load(open(args.from_json))
        print(write_section(saved["meta"], saved["rows"], args.results, saved["section"], True))
        return
    if not args.data or not args.vkad or not args.python:
        ap.error("--vkad, --python and data sets are needed (or --from-json)")
    started = time.time()
    rows = []
    devs = subprocess.run([args.vkad, "devices"], capture_output=True).stdout.decode(errors="replace")
    commit = args.commit or subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                                           capture_output=True).stdout.decode().strip()
    meta = {"date": datetime.date.today().isoformat(), "commit": commit or "?",
            "device": next((ln.split(":", 1)[1].strip() for ln in devs.splitlines() if re.match(r"^\d+:", ln)), "none"),
            "device_info": next((ln.strip() for ln in devs.splitlines() if ln.strip().startswith("type:")), ""),
            "machine": machine(),
            "vkad": os.path.relpath(args.vkad, root) if os.path.abspath(args.vkad).startswith(root) else args.vkad,
            "vkad_built": datetime.datetime.fromtimestamp(os.path.getmtime(args.vkad)).isoformat(timespec="minutes"),
            "peer_device": args.peer_device, "peer_devices": [], "note": args.note, "elapsed_min": 0.0}
    suffix = f"-{args.section}" if args.section else ""
    json_path = args.json or os.path.join(here, "data", f"results{suffix}.json")

    def save(with_plots):
        """The results so far: the JSON (which `--from-json` turns into the section again) and the
        section of the results file (written after every data set, so that a run cut short keeps
        what it measured)."""
        meta["elapsed_min"] = (time.time() - started) / 60
        with open(json_path, "w") as f:
            json.dump({"meta": meta, "section": args.section, "rows": rows}, f, indent=1)
        text = write_section(meta, rows, args.results, args.section, with_plots)
        if with_plots:
            print(text)

    def row(data, system, plot, p, g, how, count=""):
        rows.append({"data": os.path.basename(data)[:-3], "bench": benchmarks.bench_of(data),
                     "size": os.path.getsize(data), "system": system, "plot": plot, "primal": p,
                     "grad": g, "how": how, "counts": count})

    for data in args.data:
        name = os.path.basename(data)[:-3]
        bench = benchmarks.bench_of(name)
        fut = os.path.join(here, f"{bench}.fut")
        p_e, g_e = benchmarks.entries(bench)
        for be in args.backends.split(","):
            log(f"{name}: vkad -b {be} (whole process)")
            p = run_process(args.vkad, fut, p_e, be, data, args.timeout)
            g = run_process(args.vkad, fut, g_e, be, data, args.timeout)
            row(data, f"vkad `-b {be}`", f"vkad {be}", p, g,
                "one whole `vkad run` process (compile, read input, run, print)")
            if be == "vulkan":
                log(f"{name}: vkad bench (Vulkan, in process)")
                # An entry whose process did not finish in time is not run again here; the
                # others run in one `vkad bench`, their timed runs interleaved.
                b = {e: proc for e, proc in ((p_e, p), (g_e, g)) if isinstance(proc, str)}
                todo = [e for e in (p_e, g_e) if e not in b]
                if todo:
                    b.update(run_vkad_bench(args.vkad, bench, todo, data, args.reps, 4 * args.timeout))
                wall = {e: (v if isinstance(v, str) else v[0]) for e, v in b.items()}
                kern = {e: (v if isinstance(v, str) else v[1]) for e, v in b.items()}
                row(data, "vkad `bench` (Vulkan) wall", "vkad wall", wall[p_e], wall[g_e],
                    f"`vkad bench`: mean wall time of {args.reps} run(s) after a warm-up, in process, "
                    "the primal's and the gradient's runs interleaved",
                    counts(b, p_e, g_e))
                row(data, "vkad `bench` (Vulkan) kernels", "vkad kernels", kern[p_e], kern[g_e],
                    "`vkad bench`: mean device time of the same runs (one timestamp pair per submission)")
        for system in [p for p in args.peers.split(",") if p]:
            log(f"{name}: {system}")
            r = run_peer(args.python, system, bench, data, args.peer_runs, 2 * args.timeout, args.peer_device)
            if isinstance(r, str):
                row(data, system, system, r, r, "")
            else:
                if r.get("device", "?") not in meta["peer_devices"]:
                    meta["peer_devices"].append(r.get("device", "?"))
                row(data, f"{system} {r['version']}", system, r["primal_ms"] / 1000, r["grad_ms"] / 1000,
                    f"median of {r['primal_runs']} / {r['grad_runs']} runs after a warm-up, in process")
        save(with_plots=False)
    save(with_plots=True)


def write_section(meta, rows, results, section, with_plots):
    """Writes the data sets measured so far (rows) and how (meta) as a section of the results
    file (the paper section, or the one named `section`), with the plots if `with_plots`.
    Returns the section's text."""
    results_dir = os.path.dirname(os.path.abspath(results))
    plots = write_plots(rows, results_dir, "paper" + (f"_{section}" if section else "")) if with_plots else []
    used = list(dict.fromkeys(r["bench"] for r in rows))
    begin, end = markers(section)
    title = "on this machine" if not section else f"on {meta['device']} (section `{section}`)"
    peers_on = " and ".join(meta["peer_devices"]) or "nothing (no peer ran)"
    lines = [begin, "", f"## The SC22 paper's benchmarks {title} (benches/paper)", "",
             f"Measured {meta['date']} by `benches/paper/run.sh` (vkad at commit {meta['commit']}, "
             f"{meta['elapsed_min']:.1f} minutes in all{'' if with_plots else ', unfinished'}).", "",
             f"- CPU: {meta['machine']}.",
             f"- Vulkan device (vkad's `-b vulkan`): {meta['device']} ({meta['device_info']}).",
             f"- vkad binary: `{meta['vkad']}` (built {meta['vkad_built']}).",
             f"- JAX and PyTorch run on {peers_on} (`--peer-device {meta['peer_device']}`; JAX jitted, PyTorch "
             "eager; the precision of each benchmark; each timed run ends with its results copied to the host).",
             f"- Programs: benches/paper/{{{','.join(used)}}}.fut; peers: benches/peers/BENCH_{{jax,torch}}.py; "
             "data: `benches/paper/gen_data.py NAME` (seeded, see each gen_BENCH.py).", ""]
    if meta["note"]:
        lines += [meta["note"], ""]
    lines += ["Entries (primal · gradient) and the paper's Futhark AD overhead on GPUs:", ""]
    for bench in used:
        mod = benchmarks.module(bench)
        lines.append(f"- {bench}: `{mod.ENTRIES[0]}` · `{mod.ENTRIES[1]}`; {mod.WHAT}; paper: {mod.PAPER_OVERHEAD}.")
    lines += ["", "Overhead = gradient / primal time of the same system and timing method. Times in milliseconds. "
              "Launches/submissions: kernel launches (+ copies and fills run as transfer commands) and queue "
              "submissions of one run (primal · gradient).", "",
              "| data set | system | primal (ms) | gradient (ms) | overhead | launches/submissions | how timed |",
              "|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        lines.append(f"| {r['data']} | {r['system']} | {fmt_ms(r['primal'])} | {fmt_ms(r['grad'])} | "
                     f"{overhead(r['primal'], r['grad'])} | {r['counts']} | {r['how']} |")
    lines.append("")
    for path in plots:
        lines += [f"![{os.path.basename(path)}]({os.path.relpath(path, results_dir)})", ""]
    lines.append(end)
    text = "\n".join(lines) + "\n"
    old = open(results).read() if os.path.exists(results) else "# Benchmark results\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + text + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(results, "w") as f:
        f.write(new)
    return text

if __name__ == "__main__":
    main()
