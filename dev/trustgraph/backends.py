"""
TrustGraph's async pub/sub backend for a broker URL, made by trustgraph-base's own factory (get_async_pubsub),
as a TrustGraph process would be configured for that broker:

  pulsar://host:6650                          the Pulsar backend (pulsar-client, binary protocol)
  amqp://user:password@host:port/vhost        the RabbitMQ backend (aio-pika; the vhost URL-encoded)
  kafka://host:port[,host:port]               the Kafka backend (aiokafka)
"""

from urllib.parse import unquote, urlparse

from trustgraph.base.pubsub import get_async_pubsub


def backend_for(url):
    """TrustGraph's async backend for the broker at `url`."""
    if url.startswith("amqp://"):
        parsed = urlparse(url)
        return get_async_pubsub(
            pubsub_backend="rabbitmq",
            rabbitmq_host=parsed.hostname,
            rabbitmq_port=parsed.port or 5672,
            rabbitmq_username=unquote(parsed.username or "guest"),
            rabbitmq_password=unquote(parsed.password or "guest"),
            rabbitmq_vhost=unquote(parsed.path[1:]) or "/",
        )
    if url.startswith("kafka://"):
        return get_async_pubsub(pubsub_backend="kafka", kafka_bootstrap_servers=url[len("kafka://"):])
    return get_async_pubsub(pubsub_backend="pulsar", pulsar_host=url)
