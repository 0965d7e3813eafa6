# Pulsar 4.0.7 standalone from Maven Central's jars on a Debian JRE, for machines with no image registry: the
# same broker tools/pulsar-standalone/pulsar.sh runs, in a container. Built by scripts/image/local-images.sh,
# whose build context holds lib/ (the resolved classpath), standalone.conf and log4j2.xml.
ARG JRE_IMAGE=tg-agent-local/jre:trixie
FROM ${JRE_IMAGE}
WORKDIR /pulsar
COPY lib /pulsar/lib
COPY standalone.conf log4j2.xml /pulsar/conf/
EXPOSE 6650 8080
ENTRYPOINT ["java", "-Xms256m", "-Xmx768m", "-XX:MaxDirectMemorySize=512m", "-XX:+UseG1GC", \
  "-Djava.net.preferIPv4Stack=true", "-Dio.netty.tryReflectionSetAccessible=true", \
  "--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens", "java.base/java.util.zip=ALL-UNNAMED", \
  "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", \
  "--add-opens", "java.base/sun.net=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED", \
  "--add-opens", "java.base/jdk.internal.platform=ALL-UNNAMED", \
  "--add-opens", "java.management/sun.management=ALL-UNNAMED", \
  "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED", \
  "-Dlog4j2.configurationFile=/pulsar/conf/log4j2.xml", "-Dpulsar.log.level=info", \
  "-cp", "/pulsar/lib/*", "org.apache.pulsar.PulsarStandaloneStarter", \
  "--config", "/pulsar/conf/standalone.conf", "--no-functions-worker", "--no-stream-storage", \
  "--metadata-dir", "/pulsar/data/metadata", "--bookkeeper-dir", "/pulsar/data/bookkeeper"]
# The address other containers reach the broker at after a topic lookup (the compose service's name).
CMD ["--advertised-address", "pulsar"]
