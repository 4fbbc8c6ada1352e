"""The local simulator of the payout provider: an ASGI app (``app``) around a state machine
(``engine``), served by ``recon sandbox serve``. See docs/sandbox.md."""
