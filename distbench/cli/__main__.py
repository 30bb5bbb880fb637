"""``python -m distbench.cli``."""

from distbench.cli.entry import main

if __name__ == "__main__":
    main()
