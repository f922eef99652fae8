"""Two texts side by side: the alignment, its sides, its gap report and its exports."""
