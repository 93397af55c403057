"""The crash campaign behind scripts/crash-campaign (docs/RELIABILITY.md)."""
