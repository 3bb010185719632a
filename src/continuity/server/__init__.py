"""The MCP server (`lifecycle mcp`): the memory tools for any MCP client, over stdio. A tool declared
once, its schema and handler together, and a refusal worded by the library's one error funnel
(`tool`); the tools that read (`reads`) and those that write (`writes`), through the library's own
read and write paths; the order they are listed in (`catalog`); arguments checked against the tool's
own schema (`schema`); one client session and its calls (`session`); the session's metered allowance of private
memory and of writes (`meter`); JSON-RPC and the handshake on the standard library (`protocol`); and
the stdio transport with its clean ending on a signal (`stdio`).

The official `mcp` SDK is not imported (it costs about a second to import, which every client would
wait for at launch); its client is the tests' conformance harness.

Never imports: continuity.cli, typer, click, mcp.
"""
