"""Developer tools for musify (rule generators); not installed with the package."""
