"""Drives the warehouse's MCP server with the official Python SDK (`pip install mcp`), as an
assistant's host would, and prints what it got as JSON on stdout for AssistantTests.swift to
compare with the views.

Usage: python3 client.py PLAN.json

The plan: {"transport": "stdio", "command": [...]} or {"transport": "http", "url": ..., "token": ...},
and "steps", each one of
  {"list": "tools"} | {"list": "resources"} | {"read": URI} | {"ping": true}
  {"call": TOOL, "arguments": {...}}
  {"run": [argv...]}            a program run between two steps (revoking a token, say)
Every step's outcome is one element of "steps" in the output, an exception's text in
"exception" when the SDK raised (the SDK checks each structuredContent against its tool's
outputSchema, so a result that breaks its schema is an exception here).
"""

import asyncio
import json
import subprocess
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def step(session, item):
    if "list" in item:
        if item["list"] == "tools":
            return dump(await session.list_tools())
        return dump(await session.list_resources())
    if "read" in item:
        return dump(await session.read_resource(item["read"]))
    if "ping" in item:
        return dump(await session.send_ping())
    if "call" in item:
        return dump(await session.call_tool(item["call"], item.get("arguments", {})))
    if "run" in item:
        done = subprocess.run(item["run"], capture_output=True, text=True)
        return {"status": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    raise ValueError(f"unknown step {item}")


async def drive(session, plan):
    result = await session.initialize()
    out = {"initialize": dump(result), "steps": []}
    for item in plan["steps"]:
        try:
            out["steps"].append(await step(session, item))
        except Exception as error:  # the SDK's verdict is part of what the test checks
            out["steps"].append({"exception": f"{type(error).__name__}: {error}"})
    return out


async def main(plan):
    if plan["transport"] == "stdio":
        command = plan["command"]
        params = StdioServerParameters(command=command[0], args=command[1:], env=plan.get("env"))
        with open(plan.get("stderr", "/dev/null"), "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    return await drive(session, plan)
    headers = {"Authorization": f"Bearer {plan['token']}"} if plan.get("token") else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(plan["url"], http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                return await drive(session, plan)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(json.dumps(asyncio.run(main(plan))))
