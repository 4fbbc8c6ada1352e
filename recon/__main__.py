"""``python -m recon``: the same as the ``recon`` command."""

from recon.cli import main

main()
