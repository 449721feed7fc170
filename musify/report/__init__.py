"""Report formats. Each is a pure function of a RunRecord: reports never rescan sources."""
