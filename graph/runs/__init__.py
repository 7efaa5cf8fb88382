"""Runs as sessions: start, resume and approve a run; its plan draft, its checkpoints and
its threads.
"""
