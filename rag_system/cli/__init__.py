"""The `python -m rag_system …` command line: the dispatcher (`main`), its subcommands and their helpers.

Only command-line code lives here; the engine's packages never import it (the MCP server, itself a
subcommand, reads the running API's address from `running_api`).
"""
