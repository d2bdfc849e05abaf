"""The demo's mail thread: a short LKML-style thread (load_demo) with a quoted reply. Its
attached tables repeat the figures load_demo has just stored from the CSV files, naming the
same machine, settings and values, so the import links each to the stored run (reported in
"upload") instead of storing the numbers a second time."""

from pathlib import Path

from benchmarks.hooks import DemoStep

DEMO_MBOX = Path(__file__).resolve().parent / "demo" / "lkml-threadtest-demo.mbox"


def load_demo_thread(write) -> None:
    """Re-importing it adds nothing: messages are known by their Message-ID."""
    from .importer import mbox_import

    report = mbox_import(data=DEMO_MBOX.read_bytes(), user=None)
    write(f"{DEMO_MBOX.name}: {report.imported} messages imported, "
          f"{report.skipped} already there, {report.runs_extracted} runs extracted, "
          f"{len(report.repeated)} linked to runs already stored")


DEMO_THREAD = DemoStep(order=10, name="mail thread", load=load_demo_thread)
