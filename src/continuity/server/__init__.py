"""The MCP server (`lifecycle mcp`): the memory tools for any MCP client, over stdio. What the model
reads of each tool (`catalog`), what each tool does through the library's own read and write paths
(`handlers`), the session's metered allowance of private memory (`meter`), and the SDK's transport
(`stdio`, the only module that imports `mcp`).

Never imports: continuity.cli, typer, click.
"""
