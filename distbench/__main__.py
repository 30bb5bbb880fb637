"""``python -m distbench``."""

from distbench.cli.entry import main

if __name__ == "__main__":
    main()
