"""The command line: argument parsing and dispatch, the approval prompt and editor, and
what gets printed.
"""
