#!/usr/bin/python3
"""Execute the notebooks headlessly through the project's Deno kernel and check their outputs.

Run with Debian's /usr/bin/python3 (it has nbclient):

    /usr/bin/python3 tools/run_notebooks.py                 # every notebooks/*.ipynb
    /usr/bin/python3 tools/run_notebooks.py notebooks/02_naive.ipynb --repeat 5
    /usr/bin/python3 tools/run_notebooks.py FILE --stock    # plain nbclient, to see the trap
    /usr/bin/python3 tools/run_notebooks.py --install-kernel  # the `deno` kernel for Jupyter

Kernels run with the Deno of the `deno task` that started this script (under `npx -y
deno@2.9.6 task ...` that is the pinned one, wherever npx keeps it), or --deno PATH.

Each code cell declares what it must show in its metadata, e.g.
    "metadata": {"expect": ["image/svg+xml", "text:validated"]}
where an entry is a MIME type that some output must carry ("stream" for printed text), or
"text:MARKER" that the cell's text outputs must contain. Every code cell must declare `expect`
(an empty list for a cell that shows nothing), so a lost output can never pass silently.
A table that shows a kernel not validated lists those rows under UNVALIDATED_MIME; a cell whose
outputs carry it fails unless it declares that MIME type in `expect` (a deliberate
demonstration of a wrong kernel, which then must show one).

The trap this handles: Deno's kernel can publish a cell's outputs after its `idle` status, and
stock nbclient stops listening at `idle`, dropping them (with --stock, the fixture
tests/fixtures/late_outputs.ipynb lost outputs in 9 of 20 runs here). After each cell this client
sends a silent sentinel execution and keeps collecting the cell's messages until the sentinel is
idle and the channel has then been quiet for a while. Late messages keep their cell's parent id,
so they are attached to the right cell.

Executed notebooks go to site/executed/ (git-ignored). Exit status 1 on any cell error,
missing output, or undeclared failed validation. The last stdout line is a JSON summary (per-notebook seconds, failures).
"""

import argparse
import base64
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete, CellExecutionError
from nbclient.util import ensure_async

ROOT = Path(__file__).resolve().parent.parent
KERNEL_NAME = "gemm-ladder-deno"
TEXT_MIMES = ("text/plain", "text/markdown", "text/html", "image/svg+xml")
# Rows that failed validation, listed by the library's tables (lib/notebook/format.ts).
UNVALIDATED_MIME = "application/vnd.gemm-ladder.unvalidated+json"


