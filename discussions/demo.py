"""The demo's mail thread: a short LKML-style thread whose tables become runs (load_demo)."""

from pathlib import Path

from benchmarks.hooks import DemoStep

DEMO_MBOX = Path(__file__).resolve().parent / "demo" / "lkml-threadtest-demo.mbox"


def load_demo_thread(write) -> None:
    """Re-importing it adds nothing: messages are known by their Message-ID."""
    from .importer import mbox_import

    report = mbox_import(data=DEMO_MBOX.read_bytes(), user=None)
    write(f"{DEMO_MBOX.name}: {report.imported} messages imported, "
          f"{report.skipped} already there, {report.runs_extracted} runs extracted")


DEMO_THREAD = DemoStep(order=10, name="mail thread", load=load_demo_thread)
