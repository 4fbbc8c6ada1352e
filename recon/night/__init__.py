"""The shell of a night: open the run, gather, ask the provider, decide once, write once, report,
and the night's end. The rules it applies live in :mod:`recon.reconcile`, the pure core."""