def project_deno(explicit: str | None = None) -> str:
    """The Deno binary kernels run with, as an absolute path to the real executable.

    Under `npx -y deno@2.9.6 task ...` the task's own Deno is the pinned one: it is this script's
    parent process, and it need not be on PATH (a Jupyter started later has none of npx's PATH).
    Otherwise --deno, or a `deno` on PATH. Each is resolved to the binary itself (Deno.execPath),
    so the kernelspec does not go through a shim or an npx link."""
    candidate = explicit or parent_deno() or shutil.which("deno")
    if not candidate:
        sys.exit(
            "run_notebooks: no deno found; run through `npx -y deno@2.9.6 task ...` "
            "or pass --deno PATH"
        )
    try:
        out = subprocess.run(
            [candidate, "eval", "console.log(Deno.execPath())"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        sys.exit(f"run_notebooks: {candidate} does not run: {e}")
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit(f"run_notebooks: {candidate} is not a working deno: {out.stderr.strip()}")
    return out.stdout.strip().splitlines()[-1]


def parent_deno() -> str | None:
    """The Deno that started this script (a `deno task`), on Linux; None otherwise."""
    try:
        exe = os.readlink(f"/proc/{os.getppid()}/exe")
    except OSError:
        return None
    return exe if Path(exe).name.startswith("deno") else None


def write_kernelspec(folder: Path, deno: str, name: str = KERNEL_NAME) -> Path:
    """A kernelspec like the one `deno jupyter --install` writes, plus the env the kernel needs."""
    spec_dir = folder / "kernels" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [deno, "jupyter", "--kernel", "--conn", "{connection_file}"],
        "display_name": "Deno" if name == "deno" else "Deno (gemm-ladder)",
        "language": "typescript",
        "env": {"XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "NO_COLOR": "1"},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
    return spec_dir


class DrainingClient(NotebookClient):
    """NotebookClient that also keeps the outputs Deno publishes after a cell's `idle`."""

    # Late messages were seen within milliseconds of `idle`; the sentinel's round trip covers
    # most of that, the quiet period the rest. On a loaded machine the kernel publishes late
    # too (one output in 12 runs came later than 0.15 s while other work shared the two
    # cores), so the quiet period also grows with the sentinel's round trip.
    quiet_seconds = 0.15
    quiet_per_round_trip = 3

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        self._cell_msg_id = parent_msg_id
        return await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self._cell_msg_id = None
        try:
            result = await super().async_execute_cell(
                cell, cell_index, execution_count, store_history
            )
        except CellExecutionError:
            # The error itself arrived; late outputs before it still belong to the cell.
            await self._drain_late(cell, cell_index)
            raise
        await self._drain_late(cell, cell_index)
        return result

    async def _drain_late(self, cell, cell_index):
        """Collect this cell's late messages: until a sentinel execution is idle, then quiet."""
        cell_msg_id = self._cell_msg_id
        if cell_msg_id is None:
            return
        sent = time.monotonic()
        sentinel = await ensure_async(self.kc.execute("void 0", silent=True, store_history=False))
        sentinel_idle = False
        quiet = self.quiet_seconds
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                wait = quiet if sentinel_idle else 10
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=wait))
            except Empty:
                if sentinel_idle:
                    break
                continue
            parent = msg["parent_header"].get("msg_id")
            if parent == cell_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)
                except CellExecutionComplete:
                    pass
            elif parent == sentinel and msg["msg_type"] == "status":
                if not sentinel_idle and msg["content"]["execution_state"] == "idle":
                    sentinel_idle = True
                    round_trip = time.monotonic() - sent
                    quiet = max(self.quiet_seconds, self.quiet_per_round_trip * round_trip)
        # The sentinel's shell reply must not be mistaken for the next cell's.
        while True:
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=10))
            except Empty:
                break
            if reply["parent_header"].get("msg_id") == sentinel:
                break


def cell_text(cell) -> str:
    """Everything a cell printed or displayed as text (streams, plain, markdown, HTML, SVG)."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        for mime in TEXT_MIMES:
            value = out.get("data", {}).get(mime)
            if isinstance(value, str):
                parts.append(value)
            elif isinstance(value, list):
                parts.append("".join(value))
    return "\n".join(parts)


def cell_mimes(cell) -> set:
    """The MIME types of a cell's outputs ("stream" for printed text)."""
    found = set()
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            found.add("stream")
        found.update(out.get("data", {}).keys())
    return found


def missing_outputs(nb) -> list:
    """Each code cell's declared outputs that are absent, as readable strings."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        expect = cell.metadata.get("expect")
        if expect is None:
            problems.append(f"cell {index}: no `expect` metadata (declare [] for no output)")
            continue
        mimes, text = cell_mimes(cell), cell_text(cell)
        if UNVALIDATED_MIME in mimes and UNVALIDATED_MIME not in expect:
            rows = [row for out in cell.get("outputs", [])
                    for row in out.get("data", {}).get(UNVALIDATED_MIME, [])]
            problems.append(f"cell {index}: shows a kernel not validated ({', '.join(rows)}); "
                            f"a deliberate demonstration declares {UNVALIDATED_MIME} in `expect`")
        for item in expect:
            if item.startswith("text:"):
                if item[5:] not in text:
                    problems.append(f"cell {index}: missing text {item[5:]!r}")
            elif item not in mimes:
                problems.append(f"cell {index}: missing output {item} (has {sorted(mimes)})")
    return problems


def first_error(nb) -> str:
    """The first error output as "cell N: Name: message" (the message's first line)."""
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                message = (out.get("evalue") or "").strip().splitlines() or [""]
                return f"cell {index}: {out.get('ename')}: {message[0]}"
    return "a cell raised an error"


def run_one(path: Path, out_dir: Path, stock: bool, timeout: int) -> dict:
    """Execute one notebook, write it to out_dir, and list its problems (errors, lost outputs)."""
    nb = nbformat.read(path, as_version=4)
    client_class = NotebookClient if stock else DrainingClient
    client = client_class(
        nb,
        kernel_name=KERNEL_NAME,
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        record_timing=False,
    )
    started = time.monotonic()
    error = None
    try:
        client.execute()
    except CellExecutionError:
        error = first_error(nb)
    except Exception as e:  # dead kernel, timeout: report, do not hide
        error = f"{type(e).__name__}: {e}"
    seconds = time.monotonic() - started
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_dir / path.name)
    problems = [error] if error else missing_outputs(nb)
    return {"notebook": path.name, "seconds": round(seconds, 1), "problems": problems}


