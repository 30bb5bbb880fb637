"""``python -m distbench``."""

from distbench.cli.main import main

if __name__ == "__main__":
    main()
