"""
A TrustGraph service stand-in built on TrustGraph's own Python client, as TrustGraph's real prompt, graph RAG,
MCP tool and librarian services are: trustgraph-base 2.11.1's async backend for the broker (Pulsar, Kafka or
RabbitMQ, from backends.py), its ReceiverPool on the service's request queue and its SenderPool on the
response queue (what a FlowProcessor's ConsumerSpec and ProducerSpec register), TrustGraph's schema
dataclasses and serialiser. Only the answer is scripted: no model, no graph, no MCP server behind it.

Usage: python service_stand_in.py BROKER_URL SPEC_JSON

  BROKER_URL  pulsar://host:6650 | amqp://user:password@host:port/vhost | kafka://host:port
  SPEC_JSON   {"service": "prompt" | "graph-rag" | "mcp-tool" | "librarian",
               "request": <queue id>, "response": <queue id>, "subscription": <name>,
               "concurrency": <ReceiverPool workers, TrustGraph's default 1>,
               "texts": {"action": ..., "final": ..., "observation": ..., "graph-rag": ...}}

The prompt service answers a request with an empty history with `texts.action`, any other with
`texts.final`; the MCP tool with `texts.observation`; graph RAG with `texts["graph-rag"]` (one message, the
end of stream and of session); the librarian with an empty success.

Commands on stdin, one JSON object a line, each answered by one JSON line on stdout:
  {"fault": "answer" | "silent"}            answer every request / none (they are still received and counted)
  {"fault": {"drop-next": n}}               answer none of the next n requests, then every one
  {"fault": {"drop-every": n}}              leave out every n-th request's reply
  {"counts": true}                          {"counts": {"received": n, "dropped": n}}
Prints {"ready": true} once subscribed. Exits when stdin closes (the parent went away).
"""

import asyncio
import json
import logging
import os
import sys
import threading

from backends import backend_for
from trustgraph.base.receiver_pool import ReceiverPool
from trustgraph.base.sender_pool import SenderPool
from trustgraph.schema import (
    GraphRagQuery,
    GraphRagResponse,
    LibrarianRequest,
    LibrarianResponse,
    PromptRequest,
    PromptResponse,
    ToolRequest,
    ToolResponse,
)

SCHEMAS = {
    "prompt": (PromptRequest, PromptResponse),
    "graph-rag": (GraphRagQuery, GraphRagResponse),
    "mcp-tool": (ToolRequest, ToolResponse),
    "librarian": (LibrarianRequest, LibrarianResponse),
}


def answer_for(service, request, texts):
    """The scripted reply to one request, as the real service would shape it."""
    if service == "prompt":
        history = json.loads(request.terms.get("history", "[]"))
        text = texts["action"] if not history else texts["final"]
        return PromptResponse(text=text, end_of_stream=True, in_token=100, out_token=10, model="stand-in")
    if service == "graph-rag":
        return GraphRagResponse(
            response=texts["graph-rag"], message_type="chunk", end_of_stream=True, end_of_session=True
        )
    if service == "mcp-tool":
        return ToolResponse(text=texts["observation"])
    return LibrarianResponse()


class Faults:
    """Which replies are left out (bench:faults, the hedged-call tests)."""

    def __init__(self):
        self.mode = "answer"
        self.count = 0
        self.received = 0
        self.dropped = 0

    def set(self, fault):
        if isinstance(fault, str) and fault in ("answer", "silent"):
            self.mode, self.count = fault, 0
        elif isinstance(fault, dict) and len(fault) == 1 and next(iter(fault)) in ("drop-next", "drop-every"):
            self.mode, self.count = next(iter(fault.items()))
            if not isinstance(self.count, int) or self.count < 1:
                raise ValueError(f"{self.mode} needs a whole number of at least 1, got {self.count!r}")
        else:
            raise ValueError(f"unknown fault {fault!r}")

    def drops(self):
        """Whether the reply to the request just received is left out."""
        self.received += 1
        drop = False
        if self.mode == "silent":
            drop = True
        elif self.mode == "drop-next":
            drop = True
            self.count -= 1
            if self.count == 0:
                self.mode = "answer"
        elif self.mode == "drop-every":
            drop = self.received % self.count == 0
        self.dropped += drop
        return drop


def say(document):
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()


def command(faults, line):
    try:
        message = json.loads(line)
        if "fault" in message:
            faults.set(message["fault"])
            say({"fault": message["fault"]})
        elif message.get("counts"):
            say({"counts": {"received": faults.received, "dropped": faults.dropped}})
        else:
            raise ValueError(f"unknown command {line.strip()!r}")
    except (ValueError, TypeError) as error:
        say({"error": str(error)})


def read_commands(loop, faults):
    """Commands from stdin, applied on the event loop; the process ends when stdin closes."""
    try:
        for line in sys.stdin:
            if line.strip():
                loop.call_soon_threadsafe(command, faults, line)
    finally:
        os._exit(0)


async def serve(broker_url, spec):
    service = spec["service"]
    request_schema, response_schema = SCHEMAS[service]
    texts = spec.get("texts", {})
    faults = Faults()
    backend = backend_for(broker_url)
    receivers = ReceiverPool(backend=backend, concurrency=spec.get("concurrency", 1))
    senders = SenderPool(backend=backend)
    await receivers.start()
    await senders.start()
    response = await senders.add_producer(topic=spec["response"], schema=response_schema)

    async def on_request(message):
        request_id = message.properties()["id"]
        if faults.drops():
            return
        await response.send(answer_for(service, message.value(), texts), properties={"id": request_id})

    await receivers.add_consumer(
        topic=spec["request"], subscription=spec["subscription"], schema=request_schema, handler=on_request
    )
    threading.Thread(target=read_commands, args=(asyncio.get_running_loop(), faults), daemon=True).start()
    say({"ready": True})
    await asyncio.Event().wait()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        raise SystemExit(64)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve(sys.argv[1], json.loads(sys.argv[2])))


if __name__ == "__main__":
    main()
