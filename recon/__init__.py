"""recon: reconciliation and reporting of instant payouts."""

__version__ = "0.1.0"
