"""
Ask the agent one question exactly as TrustGraph's API gateway does, with TrustGraph's own code.

The request body (the JSON a client gives the gateway) goes through trustgraph-flow's AgentRequestor: its
AgentRequestTranslator (trustgraph-base's messaging translators) makes the AgentRequest, trustgraph-base's
Pulsar backend serialises it and publishes it over the native Pulsar client (binary protocol) with a fresh
`id` property; the responses carrying that id are read back with the same backend's deserialiser into
AgentResponse objects and turned into what the gateway hands its client by AgentResponseTranslator.

BROKER_URL chooses TrustGraph's backend: `pulsar://host:6650` the Pulsar backend, `amqp://user:password@host:port/vhost`
the RabbitMQ backend (aio-pika; the vhost URL-encoded), `kafka://host:port[,host:port]` the Kafka backend
(aiokafka), each as the gateway would be configured for it.

Usage: python gateway_agent.py BROKER_URL REQUEST_QUEUE RESPONSE_QUEUE BODY_JSON [TIMEOUT_SECONDS]

Prints one JSON document on stdout:
  {"responses": [{"raw": <the JSON payload as received>,
                  "message": <AgentResponse as deserialised, as a dict>,
                  "translated": <what the gateway sends its client>, "final": <bool>}, ...],
   "request": <the AgentRequest as serialised onto the bus>}
Exits 2 with a message on stderr when no final response comes within the timeout.
"""

import asyncio
import json
import logging
import sys
from backends import backend_for
from trustgraph.base import async_kafka_backend, async_pulsar_backend, async_rabbitmq_backend
from trustgraph.base.serialization import dataclass_to_dict
from trustgraph.gateway.dispatch.agent import AgentRequestor
from trustgraph.schema import AgentResponse

# The payloads as they came off the bus, before TrustGraph's deserialiser filled in dataclass defaults: the
# backend decodes a message (PulsarMessage.value) only once its id matched a pending request, in arrival order.
raw_payloads = []
_decode = async_pulsar_backend.PulsarMessage.value


def _recording_decode(self):
    if self._value is None and self._schema_cls is AgentResponse:
        raw_payloads.append(json.loads(self._msg.data().decode("utf-8")))
    return _decode(self)


async_pulsar_backend.PulsarMessage.value = _recording_decode

_rabbit_decode = async_rabbitmq_backend.AsyncRabbitMQMessage.value


def _recording_rabbit_decode(self):
    if self._value is None and self._schema_cls is AgentResponse:
        raw_payloads.append(json.loads(self._msg.body.decode("utf-8")))
    return _rabbit_decode(self)


async_rabbitmq_backend.AsyncRabbitMQMessage.value = _recording_rabbit_decode

_kafka_decode = async_kafka_backend.AsyncKafkaMessage.value


def _recording_kafka_decode(self):
    if self._value is None and self._schema_cls is AgentResponse:
        raw_payloads.append(json.loads(self._msg.value.decode("utf-8")))
    return _kafka_decode(self)


async_kafka_backend.AsyncKafkaMessage.value = _recording_kafka_decode


class RecordingAgentRequestor(AgentRequestor):
    """The gateway's requestor, also keeping each AgentResponse as TrustGraph deserialised it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.messages = []
        self.requests = []

    def to_request(self, body):
        request = super().to_request(body)
        self.requests.append(dataclass_to_dict(request))
        return request

    def from_response(self, message):
        self.messages.append(dataclass_to_dict(message))
        return super().from_response(message)


async def ask(broker_url, request_queue, response_queue, body, timeout):
    backend = backend_for(broker_url)
    requestor = RecordingAgentRequestor(
        backend=backend,
        request_queue=request_queue,
        response_queue=response_queue,
        timeout=timeout,
        consumer="api-gateway",
        subscriber="api-gateway",
    )
    translated = []

    async def responder(result, final):
        translated.append({"translated": result, "final": final})

    await requestor.start()
    try:
        await requestor.process(body, responder)
    finally:
        await requestor.stop()
        await backend.close()

    if not translated or not translated[-1]["final"]:
        print(f"gateway_agent: no final response ({len(translated)} received)", file=sys.stderr)
        raise SystemExit(2)
    if "error" in translated[-1]["translated"] and translated[-1]["translated"]["error"].get("type") == "gateway-error":
        # The requestor turns its own failures (e.g. the timeout) into a gateway-error final message.
        print(f"gateway_agent: {translated[-1]['translated']['error']['message']}", file=sys.stderr)
        raise SystemExit(2)

    return {
        "request": requestor.requests[0],
        "responses": [
            {"raw": raw, "message": message, **entry}
            for raw, message, entry in zip(raw_payloads, requestor.messages, translated)
        ],
    }


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        raise SystemExit(64)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    broker_url, request_queue, response_queue, body_json = sys.argv[1:5]
    timeout = float(sys.argv[5]) if len(sys.argv) == 6 else 30.0
    result = asyncio.run(ask(broker_url, request_queue, response_queue, json.loads(body_json), timeout))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
