"""``recon demo``: the whole product on one offline night (:mod:`recon.demo.night`), the morning
read and roll-forward it prints, where it keeps its store, and finance answering its mail."""

from recon.demo.night import run_demo, show_demo

__all__ = ["run_demo", "show_demo"]
