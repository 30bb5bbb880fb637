"""The command blocks of the docs pages of group start run (tests/docs_pages.py)."""

from docs_pages import page_test

test_the_page_commands_run = page_test("start")
