import multiprocessing
import sys

from app.cli import main

if __name__ == "__main__":
    # The GUI parses and renders PDFs in child processes (spawn); in a frozen app (PyInstaller)
    # the child re-runs this entry point, and freeze_support() turns it into the child.
    multiprocessing.freeze_support()
    sys.exit(main())