def svg_as_images(nb) -> None:
    """Show SVG outputs as <img> data URLs in the HTML.

    nbconvert passes inline SVG through its HTML sanitiser, which strips every drawing element
    and leaves only the text; an <img> also keeps each chart's ids from clashing with others."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            svg = data.get("image/svg+xml")
            if svg is None or "text/html" in data:
                continue
            svg = "".join(svg) if isinstance(svg, list) else svg
            encoded = base64.b64encode(svg.encode()).decode()
            data["text/html"] = f'<img alt="chart" src="data:image/svg+xml;base64,{encoded}">'


def render_site(executed: list, site: Path) -> list:
    """HTML pages of the executed notebooks (nbconvert's lab template) and an index page.

    Charts carry SVG (vega-lite) or PNG (plotly) fallbacks, which is what this HTML shows."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    site.mkdir(parents=True, exist_ok=True)
    pages = []
    for path in executed:
        nb = nbformat.read(path, as_version=4)
        svg_as_images(nb)
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        page = site / f"{path.stem}.html"
        page.write_text(body)
        title = next(
            (
                c.source.splitlines()[0].lstrip("# ").replace("`", "")
                for c in nb.cells
                if c.cell_type == "markdown"
            ),
            path.stem,
        )
        pages.append((page.name, title))
    links = "\n".join(
        f'<li><a href="{name}">{html.escape(title)}</a></li>' for name, title in pages
    )
    (site / "index.html").write_text(
        "<!doctype html><meta charset=utf-8><title>gemm-ladder notebooks</title>"
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}</style>"
        f"<h1>gemm-ladder notebooks</h1><ul style='list-style:none'>{links}</ul>\n"
    )
    return pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "site" / "executed")
    parser.add_argument("--repeat", type=int, default=1, help="execute each notebook N times")
    parser.add_argument("--stock", action="store_true", help="use plain nbclient (shows losses)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    parser.add_argument(
        "--site", type=Path, nargs="?", const=ROOT / "site", help="also render HTML into DIR"
    )
    parser.add_argument(
        "--install-kernel",
        action="store_true",
        help="install the `deno` kernelspec for your Jupyter (this project's deno) and exit",
    )
    parser.add_argument(
        "--deno", help="the deno binary kernels run with (default: the task's own, see above)"
    )
    args = parser.parse_args()
    deno = project_deno(args.deno)
    if args.install_kernel:
        from jupyter_core.paths import jupyter_data_dir

        spec_dir = write_kernelspec(Path(jupyter_data_dir()), deno, "deno")
        print(f"installed {spec_dir} (kernel: {deno})")
        return 0
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        sys.exit("run_notebooks: no notebooks found")

    with tempfile.TemporaryDirectory(prefix="gemm-jupyter-") as jupyter_dir:
        write_kernelspec(Path(jupyter_dir), deno)
        os.environ["JUPYTER_PATH"] = jupyter_dir + os.pathsep + os.environ.get("JUPYTER_PATH", "")
        os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
        runs = []
        total_started = time.monotonic()
        for path in notebooks:
            for attempt in range(args.repeat):
                run = run_one(path, args.out, args.stock, args.timeout)
                run["attempt"] = attempt + 1
                status = "ok" if not run["problems"] else "FAILED"
                print(f"{path.name} #{attempt + 1}: {status} in {run['seconds']} s", flush=True)
                for problem in run["problems"]:
                    print(f"  {problem}", flush=True)
                runs.append(run)
        failed = [r for r in runs if r["problems"]]
        if args.site:
            pages = render_site([args.out / p.name for p in notebooks], args.site)
            print(f"site: {len(pages)} pages in {args.site}", flush=True)
        summary = {
            "runs": len(runs),
            "failed": len(failed),
            "seconds": round(time.monotonic() - total_started, 1),
            "notebooks": runs,
        }
        print(json.dumps(summary))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
