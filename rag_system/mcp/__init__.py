"""The MCP server for agents (`python -m rag_system mcp`): Documentation/mcp.md."""
